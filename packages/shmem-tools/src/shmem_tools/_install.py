"""Where SHMEM is installed and what this process has loaded.

Three kinds of installation are recognised, in this order, for the build paths
(``--include``, ``--lib``, ``--ldflags``, ...):

1. the ``shmem_native`` package (the ``shmem-native`` wheel): library, headers and
   ``aclshmem.pc`` inside site-packages;
2. pkg-config ``aclshmem`` (``meson install`` of the C library, a distribution package);
3. the library named by ``ACLSHMEM_LIBRARY`` (a build tree): its folder is the library
   folder, and ``<folder>/../include`` the header folder when ``aclshmem.h`` is there.

At run time the ``shmem`` package loads the library in its own order
(``ACLSHMEM_LIBRARY`` first); ``runtime_library()`` reports what it actually loaded, and
``ucx_plugin()`` the UCX transport plug-in that library would load for a job with PEs on
other nodes (``SHMEM_UCX_PLUGIN``, else ``libaclshmem_ucx.so`` beside the library).
"""

import ctypes
import importlib
import importlib.metadata
import importlib.util
import os
import re
import shutil
import subprocess

BACKEND = "cpu"
LIBRARY_STEM = "libaclshmem"
PKG_CONFIG_NAME = "aclshmem"
ENV_LIBRARY = "ACLSHMEM_LIBRARY"
#: The UCX transport plug-in: its file name (beside libaclshmem), the variable naming
#: another file, and the one symbol it exports (src/transport/plugin.h).
UCX_PLUGIN_FILE = "libaclshmem_ucx.so"
ENV_UCX_PLUGIN = "SHMEM_UCX_PLUGIN"
UCX_PLUGIN_ENTRY = "shmemi_transport_plugin"
UCX_DATA_PLANE_FN = "shmemi_ucx_data_plane"

#: The four distributions of the project: (distribution name, import name).
PACKAGES = (
    ("shmem-native", "shmem_native"),
    ("shmem-core", "shmem"),
    ("shmem-torch", "shmem_torch"),
    ("shmem-tools", "shmem_tools"),
)

_SYSTEM_LIB_DIRS = {"/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib"}


class Installation:
    """One installation of the C library: where its library and headers are."""

    def __init__(self, kind, root, lib_dir, include_dir, library, version, pkgconfig_dir=None, ucx_plugin=None):
        self.kind = kind                # "shmem_native package", "pkg-config", "ACLSHMEM_LIBRARY"
        self.root = root                # the installation's top folder
        self.lib_dir = lib_dir          # the folder holding libaclshmem.so
        self.include_dir = include_dir  # the folder holding aclshmem.h, or None
        self.library = library          # the library file, or None
        self.version = version          # its version text, or None
        self.pkgconfig_dir = pkgconfig_dir
        # libaclshmem_ucx.so beside the library, or None
        self.ucx_plugin = ucx_plugin if ucx_plugin is not None else _plugin_beside(lib_dir)

    def as_dict(self):
        return {
            "kind": self.kind,
            "root": self.root,
            "lib_dir": self.lib_dir,
            "include_dir": self.include_dir,
            "library": self.library,
            "version": self.version,
            "pkgconfig_dir": self.pkgconfig_dir,
            "ucx_plugin": self.ucx_plugin,
        }

    def needs_rpath(self):
        """False for the loader's own folders, where an rpath adds nothing."""
        d = os.path.realpath(self.lib_dir)
        if d in _SYSTEM_LIB_DIRS:
            return False
        parent = os.path.dirname(d)
        return not (parent in _SYSTEM_LIB_DIRS and "-linux-" in os.path.basename(d))

    def cflags(self):
        return f"-I{self.include_dir}" if self.include_dir else ""

    def rpath(self):
        return f"-Wl,-rpath,{self.lib_dir}"

    def ldflags(self):
        """Compile and link flags: ``cc prog.c $(shmem-config --ldflags)`` builds a program
        that runs without LD_LIBRARY_PATH."""
        parts = []
        if self.include_dir:
            parts.append(self.cflags())
        parts.append(f"-L{self.lib_dir}")
        if self.needs_rpath():
            parts.append(self.rpath())
        parts.append("-laclshmem")
        return " ".join(parts)


