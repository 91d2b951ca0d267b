"""The four packages are published separately: each has its own pyproject.toml, one
place for its version, a CHANGELOG.md whose newest entry is that version, and declares
what it needs of the others.  (ci/wheels.sh builds the four wheels, installs them into a
fresh venv from the wheel files alone and runs a 2-PE job.)
"""

import ast
import os
import re
import sys

import pytest

from integration_helpers import PACKAGES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    tomllib = pytest.importorskip("tomli")

PACKAGES_BY_NAME = {
    "shmem-native": None,
    "shmem-core": ("shmem", "src/shmem/__init__.py"),
    "shmem-torch": ("shmem_torch", "src/shmem_torch/__init__.py"),
    "shmem-tools": ("shmem_tools", "src/shmem_tools/__init__.py"),
}


def pyproject(name):
    with open(os.path.join(PACKAGES, name, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)


def module_version(path):
    with open(path, encoding="utf-8") as f:
        for node in ast.parse(f.read()).body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__version__" for t in node.targets):
                return ast.literal_eval(node.value)
    return None


def package_version(name):
    if name == "shmem-native":
        with open(os.path.join(PACKAGES, name, "VERSION"), encoding="utf-8") as f:
            return f.read().strip()
    return module_version(os.path.join(PACKAGES, name, PACKAGES_BY_NAME[name][1]))


@pytest.mark.parametrize("name", sorted(PACKAGES_BY_NAME))
def test_its_own_pyproject_names_it(name):
    data = pyproject(name)
    assert data["project"]["name"] == name
    assert data["build-system"]["requires"] and data["build-system"]["build-backend"]


@pytest.mark.parametrize("name", sorted(PACKAGES_BY_NAME))
def test_the_version_is_kept_in_one_place(name):
    data = pyproject(name)
    static = data["project"].get("version")
    assert static is None, (f"{name}: pyproject.toml repeats the version ({static}) next to "
                            f"{package_version(name)!r} in the package; make it dynamic")
    assert "version" in data["project"].get("dynamic", [])
    if name == "shmem-native":
        # meson-python takes the version from meson, which reads the VERSION file.
        with open(os.path.join(PACKAGES, name, "meson.build"), encoding="utf-8") as f:
            assert "files('VERSION')" in f.read()
    else:
        module, _ = PACKAGES_BY_NAME[name]
        attr = data["tool"]["setuptools"]["dynamic"]["version"]["attr"]
        assert attr == f"{module}.__version__"
    assert re.fullmatch(r"\d+\.\d+\.\d+([a-z]+\d+)?", package_version(name))


@pytest.mark.parametrize("name", sorted(PACKAGES_BY_NAME))
def test_the_changelog_starts_with_the_current_version(name):
    path = os.path.join(PACKAGES, name, "CHANGELOG.md")
    assert os.path.isfile(path), f"{name} has no CHANGELOG.md"
    with open(path, encoding="utf-8") as f:
        headings = [line[3:].strip() for line in f if line.startswith("## ")]
    assert headings, f"{path} has no version entry (## VERSION)"
    assert headings[0].split()[0] == package_version(name), (
        f"{path}: the newest entry is {headings[0]!r}, the package's version is {package_version(name)}")


def _requirements(name):
    data = pyproject(name)["project"]
    reqs = list(data.get("dependencies", []))
    for extra in data.get("optional-dependencies", {}).values():
        reqs.extend(extra)
    return reqs


@pytest.mark.parametrize("name, needs", [("shmem-torch", "shmem-core"), ("shmem-tools", "shmem-core")])
def test_it_depends_on_the_packages_it_imports(name, needs):
    assert any(re.match(rf"{needs}\b", r) for r in _requirements(name)), _requirements(name)


def test_shmem_core_declares_the_shmem_native_versions_it_supports():
    reqs = [r for r in _requirements("shmem-core") if re.match(r"shmem-native\b", r)]
    assert reqs, "shmem-core does not mention shmem-native"
    assert any(re.search(r"[<>=~!]", r) for r in reqs), f"shmem-native without a version range: {reqs}"


def test_only_shmem_native_has_compiled_code():
    for name in ("shmem-core", "shmem-torch", "shmem-tools"):
        src = os.path.join(PACKAGES, name, "src")
        compiled = [os.path.join(root, f) for root, _d, files in os.walk(src)
                    for f in files if f.endswith((".c", ".so", ".pyx"))]
        assert not compiled, f"{name} should be pure Python: {compiled}"


def test_shmem_core_checks_the_native_abi_at_load(tmp_path):
    """Loading a library that is not a compatible libaclshmem (here: the C library itself,
    which exports none of its functions) must fail at load, with a message that says the
    library does not match, rather than on the first call that happens to be missing."""
    import ctypes.util
    import subprocess

    from integration_helpers import SOURCES

    libc = ctypes.util.find_library("c")
    if not libc:
        pytest.skip("no C library to stand in for a wrong libaclshmem")
    env = dict(os.environ, ACLSHMEM_LIBRARY=libc,
               PYTHONPATH=os.pathsep.join([SOURCES["shmem"], os.environ.get("PYTHONPATH", "")]))
    code = "from shmem import _native; _native.load(); print('loaded')"
    proc = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, env=env, timeout=60)
    assert proc.returncode != 0, "shmem-core loaded a library that is not a compatible libaclshmem"
    message = proc.stderr.strip().splitlines()[-1]
    assert re.search(r"ABI|version|missing|not a libaclshmem", message, re.I), message
