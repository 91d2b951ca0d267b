"""The cffi ABI-mode binding of libaclshmem: one ``cdef`` and one ``ffi.dlopen``.

Nothing here runs at import time: the ``ffi`` object and the loaded library ``lib`` are
created on first use, so ``import shmem`` works (and stays fast) on a machine where the
native library is missing.

The declarations are parsed when the package is built, not at run time: cffi's
out-of-line ABI mode turns :func:`cdef_source` into the pure-Python module
``shmem._aclshmem_cffi`` (see ``shmem._ffi_build``), whose ``ffi`` ``dlopen``s the library
as in-line ABI mode does, with no compiler and no C parser (pycparser) involved.  A source
checkout that was never built, or whose tables changed since (the module records a
fingerprint of the sources), parses :func:`cdef_source` at first use instead (~0.1 s).

Library search order (the first that loads wins):

1. ``ACLSHMEM_LIBRARY``: a path to the shared library.  When this variable is set
   and the file does not load, that is an error (no silent fallback to another
   copy of the library).
2. The ``shmem_native`` package (``pip install shmem-native``):
   ``shmem_native.library_path()``.
3. The system loader: ``libaclshmem.so.1`` (``LD_LIBRARY_PATH``, ``ldconfig``).

The typed families (``aclshmem_int32_put``, ``aclshmem_put64``,
``aclshmem_float_wait_until_any``, ``aclshmem_int64_atomic_fetch_add``, ...) are not
written out: their declarations are generated from the type tables below, which mirror
the X-macro tables ``ACLSHMEM_RMA_TYPES``, ``ACLSHMEM_P2P_SYNC_TYPES``,
``ACLSHMEM_AMO_*_TYPES`` and ``ACLSHMEM_RMA_SIZES`` of ``aclshmem/types.h``; so are those
of put, get and the signal calls (``_RMA_CALLS``).  ``shmem._pyshmem`` generates its
Python wrappers from the same templates, so the two cannot drift apart; their fast path
calls the C functions through :func:`address_function`.  The collectives' tables and
templates (``aclshmem/coll.h``) are in ``shmem._native_coll``, in the same shapes.
"""

import os
import threading

try:
    from . import _native_coll as _coll
except ImportError:  # loaded by path, outside the package (setup.py): its sibling likewise
    import importlib.util as _util

    _spec = _util.spec_from_file_location(
        "_shmem_native_coll", os.path.join(os.path.dirname(os.path.abspath(__file__)), "_native_coll.py"))
    _coll = _util.module_from_spec(_spec)
    _spec.loader.exec_module(_coll)

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
    "hand_calls",
    "declare_collectives",
    "is_collective",
    "family_functions",
    "load",
    "address_function",
    "library_path",
    "LibraryNotFoundError",
]

# ---------------------------------------------------------------------------
# Type tables (mirror the X-macros of aclshmem/types.h).
# ---------------------------------------------------------------------------

#: ACLSHMEM_RMA_TYPES: (NAME, C TYPE) of the typed RMA and put-signal families.  half and
#: bfloat16 are 16-bit storage types (the bit patterns, in a uint16_t).
RMA_TYPES = (
    ("float", "float"),
    ("double", "double"),
    ("int8", "int8_t"),
    ("int16", "int16_t"),
    ("int32", "int32_t"),
    ("int64", "int64_t"),
    ("uint8", "uint8_t"),
    ("uint16", "uint16_t"),
    ("uint32", "uint32_t"),
    ("uint64", "uint64_t"),
    ("char", "char"),
    ("half", "aclshmem_half_t"),
    ("bfloat16", "aclshmem_bfloat16_t"),
)

#: ACLSHMEM_P2P_SYNC_TYPES: the wait/test families (the RMA types up to char: no double,
#: no half or bfloat16).
P2P_SYNC_TYPES = tuple(t for t in RMA_TYPES if t[0] not in ("double", "half", "bfloat16"))

#: ACLSHMEM_AMO_INT_TYPES: every atomic operation.
AMO_INT_TYPES = tuple(t for t in RMA_TYPES if t[0].startswith(("int", "uint")))

#: ACLSHMEM_AMO_FLOAT_TYPES: add, fetch_add, set, fetch, swap and compare_swap.
AMO_FLOAT_TYPES = (("float", "float"), ("double", "double"))

#: ACLSHMEM_AMO_HALF_TYPES: add, fetch_add, set, fetch and swap.
AMO_HALF_TYPES = (("half", "aclshmem_half_t"), ("bfloat16", "aclshmem_bfloat16_t"))

