"""The cffi ABI-mode binding of libaclshmem: one ``cdef`` and one ``ffi.dlopen``.

Nothing here runs at import time: the ``ffi`` object and the loaded library ``lib`` are
created on first use, so ``import shmem`` works (and stays fast) on a machine where the
native library is missing.

The declarations are the files of ``shmem/decl`` (C, made from the public headers by
``shmem._abi_build``; a test fails when they differ from what the headers declare).  They
are parsed when the package is built, not at run time: cffi's out-of-line ABI mode turns
them into the pure-Python module ``shmem._aclshmem_cffi`` (see ``shmem._ffi_build``), whose
``ffi`` ``dlopen``s the library as in-line ABI mode does, with no compiler and no C parser
(pycparser) involved.  A source checkout that was never built, or whose declarations
changed since (the module records a fingerprint of them), parses them at first use instead
(~0.1 s; the collectives' typed families, two thirds of them, when one is first used).

Library search order (the first that loads wins):

1. ``ACLSHMEM_LIBRARY``: a path to the shared library.  When this variable is set
   and the file does not load, that is an error (no silent fallback to another
   copy of the library).
2. The ``shmem_native`` package (``pip install shmem-native``):
   ``shmem_native.library_path()``.
3. The system loader: ``libaclshmem.so.1`` (``LD_LIBRARY_PATH``, ``ldconfig``).

The typed Python functions of ``shmem._pyshmem`` call the C functions through
:func:`address_function` (pointers as plain integers).
"""

import os
import threading

from . import _abi

__all__ = [
    "RMA_TYPES",
    "P2P_SYNC_TYPES",
    "RMA_SIZES",
    "COLL_TYPES",
    "REDUCE_OPS",
    "AMO_INT_TYPES",
    "AMO_FLOAT_TYPES",
    "AMO_HALF_TYPES",
    "FAMILIES",
    "cdef_source",
    "family_functions",
    "declare_collectives",
    "is_collective",
    "load",
    "address_function",
    "library_path",
    "LibraryNotFoundError",
]

# The X-macro type tables of aclshmem/types.h (generated into shmem._abi).
RMA_TYPES = _abi.RMA_TYPES
P2P_SYNC_TYPES = _abi.P2P_SYNC_TYPES
AMO_INT_TYPES = _abi.AMO_INT_TYPES
AMO_FLOAT_TYPES = _abi.AMO_FLOAT_TYPES
AMO_HALF_TYPES = _abi.AMO_HALF_TYPES
RMA_SIZES = _abi.RMA_SIZES
COLL_TYPES = _abi.COLL_TYPES
#: Each reduction operation and the (NAME, C type) of the types it takes.
REDUCE_OPS = _abi.REDUCE_OPS

#: The typed families as (templates, table, kind): shmem._abi.FAMILIES with each family's
#: tables as one table of rows, (NAME, C type) pairs for kind "type", widths for "size".
FAMILIES = tuple((templates, sum((getattr(_abi, t) for t in tables), ()), kind)
                 for templates, tables, kind in _abi.FAMILIES)


def family_functions(part=None):
    """Every function of the typed families as (name, return type, ((C type, Python name),
    ...), element C type or None, element NAME or width); part "base" or "coll": only the
    others or only the collectives' (declared to cffi at first use)."""
    out = []
    for templates, table, kind in FAMILIES:
        for entry in table:
            subst = {"N": entry[0], "T": entry[1]} if kind == "type" else {"B": str(entry)}
            for name, ret, params in templates:
                name = name.format(**subst)
                if part is not None and (part == "coll") != is_collective(name):
                    break
                out.append((name, ret.format(**subst), tuple((t.format(**subst), p) for t, p in params),
                            entry[1] if kind == "type" else None, entry[0] if kind == "type" else entry))
    return out


def cdef_source(part=None):
    """The declaration text handed to ``ffi.cdef``: all of it, or (part "base" / "coll")
    all but the collectives' typed families, or only those."""
    from . import _ffi_build  # (not at import: ``python -m shmem._ffi_build`` imports the package first)

    return _ffi_build.read_decl(part)


# ---------------------------------------------------------------------------
# Loading.
# ---------------------------------------------------------------------------

SYSTEM_LIBRARY_NAME = "libaclshmem.so.1"

_INSTALL_HINT = (
    "Install the native library with `pip install shmem-native`, or build it from the "
    "repository (`meson setup build && ninja -C build`) and point ACLSHMEM_LIBRARY at the "
    "built libaclshmem.so.1, or install libaclshmem.so.1 where the system loader finds it "
    "(LD_LIBRARY_PATH / ldconfig)."
)


