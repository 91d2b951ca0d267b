"""The C library as a distribution installs it, and shmem-core using that installation.

``meson setup --prefix=<tmp> -Dwheel=false`` + ``meson install`` of packages/shmem-native
must install only the library (with its soname links), the headers, the pkg-config
file and, when pkg-config finds UCX (``-Ducx=auto``), the UCX plug-in beside the library.  Then a C program builds against it with pkg-config and runs 2 PEs, and shmem-core,
from this checkout and with the ``shmem_native`` package hidden, loads the library from
that prefix through the system loader (``LD_LIBRARY_PATH``) and runs a 2-PE job.
"""

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from integration_helpers import DOCS, PACKAGES, SOURCES, run

NATIVE = os.path.join(PACKAGES, "shmem-native")

pytestmark = pytest.mark.skipif(
    not (shutil.which("meson") and shutil.which("ninja") and shutil.which("pkg-config")
         and shutil.which(os.environ.get("CC", "cc"))),
    reason="needs meson, ninja, pkg-config and a C compiler")


def _version():
    with open(os.path.join(NATIVE, "VERSION"), encoding="utf-8") as f:
        return f.read().strip()


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    """The prefix that ``meson install`` filled."""
    top = tmp_path_factory.mktemp("distro")
    build, prefix = str(top / "build"), str(top / "usr")
    run(["meson", "setup", build, NATIVE, f"--prefix={prefix}", "--buildtype=release",
         "-Dwheel=false", "-Dtests=false", "-Dexamples=false"], timeout=300)
    run(["meson", "compile", "-C", build], timeout=600)
    run(["meson", "install", "-C", build, "--quiet"], timeout=300)
    return prefix


def _ucx_found():
    """Whether meson's auto-detection finds UCX here (then the plug-in is built)."""
    return subprocess.run(["pkg-config", "--exists", "ucx >= 1.10"]).returncode == 0


def _files(prefix):
    out = []
    for root, _dirs, files in os.walk(prefix):
        for name in files:
            out.append(os.path.relpath(os.path.join(root, name), prefix))
    return sorted(out)


def _libdir(prefix):
    """The folder holding libaclshmem.so (lib, or lib/<multiarch> on Debian)."""
    for rel in _files(prefix):
        if os.path.basename(rel) == "libaclshmem.so":
            return os.path.join(prefix, os.path.dirname(rel))
    raise AssertionError(f"no libaclshmem.so under {prefix}: {_files(prefix)}")


def test_installs_only_the_library_headers_and_pkgconfig_file(prefix):
    libdir = os.path.relpath(_libdir(prefix), prefix)
    assert libdir == "lib" or libdir.startswith("lib"), libdir
    version = _version()
    headers = sorted(os.listdir(os.path.join(NATIVE, "include", "aclshmem")))
    expected = sorted(
        [f"include/aclshmem.h"] + [f"include/aclshmem/{h}" for h in headers if h.endswith(".h")]
        + [f"{libdir}/libaclshmem.so.{version}", f"{libdir}/pkgconfig/aclshmem.pc"])
    if _ucx_found():
        expected.append(f"{libdir}/libaclshmem_ucx.so")
    links = [f"{libdir}/libaclshmem.so", f"{libdir}/libaclshmem.so.1"]
    assert _files(prefix) == sorted(expected + links)
    # The two links: the soname and the development link.
    assert os.readlink(os.path.join(prefix, links[1])) == f"libaclshmem.so.{version}"
    assert os.readlink(os.path.join(prefix, links[0])) == "libaclshmem.so.1"
    for rel in _files(prefix):
        assert not rel.endswith((".py", ".pyc")), f"a Python file was installed: {rel}"


def test_the_library_has_its_soname(prefix):
    lib = os.path.join(_libdir(prefix), f"libaclshmem.so.{_version()}")
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("readelf is not installed")
    dynamic = run([readelf, "-d", lib]).stdout
    assert "Library soname: [libaclshmem.so.1]" in dynamic, dynamic


def test_pkgconfig_describes_the_prefix(prefix):
    env = {"PKG_CONFIG_PATH": os.path.join(_libdir(prefix), "pkgconfig")}
    assert run(["pkg-config", "--modversion", "aclshmem"], env=env).stdout.strip() == _version()
    cflags = run(["pkg-config", "--cflags", "aclshmem"], env=env).stdout.split()
    libs = run(["pkg-config", "--libs", "aclshmem"], env=env).stdout.split()
    assert f"-I{prefix}/include" in cflags
    assert f"-L{_libdir(prefix)}" in libs and "-laclshmem" in libs


