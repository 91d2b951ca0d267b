"""Atomic memory operations on one element of a symmetric tensor of another PE.

The element type is the tensor's dtype: ``torch.int8`` ... ``torch.int64``,
``torch.uint8`` (and ``torch.uint16/32/64`` where this torch has them), ``torch.float32``,
``torch.float64``, ``torch.float16`` (the library's half) and ``torch.bfloat16``.  The
element is named by ``index``: an int counts elements in row-major order of the
tensor's shape (any strides), a tuple is one index per dimension.  ::

    counts = shmem_torch.zeros(16, dtype=torch.int64)               # collective
    slot = shmem_torch.atomic_fetch_add(counts, 1, pe=0, index=3)   # old value of counts[3] on PE 0

Which dtype takes which operation, the ordering and atomicity guarantees and the errors
are those of :mod:`shmem.core.amo` (``AclshmemInvalid`` for a bad argument,
``AclshmemError`` with the library's message for a failure).  Values are Python numbers;
the fetching calls return the old value as an ``int`` or ``float``.
"""

import torch

from shmem.core import AclshmemInvalid
from shmem.core.amo import AMO_DTYPES, amo_on_address, atomic_dtypes

from .tensor import check_int, check_pe, resolve

__all__ = [
    "atomic_add", "atomic_fetch_add", "atomic_inc", "atomic_fetch_inc", "atomic_set", "atomic_fetch",
    "atomic_swap", "atomic_compare_swap", "atomic_and", "atomic_or", "atomic_xor", "atomic_fetch_and",
    "atomic_fetch_or", "atomic_fetch_xor",
]

# torch dtype -> the C family's type name.  torch names its dtypes as NumPy does (str(dtype)
# is "torch.<numpy name>"), so the table of shmem.core.amo applies; the unsigned types
# beyond uint8 exist only in newer torch.
_TYPES = {}
for _npname, _tname in AMO_DTYPES.items():
    _dtype = getattr(torch, _npname, None)
    if isinstance(_dtype, torch.dtype):
        _TYPES[_dtype] = _tname
del _npname, _tname, _dtype


def _type_for(op, t):
    tname = _TYPES.get(t.dtype)
    allowed = atomic_dtypes(op)
    if tname is None or str(t.dtype).replace("torch.", "") not in allowed:
        have = [str(d) for d in _TYPES if str(d).replace("torch.", "") in allowed]
        raise AclshmemInvalid(f"atomic_{op} is not defined for a tensor of {t.dtype} (it is for "
                              f"{', '.join(have)})")
    return tname


def _offset_of(t, index):
    """The element offset (in elements, from data_ptr) of ``index`` in tensor ``t``."""
    shape = tuple(t.shape)
    if isinstance(index, tuple):
        if len(index) != len(shape):
            raise AclshmemInvalid(f"index {index} has {len(index)} coordinates but the tensor has "
                                  f"{len(shape)} dimensions {shape}")
        coords = [check_int(i, "index", 0) for i in index]
    else:
        flat = check_int(index, "index", 0)
        if flat >= t.numel():
            raise AclshmemInvalid(f"index {flat} is past the end of the tensor ({t.numel()} elements)")
        coords = []
        for size in reversed(shape):
            coords.append(flat % size)
            flat //= size
        coords.reverse()
    for i, (c, size) in enumerate(zip(coords, shape)):
        if c >= size:
            raise AclshmemInvalid(f"index {index}: coordinate {c} of dimension {i} is past its size {size}")
    return sum(c * stride for c, stride in zip(coords, t.stride()))


def _amo(op, t, pe, index, *operands):
    resolve(t, "tensor")
    tname = _type_for(op, t)
    if t.numel() == 0:
        raise AclshmemInvalid("tensor has no elements")
    addr = t.data_ptr() + _offset_of(t, index) * t.element_size()
    return amo_on_address(op, addr, check_pe(pe), tname, operands)


def atomic_add(tensor, value, pe, index=0):
    """Adds ``value`` to element ``index`` of PE ``pe``'s copy of ``tensor``, atomically."""
    _amo("add", tensor, pe, index, ("value", value))


def atomic_fetch_add(tensor, value, pe, index=0):
    """Adds ``value`` to element ``index`` on PE ``pe``; returns the value it had before."""
    return _amo("fetch_add", tensor, pe, index, ("value", value))


def atomic_inc(tensor, pe, index=0):
    """Adds 1 to the integer element ``index`` on PE ``pe``, atomically."""
    _amo("inc", tensor, pe, index)


def atomic_fetch_inc(tensor, pe, index=0):
    """Adds 1 to the integer element ``index`` on PE ``pe``; returns the old value."""
    return _amo("fetch_inc", tensor, pe, index)


def atomic_set(tensor, value, pe, index=0):
    """Writes ``value`` to element ``index`` on PE ``pe``, atomically."""
    _amo("set", tensor, pe, index, ("value", value))


def atomic_fetch(tensor, pe, index=0):
    """Reads element ``index`` of PE ``pe``'s copy of ``tensor``, atomically."""
    return _amo("fetch", tensor, pe, index)


def atomic_swap(tensor, value, pe, index=0):
    """Writes ``value`` to element ``index`` on PE ``pe``; returns the old value."""
    return _amo("swap", tensor, pe, index, ("value", value))


def atomic_compare_swap(tensor, cond, value, pe, index=0):
    """Writes ``value`` to element ``index`` on PE ``pe`` if it equals ``cond``; returns
    the old value either way (integers, float32 and float64)."""
    return _amo("compare_swap", tensor, pe, index, ("cond", cond), ("value", value))


def atomic_and(tensor, value, pe, index=0):
    """``element &= value`` on the integer element ``index`` on PE ``pe``."""
    _amo("and", tensor, pe, index, ("value", value))


def atomic_or(tensor, value, pe, index=0):
    """``element |= value`` on the integer element ``index`` on PE ``pe``."""
    _amo("or", tensor, pe, index, ("value", value))


def atomic_xor(tensor, value, pe, index=0):
    """``element ^= value`` on the integer element ``index`` on PE ``pe``."""
    _amo("xor", tensor, pe, index, ("value", value))


def atomic_fetch_and(tensor, value, pe, index=0):
    """``element &= value`` on PE ``pe``; returns the old value."""
    return _amo("fetch_and", tensor, pe, index, ("value", value))


def atomic_fetch_or(tensor, value, pe, index=0):
    """``element |= value`` on PE ``pe``; returns the old value."""
    return _amo("fetch_or", tensor, pe, index, ("value", value))


def atomic_fetch_xor(tensor, value, pe, index=0):
    """``element ^= value`` on PE ``pe``; returns the old value."""
    return _amo("fetch_xor", tensor, pe, index, ("value", value))
