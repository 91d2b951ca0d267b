"""Collectives over a team: reduce, reducescatter, broadcast, fcollect, collect, alltoall.

Every PE of the team calls the same function with the same sizes, element type, operation
and root (``collect``'s sizes may differ), in the same order as its other collectives on
that team::

    x = core.buffer(4096).numpy("float32")        # a view of symmetric memory
    x[:] = me
    core.reduce(core.ACLSHMEM_TEAM_WORLD, x, x, "sum")   # every PE: x == 0 + 1 + ... + (n - 1)

``dst`` and ``src`` are symmetric memory: a :class:`Buffer`, or a NumPy array or any DLPack
tensor (torch, ...) that is a contiguous view of a Buffer's memory.  The element type comes
from the array; a raw Buffer takes ``dtype=`` (a NumPy name or dtype; the collectives that
only move data treat a Buffer without one as bytes).  ``op`` is a :class:`ReduceOp` or its
name (``"sum"``, ``"min"``, ``"max"``, ``"prod"``, ``"and"``, ``"or"``, ``"xor"``).

``stream=None`` runs the collective now: it returns when ``dst`` holds the result on this
PE.  A :class:`Stream` (or a stream handle, 0 for the default stream) enqueues it instead;
synchronise the stream to see it done.

Errors: a bad argument of this PE raises :class:`AclshmemInvalid` before the call;
:class:`AclshmemError` carries the library's message when the collective fails, which it
does on every PE of the team alike when the PEs' calls do not match (another size, type,
operation or root), so a mistake is reported instead of hanging or corrupting memory.
"""

import enum
import struct
from typing import Any, NamedTuple, Optional, Union

from .. import _abi, _pyshmem
from . import _export
from .._errors import AclshmemError, AclshmemInvalid
from .buffer import Buffer, check_buffer
from .stream import StreamLike, check_stream, keep_alive
from .utils import check_int, check_team

__all__ = ["ReduceOp", "reduce", "reducescatter", "broadcast", "fcollect", "collect", "alltoall", "COLL_DTYPES",
           "reduce_dtypes"]


class ReduceOp(enum.Enum):
    """The reduction operations; each member's value is the name that the C functions
    carry (``aclshmem_<type>_<op>_reduce``)."""

    SUM = "sum"
    PROD = "prod"
    MIN = "min"
    MAX = "max"
    AND = "and"
    OR = "or"
    XOR = "xor"


#: NumPy element type name -> the type name of the C functions (aclshmem/coll.h).
COLL_DTYPES = {
    "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
    "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
    "float16": "half", "bfloat16": "bfloat16", "float32": "float", "float64": "double",
    "longdouble": "longdouble", "complex64": "complexf", "complex128": "complexd",
}

# The C type names each operation takes, from the generated families (the header's tables).
_REDUCIBLE = {(op, t) for op, table in _abi.REDUCE_OPS for t, _ in table}
_MOVABLE = {t for t, _ in _abi.COLL_TYPES}
_ITEMSIZE = {"int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "float16": 2, "bfloat16": 2, "int32": 4,
             "uint32": 4, "float32": 4, "int64": 8, "uint64": 8, "float64": 8, "complex64": 8,
             "complex128": 16, "bool": 1}


def reduce_dtypes(op: Union[ReduceOp, str]) -> list:
    """The element types (NumPy names) that reduction ``op`` takes."""
    name = _check_op(op).value
    return [n for n, t in COLL_DTYPES.items() if (name, t) in _REDUCIBLE]


def _check_op(op: object) -> ReduceOp:
    if isinstance(op, ReduceOp):
        return op
    if isinstance(op, str):
        try:
            return ReduceOp(op.strip().lower())
        except ValueError:
            pass
    names = ", ".join(repr(m.value) for m in ReduceOp)
    raise AclshmemInvalid(f"op must be a ReduceOp or one of {names}, not {op!r}")


