"""Turns the C declarations of ``decl/`` (made from the public headers by
``shmem._abi_build``) into Python.

* ``_pyshmem_families.py`` and ``_pyshmem_coll_families.py`` (committed, written by
  ``python -m shmem._abi_build``): the typed functions of ``shmem._pyshmem``, one per
  declared C function that ``_pyshmem.py`` does not wrap by hand (``HAND_WRITTEN``), with
  type annotations, so that type checkers and editors read every signature in a fresh
  clone.  The second, the collectives' typed families (two thirds of them), is imported
  when one of them is first used.
* ``_aclshmem_cffi.py`` (written by every build: ``setup.py`` calls :func:`generate`;
  ``python -m shmem._ffi_build`` writes it next to the sources): cffi's out-of-line
  ABI-mode module (``set_source(name, None)``), the declarations already parsed, as data.
  It records a fingerprint of the declaration files it was made from; ``shmem._native``
  ignores a stale one and parses the declarations at first use instead (~0.1 s; cffi's
  output depends on the cffi version, so it is not committed).

This module imports nothing of the package at its top: ``setup.py`` loads it by path
before anything is installed.
"""

import os
import re
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
DECL_DIR = os.path.join(HERE, "decl")
DECL_FILES = {"base": "aclshmem.h", "coll": "aclshmem_coll.h"}
FFI_MODULE_FILE = "_aclshmem_cffi.py"
FAMILIES_MODULE_FILE = "_pyshmem_families.py"
COLL_FAMILIES_MODULE_FILE = "_pyshmem_coll_families.py"
#: What a build generates (the rest is committed).
GENERATED_FILES = (FFI_MODULE_FILE,)
PRECOMPILED_MODULE = "shmem._aclshmem_cffi"

#: The C functions that shmem._pyshmem wraps by hand (they return Python objects, raise on
#: an error code, take enums or structures); every other declared function is generated.
HAND_WRITTEN = frozenset((
    "aclshmem_align", "aclshmem_barrier", "aclshmem_barrier_all", "aclshmem_calloc", "aclshmem_fence",
    "aclshmem_finalize", "aclshmem_free", "aclshmem_global_exit", "aclshmem_info_get_name",
    "aclshmem_info_get_version", "aclshmem_malloc", "aclshmem_my_pe", "aclshmem_n_pes", "aclshmem_ptr",
    "aclshmem_quiet", "aclshmem_sync", "aclshmem_sync_all", "aclshmem_team_destroy", "aclshmem_team_get_config",
    "aclshmem_team_my_pe", "aclshmem_team_n_pes", "aclshmem_team_split_2d", "aclshmem_team_split_strided",
    "aclshmem_team_translate_pe", "aclshmemx_align", "aclshmemx_barrier_all_on_stream",
    "aclshmemx_barrier_all_vec", "aclshmemx_barrier_on_stream", "aclshmemx_barrier_vec", "aclshmemx_block_idx",
    "aclshmemx_block_num", "aclshmemx_calloc", "aclshmemx_clear_last_error", "aclshmemx_describe",
    "aclshmemx_finalize", "aclshmemx_free", "aclshmemx_get_engine_config", "aclshmemx_get_heap_base",
    "aclshmemx_get_last_error",
    "aclshmemx_get_prof", "aclshmemx_get_uniqueid", "aclshmemx_handle_wait", "aclshmemx_init_attr",
    "aclshmemx_init_status", "aclshmemx_instance_ctx_get", "aclshmemx_instance_ctx_set",
    "aclshmemx_kernel_launch", "aclshmemx_malloc", "aclshmemx_prof_end", "aclshmemx_prof_start",
    "aclshmemx_set_attr_uniqueid_args", "aclshmemx_set_conf_store_tls", "aclshmemx_set_config_store_tls_key",
    "aclshmemx_set_extern_logger", "aclshmemx_set_log_level", "aclshmemx_set_mte_config",
    "aclshmemx_set_qp_num", "aclshmemx_set_rdma_config", "aclshmemx_set_sdma_config",
    "aclshmemx_set_udma_config", "aclshmemx_show_prof", "aclshmemx_stream_create", "aclshmemx_stream_destroy",
    "aclshmemx_stream_synchronize", "util_get_ffts_config",
))


def read_decl(part=None):
    """The text of a declaration file (part "base" or "coll"), or of both."""
    if part is None:
        return read_decl("base") + read_decl("coll")
    with open(os.path.join(DECL_DIR, DECL_FILES[part]), encoding="utf-8") as f:
        return f.read()