#: ACLSHMEM_RMA_SIZES: element widths (bits) of the sized families.
RMA_SIZES = (8, 16, 32, 64, 128)

#: ACLSHMEM_COLL_TYPES (the collectives that move data) and, for each reduction operation,
#: the table of its types (ACLSHMEM_REDUCE_*_TYPES): see shmem._native_coll.
COLL_TYPES = _coll.COLL_TYPES
REDUCE_OPS = _coll.REDUCE_OPS
LOCAL_REDUCE_TYPES = _coll.LOCAL_REDUCE_TYPES
LOCAL_REDUCE_OPS = _coll.LOCAL_REDUCE_OPS

# ---------------------------------------------------------------------------
# Family templates.  Each entry: (function name, return type, parameters), where a
# parameter is (C type, Python name).  "{N}" is the type's NAME, "{T}" its C type,
# "{B}" the width in bits.  The Python names are those of the seed API.
# ---------------------------------------------------------------------------

_TYPED_RMA = (
    ("aclshmem_{N}_put", "void",
     (("{T} *", "dest"), ("const {T} *", "source"), ("size_t", "nelems"), ("int", "pe"))),
    ("aclshmem_{N}_get", "void",
     (("{T} *", "dest"), ("const {T} *", "source"), ("size_t", "nelems"), ("int", "pe"))),
    ("aclshmem_{N}_put_nbi", "void",
     (("{T} *", "dest"), ("const {T} *", "source"), ("size_t", "nelems"), ("int", "pe"))),
    ("aclshmem_{N}_get_nbi", "void",
     (("{T} *", "dest"), ("const {T} *", "source"), ("size_t", "nelems"), ("int", "pe"))),
    ("aclshmem_{N}_p", "void",
     (("{T} *", "dst"), ("const {T}", "value"), ("int", "pe"))),
    ("aclshmem_{N}_g", "{T}",
     (("const {T} *", "src"), ("int32_t", "pe"))),
    ("aclshmem_{N}_iput", "void",
     (("{T} *", "dest"), ("const {T} *", "source"), ("ptrdiff_t", "dst"), ("ptrdiff_t", "sst"),
      ("size_t", "nelems"), ("int", "pe"))),
    ("aclshmem_{N}_iget", "void",
     (("{T} *", "dest"), ("const {T} *", "source"), ("ptrdiff_t", "dst"), ("ptrdiff_t", "sst"),
      ("size_t", "nelems"), ("int", "pe"))),
)

_SIZED_RMA = (
    ("aclshmem_put{B}", "void",
     (("void *", "dst"), ("const void *", "src"), ("uint32_t", "elem_size"), ("int32_t", "pe"))),
    ("aclshmem_get{B}", "void",
     (("void *", "dst"), ("const void *", "src"), ("uint32_t", "elem_size"), ("int32_t", "pe"))),
    ("aclshmem_put{B}_nbi", "void",
     (("void *", "dst"), ("const void *", "src"), ("uint32_t", "elem_size"), ("int32_t", "pe"))),
    ("aclshmem_get{B}_nbi", "void",
     (("void *", "dst"), ("const void *", "src"), ("uint32_t", "elem_size"), ("int32_t", "pe"))),
    ("aclshmem_iput{B}", "void",
     (("void *", "dest"), ("const void *", "source"), ("ptrdiff_t", "dst"), ("ptrdiff_t", "sst"),
      ("size_t", "nelems"), ("int", "pe"))),
    ("aclshmem_iget{B}", "void",
     (("void *", "dest"), ("const void *", "source"), ("ptrdiff_t", "dst"), ("ptrdiff_t", "sst"),
      ("size_t", "nelems"), ("int", "pe"))),
)

_TYPED_SIGNAL = (
    ("aclshmem_{N}_put_signal", "void",
     (("{T} *", "dst"), ("const {T} *", "src"), ("size_t", "elem_size"), ("uint8_t *", "sig"),
      ("int32_t", "signal"), ("int", "sig_op"), ("int", "pe"))),
    ("aclshmem_{N}_put_signal_nbi", "void",
     (("{T} *", "dst"), ("const {T} *", "src"), ("size_t", "elem_size"), ("uint8_t *", "sig"),
      ("int32_t", "signal"), ("int", "sig_op"), ("int", "pe"))),
)