class LibraryNotFoundError(OSError):
    """libaclshmem could not be loaded; the message lists every place tried."""


#: The C API this package binds (what aclshmem_info_get_version reports) and the
#: shmem-native releases that carry it: the same range as the shmem-native dependency in
#: pyproject.toml (tests/test_packaging.py checks that they agree).
ABI_VERSION = (1, 1)
SUPPORTED_NATIVE = ">=1.1.1,<1.2"


def _check_abi(ffi, lib, target):
    """Refuses a library that is not a libaclshmem of ABI_VERSION with every function of
    the cdef, at load rather than at the first call that happens to be missing."""
    missing = []
    # A missing symbol raises AttributeError in in-line ABI mode and ffi.error through the
    # generated module's ffi (which only that one has).
    not_found = (AttributeError, getattr(ffi, "error", AttributeError))
    for name in dir(lib):
        try:
            getattr(lib, name)
        except not_found:
            missing.append(name)
    if "aclshmem_info_get_version" in missing:
        raise LibraryNotFoundError(
            f"{target} is not a libaclshmem (it has no aclshmem_info_get_version). {_INSTALL_HINT}")
    major, minor = ffi.new("int *"), ffi.new("int *")
    lib.aclshmem_info_get_version(major, minor)
    found = (major[0], minor[0])
    if found != ABI_VERSION or missing:
        shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise LibraryNotFoundError(
            f"{target} is libaclshmem ABI {found[0]}.{found[1]}, but shmem-core needs ABI "
            f"{ABI_VERSION[0]}.{ABI_VERSION[1]} (shmem-native {SUPPORTED_NATIVE})"
            + (f" and it lacks {len(missing)} function(s) shmem-core binds: {shown}" if missing else "")
            + ". Install a matching shmem-native or rebuild the library from the same checkout.")


_lock = threading.Lock()
_ffi = None
_lib = None
_path = None


#: The module cffi generates from the declarations at build time (out-of-line ABI mode:
#: the declarations already parsed, as data; see shmem._ffi_build).
PRECOMPILED_MODULE = "shmem._aclshmem_cffi"


_fingerprint = None


def source_fingerprint():
    """A digest of the declaration files: the generated cffi module records the one it was
    made from, so that a stale one (in a source checkout whose declarations changed since
    it was built) is never used."""
    global _fingerprint
    if _fingerprint is None:
        from . import _ffi_build

        _fingerprint = _ffi_build.decl_fingerprint()
    return _fingerprint


def is_fresh(generated_module):
    """Whether a generated module was made from these declarations."""
    try:
        return generated_module.SOURCE_FINGERPRINT == source_fingerprint()
    except (AttributeError, OSError):  # no fingerprint, or the declarations are not readable
        return False


def _precompiled_ffi():
    """The FFI of the generated module, or None when it is missing or stale."""
    try:
        from . import _aclshmem_cffi as generated
    except ImportError:
        return None
    return generated.ffi if is_fresh(generated) else None


def _make_ffi():
    global precompiled
    ffi = _precompiled_ffi()
    if ffi is not None:
        precompiled = True
        return ffi
    # No generated module (a source checkout that was never built, or one whose tables
    # changed since): cffi parses the declarations now, with pycparser (~0.1 s).
    import cffi

    ffi = cffi.FFI()
    ffi.cdef(cdef_source("base"))
    precompiled = False
    global _collectives_pending
    _collectives_pending = True  # their ~860 typed functions are parsed when one is used
    return ffi


#: Whether the collectives' typed families still wait to be declared to the FFI.
_collectives_pending = False
_COLLECTIVE_NAMES = None


def collective_names():
    """The names of the collectives' typed families, in declaration order."""
    import re

    return tuple(re.findall(r"\b(\w+)\(", cdef_source("coll")))


def _collective_names():
    global _COLLECTIVE_NAMES
    if _COLLECTIVE_NAMES is None:
        _COLLECTIVE_NAMES = frozenset(collective_names())
    return _COLLECTIVE_NAMES


def declare_collectives():
    """Declares the collectives' typed families to the FFI, if that has not been done (an
    FFI parsed at run time leaves them out until first used: they are two thirds of the
    declarations); refuses a library that lacks one of them."""
    global _collectives_pending
    if not _collectives_pending:
        return
    ffi, lib = load()
    with _lock:
        if not _collectives_pending:
            return
        ffi.cdef(cdef_source("coll"))
        missing = sorted(name for name in _collective_names() if not hasattr(lib, name))
        _collectives_pending = False
    if missing:
        raise LibraryNotFoundError(
            f"{_path} lacks {len(missing)} collective function(s) shmem-core binds ({', '.join(missing[:5])}"
            f"{' ...' if len(missing) > 5 else ''}). {_INSTALL_HINT}")


