"""The generated parts of shmem-core: cffi's out-of-line ABI module (made by every build
from the committed declarations) and the committed typed functions of shmem._pyshmem.

Each test works on a copy of the package in a temporary folder (so that what it generates,
changes or deletes touches nothing else) and imports it in a fresh interpreter: with the
generated cffi module nothing parses C (no pycparser); with a stale or missing one the
package still works, parsing the declarations at run time.  The typed functions are always
the committed modules (no source is compiled at run time).  A type checker sees their
signatures in a copy where nothing was generated (a fresh clone).
"""

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import shmem
from shmem import _ffi_build

PACKAGE_SRC = os.path.dirname(os.path.abspath(shmem.__file__))

# A 1-PE job through the templated functions: a put and a get with integer addresses,
# then what the process used.
PROBE = textwrap.dedent("""
    import json, sys
    import shmem.core as core
    from shmem import _native, _pyshmem as P
    core.init(uid=core.get_unique_id(), rank=0, nranks=1, mem_size=1 << 20)
    src, dst = core.buffer(8), core.buffer(8)
    src.numpy()[:] = range(1, 9)
    P.aclshmem_putmem(dst.addr, src.addr, 8, 0)
    P.aclshmem_int32_p(src.addr, 77, 0)
    lazy = "aclshmem_int64_sum_reduce" not in vars(P)  # a collective's family: made at first use
    assert P.aclshmem_int64_sum_reduce(0, dst.addr, dst.addr, 1) == 0  # 1 PE, in place: unchanged
    got = [list(dst.numpy()), P.aclshmem_int32_g(src.addr, 0)]
    core.free(dst)
    core.free(src)
    core.finalize()
    print(json.dumps({
        "got": [[int(x) for x in got[0]], got[1]],
        "precompiled": _native.precompiled,
        "pycparser": "pycparser" in sys.modules,
        "shmem": core.__file__,
        "put_code": P.aclshmem_putmem.__code__.co_filename,
        "coll_code": P.aclshmem_int64_sum_reduce.__code__.co_filename,
        "lazy": lazy,
    }))
""")


def _copy_package(tmp_path, generate):
    """A copy of the package under tmp_path/site, without generated modules unless
    ``generate``; returns (site folder, package folder)."""
    site = tmp_path / "site"
    target = site / "shmem"
    shutil.copytree(PACKAGE_SRC, target,
                    ignore=shutil.ignore_patterns("__pycache__", *_ffi_build.GENERATED_FILES))
    if generate:
        _run([sys.executable, "-m", "shmem._ffi_build", str(target)], site)
    return site, target


def _run(cmd, site, env=None):
    full = dict(os.environ, PYTHONPATH=str(site), **(env or {}))
    proc = subprocess.run(cmd, cwd=str(site), env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=300)
    assert proc.returncode == 0, f"{cmd} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def _probe(site):
    out = json.loads(_run([sys.executable, "-c", PROBE], site).strip().splitlines()[-1])
    assert out["shmem"].startswith(str(site)), f"the copy was not the package imported: {out['shmem']}"
    assert out["got"] == [list(range(1, 9)), 77], out
    assert out["lazy"] is True, "the collectives' families were made at import"
    return out


def _assert_committed_functions(out, target):
    assert out["put_code"] == str(target / _ffi_build.FAMILIES_MODULE_FILE)
    assert out["coll_code"] == str(target / _ffi_build.COLL_FAMILIES_MODULE_FILE)


def test_with_the_generated_module_nothing_parses_c(tmp_path):
    site, target = _copy_package(tmp_path, generate=True)
    out = _probe(site)
    assert out["precompiled"] is True
    assert out["pycparser"] is False, "pycparser was imported although the generated cffi module is there"
    _assert_committed_functions(out, target)


