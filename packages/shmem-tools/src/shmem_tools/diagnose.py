"""``shmem-config --diagnose``: what is installed, what loaded, and whether it fits together.

The result is one JSON object.  Its keys (stable; tools may read them):

``version``            the native library's version (shmem-native / pkg-config / library name)
``backend``            ``{"selected": "cpu", "machine": ..., "available": ["cpu"]}``
``native_library``     ``{"loaded", "error", "path", "source", "name", "api_version"}``: what
                       the ``shmem`` package loads (ACLSHMEM_LIBRARY, shmem_native, system)
``native_load``        ``{"ok", "error"}`` (the original tool's key)
``installation``       where the headers and the library for C builds are (``--include`` ...)
``packages``           per distribution (shmem-native, shmem-core, shmem-torch, shmem-tools):
                       installed, version, location
``compatibility``      ``{"compatible": bool, "problems": [...]}``
``multi_so_conflict``  ``{"detected": bool, "loaded_paths": [...]}`` from /proc/self/maps
``runtime_root``       ``{"path", "matches_package_root", "package_root"}``
``ucx_plugin``         the UCX transport plug-in the loaded library would load for a job with
                       PEs on other nodes: ``{"path", "source", "found", "loaded", "name",
                       "version", "abi", "expected_abi", "status", "library_version",
                       "version_matches", "error", "data_plane", "data_plane_error"}``, the
                       library's own account (aclshmemx_describe; source: ``SHMEM_UCX_PLUGIN``
                       or ``beside libaclshmem``; status: ``loaded``, ``disabled``,
                       ``not_found``, ``load_failed``, ``not_a_plugin``, ``mismatch``;
                       data_plane: what this environment selects, e.g.
                       ``am (UCX_TLS=tcp ...); socket filter on``)
``degraded``           true when SHMEM cannot work as installed; ``degraded_reason`` says why
``next_steps``         what to do, in order ("No issues detected. SHMEM is ready." when none)
"""

import platform

from . import _install


