"""The UCX transport plug-in as the loaded libaclshmem sees it: the library's own answer
(``aclshmemx_describe``) to where the plug-in is, whether it loads and why not.  Nothing
here knows the plug-in's file name, its entry point or its structures: the library does.
"""

import os
import re

from .installation import Installation

#: The variable that names another plug-in file, or ``none`` (docs/reference/environment.rst).
ENV_UCX_PLUGIN = "SHMEM_UCX_PLUGIN"

# A UCX library that the plug-in needs and the loader did not find: UCX is not installed
# here (the plug-in came from a machine that had it).
_MISSING_UCX = re.compile(r"\b(lib(?:ucp|uct|ucs|ucm)\.so[.\d]*): cannot open shared object file")

# aclshmemx_describe's statuses in which the plug-in file exists.
_FOUND = ("loaded", "load_failed", "not_a_plugin", "mismatch")


def ucx_plugin(runtime):
    """The UCX plug-in that the loaded libaclshmem loads for a job with PEs on other nodes
    (loading it now if no job has), and whether it can.  A dict:

    ``path``     the file (SHMEM_UCX_PLUGIN, else the library's file beside itself)
    ``source``   "SHMEM_UCX_PLUGIN" or "beside libaclshmem"
    ``status``   aclshmemx_describe's: loaded, disabled, not_found, load_failed, not_a_plugin,
                 mismatch
    ``found``    the file exists (a bare SHMEM_UCX_PLUGIN name is left to the loader's search)
    ``loaded``   it loaded and was built with this library: multi-node jobs can use it
    ``abi``, ``version``, ``name``  what the plug-in says of itself (None when it has no entry)
    ``expected_abi``     the plug-in ABI this library loads
    ``error``            why it is not loaded (the library's words), else None
    ``missing_ucx``      the UCX library the loader could not find, when that is why
    ``data_plane``, ``data_plane_error``  what the plug-in makes of this environment
    ``library_version``  the loaded libaclshmem's version, which the plug-in's must equal
    ``version_matches``  True / False, or None when either version is unknown
    """
    out = {"path": None, "source": None, "status": None, "found": False, "loaded": False, "abi": None,
           "version": None, "name": None, "expected_abi": None, "error": None, "missing_ucx": None,
           "data_plane": None, "data_plane_error": None, "library_version": runtime.get("version"),
           "version_matches": None}
    if not runtime["ok"]:
        out["error"] = "the native library does not load"
        return out
    from shmem import _pyshmem

    u = _pyshmem.aclshmemx_describe()["ucx_plugin"]
    out.update(path=u["path"], source=ENV_UCX_PLUGIN if u["from_env"] else "beside libaclshmem",
               status=u["status"], found=u["status"] in _FOUND, loaded=u["status"] == "loaded", abi=u["abi"],
               version=u["version"], name=u["name"], expected_abi=u["expected_abi"], error=u["reason"] or None)
    if out["error"]:
        m = _MISSING_UCX.search(out["error"])
        out["missing_ucx"] = m.group(1) if m else None
    if out["loaded"]:
        plane = u["data_plane"] or None
        out["data_plane"], out["data_plane_error"] = (None, plane) if u["data_plane_error"] else (plane, None)
    if out["version"] and out["library_version"]:
        out["version_matches"] = out["version"] == out["library_version"]
    return out


def installed_plugin(installation: Installation, plugin):
    """The plug-in file of ``installation``: the one it names itself (the wheel), else the
    file the loaded library looks for (``plugin``: ucx_plugin()) when that library lives in
    the installation's folder and the file is there; None otherwise."""
    if installation.ucx_plugin or not plugin or plugin["source"] == ENV_UCX_PLUGIN or not plugin["found"]:
        return installation.ucx_plugin
    folder = os.path.dirname(plugin["path"])
    try:
        same = os.path.samefile(folder, installation.lib_dir)
    except OSError:
        same = False
    return plugin["path"] if same else None