def _dtype_name(dtype: object) -> str:
    """A NumPy element type name from a name, a NumPy dtype or a NumPy scalar type."""
    if isinstance(dtype, str):
        key = {"half": "float16", "double": "float64"}.get(dtype.strip().lower(), dtype.strip().lower())
        if key in COLL_DTYPES or key == "bool":
            return key
    try:
        import numpy as np

        dt = np.dtype(dtype)
    except (ImportError, TypeError, ValueError):
        dt = None
    if dt is not None:
        if not dt.isnative:
            raise AclshmemInvalid(f"dtype {dtype!r} is not in this machine's byte order")
        if dt.name in COLL_DTYPES or dt.name == "bool":
            return dt.name
        if dt == np.dtype("longdouble"):  # NumPy calls it float128 (x86-64) or float96
            return "longdouble"
    raise AclshmemInvalid(f"dtype {dtype!r} is not an element type of the collectives; use one of "
                          f"{', '.join(COLL_DTYPES)} (a name, a NumPy dtype or a scalar type)")


class _Operand(NamedTuple):
    addr: int
    nbytes: int
    dtype: Optional[str]  # NumPy name, None for a raw Buffer without dtype=
    keep: Any             # what must stay alive while the library uses the memory


def _itemsize(dtype: str) -> int:
    if dtype == "longdouble":
        import numpy as np

        return np.dtype("longdouble").itemsize
    return _ITEMSIZE[dtype]


def _from_array_interface(x: Any, name: str, writable: bool) -> _Operand:
    info = x.__array_interface__
    import numpy as np

    dt = np.dtype(info["typestr"])
    count = 1
    for extent in info["shape"]:
        count *= extent
    strides = info.get("strides")
    if strides is not None and count > 1 and not x.flags["C_CONTIGUOUS"]:
        raise AclshmemInvalid(f"{name} must be contiguous (a strided view cannot be a collective's buffer)")
    addr, readonly = info["data"]
    if writable and readonly:
        raise AclshmemInvalid(f"{name} is read-only")
    return _Operand(addr, count * dt.itemsize, _dtype_name(dt), x)


def _from_dlpack(x: Any, name: str) -> _Operand:
    view = _export.read_dlpack(x)
    if not view.on_cpu:
        raise AclshmemInvalid(f"{name} is not in CPU memory")
    if not view.contiguous:
        raise AclshmemInvalid(f"{name} must be contiguous (a strided view cannot be a collective's buffer)")
    if view.dtype not in COLL_DTYPES and view.dtype != "bool":
        raise AclshmemInvalid(f"{name} has element type {view.dtype}, which the collectives do not take")
    return _Operand(view.addr, view.nbytes, view.dtype, x)


def _operand(x: Any, name: str, dtype: Optional[str], writable: bool) -> _Operand:
    """Where x's memory is; the element type from x, or dtype for a raw Buffer."""
    if isinstance(x, Buffer):
        check_buffer(x, name)
        return _Operand(x.addr, x.length, dtype, x)
    if hasattr(x, "__array_interface__"):
        found = _from_array_interface(x, name, writable)
    elif hasattr(x, "__dlpack__"):
        found = _from_dlpack(x, name)
    else:
        raise AclshmemInvalid(f"{name} must be a Buffer, a NumPy array or a DLPack tensor of symmetric memory, "
                              f"not {type(x).__name__}")
    if dtype is not None and dtype != found.dtype:
        raise AclshmemInvalid(f"dtype={dtype} but {name} holds {found.dtype}")
    return found


def _check_symmetric(op: _Operand, name: str) -> None:
    """The memory must be symmetric: both ends inside this PE's heap."""
    if op.nbytes == 0:
        return
    me = _pyshmem.my_pe()
    _pyshmem.aclshmemx_clear_last_error()
    if not (_pyshmem.aclshmem_ptr(op.addr, me) and _pyshmem.aclshmem_ptr(op.addr + op.nbytes - 1, me)):
        raise AclshmemInvalid(f"{name} ({op.nbytes} bytes at {op.addr:#x}) is not symmetric memory: "
                              "collectives need memory of core.buffer/calloc/align (or views of it)")


def _operands(dst: Any, src: Any, dtype: object):
    """(dst, src, element type or None) after the checks every collective makes."""
    want = None if dtype is None else _dtype_name(dtype)
    d = _operand(dst, "dst", want, writable=True)
    s = _operand(src, "src", want, writable=False)
    kind = d.dtype or s.dtype
    if d.dtype and s.dtype and d.dtype != s.dtype:
        raise AclshmemInvalid(f"dst holds {d.dtype} but src holds {s.dtype}: they must have the same element type")
    d, s = d._replace(dtype=kind), s._replace(dtype=kind)
    _check_symmetric(d, "dst")
    _check_symmetric(s, "src")
    return d, s, kind