def diagnose():
    installation, not_found = _install.find_installation()
    runtime = _install.runtime_library()
    packages = _install.all_packages()
    compatible, problems = _install.compatibility(packages, runtime if runtime["ok"] else None)
    mapped = runtime["mapped"]

    version = None
    if installation is not None and installation.version:
        version = installation.version
    elif runtime["name"]:
        version = runtime["name"].split()[-1].lstrip("v")
    elif runtime["api_version"]:
        version = "{}.{}".format(*runtime["api_version"])

    runtime_root = _install.root_of_library(mapped[0]) if mapped else None
    package_root = installation.root if installation is not None else None
    reasons = []
    steps = []
    if not runtime["ok"]:
        reasons.append(f"the native library does not load: {runtime['error']}")
        if installation is not None and installation.library and installation.kind != _install.ENV_LIBRARY:
            steps.append(f"Python does not find the library that {installation.kind} describes: "
                         f"export ACLSHMEM_LIBRARY={installation.library} (or add {installation.lib_dir} "
                         "to LD_LIBRARY_PATH).")
        else:
            steps.append("Install the native library: pip install shmem-native "
                         "(or set ACLSHMEM_LIBRARY to a built libaclshmem.so.1).")
    if len(mapped) > 1:
        reasons.append(f"{len(mapped)} copies of libaclshmem are loaded in one process")
        steps.append("Keep one libaclshmem: uninstall the others or unset ACLSHMEM_LIBRARY / LD_PRELOAD.")
    if runtime["ok"]:
        try:
            missing = _install.missing_symbols(mapped[0] if mapped else runtime["path"],
                                               _install.declared_functions())
        except Exception as exc:
            missing = [f"(cannot check: {exc})"]
        if missing:
            reasons.append(f"the loaded library lacks {len(missing)} functions shmem-core binds")
            steps.append("Install matching shmem-native and shmem-core releases.")
    if not compatible:
        reasons.extend(problems)
        steps.append("Install matching releases: pip install -U shmem-native shmem-core shmem-tools.")
    if installation is None:
        steps.append("For C builds, install shmem-native or make pkg-config find aclshmem "
                     "(PKG_CONFIG_PATH); --include/--lib/--ldflags need one of them.")
    elif installation.include_dir is None:
        steps.append(f"The headers (aclshmem.h) were not found next to {installation.lib_dir}; "
                     "install shmem-native or the library's development files for C builds.")
    if runtime["ok"] and runtime_root and package_root and runtime_root != package_root:
        steps.append(f"Python loads libaclshmem from {runtime_root} but C builds use {package_root}; "
                     "make them the same installation unless that is intended.")
    plugin = _install.ucx_plugin(runtime) if runtime["ok"] else None
    if plugin is not None:
        env = _install.ENV_UCX_PLUGIN
        if plugin["status"] == "disabled":
            steps.append(f"{env}=none disables the UCX plug-in: unset it for jobs with PEs on other nodes.")
        elif plugin["source"] == env and not (plugin["loaded"] and plugin["version_matches"] is not False):
            steps.append(f"{env}={plugin['path']} is not a usable plug-in of this libaclshmem "
                         f"({plugin['error'] or 'version ' + str(plugin['version'])}): fix or unset it, or "
                         "multi-node jobs fail at init.")
        elif plugin["found"] and plugin["version_matches"] is False:
            steps.append(f"The UCX plug-in {plugin['path']} was built for libaclshmem {plugin['version']}, "
                         f"not {plugin['library_version']}: reinstall both from one build.")
        elif plugin["found"] and not plugin["loaded"]:
            steps.append(f"The UCX plug-in {plugin['path']} does not load ({plugin['error']}): multi-node "
                         "jobs fail at init; install UCX (libucx0) or reinstall libaclshmem.")
        elif not plugin["found"]:
            steps.append("Optional: for jobs with PEs on other nodes, build libaclshmem with UCX "
                         "(apt-get install libucx-dev, meson -Ducx=enabled) so that libaclshmem_ucx.so "
                         "sits beside it, or set SHMEM_UCX_PLUGIN.")
    if not packages["shmem-torch"]["installed"]:
        steps.append("Optional: pip install shmem-torch for symmetric torch tensors and collectives.")
    degraded = bool(reasons)
    if not steps or (not degraded and all(s.startswith("Optional") for s in steps)):
        steps.insert(0, "No issues detected. SHMEM is ready.")
    return {
        "version": version,
        "backend": {"selected": _install.BACKEND, "machine": platform.machine(), "available": [_install.BACKEND]},
        "native_library": {
            "loaded": runtime["ok"],
            "error": runtime["error"],
            "path": runtime["path"],
            "source": runtime["source"],
            "name": runtime["name"],
            "api_version": ".".join(map(str, runtime["api_version"])) if runtime["api_version"] else None,
        },
        "native_load": {"ok": runtime["ok"], "error": runtime["error"]},
        "installation": (dict(installation.as_dict(), ucx_plugin=_install.installed_plugin(installation, plugin))
                         if installation else {"found": False, "tried": not_found}),
        "packages": {d: {k: v for k, v in info.items() if k != "requires"} for d, info in packages.items()},
        "compatibility": {"compatible": compatible, "problems": problems},
        "multi_so_conflict": {"detected": len(mapped) > 1, "loaded_paths": mapped},
        "runtime_root": {"path": runtime_root, "matches_package_root": runtime_root == package_root
                         if runtime_root and package_root else None, "package_root": package_root},
        "ucx_plugin": ({k: v for k, v in plugin.items() if k != "missing_ucx"} if plugin is not None else
                       {"path": None, "source": None, "found": False, "loaded": False,
                        "error": "not checked: the native library does not load"}),
        "degraded": degraded,
        "degraded_reason": "; ".join(reasons) if reasons else None,
        "next_steps": steps,
    }
