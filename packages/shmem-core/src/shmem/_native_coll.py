"""The collectives' part of the binding (``aclshmem/coll.h``): type tables and templates that
``shmem._native`` adds to its own, in the same shapes.

* The type tables mirror the X-macros of ``aclshmem/types.h``: ``ACLSHMEM_COLL_TYPES``
  (broadcast, collect, fcollect, alltoall, alltoalls) and the reductions' tables
  ``ACLSHMEM_REDUCE_BITWISE_TYPES`` (and, or, xor), ``_MINMAX_TYPES`` (min, max) and
  ``_ARITH_TYPES`` (sum, prod: min/max's and the complex types).
* ``FAMILIES``: (templates, table, "type") entries, one for the data-moving calls and one
  per reduction operation (the operation is part of the names, as in the header).
* ``CALLS``: the calls without an element type (the ``*mem`` forms and
  ``aclshmemx_team_exchange``), as ``(name, return type, parameters)``.

Like ``shmem._native`` this module imports nothing, so the build (``setup.py``) can load it
by path before the package is installed.
"""

# ACLSHMEM_COLL_TYPES
COLL_TYPES = (
    ("float", "float"), ("double", "double"), ("longdouble", "long double"), ("char", "char"),
    ("schar", "signed char"), ("short", "short"), ("int", "int"), ("long", "long"), ("longlong", "long long"),
    ("uchar", "unsigned char"), ("ushort", "unsigned short"), ("uint", "unsigned int"),
    ("ulong", "unsigned long"), ("ulonglong", "unsigned long long"), ("int8", "int8_t"), ("int16", "int16_t"),
    ("int32", "int32_t"), ("int64", "int64_t"), ("uint8", "uint8_t"), ("uint16", "uint16_t"),
    ("uint32", "uint32_t"), ("uint64", "uint64_t"), ("size", "size_t"), ("ptrdiff", "ptrdiff_t"),
    ("half", "aclshmem_half_t"), ("bfloat16", "aclshmem_bfloat16_t"),
)

_BITWISE_NAMES = ("uchar", "ushort", "uint", "ulong", "ulonglong", "int8", "int16", "int32", "int64", "uint8",
                  "uint16", "uint32", "uint64", "size")
_MINMAX_NAMES = ("char", "schar", "short", "int", "long", "longlong", "ptrdiff", "uchar", "ushort", "uint", "ulong",
                 "ulonglong", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "size",
                 "float", "double", "longdouble", "half", "bfloat16")
_CTYPE = dict(COLL_TYPES)

# ACLSHMEM_REDUCE_BITWISE_TYPES, ACLSHMEM_REDUCE_MINMAX_TYPES, ACLSHMEM_REDUCE_ARITH_TYPES
REDUCE_BITWISE_TYPES = tuple((n, _CTYPE[n]) for n in _BITWISE_NAMES)
REDUCE_MINMAX_TYPES = tuple((n, _CTYPE[n]) for n in _MINMAX_NAMES)
REDUCE_ARITH_TYPES = REDUCE_MINMAX_TYPES + (("complexf", "float _Complex"), ("complexd", "double _Complex"))

#: Each reduction operation and the table of the types it takes.
REDUCE_OPS = (
    ("and", REDUCE_BITWISE_TYPES), ("or", REDUCE_BITWISE_TYPES), ("xor", REDUCE_BITWISE_TYPES),
    ("min", REDUCE_MINMAX_TYPES), ("max", REDUCE_MINMAX_TYPES),
    ("sum", REDUCE_ARITH_TYPES), ("prod", REDUCE_ARITH_TYPES),
)

_TEAM = ("aclshmem_team_t", "team")
_STREAM = ("aclrtStream", "stream")


def _with_stream_forms(calls):
    """calls, then each one's aclshmemx_..._on_stream form (a stream parameter more)."""
    streamed = tuple((name.replace("aclshmem_", "aclshmemx_", 1) + "_on_stream", ret, params + (_STREAM,))
                     for name, ret, params in calls)
    return tuple(calls) + streamed


# ACLSHMEMI_DECLARE_COLL, without its on-stream forms
_MOVES = (
    ("aclshmem_{N}_broadcast", "int",
     (_TEAM, ("{T} *", "dest"), ("const {T} *", "source"), ("size_t", "nelems"), ("int", "pe_root"))),
    ("aclshmem_{N}_collect", "int", (_TEAM, ("{T} *", "dest"), ("const {T} *", "source"), ("size_t", "nelems"))),
    ("aclshmem_{N}_fcollect", "int", (_TEAM, ("{T} *", "dest"), ("const {T} *", "source"), ("size_t", "nelems"))),
    ("aclshmem_{N}_alltoall", "int", (_TEAM, ("{T} *", "dest"), ("const {T} *", "source"), ("size_t", "nelems"))),
    ("aclshmem_{N}_alltoalls", "int",
     (_TEAM, ("{T} *", "dest"), ("const {T} *", "source"), ("ptrdiff_t", "dst"), ("ptrdiff_t", "sst"),
      ("size_t", "nelems"))),
)
_COLL = _with_stream_forms(_MOVES)


def _mem_form(call):
    """aclshmem_{N}_broadcast(..., {T} *dest, ...) -> aclshmem_broadcastmem(..., void *dest, ...)."""
    name, ret, params = call
    return (name.replace("{N}_", "") + "mem", ret, tuple((t.replace("{T}", "void"), p) for t, p in params))


def _reduce_templates(op):
    """ACLSHMEMI_DECLARE_REDUCE(NAME, TYPE, op)."""
    params = (_TEAM, ("{T} *", "dest"), ("const {T} *", "source"), ("size_t", "nreduce"))
    return _with_stream_forms((
        (f"aclshmem_{{N}}_{op}_reduce", "int", params),
        (f"aclshmem_{{N}}_{op}_reducescatter", "int", params),
    ))


#: (templates, table, kind) entries for shmem._native.FAMILIES.
FAMILIES = ((_COLL, COLL_TYPES, "type"),) + tuple((_reduce_templates(op), table, "type") for op, table in REDUCE_OPS)

#: aclshmemx_reduce_local's element types and operations by value (aclshmemx_type_t is
#: ACLSHMEM_REDUCE_ARITH_TYPES in order; aclshmemx_reduce_op_t and, or, xor, min, max, sum, prod).
LOCAL_REDUCE_TYPES = {name: value for value, (name, _) in enumerate(REDUCE_ARITH_TYPES)}
LOCAL_REDUCE_OPS = {name: value for value, name in enumerate(("and", "or", "xor", "min", "max", "sum", "prod"))}

#: The calls without an element type: aclshmemx_team_exchange, aclshmemx_reduce_local (its
#: enums as int) and the *mem forms.
CALLS = (
    ("aclshmemx_team_exchange", "int", (_TEAM, ("const void *", "mine"), ("size_t", "size"), ("void *", "all"))),
    ("aclshmemx_reduce_local", "int", (_TEAM, ("void *", "dest"), ("const void *", "source"), ("void *", "work"),
                                        ("size_t", "nreduce"), ("int", "dtype"), ("int", "op"))),
) + _with_stream_forms(tuple(_mem_form(call) for call in _MOVES))
