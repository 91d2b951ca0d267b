"""shmem-config and the UCX transport plug-in (libaclshmem_ucx.so): present, absent,
broken (SHMEM_UCX_PLUGIN naming a text file, libc, a missing file) and of another version.

Every case runs the real tool on a real library: a copy of the libaclshmem this
interpreter loads, put in a folder of its own (ACLSHMEM_LIBRARY) with or without a copy
of the real plug-in beside it, so each case controls exactly what sits beside the
library.  The plug-in of another version is a real shared object built here with the C
compiler, exporting shmemi_transport_plugin as a plug-in does.
"""

import glob
import json
import os
import shutil
import subprocess
import textwrap

import pytest

from toolrun import clean_env, copy_library, run_tool

CHECK = "UCX plug-in (multi-node)"
PLUGIN = "libaclshmem_ucx.so"


def _runtime():
    from shmem_tools import _install

    rt = _install.runtime_library()
    if not rt["ok"]:
        pytest.fail(f"the native library does not load: {rt['error']}")
    return _install, rt


def library_in_use():
    _install, rt = _runtime()
    return os.path.realpath(rt["mapped"][0] if rt["mapped"] else rt["path"])


def real_plugin():
    """The plug-in of the library in use (beside it), else of SHMEM_NATIVE_BUILD_DIR's build."""
    _install, rt = _runtime()
    beside = _install.ucx_plugin(dict(rt))
    if beside["source"] != _install.ENV_UCX_PLUGIN and beside["found"]:
        return beside["path"]
    build = os.environ.get("SHMEM_NATIVE_BUILD_DIR")
    if build:
        for path in glob.glob(os.path.join(build, "**", PLUGIN), recursive=True):
            return path
    return None


@pytest.fixture
def lone_library(tmp_path):
    """A copy of the library in use, alone in a folder: (folder, library path)."""
    folder = tmp_path / "lib"
    folder.mkdir()
    lib = folder / "libaclshmem.so.1"
    copy_library(library_in_use(), lib)
    return folder, str(lib)


@pytest.fixture
def library_with_plugin(lone_library):
    """lone_library with a copy of the real plug-in beside it: (folder, library path)."""
    folder, lib = lone_library
    plugin = real_plugin()
    if plugin is None:
        pytest.skip("this build of libaclshmem has no UCX plug-in (built without UCX)")
    shutil.copy(plugin, folder / PLUGIN)
    return folder, lib


def check_json(env):
    env = {k: v for k, v in env.items()}
    r = run_tool("shmem-config", "--check", "--json", "--no-selftest", env=env, timeout=120)
    d = json.loads(r.stdout)
    rows = {c["name"]: c for c in d["checks"]}
    assert CHECK in rows, r.stdout
    return r, rows[CHECK]


def env_without_plugin(**extra):
    env = clean_env(**extra)
    if "SHMEM_UCX_PLUGIN" not in extra:
        env.pop("SHMEM_UCX_PLUGIN", None)
    return env


def test_present_beside_the_library(library_with_plugin):
    folder, lib = library_with_plugin
    r, c = check_json(env_without_plugin(ACLSHMEM_LIBRARY=lib))
    assert c["status"] == "PASS", c
    assert str(folder / PLUGIN) in c["reason"] and "beside the library" in c["reason"]
    assert c["reason"].startswith("UCX ") and "built for libaclshmem" in c["reason"]
    assert c["details"]["version"] == c["details"]["library_version"]
    assert c["details"]["abi"] >= 1 and c["fix"] == ""
    assert r.returncode == 0, r.stdout + r.stderr
    # --diagnose names the same file.
    d = json.loads(run_tool("shmem-config", "--diagnose", env=env_without_plugin(ACLSHMEM_LIBRARY=lib)).stdout)
    assert d["ucx_plugin"]["path"] == str(folder / PLUGIN) and d["ucx_plugin"]["loaded"] is True
    if d["installation"].get("kind") == "ACLSHMEM_LIBRARY":  # (else: the shmem_native package's paths)
        assert d["installation"]["ucx_plugin"] == str(folder / PLUGIN)