def is_collective(name):
    """Whether name is a function of the collectives' typed families."""
    return name in _collective_names()


#: Whether the FFI came from the generated module (None until the FFI is made).
precompiled = None


def _candidates():
    """Yields (description, path or name, fatal) in search order; fatal means a load
    failure is an error instead of a reason to try the next place."""
    tried = []
    env = os.environ.get("ACLSHMEM_LIBRARY")
    if env:
        yield ("ACLSHMEM_LIBRARY", env, True)
    else:
        tried.append("ACLSHMEM_LIBRARY: not set")
    try:
        import shmem_native  # noqa: F401
    except ImportError as exc:
        tried.append(f"the shmem_native package: not installed ({exc})")
    else:
        try:
            path = shmem_native.library_path()
        except Exception as exc:  # a damaged installation
            tried.append(f"the shmem_native package: {exc}")
        else:
            yield ("the shmem_native package", path, False)
    yield ("the system loader", SYSTEM_LIBRARY_NAME, False)
    # Hand the notes of skipped places to load() through the generator's return value.
    return tried


def load():
    """Loads the library (once) and returns ``(ffi, lib)``.

    Raises LibraryNotFoundError naming every place tried when nothing loads.
    """
    global _ffi, _lib, _path
    if _lib is not None:
        return _ffi, _lib
    with _lock:
        if _lib is not None:
            return _ffi, _lib
        ffi = _ffi if _ffi is not None else _make_ffi()
        _ffi = ffi
        notes = []
        gen = _candidates()
        while True:
            try:
                what, target, fatal = next(gen)
            except StopIteration as stop:
                notes = list(stop.value or []) + notes
                break
            try:
                # RTLD_NODELETE: the library's threads may still run at interpreter exit
                # (a PE that never finalized); unloading the code under them would crash.
                lib = ffi.dlopen(target, ffi.RTLD_NOW | ffi.RTLD_NODELETE)
            except OSError as exc:
                if fatal:
                    raise LibraryNotFoundError(
                        f"ACLSHMEM_LIBRARY is set to {target!r} but that library does not load: "
                        f"{exc}. Fix or unset ACLSHMEM_LIBRARY. {_INSTALL_HINT}"
                    ) from None
                notes.append(f"{what} ({target}): {exc}")
                continue
            _check_abi(ffi, lib, target)
            _lib = lib
            _path = target
            globals()["lib"] = lib
            globals()["ffi"] = ffi
            return ffi, lib
        raise LibraryNotFoundError(
            "libaclshmem could not be loaded. Tried, in order: "
            + "; ".join(notes)
            + ". "
            + _INSTALL_HINT
        )


def get_ffi():
    """The FFI object (declarations parsed, library not necessarily loaded)."""
    global _ffi
    if _ffi is None:
        with _lock:
            if _ffi is None:
                _ffi = _make_ffi()
    return _ffi


def address_function(name):
    """``lib.<name>`` as a function that takes (and returns) every pointer as an integer
    address: the same C function, called through a function pointer whose pointer
    parameters are declared ``uintptr_t``.  cffi then takes Python ints as they are,
    where a ``void *`` parameter needs a cdata made by ``ffi.cast`` (about as costly as the
    call itself).  Pointers and ``uintptr_t`` have the same size and are passed the same
    way by every C calling convention CPython runs on (integer registers or stack slots)."""
    ffi, lib = load()
    if _collectives_pending and is_collective(name):
        declare_collectives()
    fn = getattr(lib, name)
    ftype = ffi.typeof(fn)

    def as_address(t):
        return "uintptr_t" if t.kind == "pointer" else t.cname

    params = ", ".join(as_address(t) for t in ftype.args) or "void"
    return ffi.cast(f"{as_address(ftype.result)}(*)({params})", fn)


def library_path():
    """What was loaded (a path or the soname), or None when nothing is loaded yet."""
    return _path


def is_loaded():
    return _lib is not None


def __getattr__(name):
    # ``_native.lib`` loads the library on first access; afterwards it is a plain
    # module attribute (set by load()), so this hook is not involved any more.
    if name == "lib":
        return load()[1]
    if name == "ffi":
        return get_ffi()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
