"""What shmem.h declares is what libaclshmem exports: every OpenSHMEM function of shmem.h
and shmemx.h (the generated families expanded, as the header reader of the docs finds
them) is a symbol of the library, and so is its profiling name pshmem_*.  A declaration
without a definition would compile in a user's program and fail only at link time."""

import ctypes
import os

from integration_helpers import PACKAGES


def _openshmem_functions():
    from shmem_sphinx import cheaders

    include = os.path.join(PACKAGES, "shmem-native", "include")
    return [n for names in cheaders.openshmem_functions_by_header(include).values() for n in names]


def test_every_declared_function_and_its_profiling_name_is_exported():
    from shmem import _native

    _native.load()  # the library shmem-core uses (ACLSHMEM_LIBRARY, the wheel's, the system's)
    lib = ctypes.CDLL(_native.library_path())
    names = _openshmem_functions()
    assert len(names) > 1000
    missing = [n for n in names if not hasattr(lib, n)]
    assert not missing, f"declared in shmem.h / shmemx.h but not in {_native.library_path()}: {missing[:20]}"
    unprofiled = [n for n in names if not hasattr(lib, "p" + n)]
    assert not unprofiled, f"no profiling name pshmem_*: {unprofiled[:20]}"