def test_present_through_the_variable(lone_library):
    _folder, lib = lone_library
    plugin = real_plugin()
    if plugin is None:
        pytest.skip("this build of libaclshmem has no UCX plug-in (built without UCX)")
    r, c = check_json(env_without_plugin(ACLSHMEM_LIBRARY=lib, SHMEM_UCX_PLUGIN=plugin))
    assert c["status"] == "PASS", c
    assert plugin in c["reason"] and "(SHMEM_UCX_PLUGIN)" in c["reason"]
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("env, plane", [
    ({"UCX_TLS": "tcp"}, "am (UCX_TLS=tcp may run RMA in software over sockets); socket filter on"),
    ({}, "am (UCX_TLS=(unset)"),
    ({"UCX_TLS": "rc,ud,sm,self"}, "rma (UCX_TLS=rc,ud,sm,self lists only hardware-RMA"),
    ({"UCX_TLS": "^tcp"}, "am ("),
    ({"UCX_TLS": "rc,tcp"}, "am ("),
    ({"UCX_TLS": "tcp", "SHMEM_UCX_DATA_PLANE": "rma"}, "rma (SHMEM_UCX_DATA_PLANE=rma)"),
    ({"SHMEM_UCX_DATA_PLANE": "AM", "SHMEM_UCX_FILTER": "0"},
     "am (SHMEM_UCX_DATA_PLANE=AM); socket filter off (SHMEM_UCX_FILTER=0)"),
])
def test_data_plane_of_the_environment(library_with_plugin, env, plane):
    """The check says which data plane (docs/security.rst) this environment selects, from
    the plug-in itself, and whether UCX's sockets get the filter."""
    _folder, lib = library_with_plugin
    base = env_without_plugin(ACLSHMEM_LIBRARY=lib)
    for name in ("UCX_TLS", "SHMEM_UCX_DATA_PLANE", "SHMEM_UCX_FILTER"):
        base.pop(name, None)
    r, c = check_json({**base, **env})
    assert c["status"] == "PASS", c
    assert c["details"]["data_plane"].startswith(plane), c["details"]
    assert "data plane here: " + c["details"]["data_plane"] in c["reason"]


def test_invalid_data_plane_fails_naming_the_variable(library_with_plugin):
    _folder, lib = library_with_plugin
    r, c = check_json(env_without_plugin(ACLSHMEM_LIBRARY=lib, SHMEM_UCX_DATA_PLANE="fast"))
    assert c["status"] == "FAIL", c
    assert "SHMEM_UCX_DATA_PLANE=fast: expected am, rma or auto" in c["reason"]
    assert "SHMEM_UCX_DATA_PLANE" in c["fix"]
    assert r.returncode != 0


def test_absent_is_a_warning_with_the_fix(lone_library):
    folder, lib = lone_library
    r, c = check_json(env_without_plugin(ACLSHMEM_LIBRARY=lib))
    assert c["status"] == "WARN", c
    assert f"no {PLUGIN} beside {folder}" in c["reason"]
    assert "one node do not need it" in c["reason"]
    for words in ("install UCX", "-Ducx=enabled", "SHMEM_UCX_PLUGIN"):
        assert words in c["fix"], c["fix"]
    assert r.returncode == 0, r.stdout + r.stderr  # WARN never fails the run
    d = json.loads(run_tool("shmem-config", "--diagnose", env=env_without_plugin(ACLSHMEM_LIBRARY=lib)).stdout)
    assert d["ucx_plugin"]["found"] is False and d["ucx_plugin"]["path"] == str(folder / PLUGIN)
    if d["installation"].get("kind") == "ACLSHMEM_LIBRARY":
        assert d["installation"]["ucx_plugin"] is None
    assert any("SHMEM_UCX_PLUGIN" in s for s in d["next_steps"])


def _libc():
    with open("/proc/self/maps", encoding="utf-8") as f:
        for line in f:
            path = line.split()[-1]
            if os.path.basename(path).startswith("libc.so") or os.path.basename(path).startswith("libc-"):
                return path
    pytest.skip("no libc in /proc/self/maps")


@pytest.mark.parametrize("kind", ["text file", "libc", "missing file"])
def test_broken_variable_fails(lone_library, tmp_path, kind):
    _folder, lib = lone_library
    if kind == "text file":
        target = tmp_path / "notes.txt"
        target.write_text("not a shared object\n" * 100)
        target, words = str(target), "does not load as a plug-in"
    elif kind == "libc":
        target, words = _libc(), "is not a libaclshmem transport plug-in (no shmemi_transport_plugin)"
    else:
        target, words = str(tmp_path / "nowhere" / PLUGIN), "does not exist"
    r, c = check_json(env_without_plugin(ACLSHMEM_LIBRARY=lib, SHMEM_UCX_PLUGIN=target))
    assert c["status"] == "FAIL", c
    assert f"SHMEM_UCX_PLUGIN={target}" in c["reason"] and words in c["reason"], c["reason"]
    assert "SHMEM_UCX_PLUGIN" in c["fix"]
    assert r.returncode == 1


