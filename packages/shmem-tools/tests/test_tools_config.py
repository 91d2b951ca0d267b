"""shmem-config: the path and flag queries, --ldflags with a real C compiler, --diagnose."""

import json
import os
import shutil
import subprocess
import textwrap

import pytest

from toolrun import clean_env, copy_library, run_tool

DIAGNOSE_KEYS = {"version", "backend", "native_library", "native_load", "installation", "packages",
                 "compatibility", "multi_so_conflict", "runtime_root", "degraded", "degraded_reason",
                 "next_steps"}
PACKAGES = {"shmem-native", "shmem-core", "shmem-torch", "shmem-tools"}


def query(flag, **env):
    r = run_tool("shmem-config", flag, env=clean_env(**env) if env else None)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_backend_is_cpu():
    assert query("--backend") == "cpu"


def test_version_matches_the_native_library():
    version = query("--version")
    assert version and version[0].isdigit()
    try:
        import shmem_native
    except ImportError:
        pytest.skip("shmem_native is not installed; the version comes from elsewhere")
    assert version == shmem_native.__version__


def test_paths_point_at_the_installation():
    include, lib, root = query("--include"), query("--lib"), query("--root")
    assert os.path.isfile(os.path.join(include, "aclshmem.h"))
    assert any(n.startswith("libaclshmem.so") for n in os.listdir(lib))
    assert os.path.isdir(root)
    try:
        import shmem_native
        wheel_lib = os.path.realpath(shmem_native.library_dir())
    except ImportError:
        wheel_lib = None
    if os.path.realpath(lib) == wheel_lib:
        # The wheel's library folder lies beside its package (root) in site-packages.
        assert os.path.dirname(os.path.realpath(lib)) == os.path.dirname(os.path.realpath(root))
    else:
        assert os.path.commonpath([root, lib]) == root
    assert query("--rpath") == f"-Wl,-rpath,{lib}"
    flags = query("--ldflags").split()
    assert f"-I{include}" in flags and f"-L{lib}" in flags and "-laclshmem" in flags


def test_runtime_root_is_where_python_loads_the_library():
    root = query("--runtime-root")
    assert os.path.isdir(root)
    from shmem import _native

    _native.load()
    loaded = os.path.realpath(_native.library_path())
    try:
        import shmem_native
    except ImportError:
        shmem_native = None
    if shmem_native is not None and os.path.dirname(loaded) == os.path.realpath(shmem_native.library_dir()):
        # The wheel's library lies beside its package; the package is the root.
        assert root == os.path.dirname(os.path.realpath(shmem_native.__file__))
    else:
        assert loaded.startswith(os.path.realpath(root) + os.sep)


def test_first_flag_wins_and_no_flag_prints_help():
    assert query("--lib") == run_tool("shmem-config", "--lib", "--include").stdout.strip()
    r = run_tool("shmem-config")
    assert r.returncode == 0 and "--ldflags" in r.stdout and "--diagnose" in r.stdout


def test_bad_flag_is_a_usage_error():
    r = run_tool("shmem-config", "--no-such-flag")
    assert r.returncode == 2 and "usage" in r.stderr


C_PROGRAM = textwrap.dedent("""\
    #include <stdio.h>
    #include <aclshmem.h>

    int main(void)
    {
        int major = -1, minor = -1;
        char name[ACLSHMEM_MAX_NAME_LEN] = {0};
        aclshmem_info_get_version(&major, &minor);
        aclshmem_info_get_name(name);
        printf("%d.%d %s\\n", major, minor, name);
        return major == ACLSHMEM_MAJOR_VERSION && minor == ACLSHMEM_MINOR_VERSION ? 0 : 1;
    }
    """)