_SIZED_SIGNAL = (
    ("aclshmem_put{B}_signal", "void",
     (("void *", "dst"), ("const void *", "src"), ("size_t", "elem_size"), ("int32_t *", "sig"),
      ("int32_t", "signal"), ("int", "sig_op"), ("int", "pe"))),
    ("aclshmem_put{B}_signal_nbi", "void",
     (("void *", "dst"), ("const void *", "src"), ("size_t", "elem_size"), ("int32_t *", "sig"),
      ("int32_t", "signal"), ("int", "sig_op"), ("int", "pe"))),
)

_P2P_SYNC = (
    ("aclshmem_{N}_wait_until", "void",
     (("{T} *", "ivar"), ("int", "cmp"), ("{T}", "cmp_val"))),
    ("aclshmem_{N}_wait", "void",
     (("{T} *", "ivar"), ("{T}", "cmp_val"))),
    ("aclshmem_{N}_wait_until_all", "void",
     (("{T} *", "ivars_ptr"), ("size_t", "nelems"), ("const int *", "status_ptr"), ("int", "cmp"),
      ("{T}", "cmp_val"))),
    ("aclshmem_{N}_wait_until_any", "void",
     (("{T} *", "ivars_ptr"), ("size_t", "nelems"), ("const int *", "status_ptr"), ("int", "cmp"),
      ("{T}", "cmp_val"), ("size_t *", "res_out_ptr"))),
    ("aclshmem_{N}_wait_until_some", "void",
     (("{T} *", "ivars_ptr"), ("size_t", "nelems"), ("size_t *", "indices_ptr"),
      ("const int *", "status_ptr"), ("int", "cmp"), ("{T}", "cmp_val"), ("size_t *", "res_out_ptr"))),
    ("aclshmem_{N}_wait_until_all_vector", "void",
     (("{T} *", "ivars_ptr"), ("size_t", "nelems"), ("const int *", "status_ptr"), ("int", "cmp"),
      ("{T} *", "cmp_values_ptr"))),
    ("aclshmem_{N}_wait_until_any_vector", "void",
     (("{T} *", "ivars_ptr"), ("size_t", "nelems"), ("const int *", "status_ptr"), ("int", "cmp"),
      ("{T} *", "cmp_values_ptr"), ("size_t *", "res_out_ptr"))),
    ("aclshmem_{N}_wait_until_some_vector", "void",
     (("{T} *", "ivars_ptr"), ("size_t", "nelems"), ("size_t *", "indices_ptr"),
      ("const int *", "status_ptr"), ("int", "cmp"), ("{T} *", "cmp_values_ptr"),
      ("size_t *", "res_out_ptr"))),
    ("aclshmem_{N}_test", "void",
     (("{T} *", "ivar"), ("int", "cmp"), ("{T}", "cmp_value"), ("int *", "res_out_ptr"))),
    ("aclshmem_{N}_test_any", "void",
     (("{T} *", "ivars_ptr"), ("size_t", "nelems"), ("const int *", "status_ptr"), ("int", "cmp"),
      ("{T}", "cmp_value"), ("size_t *", "res_out_ptr"))),
    ("aclshmem_{N}_test_some", "void",
     (("{T} *", "ivars_ptr"), ("size_t", "nelems"), ("size_t *", "indices_ptr"),
      ("const int *", "status_ptr"), ("int", "cmp"), ("{T}", "cmp_value"),
      ("size_t *", "res_out_ptr"))),
    ("aclshmem_{N}_test_all_vector", "void",
     (("{T} *", "ivars_ptr"), ("size_t", "nelems"), ("const int *", "status_ptr"), ("int", "cmp"),
      ("{T} *", "cmp_values_ptr"), ("int *", "res_out_ptr"))),
    ("aclshmem_{N}_test_any_vector", "void",
     (("{T} *", "ivars_ptr"), ("size_t", "nelems"), ("const int *", "status_ptr"), ("int", "cmp"),
      ("{T} *", "cmp_values_ptr"), ("size_t *", "res_out_ptr"))),
    ("aclshmem_{N}_test_some_vector", "void",
     (("{T} *", "ivars_ptr"), ("size_t", "nelems"), ("size_t *", "indices_ptr"),
      ("const int *", "status_ptr"), ("int", "cmp"), ("{T} *", "cmp_values_ptr"),
      ("size_t *", "res_out_ptr"))),
)

# aclshmem/amo.h: ACLSHMEMI_DECLARE_AMO_STANDARD, _CSWAP and _INTEGER.
_AMO_STANDARD = (
    ("aclshmem_{N}_atomic_add", "void", (("{T} *", "dst"), ("{T}", "value"), ("int32_t", "pe"))),
    ("aclshmem_{N}_atomic_fetch_add", "{T}", (("{T} *", "dst"), ("{T}", "value"), ("int32_t", "pe"))),
    ("aclshmem_{N}_atomic_set", "void", (("{T} *", "dst"), ("{T}", "value"), ("int32_t", "pe"))),
    ("aclshmem_{N}_atomic_fetch", "{T}", (("const {T} *", "src"), ("int32_t", "pe"))),
    ("aclshmem_{N}_atomic_swap", "{T}", (("{T} *", "dst"), ("{T}", "value"), ("int32_t", "pe"))),
)

