"""Whether the installed pieces fit together: the four distributions' declared
requirements, and the C API of the loaded library against what shmem-core expects."""

import importlib
import importlib.metadata
import importlib.util
import os
import re

#: The four distributions of the project: (distribution name, import name).
PACKAGES = (
    ("shmem-native", "shmem_native"),
    ("shmem-core", "shmem"),
    ("shmem-torch", "shmem_torch"),
    ("shmem-tools", "shmem_tools"),
)


def expected_api_version():
    """(major, minor) of the C API the Python side expects, and where that came from."""
    try:
        from shmem import _native

        for attr in ("ABI_VERSION", "API_VERSION", "C_API_VERSION"):
            v = getattr(_native, attr, None)
            if v:
                return (int(v[0]), int(v[1])), f"shmem._native.{attr}"
    except Exception:
        pass
    native = package_info("shmem-native", "shmem_native")
    if native["version"]:
        m = re.match(r"(\d+)\.(\d+)", native["version"])
        if m:
            return (int(m.group(1)), int(m.group(2))), "the shmem-native version"
    return None, None


def package_info(dist, module):
    """installed, version, location and requirements of one distribution; a module
    importable without metadata (a source tree on PYTHONPATH) counts as installed."""
    info = {"installed": False, "version": None, "location": None, "source": None, "requires": []}
    try:
        d = importlib.metadata.distribution(dist)
    except importlib.metadata.PackageNotFoundError:
        d = None
    if d is not None:
        info.update(installed=True, version=d.version, source="metadata", requires=list(d.requires or []))
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.origin:
        info["location"] = os.path.dirname(spec.origin)
        if d is None:
            info["installed"] = True
            info["source"] = "import (no package metadata)"
            try:
                info["version"] = getattr(importlib.import_module(module), "__version__", None)
            except Exception as exc:
                info["import_error"] = str(exc)
    elif d is not None:
        info["import_error"] = f"{module} is not importable although {dist} is installed"
    return info


def _parse_requirement(text):
    try:
        from packaging.requirements import Requirement
    except ImportError:
        return None
    try:
        return Requirement(text)
    except Exception:
        return None


def _normalise(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def compatibility(packages, library):
    """Checks the declared requirements between the four packages and that the native
    library's C API matches the shmem-native version.  Returns (compatible, [problems])."""
    problems = []
    names = {_normalise(d) for d, _ in PACKAGES}
    for dist, info in packages.items():
        if not info["installed"]:
            continue
        for text in info.get("requires", []):
            req = _parse_requirement(text)
            if req is None or _normalise(req.name) not in names:
                continue
            target = packages.get(_normalise(req.name))
            optional = req.marker is not None and "extra" in str(req.marker)
            # shmem-core requires shmem-native, but a system that provides libaclshmem
            # itself installs shmem-core without it (pip install --no-deps): no problem
            # as long as a library loads (its C API is checked by check_abi).
            provided = _normalise(req.name) == "shmem-native" and library is not None
            if not target or not target["installed"]:
                if not optional and not provided:
                    problems.append(f"{dist} requires {text} but {req.name} is not installed")
                continue
            if req.specifier and target["version"] and not req.specifier.contains(target["version"],
                                                                                   prereleases=True):
                problems.append(f"{dist} requires {req.name}{req.specifier} but {target['version']} is installed")
    if not packages.get("shmem-core", {}).get("installed"):
        problems.append("shmem-core (the shmem package) is not installed")
    native = packages.get("shmem-native", {})
    if library and library.get("api_version") and native.get("version"):
        m = re.match(r"(\d+)\.(\d+)", native["version"])
        if m and [int(m.group(1)), int(m.group(2))] != library["api_version"]:
            problems.append(
                f"shmem-native {native['version']} is installed but the loaded library "
                f"({library.get('path')}) implements C API {library['api_version'][0]}.{library['api_version'][1]}")
    return not problems, problems


def all_packages():
    return {dist: package_info(dist, module) for dist, module in PACKAGES}
