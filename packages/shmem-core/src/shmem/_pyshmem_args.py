"""The argument conversions of ``shmem._pyshmem`` and its generated functions: the
checks behind their fast path and the messages of the errors they raise, and the C
functions that take pointers as integer addresses.  The bottom of the low-level API: it
uses only ``shmem._native``."""

import enum
import operator

from . import _native

_SIZE_MAX = 2 ** 64 - 1

# ---------------------------------------------------------------------------
# Argument conversion
# ---------------------------------------------------------------------------

_ctype_cache = {}


def _ctype(name):
    t = _ctype_cache.get(name)
    if t is None:
        t = _ctype_cache[name] = _native.get_ffi().typeof(name)
    return t


def _int(value, what):
    """A Python int from an integer-like value (rejects float, str, None)."""
    if isinstance(value, int):
        return int(value)
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an integer, not {type(value).__name__}") from None


def _addr(value, what="address"):
    """An address as an int in [0, 2**64): None and 0 are NULL."""
    if value is None:
        return 0
    if isinstance(value, bool):
        raise TypeError(f"{what} must be an integer address, not bool")
    v = _int(value, what)
    if v < 0 or v > _SIZE_MAX:
        raise ValueError(f"{what} {v} is not a valid address")
    return v


def _ptr(ctype, value, what="address"):
    return _native.get_ffi().cast(_ctype(ctype), _addr(value, what))


def _stream(value):
    """A stream argument: an integer address, 0 for the default stream; None is refused."""
    if value is None:
        raise TypeError(
            "stream must be an integer stream address (0 selects the default stream); None is not accepted"
        )
    return _native.get_ffi().cast(_ctype("aclrtStream"), _addr(value, "stream"))


def _enum(value, enum_cls, what):
    """The int value of an enum member, or of an int that names one."""
    if isinstance(value, enum_cls):
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be a {enum_cls.__name__}, not {type(value).__name__}")
    try:
        return int(enum_cls(value))
    except ValueError:
        raise ValueError(f"{value} is not a valid {enum_cls.__name__}") from None


def _opt_enum_int(value, what):
    """A C int argument that carries an enum (cmp, sig_op): any int is passed through, so
    that the C library's own checks can be exercised."""
    if isinstance(value, enum.Enum):
        return int(value.value)
    return _int(value, what)


def _text(value, what):
    """(bytes, length) for a const char * + length pair; None gives (NULL, 0)."""
    if value is None:
        return _native.get_ffi().NULL, 0
    if isinstance(value, str):
        value = value.encode()
    if not isinstance(value, (bytes, bytearray)):
        raise TypeError(f"{what} must be str or bytes, not {type(value).__name__}")
    return bytes(value), len(value)


def _char_value(value):
    """A C char from an int (-128..255) or a 1-byte bytes object."""
    if isinstance(value, (bytes, bytearray)):
        if len(value) != 1:
            raise ValueError("a char value must be a single byte")
        return bytes(value)
    v = _int(value, "char value")
    if not -128 <= v <= 255:
        raise OverflowError(f"char value {v} is out of range")
    return bytes((v & 0xFF,))


def _char_result(value):
    return value[0] if isinstance(value, bytes) else int(value)


def _float_value(value):
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, (str, bytes, bytearray)):  # float("1") would parse it
        raise TypeError(f"expected a number, not {type(value).__name__}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"expected a number, not {type(value).__name__}") from None


def _size(value, what):
    v = _int(value, what)
    if not 0 <= v <= _SIZE_MAX:
        raise OverflowError(f"{what} {v} does not fit in size_t")
    return v


def _as_int(p):
    return int(_native.get_ffi().cast("uintptr_t", p))


def _enum_names(ffi, ctype, prefix):
    """{value: "name"} of a C enum, its prefix dropped and lower-cased (C is the one source)."""
    return {v: n[len(prefix):].lower() for v, n in ffi.typeof(ctype).elements.items()}


def _c_text(ffi, p):
    """A C string as str (undecodable bytes replaced), or None for NULL."""
    return None if p == ffi.NULL else str(ffi.string(p).decode("utf-8", "replace"))


def _fp16_bits(value, what):
    """A half or bfloat16 value: its bit pattern, an int in 0..65535 (as the C type is)."""
    if isinstance(value, float):
        raise TypeError(f"{what} is the 16-bit pattern of a half or bfloat16 number (an int 0..65535), "
                        f"not a float; shmem.core's AMO calls and NumPy (np.float16(x).view(np.uint16)) "
                        f"convert numbers")
    v = _int(value, what)
    if not 0 <= v <= 0xFFFF:
        raise OverflowError(f"{what} {v} is not a 16-bit pattern (0..65535)")
    return v


def _stream_addr(value):
    """A stream argument as an int (0 for the default stream); None is refused."""
    if value is None:
        raise TypeError(
            "stream must be an integer stream address (0 selects the default stream); None is not accepted"
        )
    return _addr(value, "stream")


_address_functions: dict = {}


def address_function(name):
    """``_native.address_function(name)``, made once: the C function ``name`` taking its
    pointers as integer addresses."""
    fn = _address_functions.get(name)
    if fn is None:
        fn = _address_functions[name] = _native.address_function(name)
    return fn


class LazyFunction:
    """Stands for the address function of ``name`` in the module global ``_c_<name>`` of
    the templated functions until their first call, which loads the library, makes the
    function and puts it in its place: later calls find it as a plain global (an
    attribute of an object with ``__getattr__`` took ~40 ns more per call)."""

    __slots__ = ("namespace", "name")

    def __init__(self, namespace, name):
        self.namespace = namespace
        self.name = name

    def __call__(self, *args):
        fn = self.namespace[f"_c_{self.name}"] = address_function(self.name)
        return fn(*args)


def memory_at(addr, size):
    """The ``size`` bytes at ``addr`` as a writable buffer object (a cffi buffer: memoryview
    and NumPy take it), for memory the caller keeps alive."""
    ffi = _native.get_ffi()
    return ffi.buffer(ffi.cast("char *", addr), size)
