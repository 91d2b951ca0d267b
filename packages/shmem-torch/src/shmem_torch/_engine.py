"""The library's collectives engine (aclshmem/coll.h) for torch tensors: the one module of
shmem_torch through which collectives reach C.

Everything here works on addresses of symmetric memory and element counts; the callers
(``collectives`` for shmem_torch's own functions, the backend's process group) decide
what is symmetric and stage the rest.  A call fails on every PE of the team alike when
the PEs' calls do not match (the engine compares them), so a mistake is an error, not a
hang.

Reductions: every torch dtype with CPU arithmetic that the engine has a type for (bool
as bytes: sum and max are ``or``, prod and min are ``and``), ``avg`` as the engine's sum
divided afterwards, and the bitwise operations for integers and bool.  Data movement takes
any dtype (the engine moves bytes).
"""

import ctypes

import torch

from shmem import _pyshmem
from shmem.core import AclshmemError, AclshmemInvalid

__all__ = ["Refused", "Reduction", "reduction", "reduce", "reduce_local", "reducescatter", "broadcast",
           "broadcast_local", "fcollect", "alltoall", "exchange", "team_size", "EXCHANGE_MAX"]

# The most bytes one PE contributes to exchange (ACLSHMEMX_TEAM_EXCHANGE_MAX).
EXCHANGE_MAX = 128

# torch dtype -> the element type name of the C functions
_CTYPE = {
    torch.int8: "int8", torch.int16: "int16", torch.int32: "int32", torch.int64: "int64",
    torch.uint8: "uint8", torch.float16: "half", torch.bfloat16: "bfloat16", torch.float32: "float",
    torch.float64: "double", torch.complex64: "complexf", torch.complex128: "complexd",
    torch.bool: "uint8",
}
for _name, _ctype in (("uint16", "uint16"), ("uint32", "uint32"), ("uint64", "uint64")):
    if getattr(torch, _name, None) is not None:
        _CTYPE[getattr(torch, _name)] = _ctype

_INTEGERS = frozenset(dt for dt, ct in _CTYPE.items() if ct.startswith(("int", "uint")) and dt != torch.bool)
_COMPLEX = frozenset((torch.complex64, torch.complex128))
# dtypes the engine has no type for, reduced in a wider one that it has (the callers stage
# them through symmetric memory of the wider type): one rounding, at the end
_WIDER = {torch.complex32: torch.complex64}

# operation names (shmem_torch's and the backend's) -> the engine's
_ARITH = {"sum": "sum", "avg": "sum", "prod": "prod", "min": "min", "max": "max"}
_BITWISE = {"band": "and", "bor": "or", "bxor": "xor"}
_BOOL = {"sum": "or", "max": "or", "prod": "and", "min": "and", "band": "and", "bor": "or", "bxor": "xor"}


class Refused(AclshmemInvalid):
    """The engine refused a call (on every PE of the team alike): the PEs' calls do not
    match (another operation, type, count or root), or a PE's arguments are bad."""


class Reduction:
    """A checked (operation, dtype) pair: the C function that computes it, the dtype it
    computes in (``wire``: dtype itself, or a wider one the data must be converted to),
    and whether the result is divided by the team's size afterwards (avg)."""

    __slots__ = ("op", "dtype", "wire", "ctype", "cop", "average", "_fns")

    def __init__(self, op, dtype):
        self.op = op
        self.dtype = dtype
        self.wire = _WIDER.get(dtype, dtype)
        self.average = op == "avg"
        self.cop = _engine_op(op, dtype, self.wire)
        self.ctype = _CTYPE[self.wire]
        self._fns = {}

    def function(self, kind):
        """The C function of kind "reduce" or "reducescatter"."""
        fn = self._fns.get(kind)
        if fn is None:
            fn = self._fns[kind] = getattr(_pyshmem, f"aclshmem_{self.ctype}_{self.cop}_{kind}")
        return fn


def _engine_op(op, dtype, wire):
    if dtype == torch.bool:
        if op == "avg":
            raise AclshmemInvalid("op 'avg' needs a floating-point or complex dtype, not torch.bool")
        return _BOOL[op]
    if wire not in _CTYPE:
        raise AclshmemInvalid(f"reductions are not supported for {dtype} (the collectives engine has no "
                              "arithmetic for it); all_gather, broadcast and all_to_all are")
    if op in _BITWISE:
        if dtype not in _INTEGERS:
            raise AclshmemInvalid(f"op {op.upper()} needs an integer or bool tensor, not {dtype}")
        return _BITWISE[op]
    if op == "avg" and dtype in _INTEGERS:
        raise AclshmemInvalid(f"op 'avg' needs a floating-point or complex dtype, not {dtype} "
                              "(use 'sum' and divide as you need)")
    if op in ("min", "max") and wire in _COMPLEX:
        raise AclshmemInvalid(f"op '{op}' is not defined for complex tensors ({dtype})")
    return _ARITH[op]