_AMO_CSWAP = (
    ("aclshmem_{N}_atomic_compare_swap", "{T}",
     (("{T} *", "dst"), ("{T}", "cond"), ("{T}", "value"), ("int32_t", "pe"))),
)

_AMO_INTEGER = (
    ("aclshmem_{N}_atomic_inc", "void", (("{T} *", "dst"), ("int32_t", "pe"))),
    ("aclshmem_{N}_atomic_fetch_inc", "{T}", (("{T} *", "dst"), ("int32_t", "pe"))),
    ("aclshmem_{N}_atomic_and", "void", (("{T} *", "dst"), ("{T}", "value"), ("int32_t", "pe"))),
    ("aclshmem_{N}_atomic_or", "void", (("{T} *", "dst"), ("{T}", "value"), ("int32_t", "pe"))),
    ("aclshmem_{N}_atomic_xor", "void", (("{T} *", "dst"), ("{T}", "value"), ("int32_t", "pe"))),
    ("aclshmem_{N}_atomic_fetch_and", "{T}", (("{T} *", "dst"), ("{T}", "value"), ("int32_t", "pe"))),
    ("aclshmem_{N}_atomic_fetch_or", "{T}", (("{T} *", "dst"), ("{T}", "value"), ("int32_t", "pe"))),
    ("aclshmem_{N}_atomic_fetch_xor", "{T}", (("{T} *", "dst"), ("{T}", "value"), ("int32_t", "pe"))),
)

#: (templates, table, kind): kind "type" substitutes {N}/{T}, "size" substitutes {B}.
FAMILIES = (
    (_TYPED_RMA, RMA_TYPES, "type"),
    (_SIZED_RMA, RMA_SIZES, "size"),
    (_TYPED_SIGNAL, RMA_TYPES, "type"),
    (_SIZED_SIGNAL, RMA_SIZES, "size"),
    (_P2P_SYNC, P2P_SYNC_TYPES, "type"),
    (_AMO_STANDARD, AMO_INT_TYPES + AMO_FLOAT_TYPES + AMO_HALF_TYPES, "type"),
    (_AMO_CSWAP, AMO_INT_TYPES + AMO_FLOAT_TYPES, "type"),
    (_AMO_INTEGER, AMO_INT_TYPES, "type"),
) + _coll.FAMILIES


#: The hand-written calls of rma.h, signal.h, p2p_sync.h and stream.h that move data or
#: signals (the hot path): declared from this table and wrapped by ``shmem._pyshmem`` from
#: the same template as the families.  (name, return type, parameters), as above.
_RMA_CALLS = (
    ("aclshmem_putmem", "void",
     (("void *", "dst"), ("const void *", "src"), ("size_t", "elem_size"), ("int32_t", "pe"))),
    ("aclshmem_getmem", "void",
     (("void *", "dst"), ("const void *", "src"), ("size_t", "elem_size"), ("int32_t", "pe"))),
    ("aclshmem_putmem_nbi", "void",
     (("void *", "dst"), ("const void *", "src"), ("size_t", "elem_size"), ("int32_t", "pe"))),
    ("aclshmem_getmem_nbi", "void",
     (("void *", "dst"), ("const void *", "src"), ("size_t", "elem_size"), ("int32_t", "pe"))),
    ("aclshmemx_putmem_signal", "void",
     (("void *", "dst"), ("const void *", "src"), ("size_t", "elem_size"), ("void *", "sig"),
      ("int32_t", "signal"), ("int", "sig_op"), ("int", "pe"))),
    ("aclshmemx_putmem_signal_nbi", "void",
     (("void *", "dst"), ("const void *", "src"), ("size_t", "elem_size"), ("void *", "sig"),
      ("int32_t", "signal"), ("int", "sig_op"), ("int", "pe"))),
    ("aclshmemx_signal_op", "void",
     (("int32_t *", "sig"), ("int32_t", "signal"), ("int", "sig_op"), ("int", "pe"))),
    ("aclshmem_signal_wait_until", "int32_t",
     (("int32_t *", "sig_addr"), ("int", "cmp"), ("int32_t", "cmp_val"))),
    ("aclshmemx_putmem_on_stream", "void",
     (("void *", "dst"), ("const void *", "src"), ("size_t", "elem_size"), ("int32_t", "pe"),
      ("aclrtStream", "stream"))),
    ("aclshmemx_getmem_on_stream", "void",
     (("void *", "dst"), ("const void *", "src"), ("size_t", "elem_size"), ("int32_t", "pe"),
      ("aclrtStream", "stream"))),
    ("aclshmemx_signal_op_on_stream", "void",
     (("int32_t *", "sig"), ("int32_t", "signal"), ("int", "sig_op"), ("int", "pe"),
      ("aclrtStream", "stream"))),
    ("aclshmemx_signal_wait_until_on_stream", "void",
     (("int32_t *", "sig"), ("int", "cmp"), ("int32_t", "cmp_val"), ("aclrtStream", "stream"))),
    ("aclshmemx_quiet_on_stream", "void", (("aclrtStream", "stream"),)),
)


