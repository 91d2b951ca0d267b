"""What SHMEM is installed as and what this process runs, one concern per module:

``installation``  where the library and headers for C builds are (``--include``, ``--lib``)
``runtime``       the libaclshmem the ``shmem`` package loads, and the copies mapped
``plugin``        the UCX transport plug-in, as that library describes it (aclshmemx_describe)
``compat``        whether the distributions and the library's C API fit together

The names below are the ones the commands use, gathered so that ``from . import _install``
reaches them all.
"""

from .compat import PACKAGES, all_packages, compatibility, expected_api_version, package_info
from .installation import (BACKEND, ENV_LIBRARY, LIBRARY_STEM, PKG_CONFIG_NAME, Installation, find_installation,
                           from_env, from_pkg_config, from_wheel, header_version, root_of_library)
from .plugin import ENV_UCX_PLUGIN, installed_plugin, ucx_plugin
from .runtime import (declared_functions, loaded_libraries, loaded_library, loaded_library_file, missing_symbols,
                      runtime_library)

__all__ = [
    "BACKEND", "ENV_LIBRARY", "ENV_UCX_PLUGIN", "LIBRARY_STEM", "PACKAGES", "PKG_CONFIG_NAME", "Installation",
    "all_packages", "compatibility", "declared_functions", "expected_api_version", "find_installation",
    "from_env", "from_pkg_config", "from_wheel", "header_version", "installed_plugin", "loaded_libraries",
    "loaded_library", "loaded_library_file", "missing_symbols", "package_info", "root_of_library",
    "runtime_library", "ucx_plugin",
]
