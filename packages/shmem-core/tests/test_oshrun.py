"""oshrun / shmemrun / aclshmemrun, shmem-core's console scripts (shmem.run.oshrun_main):
python -m shmem.run for any program (issue #24).  The C launcher of the same names is
tested by packages/shmem-native/tests/launcher/oshrun_cases.py (meson test oshrun)."""

import os
import signal
import subprocess
import sys
import textwrap

import shmem
from shmem import run as shmem_run

PKG_ROOT = os.path.dirname(os.path.dirname(shmem.__file__))
PYPROJECT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pyproject.toml")
# What the console script oshrun does (sys.argv[0] is "-c" here, so the name is given).
OSHRUN = [sys.executable, "-c", "import sys; from shmem.run import oshrun_main; sys.exit(oshrun_main(prog='oshrun'))"]


def _env(**extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("SHMEM_RUN_UID", "SHMEM_RUN_PE", "SHMEM_RUN_NPES", "SHMEM_RUN_MEM_SIZE", "RANK",
                        "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")}
    env["PYTHONPATH"] = os.pathsep.join([PKG_ROOT, env.get("PYTHONPATH", "")])
    env.update(extra)
    return env


def oshrun(args, timeout=120):
    return subprocess.run(OSHRUN + args, capture_output=True, text=True, env=_env(), timeout=timeout)


def test_any_executable_with_the_launchers_environment():
    r = oshrun(["-np", "3", "sh", "-c", 'echo "pe $SHMEM_RUN_PE of $SHMEM_RUN_NPES uid ${#SHMEM_RUN_UID}"'])
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.splitlines()) == [f"[PE {pe}] pe {pe} of 3 uid 272" for pe in range(3)]


def test_a_python_script_is_run_by_the_python_named_on_the_command_line(tmp_path):
    prog = tmp_path / "ring.py"
    prog.write_text(textwrap.dedent("""
        import sys
        import shmem.core as core
        core.init()                       # mem_size from --mem-size
        me, n = core.my_pe(), core.n_pes()
        print("py", me, n, sys.argv[1:])
        core.finalize()
    """))
    r = oshrun(["-np", "2", "--mem-size", "8M", sys.executable, str(prog), "a", "-np"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(r.stdout.splitlines()) == ["[PE 0] py 0 2 ['a', '-np']", "[PE 1] py 1 2 ['a', '-np']"]


def test_module_mode_uses_this_python():
    r = oshrun(["-np", "2", "-m", "this"])
    assert r.returncode == 0, r.stderr
    assert "[PE 0] Beautiful is better than ugly." in r.stdout


def test_messages_name_the_launcher_and_the_first_failure_wins():
    r = oshrun(["-n", "3", "--kill-grace", "1", "sh", "-c", '[ "$SHMEM_RUN_PE" = 1 ] && exit 3; sleep 60'],
               timeout=60)
    assert r.returncode == 3, r.stderr
    assert "oshrun: PE 1 exited with status 3; stopping the other PEs" in r.stderr
    r = oshrun(["-n", "2", "--kill-grace", "1", "sh", "-c", 'kill -TERM $$'], timeout=60)
    assert r.returncode == 128 + signal.SIGTERM


def test_a_missing_program_and_bad_command_lines():
    r = oshrun(["-np", "2", "/nonexistent/prog"])
    assert r.returncode == 1 and r.stderr.startswith("oshrun: ") and "No such file" in r.stderr, r.stderr
    r = oshrun(["-np", "2"])
    assert r.returncode == 2 and "name a program (prog)" in r.stderr, r.stderr
    assert "usage: oshrun" in r.stderr


def test_python_m_shmem_run_takes_np_too(tmp_path):
    prog = tmp_path / "who.py"
    prog.write_text("import os\nprint('who', os.environ['SHMEM_RUN_PE'])\n")
    r = subprocess.run([sys.executable, "-m", "shmem.run", "-np", "2", str(prog)], capture_output=True,
                       text=True, env=_env(), timeout=120)
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.splitlines()) == ["[PE 0] who 0", "[PE 1] who 1"]


def test_version_names_the_library():
    # meson's -Dopenshmem_names=auto tells this library's oshrun from another's by it.
    r = oshrun(["--version"])
    assert r.returncode == 0 and "aclshmem" in r.stdout and r.stdout.startswith("oshrun ("), r.stdout + r.stderr


def test_the_console_scripts_are_declared():
    with open(PYPROJECT, encoding="utf-8") as f:
        text = f.read()
    for name in ("oshrun", "shmemrun", "aclshmemrun"):
        assert f'{name} = "shmem.run:oshrun_main"' in text, name
    assert callable(shmem_run.oshrun_main) and "oshrun_main" in shmem_run.__all__
