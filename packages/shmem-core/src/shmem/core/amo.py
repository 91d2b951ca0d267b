"""Atomic memory operations (AMOs) on one element of a symmetric Buffer of another PE.

Each call names the element by the Buffer, its element type and its index::

    counter = core.calloc(1, 8)                                  # collective
    slot = core.atomic_fetch_add(counter, 1, 0, dtype="int64")   # reserve a slot on PE 0
    old = core.atomic_compare_swap(lock, 0, me + 1, 0, dtype="int32")

The element type (``dtype``) is a NumPy dtype name or object: ``"int8"`` ... ``"int64"``,
``"uint8"`` ... ``"uint64"``, ``"float32"``, ``"float64"``, ``"float16"`` (``"half"``) or
``"bfloat16"`` (NumPy dtypes and scalar types such as ``np.int64`` work too).  Values are
Python numbers; fetching calls return the element's old value as an ``int`` or ``float``
(half and bfloat16 are converted with round-to-nearest-even, exactly as the library does
its arithmetic).  Which operation takes which type is the C library's table
(``aclshmem/amo.h``): the integers take every operation; float32 and float64 add,
fetch_add, set, fetch, swap and compare_swap; float16 and bfloat16 add, fetch_add, set,
fetch and swap.

The calls are blocking (complete when they return, with no stream), atomic with respect
to every other AMO on the same element from any PE or kernel block, and ordered after this
PE's earlier puts to ``pe``.  A bad argument raises :class:`AclshmemInvalid` before
anything reaches the library; a failure of the library raises :class:`AclshmemError`
with its last-error message.
"""

import math
import operator
import struct
import sys
from typing import (TYPE_CHECKING, Any, Dict, List, Literal, Optional, Sequence, SupportsFloat, SupportsIndex,
                    Tuple, Union, overload)

from .. import _abi, _pyshmem, _state
from .._errors import AclshmemError, AclshmemInvalid
from .buffer import Buffer, check_buffer
from .utils import check_int, check_pe

if TYPE_CHECKING:
    import numpy

__all__ = [
    "atomic_add", "atomic_fetch_add", "atomic_inc", "atomic_fetch_inc", "atomic_set", "atomic_fetch",
    "atomic_swap", "atomic_compare_swap", "atomic_and", "atomic_or", "atomic_xor", "atomic_fetch_and",
    "atomic_fetch_or", "atomic_fetch_xor", "atomic_dtypes", "AMO_DTYPES",
]

# ---------------------------------------------------------------------------
# Element types: the C family's type names and the NumPy names users give.
# ---------------------------------------------------------------------------