_reductions = {}


def reduction(op, dtype):
    """Reduction(op, dtype), made once per pair (a bad pair raises AclshmemInvalid every time)."""
    red = _reductions.get((op, dtype))
    if red is None:
        red = _reductions[(op, dtype)] = Reduction(op, dtype)
    return red


def _check(api, rc):
    if rc != _pyshmem.ACLSHMEM_SUCCESS:
        name = _pyshmem.ERROR_NAMES.get(rc, str(rc))
        cls = Refused if rc == _pyshmem.ACLSHMEM_INVALID_PARAM else AclshmemError
        raise cls(f"{api} failed ({name}): {_pyshmem.aclshmemx_get_last_error()}")


def team_size(team):
    return _pyshmem.pe_count() if team == _pyshmem.ACLSHMEM_TEAM_WORLD else _pyshmem.team_n_pes(team)


def _nbytes(t):
    return t.numel() * t.element_size()


def _reduced(call, team, red, dst, rc):
    """After an engine reduction into dst: raises on an error, then divides for avg."""
    if rc != _pyshmem.ACLSHMEM_SUCCESS:  # (the name is made only then: every call passes here)
        _check(f"{call} ({red.op}, {red.dtype})", rc)
    if red.average and dst.numel():
        dst.div_(team_size(team))


def reduce(team, red, dst, src):
    """dst on every PE of team <- the reduction of every PE's src (contiguous tensors of
    red.dtype and of the same number of elements, of any shape; dst may be src)."""
    rc = red.function("reduce")(team, dst.data_ptr(), src.data_ptr(), dst.numel())
    _reduced("all_reduce", team, red, dst, rc)


def reduce_local(team, red, dst, src, work):
    """reduce() of this process's own tensors: dst and src (1-D contiguous, of red.dtype, which
    must be red.wire; dst may be src) need not be symmetric; work is symmetric room of the
    same size, used as scratch (aclshmemx_reduce_local)."""
    rc = _pyshmem.aclshmemx_reduce_local(team, dst.data_ptr(), src.data_ptr(), work.data_ptr(), dst.numel(),
                                         _pyshmem.LOCAL_REDUCE_TYPES[red.ctype], _pyshmem.LOCAL_REDUCE_OPS[red.cop])
    _reduced("all_reduce", team, red, dst, rc)


def reducescatter(team, red, dst, src):
    """dst of team PE i <- the reduction of block i (dst's length) of every PE's src."""
    rc = red.function("reducescatter")(team, dst.data_ptr(), src.data_ptr(), dst.numel())
    _reduced("reduce_scatter", team, red, dst, rc)


def broadcast(team, dst, src, root):
    """dst on every PE <- src of team PE root (tensors of the same size in bytes)."""
    _check("broadcast", _pyshmem.aclshmem_broadcastmem(team, dst.data_ptr(), src.data_ptr(), _nbytes(dst), root))


def broadcast_local(team, dst, src, work, root):
    """broadcast() of this process's own tensors: dst (and src, read on the root only; it may be
    dst) need not be symmetric; work is symmetric room of dst's size, used as scratch
    (aclshmemx_broadcastmem_local)."""
    _check("broadcast", _pyshmem.aclshmemx_broadcastmem_local(team, dst.data_ptr(), src.data_ptr(), work.data_ptr(),
                                                             _nbytes(dst), root))


def fcollect(team, dst, src):
    """Every PE's src, in team order, to dst on every PE (src may be this PE's block of dst)."""
    _check("all_gather", _pyshmem.aclshmem_fcollectmem(team, dst.data_ptr(), src.data_ptr(), _nbytes(src)))


def alltoall(team, dst, src, block):
    """Block j (``block`` bytes) of src on PE i to block i of dst on PE j."""
    _check("all_to_all", _pyshmem.aclshmem_alltoallmem(team, dst.data_ptr(), src.data_ptr(), block))


def exchange(team, record):
    """Collective: every PE of team contributes the bytes ``record`` (at most EXCHANGE_MAX,
    the same length on every PE); returns every member's record in team order."""
    size = len(record)
    n = team_size(team)
    mine = ctypes.create_string_buffer(bytes(record), max(size, 1))
    every = ctypes.create_string_buffer(max(size * n, 1))
    _check("exchange", _pyshmem.aclshmemx_team_exchange(team, ctypes.addressof(mine), size,
                                                         ctypes.addressof(every)))
    raw = every.raw
    return [raw[i * size:(i + 1) * size] for i in range(n)]
