"""What this process loaded: the libaclshmem the ``shmem`` package loads (it has its own
order, ``ACLSHMEM_LIBRARY`` first), every copy mapped, and whether it has every function
shmem-core binds."""

import ctypes
import os
import re

from .installation import ENV_LIBRARY, LIBRARY_STEM


def loaded_libraries(stem=LIBRARY_STEM, maps="/proc/self/maps"):
    """Every distinct file named ``<stem>*.so*`` mapped into this process (real paths,
    one per inode, in the order they appear)."""
    seen = {}
    try:
        with open(maps, encoding="utf-8", errors="replace") as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) < 6:
                    continue
                path = parts[5].strip()
                if path.endswith(" (deleted)"):
                    path = path[: -len(" (deleted)")]
                base = os.path.basename(path)
                if not (base.startswith(stem) and ".so" in base):
                    continue
                try:
                    st = os.stat(path)
                    key = (st.st_dev, st.st_ino)
                except OSError:
                    key = path
                seen.setdefault(key, os.path.realpath(path))
    except OSError:
        return []
    return list(seen.values())


def runtime_library():
    """Loads libaclshmem the way the ``shmem`` package does and describes the result.

    Returns a dict: ok, error, path (what shmem loaded: a path or the soname), source
    (which of shmem's search places), mapped (the real files mapped in this process),
    name, api_version ([major, minor]), and from the library's own description
    (aclshmemx_describe, which loads no plug-in): file (the library's file as the dynamic
    loader names it, so its folder is where it looks for its plug-ins) and version."""
    out = {"ok": False, "error": None, "path": None, "source": None, "mapped": [], "name": None,
           "api_version": None, "file": None, "version": None}
    try:
        from shmem import _native
    except Exception as exc:
        out["error"] = f"the shmem package (shmem-core) cannot be imported: {exc}"
        return out
    try:
        ffi, lib = _native.load()
    except Exception as exc:
        out["error"] = str(exc)
        out["mapped"] = loaded_libraries()
        return out
    out["ok"] = True
    out["path"] = _native.library_path()
    if os.environ.get(ENV_LIBRARY):
        out["source"] = ENV_LIBRARY
    elif out["path"] and os.path.isabs(out["path"]):
        out["source"] = "shmem_native package"
    else:
        out["source"] = "system loader"
    out["mapped"] = loaded_libraries()
    try:
        major, minor = ffi.new("int *"), ffi.new("int *")
        lib.aclshmem_info_get_version(major, minor)
        out["api_version"] = [int(major[0]), int(minor[0])]
        name = ffi.new("char[]", 256)
        lib.aclshmem_info_get_name(name)
        out["name"] = ffi.string(name).decode("utf-8", "replace")
    except Exception as exc:  # a library without these functions is not libaclshmem
        out["ok"] = False
        out["error"] = f"the loaded library does not answer aclshmem_info_get_version/_name: {exc}"
        return out
    from shmem import _pyshmem

    described = _pyshmem.aclshmemx_describe(load=False)
    out["file"], out["version"] = described["library_path"], described["version"]
    return out



def loaded_library():
    """(the libaclshmem file this process loads, as the loader names it; runtime_library()'s
    description).  RuntimeError saying why when it does not load."""
    runtime = runtime_library()
    if not runtime["ok"]:
        raise RuntimeError(f"the native library does not load: {runtime['error']}")
    lib = loaded_library_file(runtime)
    if not lib:
        raise RuntimeError("cannot tell which libaclshmem file is loaded")
    return lib, runtime


def loaded_library_file(runtime):
    """The file of the libaclshmem that ``runtime`` (runtime_library()) loaded, as the
    dynamic loader names it (the library's own answer); None when it did not load."""
    if not runtime["ok"]:
        return None
    return runtime["file"] if runtime["file"] and os.path.isabs(runtime["file"]) else None


def declared_functions():
    """The names of every C function shmem-core's binding declares."""
    from shmem import _native

    names = set(re.findall(r"\b((?:aclshmem|util_)\w*)\s*\(", _native.cdef_source()))
    return sorted(names)


def missing_symbols(library, names):
    """The names that the library file (a path or soname) does not export."""
    lib = ctypes.CDLL(library)
    missing = []
    for name in names:
        try:
            getattr(lib, name)
        except AttributeError:
            missing.append(name)
    return missing
