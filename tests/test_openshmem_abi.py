"""What shmem.h declares is what libaclshmem exports: every OpenSHMEM function of shmem.h
and shmemx.h (the generated families expanded, as the header reader of the docs finds
them) is a symbol of the library, and so is its profiling name pshmem_*.  A declaration
without a definition would compile in a user's program and fail only at link time.
pshmem.h, the header of the profiling interface (OpenSHMEM 1.5, section 10), declares every
one of those profiling names with its function's type."""

import ctypes
import os

from integration_helpers import PACKAGES, run


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


def test_pshmem_h_declares_every_profiling_name_with_its_function_type(tmp_path):
    """A profiler includes pshmem.h alone and calls pshmem_X for any function shmem_X: each
    is declared, with shmem_X's type (checked by the compiler, one assertion a name)."""
    include = os.path.join(PACKAGES, "shmem-native", "include")
    names = _openshmem_functions()
    checks = "".join(
        f'_Static_assert(__builtin_types_compatible_p(__typeof__({n}), __typeof__(p{n})), "p{n}");\n'
        for n in names)
    source = tmp_path / "profiling_names.c"
    source.write_text("#include <pshmem.h>\n" + checks)
    run(["gcc", "-std=c11", "-pedantic", "-Werror", "-Wno-deprecated-declarations", "-fsyntax-only",
         f"-I{include}", str(source)])
