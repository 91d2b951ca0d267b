"""The native part of SHMEM: ``libaclshmem``, its headers and its pkg-config file.

This package holds no Python API of its own.  It ships the C library so that the
``shmem`` package (shmem-core) can load it, and so that C programs can be built
against it::

    import shmem_native
    shmem_native.library_path()   # .../.shmem_native.mesonpy.libs/libaclshmem.so
    shmem_native.include_dir()    # .../shmem_native/include  (aclshmem.h)
    shmem_native.pkgconfig_dir()  # .../shmem_native/pkgconfig  (aclshmem.pc)
    shmem_native.ucx_plugin_path()  # .../.shmem_native.mesonpy.libs/libaclshmem_ucx.so, or None

The library is not inside this package but in a folder beside it in site-packages
(``library_dir()``): a wheel whose package holds no Python extension is tagged
``py3-none-<platform>`` and installs on every Python 3.

For example ``PKG_CONFIG_PATH=$(python -c 'import shmem_native as n;
print(n.pkgconfig_dir())') cc prog.c $(pkg-config --cflags --libs aclshmem)``.
"""

import os

from . import _build_info

__all__ = ["__version__", "library_path", "library_dir", "include_dir", "pkgconfig_dir", "ucx_plugin_path",
           "UCX_PLUGIN_FILE"]

__version__ = _build_info.VERSION

_HERE = os.path.dirname(os.path.abspath(__file__))

#: The file name of the UCX transport plug-in, which libaclshmem looks for beside itself.
UCX_PLUGIN_FILE = "libaclshmem_ucx.so"


def library_dir() -> str:
    """The folder holding libaclshmem (and its UCX plug-in)."""
    return os.path.join(os.path.dirname(_HERE), _build_info.LIBRARY_FOLDER)


def library_path() -> str:
    """Absolute path of the shared library libaclshmem, ready for ``dlopen``.

    Raises FileNotFoundError if the file is missing (a damaged installation).
    """
    path = os.path.join(library_dir(), _build_info.LIBRARY_FILE)
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"shmem_native {__version__}: the library {_build_info.LIBRARY_FILE} is not at {path}; "
            "reinstall shmem-native"
        )
    return path


def include_dir() -> str:
    """The folder to pass with ``-I``: it holds ``aclshmem.h`` and ``aclshmem/``."""
    return os.path.join(_HERE, "include")


def pkgconfig_dir() -> str:
    """The folder holding ``aclshmem.pc``; add it to ``PKG_CONFIG_PATH``."""
    return os.path.join(_HERE, "pkgconfig")


def ucx_plugin_path():
    """Absolute path of the UCX transport plug-in (``libaclshmem_ucx.so``) beside the
    library, or None when this build has none (built without UCX).

    libaclshmem loads it by itself, only in jobs with PEs on other nodes; the environment
    variable ``SHMEM_UCX_PLUGIN`` makes it load another file instead.
    """
    path = os.path.join(library_dir(), UCX_PLUGIN_FILE)
    return path if os.path.isfile(path) else None