def hand_calls():
    """The calls without an element type, in the shape of family_functions(): those of
    _RMA_CALLS and the collectives' (``shmem._native_coll.CALLS``)."""
    return [(name, ret, params, None, None) for name, ret, params in _RMA_CALLS + _coll.CALLS]


#: How shmem._pyshmem converts each kind of parameter, and what its stubs declare.
PARAM_KINDS = ("address", "stream", "size", "int", "enum_int", "float", "char", "fp16")


def param_kind(ctype, pname, elem_ctype):
    """The kind (one of PARAM_KINDS) of a templated parameter: an address (a pointer, an
    int), a stream handle, a size_t-like count, an int, an int that carries an enum
    (cmp, sig_op), or an element value of a float, char or 16-bit floating-point type."""
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


#: How many FAMILIES come before the collectives' (shmem._native_coll.FAMILIES).
_BASE_FAMILIES = len(FAMILIES) - len(_coll.FAMILIES)


def family_functions(part=None):
    """Every generated function as (name, return type, ((C type, Python name), ...),
    element C type or None, element name or bits); part "base" or "coll": only those of
    the collectives' families (``shmem._native_coll``) or only the others."""
    families = {None: FAMILIES, "base": FAMILIES[:_BASE_FAMILIES], "coll": FAMILIES[_BASE_FAMILIES:]}[part]
    out = []
    for templates, table, kind in families:
        for entry in table:
            if kind == "type":
                tname, ctype = entry
                subst = {"N": tname, "T": ctype}
                tag = tname
            else:
                ctype = None
                subst = {"B": str(entry)}
                tag = entry
            for name, ret, params in templates:
                out.append((
                    name.format(**subst),
                    ret.format(**subst),
                    tuple((pt.format(**subst), pn) for pt, pn in params),
                    ctype,
                    tag,
                ))
    return out


# ---------------------------------------------------------------------------
# The hand-written part of the cdef: types and every function outside the families.
# Keep it in the order of the headers; tests/test_native.py compares it with them.
# ---------------------------------------------------------------------------