def _count(op: _Operand, name: str, dtype: Optional[str]) -> int:
    size = _itemsize(dtype) if dtype else 1
    if op.nbytes % size:
        raise AclshmemInvalid(f"{name} is {op.nbytes} bytes, not a whole number of {dtype} elements")
    return op.nbytes // size


def _run(api: str, c_name: str, args: tuple, stream: StreamLike, keep: tuple) -> None:
    """Calls the host function c_name, or its _on_stream form when stream is given."""
    if stream is None:
        rc = getattr(_pyshmem, c_name)(*args)
    else:
        handle = check_stream(stream)
        on_stream = c_name.replace("aclshmem_", "aclshmemx_", 1) + "_on_stream"
        rc = getattr(_pyshmem, on_stream)(*args, handle)
        if rc == _pyshmem.ACLSHMEM_SUCCESS:
            keep_alive(stream, *keep)
    if rc != _pyshmem.ACLSHMEM_SUCCESS:
        name = _pyshmem.ERROR_NAMES.get(rc, str(rc))
        raise AclshmemError(f"{api} failed ({name}): {_pyshmem.aclshmemx_get_last_error()}", rc)


# ---------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------


def _reduction(api: str, suffix: str, team: int, dst: Any, src: Any, op: object, stream: StreamLike,
               dtype: object, per_pe: bool) -> None:
    t = check_team(team)
    rop = _check_op(op)
    d, s, kind = _operands(dst, src, dtype)
    if kind is None:
        raise AclshmemInvalid(f"{api}: dst and src are raw Buffers: say their element type with dtype=")
    ctype = COLL_DTYPES.get(kind)
    if (rop.value, ctype) not in _REDUCIBLE:
        raise AclshmemInvalid(f"{api}: no {rop.value} reduction of {kind} (it takes "
                              f"{', '.join(reduce_dtypes(rop))})")
    n = _count(d, "dst", kind)
    want = n * (_pyshmem.team_n_pes(t) if per_pe else 1)
    if _count(s, "src", kind) != want:
        raise AclshmemInvalid(f"{api}: src has {_count(s, 'src', kind)} elements, it needs {want} "
                              f"(dst has {n}{' per PE of the team' if per_pe else ''})")
    _run(api, f"aclshmem_{ctype}_{rop.value}_{suffix}", (t, d.addr, s.addr, n), stream, (d.keep, s.keep))


def reduce(team: int, dst: Any, src: Any, op: Union[ReduceOp, str], stream: StreamLike = None, *,
           dtype: object = None) -> None:
    """Collective: ``dst`` on every PE of ``team`` gets the element-wise ``op`` of every PE's
    ``src`` (as many elements as ``dst``; ``dst`` may be ``src``).  Every PE gets the same
    bits; integers wrap around; float16 and bfloat16 are computed in float32."""
    _reduction("reduce", "reduce", team, dst, src, op, stream, dtype, per_pe=False)


def reducescatter(team: int, dst: Any, src: Any, op: Union[ReduceOp, str], stream: StreamLike = None, *,
                  dtype: object = None) -> None:
    """Collective: ``src`` holds one block of ``len(dst)`` elements per PE of ``team``; PE
    i's ``dst`` gets the ``op`` of block i of every PE's ``src``.  ``dst`` and ``src`` must
    not overlap."""
    _reduction("reducescatter", "reducescatter", team, dst, src, op, stream, dtype, per_pe=True)


# ---------------------------------------------------------------------------
# Moving data
# ---------------------------------------------------------------------------


def _move(api: str, what: str, team: int, d: _Operand, s: _Operand, kind: Optional[str], extra: tuple,
          stream: StreamLike, count: int) -> None:
    """The typed C function of what when the element type has one, else the *mem form in
    bytes (a raw Buffer, complex and bool elements)."""
    ctype = COLL_DTYPES.get(kind) if kind else None
    if ctype in _MOVABLE:
        name = f"aclshmem_{ctype}_{what}"
    else:
        name, count = f"aclshmem_{what}mem", count * (_itemsize(kind) if kind else 1)
    _run(api, name, (team, d.addr, s.addr, count) + extra, stream, (d.keep, s.keep))