def decl_fingerprint():
    """A digest of the declaration files: what the cffi module is made from.  (zlib, as
    hashlib would load OpenSSL: ~3 ms of every import.)"""
    parts = []
    for part in DECL_FILES:
        data = read_decl(part).encode()
        parts.append(f"{len(data)}:{zlib.crc32(data):08x}")
    return "/".join(parts)


def split_function(text):
    """(name, return type, ((C type, name), ...)) of one rendered declaration
    ``ret name(type a, type b);``; the parameters are None when one is a function pointer."""
    m = re.match(r"^(.*?)\b(\w+)\((.*)\);$", text)
    if not m:
        raise ValueError(f"not a function declaration: {text}")
    ret, name, args = m.group(1).strip(), m.group(2), m.group(3)
    if "(" in args:
        return name, ret, None  # a function pointer among them: wrapped by hand, if at all
    params = []
    if args not in ("", "void"):
        for arg in args.split(", "):
            pm = re.match(r"^(.*?)(\w+)$", arg)
            params.append((" ".join(pm.group(1).split()), pm.group(2)))
    return name, ret, tuple(params)


def functions_of(decl_text):
    """[(name, return type, ((C type, name), ...))] of the functions of a declaration file,
    in order."""
    out = []
    for line in decl_text.splitlines():
        if line and not line.startswith(("/*", "typedef", " ", "{", "}")) and line.endswith(");"):
            out.append(split_function(line))
    return out


def declared_functions(part=None):
    """functions_of() the declaration files (part "base" or "coll", or both)."""
    return functions_of(read_decl(part))


def element_type(params):
    """The element type of a typed function: what its first pointer that is not ``void *``
    points to (``int32_t`` for the ``int32_t *dest`` of aclshmem_int32_put), or None."""
    for ctype, _ in params:
        if ctype.endswith("*"):
            base = ctype[:-1].replace("const ", "").strip()
            if base != "void":
                return base
    return None


def param_kind(ctype, pname, elem_ctype):
    """How a parameter is converted: an address (a pointer, an int), a stream handle, a
    size_t-like count, an int, an int that carries an enum (cmp, sig_op), or an element
    value of a float, char or 16-bit floating-point type."""
    base = ctype.replace("const ", "").strip()
    if base == "aclrtStream":
        return "stream"
    if ctype.endswith("*"):
        return "address"
    if base == elem_ctype:
        if base in ("float", "double"):
            return "float"
        if base == "char":
            return "char"
        if base in ("aclshmem_half_t", "aclshmem_bfloat16_t"):
            return "fp16"
        return "int"
    if pname in ("cmp", "sig_op"):
        return "enum_int"
    if base in ("size_t", "uint32_t"):
        return "size"
    return "int"


def python_name(function, param, c_names):
    """The seed API's name of a parameter (the Python API's keyword) where the header says
    otherwise: the signal word is ``sig``, the wait/test arrays end in ``_ptr`` (one
    variable is ``ivar``), the waits compare with ``cmp_val`` and the sized put-signal
    counts ``elem_size``; an element type is ``dtype``, not the builtin's name."""
    if param == "sig_addr" and function != "aclshmem_signal_wait_until":
        return "sig"
    if param == "nelems" and re.search(r"_put\d+_signal", function):
        return "elem_size"
    if param == "cmp_value" and "_wait" in function:
        return "cmp_val"
    if param == "ivars" and "nelems" not in c_names:
        return "ivar"
    if param in ("ivars", "status", "indices", "cmp_values", "res_out"):
        return param + "_ptr"
    if param == "type":  # (the wrappers call the builtin type())
        return "dtype"
    return param


# How each kind of parameter (param_kind) is converted on the slow path:
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
_HELPERS = ("LazyFunction", "_addr", "_char_result", "_char_value", "_float_value", "_fp16_bits", "_int",
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

# Docstrings of the calls without an element type.
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
    "aclshmemx_broadcastmem_local": (
        "Collective: ``aclshmem_broadcastmem`` where ``dest`` and ``source`` are local memory (source\n"
        "    read on the root only); ``work`` is symmetric scratch of ``nelems`` bytes on every PE."),
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


def _doc(name, c_name, ret, c_params):
    if name in _RMA_DOCS:
        return _RMA_DOCS[name]
    if name != c_name:
        return (f"The seed API's name of ``{c_name}``: puts ``elem_size`` elements of the family's\n"
                f"    width from ``src`` to symmetric ``dst`` on ``pe``, then updates the 32-bit signal\n"
                f"    word ``sig`` there (``sig_op``: SIGNAL_SET or SIGNAL_ADD)"
                + (", complete after aclshmem_quiet." if c_name.endswith("_nbi") else ", complete when it returns."))
    cdecl = ", ".join(t + p if t.endswith("*") else f"{t} {p}" for t, p in c_params)
    return f"Binding of ``{ret} {name}({cdecl})``; pointers are integer addresses."


def _function_source(name, c_name, ret, c_params):
    """One wrapper: when every int-like argument is an int, the arguments go to the C
    function (the module global ``_c_<c_name>``) as they are: one cffi call, no conversion
    in Python.  Otherwise, or when cffi refuses one (out of range), the converters check
    them and raise the error."""
    c_names = [p for _, p in c_params]
    names = [python_name(c_name, p, c_names) for p in c_names]
    elem_ctype = element_type(c_params)
    kinds = [param_kind(ctype, p, elem_ctype) for (ctype, _), p in zip(c_params, names)]
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
            f'    """{_doc(name, c_name, ret, c_params)}"""\n'
            f"    if {guards or 'True'}:\n"
            f"        try:\n"
            f"            return {fast}\n"
            f"        except (TypeError, OverflowError):\n"
            f"            pass\n"
            f"    return {slow}\n")


