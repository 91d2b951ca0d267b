"""The build step of shmem-core: writes the files generated from the tables of
``shmem._native``.

* ``_aclshmem_cffi.py``: cffi's out-of-line ABI-mode module (``set_source(name, None)``):
  the declarations of ``cdef_source()`` already parsed, as data.  ``shmem._native`` loads
  it and ``dlopen``s libaclshmem through it, so no C is parsed at run time (no pycparser,
  no compiler: the module is pure Python).
* ``_pyshmem_families.py`` and ``_pyshmem_coll_families.py``: the templated functions of
  ``shmem._pyshmem`` (the typed and sized families, the calls without an element type of
  ``shmem._native.hand_calls()`` and the seed's aliases; the second, the collectives' typed
  families, two thirds of them, is imported when one of them is first used),
  with type annotations.  As a module it is compiled once (to its .pyc) instead of at
  every import, and type checkers and editors read its signatures (``_pyshmem.py``
  imports it under ``TYPE_CHECKING``).

All record the fingerprint of the sources they came from
(``shmem._native.source_fingerprint()``: this file, ``_native.py`` and ``_native_coll.py``);
the package ignores a stale one.  ``setup.py`` runs :func:`generate` for every wheel (into the wheel's
tree) and for an editable install (into ``src/shmem``, where git ignores them).  In a source
checkout ``python -m shmem._ffi_build`` writes them next to the sources.  Without them
everything still works: ``shmem._native`` then parses the declarations with pycparser at
first use and ``shmem._pyshmem`` compiles :func:`families_source` at import (together
~0.2 s more).

This module imports nothing of the package at its top: ``setup.py`` loads it, and
``_native.py``, by path, before anything is installed.
"""

import os
import sys

FFI_MODULE_FILE = "_aclshmem_cffi.py"
FAMILIES_MODULE_FILE = "_pyshmem_families.py"
COLL_FAMILIES_MODULE_FILE = "_pyshmem_coll_families.py"
GENERATED_FILES = (FFI_MODULE_FILE, FAMILIES_MODULE_FILE, COLL_FAMILIES_MODULE_FILE)
FAMILIES_MODULE = "shmem._pyshmem_families"
COLL_FAMILIES_MODULE = "shmem._pyshmem_coll_families"

# How each kind of parameter (shmem._native.param_kind) is converted on the slow path:
# the checks and messages of shmem._pyshmem.
_CONVERTERS = {
    "address": "_addr({0}, {0!r})",
    "stream": "_stream_addr({0})",
    "size": "_size({0}, {0!r})",
    "int": "_int({0}, {0!r})",
    "enum_int": "_opt_enum_int({0}, {0!r})",
    "float": "_float_value({0})",
    "char": "_char_value({0})",
    "fp16": "_fp16_bits({0}, {0!r})",
}
_HELPERS = ("_LazyFunction", "_addr", "_char_result", "_char_value", "_float_value", "_fp16_bits", "_int",
            "_opt_enum_int", "_size", "_stream_addr")

# The kinds that go to cffi unconverted only when they are exactly an int: cffi would also
# take a bool (an address or stream must not be one) and any object with __int__
# (numpy.float32(8.7) as a size of 8), which the converters refuse.  Float values and chars
# need no test: cffi takes a subset of what their converters take, with the same meaning.
_EXACT_INT_KINDS = frozenset(("address", "stream", "size", "int", "enum_int", "fp16"))

# The annotation of each kind: what the converters accept.  Addresses take None for NULL;
# that bool is refused at run time cannot be said in a type.
_PARAM_TYPES = {
    "address": "Optional[SupportsIndex]",
    "stream": "SupportsIndex",
    "size": "SupportsIndex",
    "int": "SupportsIndex",
    "enum_int": "Union[SupportsIndex, Enum]",
    "float": "SupportsFloat",
    "char": "Union[int, bytes, bytearray]",
    "fp16": "SupportsIndex",
}