_CDEF_TYPES = """
typedef enum {
    ACLSHMEM_SUCCESS = 0,
    ACLSHMEM_INVALID_PARAM = -1,
    ACLSHMEM_INVALID_VALUE = -2,
    ACLSHMEM_SMEM_ERROR = -3,
    ACLSHMEM_INNER_ERROR = -4,
    ACLSHMEM_NOT_INITED = -5,
    ACLSHMEM_BOOTSTRAP_ERROR = -6,
    ACLSHMEM_TIMEOUT_ERROR = -7,
    ACLSHMEM_MALLOC_FAILED = -8,
    ACLSHMEM_DL_FUNC_FAILED = -9,
    ACLSHMEM_INNER_TIMEOUT = -10,
    ACLSHMEM_UNDER_API_UNLOAD = -11,
    ACLSHMEM_NOT_SUPPORTED = -100
} aclshmem_error_code_t;

typedef enum {
    ACLSHMEMX_INIT_WITH_DEFAULT = 1,
    ACLSHMEMX_INIT_WITH_MPI = 2,
    ACLSHMEMX_INIT_WITH_UNIQUEID = 8
} aclshmemx_bootstrap_t;

typedef enum {
    ACLSHMEM_STATUS_NOT_INITIALIZED = 0,
    ACLSHMEM_STATUS_SHM_CREATED = 1,
    ACLSHMEM_STATUS_IS_INITIALIZED = 2,
    ACLSHMEM_STATUS_INVALID = 2147483647
} aclshmemx_init_status_t;

typedef enum {
    ACLSHMEM_TRANSPORT_MTE = 1,
    ACLSHMEM_TRANSPORT_ROCE = 2,
    ACLSHMEM_TRANSPORT_SDMA = 4,
    ACLSHMEM_TRANSPORT_UDMA = 8
} aclshmem_transport_t;

typedef enum {
    ACLSHMEM_DATA_OP_MTE = 1,
    ACLSHMEM_DATA_OP_SDMA = 2,
    ACLSHMEM_DATA_OP_ROCE = 4,
    ACLSHMEM_DATA_OP_UDMA = 8,
    ACLSHMEM_DATA_OP_MAX = 8
} data_op_engine_type_t;

typedef struct {
    int version;
    data_op_engine_type_t data_op_engine_type;
    uint32_t shm_init_timeout;
    uint32_t shm_create_timeout;
    uint32_t control_operation_timeout;
    int32_t sockFd;
} aclshmem_init_optional_attr_t;

typedef struct aclshmemx_init_attr_t {
    int my_pe;
    int n_pes;
    char ip_port[64];
    uint64_t local_mem_size;
    aclshmem_init_optional_attr_t option_attr;
    void *comm_args;
    uint64_t instance_id;
} aclshmemx_init_attr_t;

typedef struct {
    int32_t version;
    int my_pe;
    int n_pes;
    char internal[124];
} aclshmemx_uniqueid_t;

typedef uint16_t aclshmem_half_t;
typedef uint16_t aclshmem_bfloat16_t;

typedef int (*aclshmem_decrypt_handler)(const char *cipher, size_t cipher_len,
                                        char *plain, size_t *plain_len);

typedef enum { HOST_SIDE = 0, DEVICE_SIDE = 1 } aclshmem_mem_type_t;

typedef enum { ACLSHMEM_SIGNAL_SET = 0, ACLSHMEM_SIGNAL_ADD = 1 } aclshmem_signal_op_type_t;

typedef enum {
    ACLSHMEM_CMP_EQ = 0,
    ACLSHMEM_CMP_NE = 1,
    ACLSHMEM_CMP_GT = 2,
    ACLSHMEM_CMP_GE = 3,
    ACLSHMEM_CMP_LT = 4,
    ACLSHMEM_CMP_LE = 5
} aclshmem_cmp_op_type_t;

typedef enum { NO_NBI = 0, NBI = 1 } aclshmem_block_mode_t;

typedef enum { ACLSHMEM_TEAM_INVALID = -1, ACLSHMEM_TEAM_WORLD = 0 } aclshmem_team_index_t;
typedef int aclshmem_team_t;
typedef uint64_t aclshmemx_team_uniqueid_t;

typedef struct {
    int32_t version;
    int32_t num_contexts;
    aclshmemx_team_uniqueid_t uniqueid;
    char padding[48];
} aclshmem_team_config_t;

typedef struct {
    aclshmem_team_t team_id;
} aclshmem_handle_t;

typedef void *aclrtStream;

typedef void (*aclshmemx_kernel_fn)(uint32_t block_idx, uint32_t block_dim, void *arg);

typedef struct {
    uint64_t id;
    void *instance;
} aclshmem_instance_ctx;

typedef struct {
    int64_t aclshmem_ub;
    uint32_t ub_size;
    uint32_t sync_id;
} aclshmem_ub_config_t;

typedef struct {
    int64_t ccount[1024];
    int64_t cycles[1024];
} aclshmem_prof_block_t;

typedef struct {
    int32_t pe_id;
    aclshmem_prof_block_t block_prof[64];
} aclshmem_prof_pe_t;

typedef enum { ACLSHMEMX_TRANSPORT_SHM = 1 << 0, ACLSHMEMX_TRANSPORT_UCX = 1 << 1 } aclshmemx_transport_kind_t;
typedef enum { ACLSHMEMX_DESCRIBE_NO_LOAD = 1 << 0 } aclshmemx_describe_flags_t;
typedef enum {
    ACLSHMEMX_PLUGIN_LOADED = 0, ACLSHMEMX_PLUGIN_NOT_LOADED_YET = 1, ACLSHMEMX_PLUGIN_DISABLED = 2,
    ACLSHMEMX_PLUGIN_NOT_FOUND = 3, ACLSHMEMX_PLUGIN_LOAD_FAILED = 4, ACLSHMEMX_PLUGIN_NOT_A_PLUGIN = 5,
    ACLSHMEMX_PLUGIN_MISMATCH = 6
} aclshmemx_plugin_status_t;
typedef struct {
    aclshmemx_plugin_status_t status;
    int from_env;
    int abi;
    int expected_abi;
    const char *path;
    const char *name;
    const char *version;
    const char *reason;
    int data_plane_error;
    char data_plane[256];
} aclshmemx_plugin_info_t;
typedef struct {
    size_t size;
    const char *version;
    const char *library_path;
    int initialized;
    int my_pe;
    int n_pes;
    uint32_t transports_available;
    uint32_t transports_in_use;
    aclshmemx_plugin_info_t ucx;
} aclshmemx_description_t;
"""