def seed_aliases(functions):
    """{seed name: C function}: the original's Python API names the sized put-with-signal
    family aclshmemx_put{BITS}_signal[_nbi]; the C library has aclshmem_put{BITS}_signal[_nbi]."""
    return {"aclshmemx_" + name[len("aclshmem_"):]: name
            for name, _, _ in functions if re.match(r"^aclshmem_put\d+_signal(_nbi)?$", name)}


def generated_functions(functions):
    """The declared functions that get a generated wrapper, as given by
    shmem._abi_build.functions_of: (name, return type, parameters)."""
    out = []
    for name, ret, params in functions:
        if name in HAND_WRITTEN:
            continue
        if params is None:
            raise ValueError(f"{name} takes a function pointer: wrap it by hand (HAND_WRITTEN)")
        out.append((name, ret, params))
    return out


def families_source(functions, part="base"):
    """The text of _pyshmem_families.py (part "base": every generated function but the
    collectives' typed families, and the seed's aliases) or of _pyshmem_coll_families.py
    (part "coll"), from the functions of that part's declaration file."""
    entries = [(name, name, ret, params) for name, ret, params in generated_functions(functions)]
    aliases = seed_aliases(functions) if part == "base" else {}
    by_name = {e[0]: e for e in entries}
    for alias, target in aliases.items():
        entries.append((alias, target, by_name[target][2], by_name[target][3]))
    names = [e[0] for e in entries]
    parts = [
        "# Generated by `python -m shmem._abi_build` from decl/" + DECL_FILES[part] + " (the public headers): "
        "do not edit.",
        '"""The generated functions of shmem._pyshmem (which re-exports them)."""',
        "from __future__ import annotations",
        "",
        "from enum import Enum",
        "from typing import Optional, SupportsFloat, SupportsIndex, Union",
        "",
        f"from ._pyshmem_args import {', '.join(_HELPERS)}",
        "",
        "__all__ = [" + ", ".join(repr(n) for n in names) + "]",
        "",
        f"SEED_ALIASES = {aliases!r}",
        "",
        "# The C functions, as shmem._pyshmem_args.address_function makes them at their first call.",
    ]
    for name, c_name, ret, params in entries:
        if name == c_name:
            parts.append(f"_c_{c_name} = LazyFunction(globals(), {c_name!r})")
    for name, c_name, ret, params in entries:
        parts.append("")
        parts.append(_function_source(name, c_name, ret, params))
    return "\n".join(parts)


def _write_atomically(path, text):
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def ffi_module_source():
    """The text of _aclshmem_cffi.py: cffi's output for the declaration files, and their
    fingerprint."""
    import tempfile

    import cffi

    builder = cffi.FFI()
    builder.cdef(read_decl())
    builder.set_source(PRECOMPILED_MODULE, None)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, FFI_MODULE_FILE)
        builder.emit_python_code(path)
        with open(path, encoding="utf-8") as f:
            text = f.read()
    return (text.rstrip("\n") + "\n\n"
            "# What this module was generated from (shmem._ffi_build.decl_fingerprint()).\n"
            f"SOURCE_FINGERPRINT = {decl_fingerprint()!r}\n")


def generate(directory):
    """Writes the cffi module into ``directory`` (the package folder ``shmem``); returns
    its path."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, FFI_MODULE_FILE)
    _write_atomically(path, ffi_module_source())
    return [path]


def main(argv=None):
    """``python -m shmem._ffi_build [DIRECTORY]``: writes the cffi module into the package
    folder (or DIRECTORY)."""
    args = sys.argv[1:] if argv is None else argv
    for path in generate(args[0] if args else HERE):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