FAKE = textwrap.dedent("""\
    /* A plug-in of another libaclshmem version: the head of shmemi_plugin_t only. */
    typedef struct { int abi; const char *version; const char *name; } head_t;
    static const head_t plugin = {1, "0.0.7", "UCX 0.0"};
    __attribute__((visibility("default"))) const head_t *shmemi_transport_plugin(void) { return &plugin; }
    """)


def _build_fake(tmp_path):
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler to build a plug-in of another version")
    src = tmp_path / "fake.c"
    src.write_text(FAKE)
    out = tmp_path / "other" / PLUGIN
    out.parent.mkdir()
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(out), str(src)], check=True)
    return out


def test_another_version_fails(lone_library, tmp_path):
    folder, lib = lone_library
    fake = _build_fake(tmp_path)
    r, c = check_json(env_without_plugin(ACLSHMEM_LIBRARY=lib, SHMEM_UCX_PLUGIN=str(fake)))
    assert c["status"] == "FAIL", c
    assert "built for libaclshmem 0.0.7" in c["reason"] and c["details"]["version_matches"] is False
    assert r.returncode == 1
    # The same file beside the library (no variable): FAIL too, multi-node jobs would fail.
    shutil.copy(fake, folder / PLUGIN)
    r, c = check_json(env_without_plugin(ACLSHMEM_LIBRARY=lib))
    assert c["status"] == "FAIL" and "built for libaclshmem 0.0.7" in c["reason"], c
    assert "one build" in c["fix"]


def test_the_wheel_names_its_plugin():
    native = pytest.importorskip("shmem_native")
    path = native.ucx_plugin_path()
    beside = os.path.join(native.library_dir(), PLUGIN)
    assert path == (beside if os.path.isfile(beside) else None)
    if path is not None:
        # The wheel's library, asked in a process of its own, loads exactly that plug-in.
        env = env_without_plugin(ACLSHMEM_LIBRARY=native.library_path())
        u = json.loads(run_tool("shmem-config", "--diagnose", env=env).stdout)["ucx_plugin"]
        assert os.path.samefile(u["path"], path) and u["version"] == native.__version__


def test_disabled_is_a_warning_naming_the_variable(library_with_plugin):
    """SHMEM_UCX_PLUGIN=none: the library loads no plug-in (aclshmemx_describe says so), which
    only jobs with PEs on other nodes notice."""
    _folder, lib = library_with_plugin
    r, c = check_json(env_without_plugin(ACLSHMEM_LIBRARY=lib, SHMEM_UCX_PLUGIN="none"))
    assert c["status"] == "WARN", c
    assert "disabled by SHMEM_UCX_PLUGIN=none" in c["reason"] and "unset SHMEM_UCX_PLUGIN" in c["fix"]
    assert c["details"]["status"] == "disabled" and c["details"]["loaded"] is False
    assert r.returncode == 0, r.stdout + r.stderr
    d = json.loads(run_tool("shmem-config", "--diagnose",
                            env=env_without_plugin(ACLSHMEM_LIBRARY=lib, SHMEM_UCX_PLUGIN="none")).stdout)
    assert d["ucx_plugin"]["status"] == "disabled"
    assert any("SHMEM_UCX_PLUGIN=none" in s for s in d["next_steps"])


def test_the_tools_copy_nothing_private_of_the_plugin():
    """The tools ask the library (aclshmemx_describe): no copy of the plug-in's structures,
    entry point or file-name rule in their sources."""
    import shmem_tools

    root = os.path.dirname(shmem_tools.__file__)
    for folder, _dirs, files in os.walk(root):
        for f in files:
            if f.endswith(".py"):
                text = open(os.path.join(folder, f), encoding="utf-8").read()
                for private in ("shmemi_plugin", "shmemi_transport_plugin", "_PluginHead", "shmemi_ucx_data_plane",
                                '"libaclshmem_ucx.so"'):
                    assert private not in text, f"{f} copies {private}"