_CDEF_FUNCTIONS = """
/* init.h */
int aclshmemx_init_status(void);
int aclshmemx_get_uniqueid(aclshmemx_uniqueid_t *uid);
int aclshmemx_set_attr_uniqueid_args(int my_pe, int n_pes, int64_t local_mem_size,
                                     aclshmemx_uniqueid_t *uid, aclshmemx_init_attr_t *attr);
int aclshmemx_set_qp_num(data_op_engine_type_t engine, uint32_t qp_num);
int aclshmemx_init_attr(aclshmemx_bootstrap_t bootstrap_flags, aclshmemx_init_attr_t *attributes);
int aclshmem_finalize(void);
int aclshmemx_finalize(uint64_t instance_id);
void aclshmem_info_get_version(int *major, int *minor);
void aclshmem_info_get_name(char *name);
int aclshmemx_describe(aclshmemx_description_t *desc, uint32_t flags);
void aclshmem_global_exit(int status);
int32_t aclshmemx_set_conf_store_tls(bool enable, const char *tls_info, const uint32_t tls_info_len);
int32_t aclshmemx_set_config_store_tls_key(const char *tls_pk, const uint32_t tls_pk_len,
                                           const char *tls_pk_pw, const uint32_t tls_pk_pw_len,
                                           const aclshmem_decrypt_handler decrypt_handler);
aclshmem_instance_ctx *aclshmemx_instance_ctx_get(void);
int aclshmemx_instance_ctx_set(uint64_t instance_id);
const char *aclshmemx_get_last_error(void);
void aclshmemx_clear_last_error(void);

/* mem.h */
void *aclshmem_malloc(size_t size);
void *aclshmem_calloc(size_t nmemb, size_t size);
void *aclshmem_align(size_t alignment, size_t size);
void aclshmem_free(void *ptr);
void *aclshmemx_malloc(size_t size, aclshmem_mem_type_t mem_type);
void *aclshmemx_calloc(size_t count, size_t size, aclshmem_mem_type_t mem_type);
void *aclshmemx_align(size_t alignment, size_t size, aclshmem_mem_type_t mem_type);
void aclshmemx_free(void *ptr, aclshmem_mem_type_t mem_type);
void *aclshmemx_get_heap_base(aclshmem_mem_type_t mem_type);
void *aclshmem_ptr(void *ptr, int pe);

/* team.h */
int aclshmem_team_split_strided(aclshmem_team_t parent_team, int pe_start, int pe_stride,
                                int pe_size, aclshmem_team_t *new_team);
int aclshmem_team_split_2d(aclshmem_team_t parent_team, int x_range, aclshmem_team_t *x_team,
                           aclshmem_team_t *y_team);
int aclshmem_team_translate_pe(aclshmem_team_t src_team, int src_pe, aclshmem_team_t dest_team);
void aclshmem_team_destroy(aclshmem_team_t team);
int aclshmem_my_pe(void);
int aclshmem_n_pes(void);
int aclshmem_team_my_pe(aclshmem_team_t team);
int aclshmem_team_n_pes(aclshmem_team_t team);
int aclshmem_team_get_config(aclshmem_team_t team, aclshmem_team_config_t *config);

/* rma.h (putmem, getmem and their _nbi forms are in _RMA_CALLS; the typed and sized
   families are generated) */
void aclshmem_quiet(void);
void aclshmem_fence(void);
int aclshmemx_set_mte_config(uint64_t offset, uint32_t ub_size, uint32_t sync_id);
int aclshmemx_set_sdma_config(uint64_t offset, uint32_t ub_size, uint32_t sync_id);
int aclshmemx_set_rdma_config(uint64_t offset, uint32_t ub_size, uint32_t sync_id);
int aclshmemx_set_udma_config(uint64_t offset, uint32_t ub_size, uint32_t sync_id);
int aclshmemx_get_engine_config(data_op_engine_type_t engine, aclshmem_ub_config_t *config);

/* signal.h: in _RMA_CALLS */

/* p2p_sync.h (aclshmem_signal_wait_until is in _RMA_CALLS) */
uint64_t util_get_ffts_config(void);

/* sync.h */
void aclshmem_barrier(aclshmem_team_t team);
void aclshmem_barrier_all(void);
void aclshmem_sync(aclshmem_team_t team);
void aclshmem_sync_all(void);
void aclshmemx_barrier_vec(aclshmem_team_t team);
void aclshmemx_barrier_all_vec(void);

/* stream.h */
int aclshmemx_stream_create(aclrtStream *stream);
int aclshmemx_stream_synchronize(aclrtStream stream);
int aclshmemx_stream_destroy(aclrtStream stream);
int aclshmemx_kernel_launch(aclrtStream stream, aclshmemx_kernel_fn fn, uint32_t block_dim,
                            void *arg);
uint32_t aclshmemx_block_idx(void);
uint32_t aclshmemx_block_num(void);
/* (the on-stream put, get, signal_op, signal_wait_until and quiet are in _RMA_CALLS) */
void aclshmemx_barrier_on_stream(aclshmem_team_t team, aclrtStream stream);
void aclshmemx_barrier_all_on_stream(aclrtStream stream);
void aclshmemx_handle_wait(aclshmem_handle_t handle, aclrtStream stream);

/* log.h */
int32_t aclshmemx_set_log_level(int level);
int32_t aclshmemx_set_extern_logger(void (*func)(int level, const char *msg));
void aclshmemx_get_prof(aclshmem_prof_pe_t **out_profs, bool verbose);
void aclshmemx_show_prof(void);
void aclshmemx_prof_start(uint32_t frame);
void aclshmemx_prof_end(uint32_t frame);
"""