def test_a_stale_generated_module_is_not_used(tmp_path):
    """After the declarations change, the cffi module generated before is stale: the
    package parses the declarations at run time instead of using it."""
    site, target = _copy_package(tmp_path, generate=True)
    with open(target / "decl" / "aclshmem.h", "a", encoding="utf-8") as f:
        f.write("\n/* changed after the build */\n")
    out = _probe(site)
    assert out["precompiled"] is False
    assert out["pycparser"] is True
    _assert_committed_functions(out, target)


def test_without_the_generated_module_the_package_still_works(tmp_path):
    site, target = _copy_package(tmp_path, generate=False)
    out = _probe(site)
    assert out["precompiled"] is False
    _assert_committed_functions(out, target)


def test_every_generated_function_is_a_function_of_pyshmem():
    from shmem import _native, _pyshmem

    names = [name for name, _, _ in _ffi_build.generated_functions(_ffi_build.declared_functions())]
    assert set(_pyshmem.GENERATED) <= set(names)  # the typed families, and the calls without a type
    for name in names:
        assert getattr(_pyshmem, name).__module__ == "shmem._pyshmem", name
        assert _native.is_collective(name) == (name in _native.collective_names())
    for alias, target in _pyshmem.SEED_ALIASES.items():
        assert getattr(_pyshmem, alias).__module__ == "shmem._pyshmem" and target in names


# ---------------------------------------------------------------------------
# Type checking
# ---------------------------------------------------------------------------

GOOD = """
from shmem import _pyshmem as P

P.aclshmem_putmem(0x1000, 0x2000, 8, 0)
P.aclshmem_getmem(None, 0x2000, 0, 1)
P.aclshmemx_putmem_on_stream(0x1000, 0x2000, 8, 0, 0)
P.aclshmem_int32_p(0x1000, 5, 1)
P.aclshmem_double_p(0x1000, 2.5, 1)
P.aclshmem_char_p(0x1000, b"A", 1)
P.aclshmemx_put8_signal(0x1000, 0x2000, 1, 0x3000, 1, P.SIGNAL_SET, 0)
value: int = P.aclshmem_int32_g(0x1000, 1)
number: float = P.aclshmem_double_g(0x1000, 1)
old: int = P.aclshmem_int64_atomic_fetch_add(0x1000, 1, 0)
"""

BAD = """
from shmem import _pyshmem as P

P.aclshmem_putmem("dst", 0x2000, 8, 0)
P.aclshmem_int32_p(0x1000, 1.5, 1)
P.aclshmem_int32_g(0x1000)
text: str = P.aclshmem_int32_g(0x1000, 1)
"""


def _mypy(site, tmp_path, name, text):
    try:
        import mypy  # noqa: F401
    except ImportError:
        pytest.fail("mypy is not installed: it is in shmem-core's test extra (pip install 'shmem-core[test]')")
    path = tmp_path / name
    path.write_text(text)
    env = dict(os.environ, MYPYPATH=str(site))
    cmd = [sys.executable, "-m", "mypy", "--no-incremental", "--follow-imports=silent", "--show-error-codes",
           "--cache-dir", str(tmp_path / "mypy-cache"), str(path)]
    proc = subprocess.run(cmd, cwd=str(tmp_path), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=600)
    return proc.returncode, proc.stdout + proc.stderr


def test_a_type_checker_sees_the_generated_signatures(tmp_path):
    site, _ = _copy_package(tmp_path, generate=False)  # as a fresh clone: nothing built
    rc, out = _mypy(site, tmp_path, "good.py", GOOD)
    assert rc == 0, f"mypy rejected correct calls:\n{out}"
    rc, out = _mypy(site, tmp_path, "bad.py", BAD)
    assert rc != 0, f"mypy accepted wrong calls:\n{out}"
    for expected in ('Argument 1 to "aclshmem_putmem" has incompatible type "str"',
                     'Argument 2 to "aclshmem_int32_p" has incompatible type "float"',
                     'Missing positional argument "pe" in call to "aclshmem_int32_g"',
                     'Incompatible types in assignment (expression has type "int", variable has type "str")'):
        assert expected in out, f"mypy did not report: {expected}\n{out}"
