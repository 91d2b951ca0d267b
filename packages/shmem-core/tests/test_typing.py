"""The type hints work for users: mypy --strict accepts a program that uses shmem.core
correctly, and reports the wrong calls of one that does not.

mypy reads the ``shmem`` package the tests import: installed (then it must carry its
``py.typed`` marker, PEP 561, or mypy refuses to use it) or the source folder.  Errors
inside the package itself are not this test's business (``ignore_errors`` for shmem.*):
only what a user's program sees of it."""

import os
import re
import subprocess
import sys
import sysconfig
import textwrap

import pytest

import shmem

GOOD = textwrap.dedent('''
    import shmem
    import shmem.core as core
    from shmem import testing
    from shmem.core import AclshmemError, Buffer, Stream


    def job(scale: int) -> int:
        core.init(mem_size=1 << 20)
        me: int = core.my_pe()
        n: int = core.n_pes()
        buf: Buffer = core.calloc(8, 8)
        first: int = buf[0]
        head: Buffer = buf[0:8]
        data: bytes = bytes(head) + bytes(memoryview(buf)[8:16])
        peer = core.get_peer_buffer(buf, (me + 1) % n)
        if peer is not None:
            assert peer.length == buf.length
        with Stream() as stream:
            core.put(buf, buf, (me + 1) % n, stream)
            core.signal_op(buf, 1, core.SignalOp.SIGNAL_ADD, me, stream)
            stream.synchronize()
        core.synchronize(0)
        slot: int = core.atomic_fetch_add(buf, 1, 0, dtype="int64")
        value: float = core.atomic_fetch(buf, 0, dtype="float64", index=1)
        core.barrier_all()
        with core.multi_instance(0) as active:
            assert active == core.current_instance()
        status: core.InitStatus = core.init_status()
        core.free(buf)
        core.finalize()
        try:
            core.finalize()
        except AclshmemError as exc:
            print(exc.msg, status, value, first, data)
        return slot * scale


    results: list[int] = testing.run_pes(2, job, 10)
    uid: bytes = core.get_unique_id()
    version: str = core.get_version()
    stream_of_no_one: shmem.core.Stream | None = None
''')

# Each line is a mistake mypy must report, with the error code in the comment.
BAD = textwrap.dedent('''
    import shmem
    import shmem.core as core
    from shmem.core import Stream

    shmem.aclshmem_malocc(64)                     # BAD[attr-defined]: misspelt (aclshmem_malloc)
    core.init(mem_size="64M")                     # BAD[arg-type]: a str where an int goes
    core.buffer(64, mem_type="device")            # BAD[arg-type]: not a MemType
    name: str = core.my_pe()                      # BAD[assignment]: my_pe is an int
    core.put(core.buffer(8), b"abc", 1)           # BAD[arg-type]: bytes are not a Buffer
    core.barrier_all(0)                           # BAD[call-arg]: barrier_all takes no team
    Stream().synchronize(5)                       # BAD[call-arg]: synchronize takes nothing
    core.free(core.get_peer_buffer(core.buffer(8), 1))  # BAD[arg-type]: may be None
    n: int = core.atomic_fetch(core.buffer(8), 0, dtype="float32")  # BAD[assignment]: a float
''')


def _mypy(tmp_path, source):
    program = tmp_path / "program.py"
    program.write_text(source)
    config = tmp_path / "mypy.ini"
    config.write_text("[mypy]\nstrict = True\n\n[mypy-shmem.*]\nignore_errors = True\n")
    env = dict(os.environ)
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(shmem.__file__)))
    installed = {sysconfig.get_paths()[key] for key in ("purelib", "platlib")}
    if package_parent not in installed:
        env["MYPYPATH"] = package_parent  # the source folder: a checkout that was not installed
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(config), "--no-incremental",
         "--cache-dir", str(tmp_path / "cache"), "--python-version", f"{sys.version_info[0]}.{sys.version_info[1]}",
         str(program)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    if "No module named mypy" in proc.stderr:
        pytest.fail("mypy is not installed: pip install mypy (it is in shmem-core's test extra)")
    return proc


def test_a_correct_program_passes_mypy_strict(tmp_path):
    proc = _mypy(tmp_path, GOOD)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Success" in proc.stdout


def test_mypy_reports_every_wrong_call(tmp_path):
    proc = _mypy(tmp_path, BAD)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    expected = {i: re.search(r"# BAD\[([a-z-]+)\]", line).group(1)
                for i, line in enumerate(BAD.splitlines(), 1) if "# BAD" in line}
    reported = {int(m.group(1)): m.group(2)
                for m in re.finditer(r"program\.py:(\d+): error: .*  \[([a-z-]+)\]$", proc.stdout, re.M)}
    assert reported == expected, proc.stdout


def test_the_package_is_marked_typed():
    assert os.path.isfile(os.path.join(os.path.dirname(shmem.__file__), "py.typed"))