def _declaration(name, ret, params):
    args = ", ".join(f"{ctype} {pname}" for ctype, pname in params) or "void"
    return f"{ret} {name}({args});"


def cdef_source(part=None):
    """The declaration text handed to ``ffi.cdef``: all of it, or (part "base" / "coll")
    all but the collectives' typed families, or only those (parsed on first use when no
    generated module holds the parsed declarations: see declare_collectives)."""
    if part == "coll":
        return "\n".join(_declaration(name, ret, params) for name, ret, params, _, _ in family_functions("coll")) + "\n"
    generated = "\n".join(
        _declaration(name, ret, params) for name, ret, params, _, _ in hand_calls() + family_functions("base")
    )
    base = _CDEF_TYPES + _CDEF_FUNCTIONS + "\n/* from hand_calls() and the families */\n" + generated + "\n"
    return base if part == "base" else base + cdef_source("coll")


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


#: The module cffi generates from cdef_source() at build time (out-of-line ABI mode: the
#: declarations already parsed, as data; see shmem._ffi_build).
PRECOMPILED_MODULE = "shmem._aclshmem_cffi"


_fingerprint = None


def source_fingerprint():
    """A digest of the files the generated modules are made from: this one (the tables and
    the declarations), ``_native_coll.py`` (the collectives' tables) and ``_ffi_build.py``
    (the templates).  Each generated module
    records the fingerprint it was made with, so that a stale one (in a source checkout
    whose tables changed since it was built) is never used."""
    global _fingerprint
    if _fingerprint is None:
        import zlib  # (hashlib would load OpenSSL: ~3 ms of every import)

        here = os.path.dirname(os.path.abspath(__file__))
        parts = []
        for name in ("_native.py", "_native_coll.py", "_ffi_build.py"):
            with open(os.path.join(here, name), "rb") as f:
                data = f.read()
            parts.append(f"{len(data)}:{zlib.crc32(data):08x}")
        _fingerprint = "/".join(parts)
    return _fingerprint


def is_fresh(generated_module):
    """Whether a generated module was made from these sources."""
    try:
        return generated_module.SOURCE_FINGERPRINT == source_fingerprint()
    except (AttributeError, OSError):  # no fingerprint, or the sources are not readable
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
        missing = [name for name, *_ in family_functions("coll") if not hasattr(lib, name)]
        _collectives_pending = False
    if missing:
        raise LibraryNotFoundError(
            f"{_path} lacks {len(missing)} collective function(s) shmem-core binds ({', '.join(missing[:5])}"
            f"{' ...' if len(missing) > 5 else ''}). {_INSTALL_HINT}")


def is_collective(name):
    """Whether name is a function of the collectives' typed families."""
    global _COLLECTIVE_NAMES
    if _COLLECTIVE_NAMES is None:
        _COLLECTIVE_NAMES = frozenset(f[0] for f in family_functions("coll"))
    return name in _COLLECTIVE_NAMES


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