def test_a_c_program_builds_with_pkgconfig_and_runs(prefix, tmp_path):
    env = {"PKG_CONFIG_PATH": os.path.join(_libdir(prefix), "pkgconfig")}
    flags = run(["pkg-config", "--cflags", "--libs", "aclshmem"], env=env).stdout.split()
    exe = str(tmp_path / "kernel")
    run([os.environ.get("CC", "cc"), "-std=c11", "-Wall", os.path.join(DOCS, "examples", "kernel.c"),
         "-o", exe] + flags)
    run_env = {"LD_LIBRARY_PATH": _libdir(prefix)}
    ldd = run(["ldd", exe], env=run_env).stdout
    assert os.path.join(_libdir(prefix), "libaclshmem.so.1") in ldd, ldd
    out = run([exe, "2"], env=run_env, timeout=120).stdout
    assert sorted(out.splitlines()) == [
        "PE 0: the 4 blocks of PE 1 wrote 100 101 102 103",
        "PE 1: the 4 blocks of PE 0 wrote 0 1 2 3",
    ]


JOB = textwrap.dedent("""
    import os, sys
    import shmem
    import shmem.core as core
    from shmem import _native

    core.init(mem_size=16 << 20)
    me, n = core.my_pe(), core.n_pes()
    with open("/proc/self/maps", encoding="utf-8") as f:
        maps = sorted({line.split()[-1] for line in f if "libaclshmem" in line})
    box = core.buffer(8)
    box.numpy("int64")[0] = 7 * (me + 1)
    core.barrier_all()
    got = core.buffer(8)
    core.get(got, box, (me + 1) % n)
    core.synchronize(0)
    print(f"PE {me}: got {int(got.numpy('int64')[0])} via {_native.library_path()} mapped {maps}")
    core.barrier_all()
    core.free(got)
    core.free(box)
    core.finalize()
""")


def test_shmem_core_without_shmem_native_loads_the_prefix_library(prefix, tmp_path):
    """shmem-core from this checkout, with the shmem_native package hidden (as when it is
    not installed) and no ACLSHMEM_LIBRARY: the system loader finds the prefix's library."""
    hide = tmp_path / "hide"
    hide.mkdir()
    # A sitecustomize that makes ``import shmem_native`` fail in every process of the job
    # (the launcher and the PEs), exactly as when the package is not installed.
    (hide / "sitecustomize.py").write_text("import sys\nsys.modules['shmem_native'] = None\n")
    job = tmp_path / "job.py"
    job.write_text(JOB)
    env = dict(os.environ)
    env.pop("ACLSHMEM_LIBRARY", None)
    env["PYTHONPATH"] = os.pathsep.join([str(hide), SOURCES["shmem"]])
    env["LD_LIBRARY_PATH"] = _libdir(prefix)
    proc = subprocess.run([sys.executable, "-m", "shmem.run", "-n", "2", "--timeout", "120", str(job)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = sorted(proc.stdout.splitlines())
    libfile = os.path.join(_libdir(prefix), f"libaclshmem.so.{_version()}")
    assert lines == [
        f"[PE 0] PE 0: got 14 via libaclshmem.so.1 mapped {[libfile]}",
        f"[PE 1] PE 1: got 7 via libaclshmem.so.1 mapped {[libfile]}",
    ], proc.stdout + proc.stderr


def test_without_any_library_the_error_names_every_place(tmp_path):
    """No ACLSHMEM_LIBRARY, no shmem_native, nothing on the loader's path: the error says
    where it looked."""
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text("import sys\nsys.modules['shmem_native'] = None\n")
    env = dict(os.environ)
    env.pop("ACLSHMEM_LIBRARY", None)
    env["PYTHONPATH"] = os.pathsep.join([str(hide), SOURCES["shmem"]])
    env["LD_LIBRARY_PATH"] = str(tmp_path)
    code = "import shmem.core as c; c.get_version()"
    proc = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, env=env, timeout=60)
    if proc.returncode == 0:
        pytest.skip("a libaclshmem.so.1 is installed system-wide")
    last = proc.stderr.strip().splitlines()[-1]
    assert "LibraryNotFoundError" in last
    for place in ("ACLSHMEM_LIBRARY", "shmem_native", "libaclshmem.so.1"):
        assert place in last, last