@pytest.mark.skipif(not shutil.which("cc"), reason="no C compiler (cc)")
def test_ldflags_build_link_and_run_a_c_program(tmp_path):
    src = tmp_path / "prog.c"
    src.write_text(C_PROGRAM)
    ldflags = query("--ldflags")
    build = subprocess.run(f"cc -std=c11 -Wall -Werror -o prog prog.c {ldflags}", shell=True, cwd=tmp_path,
                           capture_output=True, text=True, timeout=120)
    assert build.returncode == 0, f"cc failed with --ldflags {ldflags!r}:\n{build.stderr}"
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}  # the rpath must do
    run = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True, timeout=30, env=env)
    assert run.returncode == 0, run.stderr
    api, name = run.stdout.split(" ", 1)
    assert name.strip().startswith("ACLSHMEM")
    from shmem import _pyshmem

    assert api == "{}.{}".format(*_pyshmem.aclshmem_info_get_version())


def test_diagnose_is_json_with_every_key():
    r = run_tool("shmem-config", "--diagnose")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert DIAGNOSE_KEYS <= set(d)
    assert d["backend"]["selected"] == "cpu"
    assert d["native_library"]["loaded"] is True and d["native_library"]["error"] is None
    assert os.path.exists(d["native_library"]["path"]) or d["native_library"]["source"] == "system loader"
    assert set(d["packages"]) == PACKAGES
    for dist in ("shmem-core", "shmem-tools"):
        assert d["packages"][dist]["installed"] and d["packages"][dist]["version"]
    assert d["compatibility"]["compatible"] is True, d["compatibility"]
    assert d["multi_so_conflict"] == {"detected": False, "loaded_paths": d["multi_so_conflict"]["loaded_paths"]}
    assert len(d["multi_so_conflict"]["loaded_paths"]) == 1
    assert d["degraded"] is False and d["degraded_reason"] is None
    assert d["next_steps"][0] == "No issues detected. SHMEM is ready."


def test_diagnose_reports_a_library_that_does_not_load(tmp_path):
    missing = str(tmp_path / "libaclshmem.so.1")
    r = run_tool("shmem-config", "--diagnose", env=clean_env(ACLSHMEM_LIBRARY=missing))
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["native_library"]["loaded"] is False
    assert missing in d["native_library"]["error"]
    assert d["native_load"] == {"ok": False, "error": d["native_library"]["error"]}
    assert d["degraded"] is True and "does not load" in d["degraded_reason"]
    assert any("ACLSHMEM_LIBRARY" in s or "shmem-native" in s for s in d["next_steps"])


def test_diagnose_sees_two_copies_of_the_library(tmp_path):
    """Two different files of libaclshmem in one process (an old copy next to the wheel's)
    is the conflict the original tool looks for in /proc/self/maps."""
    from shmem import _native

    _native.load()
    original = os.path.realpath(_native.library_path())
    (tmp_path / "old").mkdir()
    copy = tmp_path / "old" / "libaclshmem-old.so"
    copy_library(original, copy)
    code = ("import ctypes, sys; ctypes.CDLL(sys.argv[1]); "
            "from shmem_tools.config import main; sys.exit(main(['--diagnose']))")
    import sys

    r = subprocess.run([sys.executable, "-c", code, str(copy)], capture_output=True, text=True, timeout=60,
                       env=clean_env())
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["multi_so_conflict"]["detected"] is True
    assert str(copy) in d["multi_so_conflict"]["loaded_paths"]
    assert d["degraded"] is True and "copies" in d["degraded_reason"]


def test_maps_parser_counts_files_not_mappings(tmp_path):
    from shmem_tools import _install

    a = tmp_path / "a" / "libaclshmem.so.1"
    b = tmp_path / "b" / "libaclshmem.so"
    for p in (a, b):
        p.parent.mkdir()
        p.write_bytes(b"\0")
    maps = tmp_path / "maps"
    maps.write_text(
        f"7f0000000000-7f0000001000 r--p 00000000 08:01 1 {a}\n"
        f"7f0000001000-7f0000002000 r-xp 00001000 08:01 1 {a}\n"
        f"7f0000003000-7f0000004000 r--p 00000000 08:01 2 {b}\n"
        "7f0000005000-7f0000006000 rw-p 00000000 00:00 0 \n"
        "7f0000007000-7f0000008000 r--p 00000000 08:01 3 /usr/lib/libc.so.6\n")
    assert _install.loaded_libraries(maps=str(maps)) == [str(a), str(b)]