# An element type: a NumPy name ("int64"), a NumPy dtype or a NumPy scalar type.
DTypeLike = Union[str, type, "numpy.dtype[Any]"]
# The names of the integer and of the floating-point element types: a fetching call on
# one of them returns an int, on the other a float.
IntDType = Literal["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FloatDType = Literal["float32", "float64", "float16", "bfloat16", "double", "half"]
# A value: a Python or NumPy number.
Number = Union[int, float, SupportsIndex, SupportsFloat]

#: NumPy dtype name -> the type name of the C family (aclshmem_<name>_atomic_*).
AMO_DTYPES: Dict[str, str] = {
    **{name: name for name, _ in _abi.AMO_INT_TYPES},
    "float32": "float",
    "float64": "double",
    "float16": "half",
    "bfloat16": "bfloat16",
}

# Other spellings of the same types (the C names); "float" is left out on purpose: it
# is float32 in C but float64 in NumPy.
_ALIASES = {"double": "float64", "half": "float16"}

_FLOAT_BITS = {"float": 32, "double": 64, "half": 16, "bfloat16": 16}


def _itemsize(tname: str) -> int:
    bits = _FLOAT_BITS.get(tname) or int(tname.lstrip("uint"))
    return bits // 8


# (op, C type name) -> True when the C function returns the old value: the declarations
# of the C header decide which type takes which op (shmem._abi, generated from them).
_SUPPORTED: Dict[Tuple[str, str], bool] = dict(_abi.ATOMICS)


def atomic_dtypes(op: str) -> List[str]:
    """The element types (NumPy names) that operation ``op`` takes: ``atomic_dtypes("add")``
    or ``atomic_dtypes("atomic_add")``; AclshmemInvalid for an unknown operation."""
    key = op[len("atomic_"):] if isinstance(op, str) and op.startswith("atomic_") else op
    names = [n for n, t in AMO_DTYPES.items() if (key, t) in _SUPPORTED]
    if not names:
        ops = sorted({o for o, _ in _SUPPORTED})
        raise AclshmemInvalid(f"{op!r} is not an atomic operation (one of {', '.join(ops)})")
    return names


def _numpy_name(dtype: object) -> str:
    """The NumPy name of a dtype given as a string, a NumPy dtype or a scalar type."""
    if isinstance(dtype, str):
        key = dtype.strip().lower()
        key = _ALIASES.get(key, key)
        if key in AMO_DTYPES:
            return key
        if key == "float":
            raise AclshmemInvalid("dtype 'float' is ambiguous (float32 in C, float64 in NumPy): "
                                  "say 'float32' or 'float64'")
    if dtype is None:  # np.dtype(None) would be float64
        raise AclshmemInvalid(f"dtype is required: one of {', '.join(AMO_DTYPES)}")
    np = sys.modules.get("numpy")
    if np is None and not isinstance(dtype, str):
        try:
            import numpy as np
        except ImportError:
            np = None
    if np is not None:
        try:
            dt = np.dtype(dtype)
        except (TypeError, ValueError):
            dt = None
        if dt is not None and dt.name in AMO_DTYPES:
            if not dt.isnative:
                raise AclshmemInvalid(f"dtype {dtype!r} is not in this machine's byte order")
            return dt.name
    raise AclshmemInvalid(f"dtype {dtype!r} is not an AMO element type; use one of "
                          f"{', '.join(AMO_DTYPES)} (a name, a NumPy dtype or a NumPy scalar type)")


def _type_for(op: str, dtype: object) -> str:
    """The C family's type name for ``op`` on ``dtype``, or AclshmemInvalid."""
    npname = _numpy_name(dtype)
    tname = AMO_DTYPES[npname]
    if (op, tname) not in _SUPPORTED:
        raise AclshmemInvalid(f"atomic_{op} is not defined for {npname} (it is for "
                              f"{', '.join(atomic_dtypes(op))})")
    return tname


# ---------------------------------------------------------------------------
# Values: Python numbers <-> what the C function takes (half/bfloat16 as bit patterns).
# ---------------------------------------------------------------------------


def _number(value: Any, name: str) -> Union[int, float]:
    """An int or a float from a Python or NumPy number; bools are refused."""
    kind = type(value)
    if isinstance(value, bool) or kind.__name__ == "bool_":
        raise AclshmemInvalid(f"{name} must be a number, not a bool ({value!r})")
    if isinstance(value, (int, float)):
        return value
    if hasattr(kind, "__index__"):  # NumPy integers
        return operator.index(value)
    if hasattr(kind, "__float__") and not isinstance(value, (str, bytes)):  # NumPy floats
        return float(value)
    raise AclshmemInvalid(f"{name} must be a number (int or float), not {kind.__name__} ({value!r})")


def _bfloat16_bits(x: float) -> int:
    """x rounded to the nearest bfloat16 (ties to even), as its 16-bit pattern; directly
    from the double, so there is no double rounding through float32."""
    sign = 0x8000 if math.copysign(1.0, x) < 0 else 0
    if math.isnan(x):
        return sign | 0x7FC0
    a = abs(x)
    if math.isinf(a):
        return sign | 0x7F80
    if a == 0.0:
        return sign
    _, e = math.frexp(a)  # a = m * 2**e, 0.5 <= m < 1: the unbiased exponent is e - 1
    quantum = math.ldexp(1.0, max(e - 1, -126) - 7)  # 7 fraction bits; subnormals below 2**-126
    rounded = round(a / quantum) * quantum  # round() ties to even; the division is exact
    if rounded >= 2.0 ** 128:
        raise OverflowError("out of the range of bfloat16")
    return sign | (struct.unpack("<I", struct.pack("<f", rounded))[0] >> 16)


def _encode(tname: str, value: Any, name: str) -> Union[int, float]:
    """The C argument for ``value`` as element type tname; AclshmemInvalid when it does not fit."""
    if tname in _FLOAT_BITS:
        v = float(_number(value, name))
        fmt = {"float": "<f", "double": "<d", "half": "<e"}.get(tname, "")
        try:
            if tname == "bfloat16":
                return _bfloat16_bits(v)
            packed = struct.pack(fmt, v)
        except OverflowError:
            raise AclshmemInvalid(f"{name} {value!r} is out of the range of {_numpy_label(tname)}") from None
        if tname == "half":
            return struct.unpack("<H", packed)[0]
        return v
    bits = _itemsize(tname) * 8
    lo, hi = (0, 2 ** bits - 1) if tname.startswith("u") else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    v = _number(value, name)
    if isinstance(v, float):
        raise AclshmemInvalid(f"{name} must be an integer for {tname}, not float ({value!r})")
    if not lo <= v <= hi:
        raise AclshmemInvalid(f"{name} {v} is out of the range of {tname} ({lo} .. {hi})")
    return int(v)


def _decode(tname: str, raw: Any) -> Union[int, float]:
    if tname == "half":
        return struct.unpack("<e", struct.pack("<H", raw))[0]
    if tname == "bfloat16":
        return struct.unpack("<f", struct.pack("<I", raw << 16))[0]
    return float(raw) if tname in _FLOAT_BITS else int(raw)


def _numpy_label(tname: str) -> str:
    return next(n for n, t in AMO_DTYPES.items() if t == tname)


# ---------------------------------------------------------------------------
# The calls
# ---------------------------------------------------------------------------


def amo_on_address(op: str, addr: int, pe: int, tname: str, operands: Sequence[Tuple[str, object]] = (),
                   api: Optional[str] = None) -> Union[int, float, None]:
    """Runs ``aclshmem_<tname>_atomic_<op>`` on the element at symmetric address ``addr``
    of PE ``pe`` (both already checked) with ``operands``, ``(name, number)`` pairs in the
    C function's order (cond before value), which are checked and converted here.  Returns
    the old value for the fetching operations, else None.  ``shmem_torch`` uses it too."""
    api = api or f"atomic_{op}"
    args = [_encode(tname, number, name) for name, number in operands]
    fn = getattr(_pyshmem, f"aclshmem_{tname}_atomic_{op}")
    flag = _state.last_error_flag()  # the thread's error buffer (see utils.call_void)
    flag[0] = 0
    result = fn(addr, *args, pe)
    if flag[0]:
        raise AclshmemError(f"{api} failed: {_pyshmem.aclshmemx_get_last_error()}")
    return _decode(tname, result) if _SUPPORTED[(op, tname)] else None


def _element_address(buf: Buffer, index: int, itemsize: int, label: str) -> int:
    """The address of element ``index`` (of ``itemsize`` bytes) of ``buf``."""
    check_buffer(buf, "buf")
    i = check_int(index, "index", 0)
    end = (i + 1) * itemsize
    if end > buf.length:
        raise AclshmemInvalid(f"index {i} is past the end of buf ({buf.length} bytes hold "
                              f"{buf.length // itemsize} {label} elements)")
    addr = buf.addr + i * itemsize
    if addr % itemsize:
        raise AclshmemInvalid(f"element {i} of buf (address {addr:#x}) is not aligned to its "
                              f"size ({itemsize} bytes): an AMO needs an aligned {label}")
    return addr


def _amo(op: str, buf: Buffer, pe: int, dtype: DTypeLike, index: int, *operands: Tuple[str, object]) -> Any:
    tname = _type_for(op, dtype)
    addr = _element_address(buf, index, _itemsize(tname), _numpy_label(tname))
    return amo_on_address(op, addr, check_pe(pe, "pe"), tname, operands)


def atomic_add(buf: Buffer, value: Number, pe: int, *, dtype: DTypeLike, index: int = 0) -> None:
    """Adds ``value`` to element ``index`` of ``buf`` on PE ``pe``, atomically."""
    _amo("add", buf, pe, dtype, index, ("value", value))


@overload
def atomic_fetch_add(buf: Buffer, value: Number, pe: int, *, dtype: IntDType, index: int = 0) -> int: ...
@overload
def atomic_fetch_add(buf: Buffer, value: Number, pe: int, *, dtype: FloatDType, index: int = 0) -> float: ...
@overload
def atomic_fetch_add(buf: Buffer, value: Number, pe: int, *, dtype: DTypeLike, index: int = 0) -> Any: ...
def atomic_fetch_add(buf: Buffer, value: Number, pe: int, *, dtype: DTypeLike, index: int = 0) -> Any:
    """Adds ``value`` to element ``index`` of ``buf`` on PE ``pe`` and returns the value
    it had before, atomically (PEs adding 1 to one counter each get a different number)."""
    return _amo("fetch_add", buf, pe, dtype, index, ("value", value))


def atomic_inc(buf: Buffer, pe: int, *, dtype: DTypeLike, index: int = 0) -> None:
    """Adds 1 to the integer element ``index`` of ``buf`` on PE ``pe``, atomically."""
    _amo("inc", buf, pe, dtype, index)


def atomic_fetch_inc(buf: Buffer, pe: int, *, dtype: DTypeLike, index: int = 0) -> int:
    """Adds 1 to the integer element ``index`` of ``buf`` on PE ``pe``; returns the old value."""
    return _amo("fetch_inc", buf, pe, dtype, index)


def atomic_set(buf: Buffer, value: Number, pe: int, *, dtype: DTypeLike, index: int = 0) -> None:
    """Writes ``value`` to element ``index`` of ``buf`` on PE ``pe``, atomically (never
    torn, and ordered after this PE's earlier puts to ``pe``)."""
    _amo("set", buf, pe, dtype, index, ("value", value))


@overload
def atomic_fetch(buf: Buffer, pe: int, *, dtype: IntDType, index: int = 0) -> int: ...
@overload
def atomic_fetch(buf: Buffer, pe: int, *, dtype: FloatDType, index: int = 0) -> float: ...
@overload
def atomic_fetch(buf: Buffer, pe: int, *, dtype: DTypeLike, index: int = 0) -> Any: ...
def atomic_fetch(buf: Buffer, pe: int, *, dtype: DTypeLike, index: int = 0) -> Any:
    """Reads element ``index`` of ``buf`` on PE ``pe``, atomically; returns it."""
    return _amo("fetch", buf, pe, dtype, index)


@overload
def atomic_swap(buf: Buffer, value: Number, pe: int, *, dtype: IntDType, index: int = 0) -> int: ...
@overload
def atomic_swap(buf: Buffer, value: Number, pe: int, *, dtype: FloatDType, index: int = 0) -> float: ...
@overload
def atomic_swap(buf: Buffer, value: Number, pe: int, *, dtype: DTypeLike, index: int = 0) -> Any: ...
def atomic_swap(buf: Buffer, value: Number, pe: int, *, dtype: DTypeLike, index: int = 0) -> Any:
    """Writes ``value`` to element ``index`` of ``buf`` on PE ``pe``; returns the old value."""
    return _amo("swap", buf, pe, dtype, index, ("value", value))


@overload
def atomic_compare_swap(buf: Buffer, cond: Number, value: Number, pe: int, *, dtype: IntDType, index: int = 0) -> int: ...
@overload
def atomic_compare_swap(buf: Buffer, cond: Number, value: Number, pe: int, *, dtype: FloatDType, index: int = 0) -> float: ...
@overload
def atomic_compare_swap(buf: Buffer, cond: Number, value: Number, pe: int, *, dtype: DTypeLike, index: int = 0) -> Any: ...
def atomic_compare_swap(buf: Buffer, cond: Number, value: Number, pe: int, *, dtype: DTypeLike, index: int = 0) -> Any:
    """If element ``index`` of ``buf`` on PE ``pe`` equals ``cond``, writes ``value``;
    returns the old value either way (so the swap happened when it equals ``cond``).
    Integers, float32 and float64 (whose bit patterns are compared: -0.0 != 0.0)."""
    return _amo("compare_swap", buf, pe, dtype, index, ("cond", cond), ("value", value))


def atomic_and(buf: Buffer, value: Number, pe: int, *, dtype: DTypeLike, index: int = 0) -> None:
    """``element &= value`` on the integer element ``index`` of ``buf`` on PE ``pe``."""
    _amo("and", buf, pe, dtype, index, ("value", value))


def atomic_or(buf: Buffer, value: Number, pe: int, *, dtype: DTypeLike, index: int = 0) -> None:
    """``element |= value`` on the integer element ``index`` of ``buf`` on PE ``pe``."""
    _amo("or", buf, pe, dtype, index, ("value", value))


def atomic_xor(buf: Buffer, value: Number, pe: int, *, dtype: DTypeLike, index: int = 0) -> None:
    """``element ^= value`` on the integer element ``index`` of ``buf`` on PE ``pe``."""
    _amo("xor", buf, pe, dtype, index, ("value", value))


def atomic_fetch_and(buf: Buffer, value: Number, pe: int, *, dtype: DTypeLike, index: int = 0) -> int:
    """``element &= value`` on PE ``pe``; returns the old value."""
    return _amo("fetch_and", buf, pe, dtype, index, ("value", value))


def atomic_fetch_or(buf: Buffer, value: Number, pe: int, *, dtype: DTypeLike, index: int = 0) -> int:
    """``element |= value`` on PE ``pe``; returns the old value."""
    return _amo("fetch_or", buf, pe, dtype, index, ("value", value))


def atomic_fetch_xor(buf: Buffer, value: Number, pe: int, *, dtype: DTypeLike, index: int = 0) -> int:
    """``element ^= value`` on PE ``pe``; returns the old value."""
    return _amo("fetch_xor", buf, pe, dtype, index, ("value", value))