# Docstrings of the hand-written calls (shmem._native._RMA_CALLS).
_RMA_DOCS = {
    "aclshmem_putmem": "Blocking put of ``elem_size`` bytes to symmetric ``dst`` on ``pe``.",
    "aclshmem_getmem": "Blocking get of ``elem_size`` bytes from symmetric ``src`` on ``pe``.",
    "aclshmem_putmem_nbi": "Non-blocking put; complete after aclshmem_quiet or a barrier.",
    "aclshmem_getmem_nbi": "Non-blocking get; complete after aclshmem_quiet or a barrier.",
    "aclshmemx_putmem_signal": "Blocking put, then the 32-bit signal word ``sig`` on ``pe`` is set or added to.",
    "aclshmemx_putmem_signal_nbi": "Non-blocking put with signal.",
    "aclshmemx_signal_op": (
        "Updates the 32-bit signal word ``sig`` on ``pe`` (SIGNAL_SET or SIGNAL_ADD),\n"
        "    atomically and ordered after this PE's earlier puts to ``pe``; works inside kernels\n"
        "    too.  ``aclshmemx_signal_op_on_stream`` is the stream-ordered form."),
    "aclshmem_signal_wait_until": "Blocks until ``*sig_addr cmp cmp_val`` holds; returns the value that met it.",
    "aclshmemx_putmem_on_stream": "Enqueues a put on ``stream``.",
    "aclshmemx_getmem_on_stream": "Enqueues a get on ``stream``.",
    "aclshmemx_signal_op_on_stream": "Enqueues a remote signal update on ``stream``.",
    "aclshmemx_signal_wait_until_on_stream": "Enqueues a wait for ``*sig cmp cmp_val`` on ``stream``.",
    "aclshmemx_quiet_on_stream": "Enqueues a completion point on ``stream``.",
    "aclshmemx_team_exchange": (
        "Collective: every PE of ``team`` contributes ``size`` bytes (at most 128) from ``mine``;\n"
        "    ``all`` gets every member's, in team order.  Returns 0 or an error code."),
    "aclshmemx_reduce_local": (
        "Collective: ``dest`` on every PE gets the ``op`` of every PE's ``source`` (``nreduce``\n"
        "    elements of ``dtype``), both local memory; ``work`` is symmetric scratch of the same size.\n"
        "    ``dtype`` and ``op`` are values of ``LOCAL_REDUCE_TYPES`` and ``LOCAL_REDUCE_OPS``."),
    "aclshmem_broadcastmem": "Collective: ``nelems`` bytes of ``source`` on team PE ``pe_root`` to ``dest`` on every PE.",
    "aclshmem_collectmem": "Collective: each PE's ``nelems`` bytes (counts may differ) to every ``dest``, in team order.",
    "aclshmem_fcollectmem": "Collective: each PE's ``nelems`` bytes to every ``dest``, in team order.",
    "aclshmem_alltoallmem": "Collective: block j (``nelems`` bytes) of ``source`` on PE i to block i of ``dest`` on PE j.",
    "aclshmem_alltoallsmem": "Collective: alltoallmem of single bytes at strides ``sst`` (source) and ``dst`` (dest).",
}
_RMA_DOCS.update({
    f"aclshmemx_{name}_on_stream": f"Enqueues aclshmem_{name} on ``stream``: checked now, run in stream order."
    for name in ("broadcastmem", "collectmem", "fcollectmem", "alltoallmem", "alltoallsmem")})


def _result_type(ret):
    if ret == "void":
        return "None"
    if ret in ("float", "double"):
        return "float"
    return "int"  # integers, 16-bit float patterns, and char (its byte value)


def seed_aliases(native):
    """{seed name: C function}: the original's Python API names the sized put-with-signal
    family aclshmemx_put{BITS}_signal[_nbi]; the C library has aclshmem_put{BITS}_signal[_nbi]."""
    return {f"aclshmemx_put{bits}_signal{suffix}": f"aclshmem_put{bits}_signal{suffix}"
            for bits in native.RMA_SIZES for suffix in ("", "_nbi")}


def _doc(name, c_name, ret, params):
    if name in _RMA_DOCS:
        return _RMA_DOCS[name]
    if name != c_name:
        return (f"The seed API's name of ``{c_name}``: puts ``elem_size`` elements of the family's\n"
                f"    width from ``src`` to symmetric ``dst`` on ``pe``, then updates the 32-bit signal\n"
                f"    word ``sig`` there (``sig_op``: SIGNAL_SET or SIGNAL_ADD)"
                + (", complete after aclshmem_quiet." if c_name.endswith("_nbi") else ", complete when it returns."))
    cdecl = ", ".join(f"{t} {p}" for t, p in params)
    return f"Binding of ``{ret} {name}({cdecl})``; pointers are integer addresses."


