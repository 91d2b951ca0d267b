"""The four packages are published separately: each has its own pyproject.toml, one
place for its version, a CHANGELOG.md whose newest entry is that version, and declares
what it needs of the others with version ranges that hold the current releases, so a
release cannot publish an incoherent set.  (ci/wheels.sh builds the four wheels, installs
them into fresh venvs with plain `pip install shmem-core` / `pip install shmem-torch` and
runs a 2-PE job from each.)
"""

import ast
import os
import re
import sys

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

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


def _requirements(name, extras=True):
    """The package's requirements (dependencies, and with extras its optional ones too)."""
    data = pyproject(name)["project"]
    reqs = [Requirement(r) for r in data.get("dependencies", [])]
    if extras:
        for extra in data.get("optional-dependencies", {}).values():
            reqs.extend(Requirement(r) for r in extra)
    return reqs


def _native_module_constant(name):
    """A constant of shmem/_native.py, read without importing it (no cffi needed)."""
    path = os.path.join(PACKAGES, "shmem-core", "src", "shmem", "_native.py")
    with open(path, encoding="utf-8") as f:
        for node in ast.parse(f.read()).body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == name for t in node.targets):
                return ast.literal_eval(node.value)
    raise AssertionError(f"{path} has no {name}")


#: What each package must pull in by itself, so that `pip install <package>` gives a stack
#: that runs: the native library under shmem-core, torch under shmem-torch.
REQUIRED = {
    "shmem-native": set(),
    "shmem-core": {"shmem-native", "cffi"},
    "shmem-torch": {"shmem-core", "torch"},
    "shmem-tools": {"shmem-core", "tabulate", "tqdm"},
}


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_a_plain_install_brings_what_the_package_needs(name):
    names = {canonicalize_name(r.name) for r in _requirements(name, extras=False)}
    missing = REQUIRED[name] - names
    assert not missing, f"{name}: {sorted(missing)} only optional or not declared ({sorted(names)})"


def _requirements_between_the_packages():
    return [(name, str(req)) for name in sorted(PACKAGES_BY_NAME) for req in _requirements(name)
            if canonicalize_name(req.name) in PACKAGES_BY_NAME]


def _next_breaking_release(name, version):
    """The first release of a package that may break its users: a new minor release of
    shmem-native carries another C API (shmem-core binds one exactly), a new minor release
    of a 0.x package may change its API; after 1.0, a new major release."""
    major, minor = Version(version).release[:2]
    if name == "shmem-native" or major == 0:
        return f"{major}.{minor + 1}.0"
    return f"{major + 1}.0.0"


@pytest.mark.parametrize("name, text", _requirements_between_the_packages())
def test_a_requirement_between_the_packages_admits_the_current_release_and_no_breaking_one(name, text):
    req = Requirement(text)
    target = canonicalize_name(req.name)
    current = package_version(target)
    assert req.specifier.contains(current, prereleases=True), (
        f"{name} requires {text}, which refuses {target} {current} of this checkout")
    assert any(s.operator in (">=", "~=", "==") for s in req.specifier), f"{name}: {text} has no lower bound"
    breaking = _next_breaking_release(target, current)
    assert not req.specifier.contains(breaking, prereleases=True), (
        f"{name} requires {text}, which admits {target} {breaking}, a release that may break it")


def test_the_packages_require_one_another_with_ranges():
    """The parametrised check above needs something to check."""
    pairs = {(name, canonicalize_name(Requirement(text).name)) for name, text in _requirements_between_the_packages()}
    assert {("shmem-core", "shmem-native"), ("shmem-torch", "shmem-core"), ("shmem-tools", "shmem-core")} <= pairs


def test_shmem_core_requires_the_shmem_native_range_it_checks_at_load():
    """The range pip enforces and the range shmem-core names when it refuses a library are
    one and the same, and they hold the C API (ABI_VERSION) that shmem-core binds."""
    reqs = [r for r in _requirements("shmem-core", extras=False) if canonicalize_name(r.name) == "shmem-native"]
    assert len(reqs) == 1, reqs
    supported = _native_module_constant("SUPPORTED_NATIVE")
    assert reqs[0].specifier == SpecifierSet(supported), (
        f"pyproject.toml requires {reqs[0]}, shmem._native.SUPPORTED_NATIVE is {supported!r}")
    abi = _native_module_constant("ABI_VERSION")
    assert Version(package_version("shmem-native")).release[:2] == tuple(abi), (
        f"shmem-native {package_version('shmem-native')} does not carry C API {abi} that shmem-core binds")


def test_shmem_torch_requires_a_minimum_torch():
    (torch,) = [r for r in _requirements("shmem-torch", extras=False) if canonicalize_name(r.name) == "torch"]
    lower = [s for s in torch.specifier if s.operator == ">="]
    assert lower and not any(s.operator in ("<", "<=", "==") for s in torch.specifier), (
        f"torch should have a minimum version and no upper bound (the user's torch stays): {torch}")


# C programs a tool builds on the user's machine when it runs (shmem-perf --oshmem): package
# data that the wheel ships as text, not code compiled into the package.
RUNTIME_PROGRAMS = {"shmem-tools": {"oshmem_bench.c"}}


def test_only_shmem_native_has_compiled_code():
    for name in ("shmem-core", "shmem-torch", "shmem-tools"):
        src = os.path.join(PACKAGES, name, "src")
        compiled = [os.path.join(root, f) for root, _d, files in os.walk(src)
                    for f in files if f.endswith((".c", ".so", ".pyx")) and f not in RUNTIME_PROGRAMS.get(name, ())]
        assert not compiled, f"{name} should be pure Python: {compiled}"
    data = pyproject("shmem-tools")["tool"]["setuptools"]["package-data"]["shmem_tools"]
    assert set(data) == RUNTIME_PROGRAMS["shmem-tools"], "the programs shmem-tools builds at run time ship as data"


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