def _plugin_beside(lib_dir):
    path = os.path.join(lib_dir, UCX_PLUGIN_FILE) if lib_dir else None
    return path if path and os.path.isfile(path) else None


def _has_header(folder):
    return bool(folder) and os.path.isfile(os.path.join(folder, "aclshmem.h"))


def from_wheel():
    """The shmem_native package's installation, or None (with the reason)."""
    try:
        native = importlib.import_module("shmem_native")
    except ImportError as exc:
        return None, f"the shmem_native package is not installed ({exc})"
    try:
        library = native.library_path()
    except Exception as exc:  # a damaged installation
        return None, f"the shmem_native package is damaged: {exc}"
    lib_dir = os.path.dirname(os.path.realpath(library))
    include_dir = native.include_dir()
    pc_dir = native.pkgconfig_dir()
    root = os.path.dirname(os.path.realpath(native.__file__))
    plugin = native.ucx_plugin_path() if hasattr(native, "ucx_plugin_path") else None
    return Installation(
        "shmem_native package", root, lib_dir, include_dir if _has_header(include_dir) else None,
        library, getattr(native, "__version__", None), pc_dir if os.path.isdir(pc_dir) else None,
        plugin,
    ), None


def _pkg_config(*args):
    exe = shutil.which("pkg-config")
    if not exe:
        return None
    try:
        out = subprocess.run([exe, *args, PKG_CONFIG_NAME], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return out.stdout.strip()


def from_pkg_config():
    """The installation pkg-config knows as ``aclshmem``, or None (with the reason)."""
    if not shutil.which("pkg-config"):
        return None, "pkg-config is not installed"
    version = _pkg_config("--modversion")
    if version is None:
        return None, f"pkg-config does not know {PKG_CONFIG_NAME} (PKG_CONFIG_PATH={os.environ.get('PKG_CONFIG_PATH', '')!r})"
    lib_dir = _pkg_config("--variable=libdir") or ""
    include_dir = _pkg_config("--variable=includedir") or ""
    prefix = _pkg_config("--variable=prefix") or os.path.dirname(lib_dir)
    pc_dir = _pkg_config("--variable=pcfiledir")
    lib_dir, include_dir, prefix = (os.path.normpath(p) if p else p for p in (lib_dir, include_dir, prefix))
    library = None
    for name in (f"{LIBRARY_STEM}.so", f"{LIBRARY_STEM}.so.1"):
        if lib_dir and os.path.exists(os.path.join(lib_dir, name)):
            library = os.path.join(lib_dir, name)
            break
    return Installation("pkg-config", prefix, lib_dir, include_dir if _has_header(include_dir) else None,
                        library, version, pc_dir), None


def _wheel_package_of(lib_dir):
    """The shmem_native package folder when lib_dir is the library folder of its wheel,
    which lies beside the package in site-packages rather than inside it; else None."""
    try:
        native = importlib.import_module("shmem_native")
        folder = native.library_dir()
    except Exception:  # not installed, or an older shmem_native
        return None
    if os.path.realpath(folder) != os.path.realpath(lib_dir):
        return None
    return os.path.dirname(os.path.realpath(native.__file__))


def root_of_library(path):
    """The installation root of a library file: the parent of its folder (skipping a
    multiarch folder such as lib/x86_64-linux-gnu); for the shmem-native wheel's library,
    the package shmem_native."""
    d = os.path.dirname(os.path.realpath(path)) if os.path.isfile(path) else os.path.dirname(path)
    wheel_package = _wheel_package_of(d)
    if wheel_package is not None:
        return wheel_package
    if "-linux-" in os.path.basename(d):
        d = os.path.dirname(d)
    return os.path.dirname(d)


def from_env():
    """The installation around ACLSHMEM_LIBRARY, or None (with the reason)."""
    path = os.environ.get(ENV_LIBRARY)
    if not path:
        return None, f"{ENV_LIBRARY} is not set"
    if not os.path.isfile(path):
        return None, f"{ENV_LIBRARY}={path} does not exist"
    lib_dir = os.path.dirname(os.path.abspath(path))
    root = root_of_library(path)
    include_dir = os.path.join(root, "include")
    return Installation(ENV_LIBRARY, root, lib_dir, include_dir if _has_header(include_dir) else None,
                        os.path.abspath(path), None), None


def find_installation():
    """(Installation or None, [reasons for every kind that was not found])."""
    reasons = []
    for finder in (from_wheel, from_pkg_config, from_env):
        inst, why = finder()
        if inst is not None:
            return inst, reasons
        reasons.append(why)
    return None, reasons


def header_version(include_dir):
    """(major, minor) from aclshmem/types.h, or None."""
    if not include_dir:
        return None
    path = os.path.join(include_dir, "aclshmem", "types.h")
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    major = re.search(r"#define\s+ACLSHMEM_MAJOR_VERSION\s+(\d+)", text)
    minor = re.search(r"#define\s+ACLSHMEM_MINOR_VERSION\s+(\d+)", text)
    if not (major and minor):
        return None
    return int(major.group(1)), int(minor.group(1))


# ---------------------------------------------------------------------------
# What this process loaded
# ---------------------------------------------------------------------------


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
    name, api_version ([major, minor])."""
    out = {"ok": False, "error": None, "path": None, "source": None, "mapped": [], "name": None,
           "api_version": None}
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


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def _dladdr_file(address):
    """The file name the dynamic loader knows the object holding ``address`` by, or None."""
    for name in (None, "libdl.so.2"):  # glibc 2.34+ has dladdr in libc itself
        try:
            dladdr = ctypes.CDLL(name).dladdr
        except (OSError, AttributeError):
            continue
        dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
        dladdr.restype = ctypes.c_int
        info = _DlInfo()
        if dladdr(address, ctypes.byref(info)) and info.dli_fname:
            return os.fsdecode(info.dli_fname)
        return None
    return None


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
    dynamic loader names it: the name libaclshmem itself sees (dladdr), so its folder is
    where it looks for its plug-ins.  None when the library did not load."""
    if not runtime["ok"]:
        return None
    target = runtime["mapped"][0] if runtime["mapped"] else runtime["path"]
    try:
        # Already loaded: dlopen returns the same object, so its address is the library's.
        lib = ctypes.CDLL(target)
        named = _dladdr_file(ctypes.cast(lib.aclshmem_info_get_version, ctypes.c_void_p).value)
    except (OSError, AttributeError, TypeError):
        named = None
    if named and os.path.isabs(named):
        return named
    return target if target and os.path.isabs(target) else None


def version_of_runtime(runtime):
    """The loaded library's version ("1.1.1" from "ACLSHMEM v1.1.1"), or None."""
    m = re.search(r"v?(\d+\.\d+\.\d+)\s*$", runtime.get("name") or "")
    return m.group(1) if m else None


class _PluginHead(ctypes.Structure):
    """The first fields of shmemi_plugin_t (src/transport/plugin.h)."""
    _fields_ = [("abi", ctypes.c_int), ("version", ctypes.c_char_p), ("name", ctypes.c_char_p)]


# A UCX library that the plug-in needs and the loader did not find: UCX is not installed
# here (the plug-in came from a machine that had it).
_MISSING_UCX = re.compile(r"\b(lib(?:ucp|uct|ucs|ucm)\.so[.\d]*): cannot open shared object file")


def load_ucx_plugin(path):
    """Loads ``path`` as libaclshmem does a plug-in (dlopen, RTLD_LOCAL), calls its entry
    ``shmemi_transport_plugin`` and reads abi, version and name.  Returns a dict: loaded,
    abi, version, name, error (why it is not a usable plug-in), missing_ucx (the UCX
    library the loader could not find, when that is why)."""
    out = {"loaded": False, "abi": None, "version": None, "name": None, "error": None, "missing_ucx": None,
           "data_plane": None, "data_plane_error": None}
    try:
        lib = ctypes.CDLL(path, mode=getattr(os, "RTLD_LOCAL", 0) | getattr(os, "RTLD_NOW", 2))
    except OSError as exc:
        out["error"] = " ".join(str(exc).split())
        m = _MISSING_UCX.search(out["error"])
        out["missing_ucx"] = m.group(1) if m else None
        return out
    try:
        entry = getattr(lib, UCX_PLUGIN_ENTRY)
    except AttributeError:
        out["error"] = f"{path} is not a libaclshmem transport plug-in (no {UCX_PLUGIN_ENTRY})"
        return out
    entry.argtypes = []
    entry.restype = ctypes.POINTER(_PluginHead)
    head = entry()
    if not head:
        out["error"] = f"{path}: {UCX_PLUGIN_ENTRY}() returned NULL"
        return out
    p = head.contents
    out.update(loaded=True, abi=int(p.abi),
               version=p.version.decode("utf-8", "replace") if p.version else None,
               name=p.name.decode("utf-8", "replace") if p.name else None)
    out.update(_data_plane(lib))
    return out


def _data_plane(lib):
    """What the plug-in's ``shmemi_ucx_data_plane`` says of this environment: ``data_plane``
    (e.g. "am (UCX_TLS=tcp may run RMA in software over sockets); socket filter on") or
    ``data_plane_error`` (an invalid SHMEM_UCX_DATA_PLANE); both None for a plug-in without it."""
    try:
        fn = getattr(lib, UCX_DATA_PLANE_FN)
    except AttributeError:
        return {"data_plane": None, "data_plane_error": None}
    fn.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    fn.restype = ctypes.c_int
    buf = ctypes.create_string_buffer(512)
    ok = fn(buf, len(buf)) == 0
    text = buf.value.decode("utf-8", "replace")
    return {"data_plane": text if ok else None, "data_plane_error": None if ok else text}


def ucx_plugin(runtime):
    """The UCX plug-in that the loaded libaclshmem would load for a job with PEs on other
    nodes, and whether it can.  A dict:

    ``path``     the file (SHMEM_UCX_PLUGIN, else libaclshmem_ucx.so beside the library)
    ``source``   "SHMEM_UCX_PLUGIN" or "beside libaclshmem"
    ``found``    the file exists (a bare SHMEM_UCX_PLUGIN name is left to the loader's search)
    ``loaded``, ``abi``, ``version``, ``name``, ``error``, ``missing_ucx``, ``data_plane``,
    ``data_plane_error``: load_ucx_plugin()
    ``library_version``  the loaded libaclshmem's version, which the plug-in's must equal
    ``version_matches``  True / False, or None when either version is unknown
    """
    out = {"path": None, "source": None, "found": False, "loaded": False, "abi": None, "version": None,
           "name": None, "error": None, "missing_ucx": None, "data_plane": None, "data_plane_error": None,
           "library_version": version_of_runtime(runtime),
           "version_matches": None}
    forced = os.environ.get(ENV_UCX_PLUGIN)
    if forced:
        out["path"], out["source"] = forced, ENV_UCX_PLUGIN
        out["found"] = os.path.exists(forced) if "/" in forced else True
    else:
        lib_file = loaded_library_file(runtime)
        if lib_file is None:
            out["error"] = "the native library does not load"
            return out
        out["path"] = os.path.join(os.path.dirname(lib_file), UCX_PLUGIN_FILE)
        out["source"] = "beside libaclshmem"
        out["found"] = os.path.exists(out["path"])
    if not out["found"]:
        out["error"] = f"{out['path']}: no such file"
        return out
    out.update(load_ucx_plugin(out["path"]))
    if out["loaded"] and out["version"] and out["library_version"]:
        out["version_matches"] = out["version"] == out["library_version"]
    return out


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


# ---------------------------------------------------------------------------
# The Python packages
# ---------------------------------------------------------------------------


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