def _function_source(native, name, c_name, ret, params, elem_ctype):
    """One wrapper: when every int-like argument is an int, the arguments go to the C
    function (the module global ``_c_<c_name>``) as they are: one cffi call, no conversion
    in Python.  Otherwise, or when cffi refuses one (out of range), the converters check
    them and raise the error."""
    names = [p for _, p in params]
    kinds = [native.param_kind(ctype, p, elem_ctype) for ctype, p in params]
    # One chained comparison (``int is type(a) is type(b) ...``) rather than one ``and``
    # per argument: it loads ``int`` once and measured 6 ns (4 %) less per call on putmem.
    exact = [f"type({p})" for p, k in zip(names, kinds) if k in _EXACT_INT_KINDS]
    guards = " is ".join(["int"] + exact) if exact else ""
    fast = f"_c_{c_name}({', '.join(names)})"
    slow = f"_c_{c_name}({', '.join(_CONVERTERS[k].format(p) for p, k in zip(names, kinds))})"
    if ret == "char":  # cffi gives a char as a 1-byte bytes
        fast, slow = f"_char_result({fast})", f"_char_result({slow})"
    signature = ", ".join(f"{p}: {_PARAM_TYPES[k]}" for p, k in zip(names, kinds))
    return (f"def {name}({signature}) -> {_result_type(ret)}:\n"
            f'    """{_doc(name, c_name, ret, params)}"""\n'
            f"    if {guards or 'True'}:\n"
            f"        try:\n"
            f"            return {fast}\n"
            f"        except (TypeError, OverflowError):\n"
            f"            pass\n"
            f"    return {slow}\n")


def families_source(native, fingerprint, part="base"):
    """The text of _pyshmem_families.py (part "base": the hand-written calls, every family
    but the collectives' and the seed's aliases) or of _pyshmem_coll_families.py (part
    "coll": the collectives' typed families, which _pyshmem loads when one is first used)."""
    if part == "coll":
        entries = [(name, name, ret, params, ctype)
                   for name, ret, params, ctype, _tag in native.family_functions("coll")]
        aliases = {}
    else:
        entries = [(name, name, ret, params, ctype)
                   for name, ret, params, ctype, _tag in native.hand_calls() + native.family_functions("base")]
        aliases = seed_aliases(native)
    by_name = {e[0]: e for e in entries}
    for alias, target in aliases.items():
        _, _, ret, params, ctype = by_name[target]
        entries.append((alias, target, ret, params, ctype))
    names = [e[0] for e in entries]
    parts = [
        "# Generated by shmem._ffi_build from the tables of shmem._native: do not edit.",
        '"""The templated functions of shmem._pyshmem (which re-exports them)."""',
        "from __future__ import annotations",
        "",
        "from enum import Enum",
        "from typing import Optional, SupportsFloat, SupportsIndex, Union",
        "",
        f"from ._pyshmem import {', '.join(_HELPERS)}",
        "",
        f"SOURCE_FINGERPRINT = {fingerprint!r}",
        "",
        "__all__ = [" + ", ".join(repr(n) for n in names) + "]",
        "",
        f"SEED_ALIASES = {aliases!r}",
        "",
    ]
    parts.append("# The C functions, as _pyshmem._address_function makes them at their first call.")
    for name, c_name, ret, params, ctype in entries:
        if name == c_name:
            parts.append(f"_c_{c_name} = _LazyFunction(globals(), {c_name!r})")
    for name, c_name, ret, params, ctype in entries:
        parts.append("")
        parts.append(_function_source(native, name, c_name, ret, params, ctype))
    return "\n".join(parts)


def _write_atomically(path, text):
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def ffi_module_source(native, fingerprint):
    """The text of _aclshmem_cffi.py: cffi's output plus the source fingerprint."""
    import tempfile

    import cffi

    builder = cffi.FFI()
    builder.cdef(native.cdef_source())
    builder.set_source(native.PRECOMPILED_MODULE, None)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, FFI_MODULE_FILE)
        builder.emit_python_code(path)
        with open(path, encoding="utf-8") as f:
            text = f.read()
    return (text.rstrip("\n") + "\n\n"
            "# What this module was generated from (shmem._native.source_fingerprint()).\n"
            f"SOURCE_FINGERPRINT = {fingerprint!r}\n")


def generate(directory, native):
    """Writes the generated files into ``directory`` (the package folder ``shmem``);
    returns their paths."""
    os.makedirs(directory, exist_ok=True)
    fingerprint = native.source_fingerprint()
    ffi_path = os.path.join(directory, FFI_MODULE_FILE)
    families_path = os.path.join(directory, FAMILIES_MODULE_FILE)
    coll_path = os.path.join(directory, COLL_FAMILIES_MODULE_FILE)
    _write_atomically(ffi_path, ffi_module_source(native, fingerprint))
    _write_atomically(families_path, families_source(native, fingerprint))
    _write_atomically(coll_path, families_source(native, fingerprint, "coll"))
    return [ffi_path, families_path, coll_path]


def main(argv=None):
    """``python -m shmem._ffi_build [DIRECTORY]``: writes the generated files into the
    package folder (or DIRECTORY)."""
    args = sys.argv[1:] if argv is None else argv
    from shmem import _native

    directory = args[0] if args else os.path.dirname(os.path.abspath(_native.__file__))
    for path in generate(directory, _native):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
