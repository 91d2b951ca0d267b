"""Where SHMEM is installed: the folders C builds use.

Three kinds of installation are recognised, in this order, for the build paths
(``--include``, ``--lib``, ``--ldflags``, ...):

1. the ``shmem_native`` package (the ``shmem-native`` wheel): library, headers and
   ``aclshmem.pc`` inside site-packages;
2. pkg-config ``aclshmem`` (``meson install`` of the C library, a distribution package);
3. the library named by ``ACLSHMEM_LIBRARY`` (a build tree): its folder is the library
   folder, and ``<folder>/../include`` the header folder when ``aclshmem.h`` is there.

What the ``shmem`` package loads at run time is ``runtime``'s business; the UCX plug-in
is ``plugin``'s.
"""

import importlib
import os
import re
import shutil
import subprocess

BACKEND = "cpu"
LIBRARY_STEM = "libaclshmem"
PKG_CONFIG_NAME = "aclshmem"
ENV_LIBRARY = "ACLSHMEM_LIBRARY"
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
        # the UCX plug-in of this installation, or None: the wheel names its own; for the
        # others, the library in use says where it looks (plugin.installed_plugin)
        self.ucx_plugin = ucx_plugin

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
