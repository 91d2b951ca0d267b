"""The C library as a distribution installs it, and shmem-core using that installation.

``meson setup --prefix=<tmp> -Dwheel=false`` + ``meson install`` of packages/shmem-native
must install only the library (with its soname links), the headers, the pkg-config
file, the OpenSHMEM tools (the compiler wrapper aclshmemcc and the launcher aclshmemrun,
also as oshcc, oshrun, shmemcc, shmemrun, ...) and, when pkg-config finds UCX
(``-Ducx=auto``), the UCX plug-in beside the library.  Then a C program builds against it
with pkg-config and runs 2 PEs; an OpenSHMEM program builds with the installed oshcc and
runs on 4 PEs under the installed oshrun, with no variable set (the rpath finds the
library); and shmem-core, from this checkout and with the ``shmem_native`` package hidden,
loads the library from that prefix through the system loader (``LD_LIBRARY_PATH``) and
runs a 2-PE job.  With another OpenSHMEM's oshcc on the PATH, only the aclshmem* names
are installed.
"""

import json
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
         "-Dwheel=false", "-Dtests=false", "-Dexamples=false", "-Dopenshmem_names=enabled",
         "-Dman=disabled"], timeout=300)  # the manual pages: test_man_pages.py
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


# The OpenSHMEM tools: (file, what it is a link to, or None).
TOOLS = [("aclshmemcc", None), ("aclshmemrun", None), ("aclshmemc++", "aclshmemcc")] + [
    (name, "aclshmemcc") for name in ("oshcc", "oshc++", "oshCC", "shmemcc", "shmemc++", "shmemCC")] + [
    (name, "aclshmemrun") for name in ("oshrun", "shmemrun")]


def test_installs_only_the_library_headers_pkgconfig_file_and_tools(prefix):
    libdir = os.path.relpath(_libdir(prefix), prefix)
    assert libdir == "lib" or libdir.startswith("lib"), libdir
    version = _version()
    headers = sorted(os.listdir(os.path.join(NATIVE, "include", "aclshmem")))
    top_headers = sorted(h for h in os.listdir(os.path.join(NATIVE, "include")) if h.endswith(".h"))
    expected = sorted(
        [f"include/{h}" for h in top_headers] + [f"include/aclshmem/{h}" for h in headers if h.endswith(".h")]
        + [f"{libdir}/libaclshmem.so.{version}", f"{libdir}/pkgconfig/aclshmem.pc"])
    if _ucx_found():
        expected.append(f"{libdir}/libaclshmem_ucx.so")
    links = [f"{libdir}/libaclshmem.so", f"{libdir}/libaclshmem.so.1"]
    tools = [f"bin/{name}" for name, _ in TOOLS]
    assert _files(prefix) == sorted(expected + links + tools)
    # The two links: the soname and the development link.
    assert os.readlink(os.path.join(prefix, links[1])) == f"libaclshmem.so.{version}"
    assert os.readlink(os.path.join(prefix, links[0])) == "libaclshmem.so.1"
    for name, target in TOOLS:
        path = os.path.join(prefix, "bin", name)
        assert os.access(path, os.X_OK), path
        assert (os.readlink(path) if os.path.islink(path) else None) == target, path
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


OSH_PROGRAM = textwrap.dedent("""\
    #include <shmem.h>
    #include <stdio.h>

    int main(void)
    {
        shmem_init();
        int me = shmem_my_pe(), n = shmem_n_pes();
        long *box = shmem_malloc(sizeof *box);
        long mine = 10 * me;
        shmem_barrier_all();
        shmem_putmem(box, &mine, sizeof mine, (me + 1) % n);
        shmem_barrier_all();
        printf("PE %d of %d got %ld\\n", me, n, *box);
        shmem_free(box);
        shmem_finalize();
        return 0;
    }
""")


def test_an_openshmem_program_builds_with_the_installed_oshcc_and_runs_with_its_oshrun(prefix, tmp_path):
    """A C-only user: the installed tools, no variable set, no Python in the job."""
    source = tmp_path / "ring.c"
    source.write_text(OSH_PROGRAM)
    exe = str(tmp_path / "ring")
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_LIBRARY_PATH", "PKG_CONFIG_PATH", "CC", "SHMEM_CC", "ACLSHMEM_LIBRARY")}
    shown = subprocess.run([os.path.join(prefix, "bin", "oshcc"), "-showme", str(source)], env=env,
                           capture_output=True, text=True, timeout=60).stdout.split()
    assert f"-I{prefix}/include" in shown and f"-L{_libdir(prefix)}" in shown, shown
    assert f"-Wl,-rpath,{_libdir(prefix)}" in shown, shown
    built = subprocess.run([os.path.join(prefix, "bin", "oshcc"), "-Wall", str(source), "-o", exe], env=env,
                           capture_output=True, text=True, timeout=120)
    assert built.returncode == 0, built.stderr
    job = subprocess.run([os.path.join(prefix, "bin", "oshrun"), "-np", "4", exe], env=env, capture_output=True,
                         text=True, timeout=120)
    assert job.returncode == 0, job.stdout + job.stderr
    assert sorted(job.stdout.splitlines()) == [f"[PE {pe}] PE {pe} of 4 got {10 * ((pe + 3) % 4)}"
                                               for pe in range(4)]
    alone = subprocess.run([exe], env=env, capture_output=True, text=True, timeout=60)
    assert alone.stdout == "PE 0 of 1 got 0\n", alone.stderr


def test_another_openshmem_on_the_path_keeps_its_names(tmp_path):
    """Open MPI's oshcc on the PATH (here a stand-in that answers as Open MPI's does): the
    default openshmem_names=auto installs only aclshmemcc, aclshmemc++ and aclshmemrun,
    and says so."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "oshcc").write_text('#!/bin/sh\necho "oshcc: Open MPI 4.1.4 (Language: C)"\n')
    (fake / "oshcc").chmod(0o755)
    build = str(tmp_path / "build")
    env = {"PATH": os.pathsep.join([str(fake), os.environ["PATH"]])}
    setup = run(["meson", "setup", build, NATIVE, f"--prefix={tmp_path / 'usr'}", "-Dwheel=false", "-Dtests=false",
                 "-Dexamples=false"], env=env, timeout=300)
    assert f"another OpenSHMEM owns {fake / 'oshcc'}" in setup.stdout, setup.stdout
    installed = json.loads(run(["meson", "introspect", build, "--installed"]).stdout)
    names = sorted(os.path.basename(p) for p in installed.values() if os.sep + "bin" + os.sep in p)
    assert names == ["aclshmemc++", "aclshmemcc", "aclshmemrun"], names


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