def broadcast(team: int, dst: Any, src: Any, root: int = 0, stream: StreamLike = None, *,
              dtype: object = None) -> None:
    """Collective: ``src`` of team PE ``root`` to ``dst`` of every PE of ``team`` (the
    root's too; ``dst`` may be ``src``).  ``dst`` and ``src`` have the same size."""
    t = check_team(team)
    n = _pyshmem.team_n_pes(t)
    r = check_int(root, "root", 0, n - 1) if n > 0 else check_int(root, "root")
    d, s, kind = _operands(dst, src, dtype)
    count = _count(s, "src", kind)
    if _count(d, "dst", kind) != count:
        raise AclshmemInvalid(f"broadcast: dst has {_count(d, 'dst', kind)} elements and src {count}: "
                              "they must be the same size")
    _move("broadcast", "broadcast", t, d, s, kind, (r,), stream, count)


def fcollect(team: int, dst: Any, src: Any, stream: StreamLike = None, *, dtype: object = None) -> None:
    """Collective: every PE's ``src`` (the same size on each) to ``dst`` of every PE of
    ``team``, in team order; ``dst`` holds team-size times ``src``.  ``src`` may be this
    PE's block of ``dst`` (in place)."""
    t = check_team(team)
    d, s, kind = _operands(dst, src, dtype)
    count = _count(s, "src", kind)
    want = count * _pyshmem.team_n_pes(t)
    if _count(d, "dst", kind) != want:
        raise AclshmemInvalid(f"fcollect: dst has {_count(d, 'dst', kind)} elements, it needs {want} "
                              f"({count} per PE of the team)")
    _move("fcollect", "fcollect", t, d, s, kind, (), stream, count)


def collect(team: int, dst: Any, src: Any, stream: StreamLike = None, *, dtype: object = None) -> None:
    """Collective: like :func:`fcollect`, but each PE's ``src`` may have its own size; ``dst``
    must hold them all.  The PEs first agree on the sizes (so a ``dst`` that is too small on
    any PE fails on every PE, before anything is written)."""
    t = check_team(team)
    d, s, kind = _operands(dst, src, dtype)
    count, room = _count(s, "src", kind), _count(d, "dst", kind)
    counts = _exchange_counts(t, count, room)
    total = sum(c for c, _ in counts)
    short = [pe for pe, (_, r) in enumerate(counts) if r < total]
    if short:
        raise AclshmemInvalid(f"collect: the PEs' src add up to {total} elements, but dst of team PE(s) "
                              f"{short} holds {counts[short[0]][1]}")
    _move("collect", "collect", t, d, s, kind, (), stream, count)


def _exchange_counts(team: int, count: int, room: int) -> list:
    """[(src elements, dst elements)] of every PE of team, through aclshmemx_team_exchange."""
    try:
        records = _pyshmem.team_exchange(team, struct.pack("=QQ", count, room))
    except AclshmemError as exc:
        raise AclshmemError(f"collect failed: {_pyshmem.aclshmemx_get_last_error()}", exc.code) from None
    return [struct.unpack("=QQ", record) for record in records]


def alltoall(team: int, dst: Any, src: Any, stream: StreamLike = None, *, dtype: object = None) -> None:
    """Collective: ``src`` is one block per PE of ``team``; block j of PE i's ``src`` goes to
    block i of PE j's ``dst`` (the same size as ``src``; the two must not overlap)."""
    t = check_team(team)
    n = _pyshmem.team_n_pes(t)
    d, s, kind = _operands(dst, src, dtype)
    count = _count(s, "src", kind)
    if _count(d, "dst", kind) != count or count % max(n, 1):
        raise AclshmemInvalid(f"alltoall: src has {count} elements and dst {_count(d, 'dst', kind)}: both "
                              f"need the same number, a multiple of the team's {n} PEs")
    _move("alltoall", "alltoall", t, d, s, kind, (), stream, count // max(n, 1))
