"""Shared pieces of ``shmem.core``: exceptions, argument checks and ``Buffer``."""

import ctypes
import enum
import sys
import threading
import weakref

from .. import _pyshmem
from .._pyshmem import MemType

__all__ = ["AclshmemError", "AclshmemInvalid", "AclshmemWarning", "Buffer", "MemType"]

INTPTR_MAX = 2 ** 63 - 1
SIZE_T_MAX = 2 ** 64 - 1
UINT32_MAX = 2 ** 32 - 1
INT32_MIN, INT32_MAX = -(2 ** 31), 2 ** 31 - 1
MAX_INSTANCE_ID = _pyshmem.ACLSHMEM_MAX_INSTANCE_ID

# Serialises instance switching (multi_instance) against the checks that read the active
# instance.
_instance_lock = threading.RLock()


class AclshmemError(RuntimeError):
    """A libaclshmem call failed; the message carries the library's own explanation."""

    def __init__(self, msg, code=None):
        super().__init__(msg)
        self.msg = msg
        self.code = code


class AclshmemInvalid(ValueError):
    """An argument was rejected before anything reached the library."""

    def __init__(self, msg):
        super().__init__(msg)
        self.msg = msg


class AclshmemWarning(UserWarning):
    """Something was wrong but could be repaired (e.g. buffers left at finalize)."""


# ---------------------------------------------------------------------------
# Argument checks (every rejection is an AclshmemInvalid with a message)
# ---------------------------------------------------------------------------


def check_int(value, name, lo=None, hi=None):
    if isinstance(value, bool) or not isinstance(value, int):
        raise AclshmemInvalid(f"{name} must be a non-bool integer, not {type(value).__name__} ({value!r})")
    if lo is not None and value < lo:
        raise AclshmemInvalid(f"{name} must be >= {lo}, not {value}")
    if hi is not None and value > hi:
        raise AclshmemInvalid(f"{name} must be <= {hi}, not {value}")
    return int(value)


def check_instance_id(value, name="instance_id"):
    return check_int(value, name, 0, MAX_INSTANCE_ID)


def check_enum(value, enum_cls, name):
    """An enum member of enum_cls (an int naming one is accepted too; bool is not)."""
    if isinstance(value, enum_cls):
        return value
    if isinstance(value, bool) or not isinstance(value, int) or isinstance(value, enum.Enum):
        raise AclshmemInvalid(f"{name} must be a {enum_cls.__name__}, not {type(value).__name__} ({value!r})")
    try:
        return enum_cls(value)
    except ValueError:
        allowed = ", ".join(m.name for m in enum_cls)
        raise AclshmemInvalid(f"{name} {value!r} is not a valid {enum_cls.__name__} ({allowed})") from None


def check_mem_type(value):
    return check_enum(value, MemType, "mem_type")


def check_stream(stream, name="stream", allow_none=False):
    """A stream argument as an int: a non-bool, non-negative integer, or a Stream object.
    None is the default stream where allow_none, an error otherwise."""
    if stream is None:
        if allow_none:
            return 0
        raise AclshmemInvalid(f"{name} is required: pass 0 for the default stream (None is rejected)")
    from .stream import Stream  # a Stream object stands for its handle

    if isinstance(stream, Stream):
        return stream.handle
    if isinstance(stream, bool) or not isinstance(stream, int):
        raise AclshmemInvalid(f"{name} must be a non-bool integer stream address, not {type(stream).__name__}")
    if stream < 0 or stream > SIZE_T_MAX:
        raise AclshmemInvalid(f"{name} must be a non-negative stream address, not {stream}")
    return int(stream)


def check_team(team, name="team"):
    """A live team ID in [0, 2047]."""
    check_int(team, name)
    if not 0 <= team < _pyshmem.ACLSHMEM_MAX_TEAMS:
        raise AclshmemInvalid(f"{name} must be in [0, {_pyshmem.ACLSHMEM_MAX_TEAMS - 1}], not {team}")
    if not _pyshmem._is_valid_team(team):
        raise AclshmemInvalid(f"{name} {team} is not a live team (never created, destroyed, "
                              "or the library is not initialised)")
    return int(team)


def check_pe(pe, name="remote_pe"):
    check_int(pe, name)
    n = _pyshmem.pe_count()
    if n <= 0:
        raise AclshmemInvalid(f"{name}: the library is not initialised (no PEs)")
    if not 0 <= pe < n:
        raise AclshmemInvalid(f"{name} must satisfy 0 <= {name} < {n}, not {pe}")
    return int(pe)


def active_instance_id():
    ctx = _pyshmem.aclshmemx_instance_ctx_get()
    return None if ctx is None else ctx.id


def native_error(api, rc=None):
    """An AclshmemError for a failed call, carrying the library's last-error text."""
    text = _pyshmem.aclshmemx_get_last_error() or "no message from libaclshmem"
    if rc is not None:
        name = _pyshmem.ERROR_NAMES.get(rc, str(rc))
        return AclshmemError(f"{api} failed ({name}): {text}", rc)
    return AclshmemError(f"{api} failed: {text}")


def call_void(api, func, *args):
    """Calls a void binding and raises AclshmemError when it set a last error.

    libaclshmem keeps the message of the last *failing* call (a success leaves it alone),
    so it is cleared first: any message afterwards is this call's."""
    _pyshmem.aclshmemx_clear_last_error()
    func(*args)
    after = _pyshmem.aclshmemx_get_last_error()
    if after:
        raise AclshmemError(f"{api} failed: {after}")


def check_rc(api, rc):
    if rc != _pyshmem.ACLSHMEM_SUCCESS:
        raise native_error(api, rc)


# ---------------------------------------------------------------------------
# Buffer
# ---------------------------------------------------------------------------

# Owned buffers still allocated, per instance: {instance_id: {addr: (length, mem_type, weakref)}}.
_live = {}
_live_lock = threading.Lock()


def _register(buf):
    with _live_lock:
        _live.setdefault(buf.instance_id, {})[buf.addr] = (buf.length, buf.mem_type, weakref.ref(buf))


def _unregister(buf):
    with _live_lock:
        _live.get(buf.instance_id, {}).pop(buf.addr, None)


def _take_leftovers(instance_id):
    with _live_lock:
        return _live.pop(instance_id, {})


class Buffer(ctypes.Array):
    """Memory used by the SHMEM APIs: an address, a length in bytes and a heap type.

    ``Buffer(addr, length)`` describes memory it does not own (it cannot be freed).
    ``buffer()``, ``calloc()`` and ``align()`` return owning Buffers.  A Buffer exposes
    the buffer protocol: ``memoryview(buf)`` (format ``<B``; ``buf.view()`` gives a
    writable ``B`` view), ``bytes(buf)``, ``numpy.frombuffer(buf, ...)`` and
    ``buf.numpy(dtype)`` read and write the memory in place.

    Dropping a Buffer never frees symmetric memory (free is collective and must be
    called by every PE); ``finalize`` releases what is left and warns.
    """

    _type_ = ctypes.c_ubyte
    _length_ = 0

    def __new__(cls, addr, length, mem_type=MemType.DEVICE_SIDE):
        addr = check_int(addr, "addr")
        length = check_int(length, "length")
        if not 0 < addr <= INTPTR_MAX:
            raise AclshmemInvalid(f"addr must satisfy 0 < addr <= {INTPTR_MAX}, not {addr}")
        if not 0 < length <= SIZE_T_MAX:
            raise AclshmemInvalid(f"length must satisfy 0 < length <= {SIZE_T_MAX}, not {length}")
        if addr + length - 1 > SIZE_T_MAX:
            raise AclshmemInvalid("addr + length is beyond the address space")
        check_mem_type(mem_type)
        return _sized_class(length).from_address(addr)

    def __init__(self, addr, length, mem_type=MemType.DEVICE_SIDE):
        # ctypes' own __init__ would copy initial values into the memory: not called.
        self._addr = int(addr)
        self._length = int(length)
        self._mem_type = check_mem_type(mem_type)
        self._owned = False
        self._instance_id = None
        self._released = False
        self._origin = None  # the owning Buffer of a peer view

    # -- factories ---------------------------------------------------------------
    @classmethod
    def _owning(cls, addr, length, mem_type, instance_id):
        buf = Buffer(addr, length, mem_type)
        buf._owned = True
        buf._instance_id = instance_id
        return buf

    @classmethod
    def _borrowed(cls, origin, addr):
        """A view of origin's memory at another address (a peer's mapping)."""
        buf = Buffer(addr, origin.length, origin.mem_type)
        buf._origin = origin._origin if origin._origin is not None else origin
        buf._instance_id = origin.instance_id
        return buf

    # -- attributes --------------------------------------------------------------
    @property
    def addr(self):
        """Start address of the memory."""
        return self._addr

    @property
    def length(self):
        """Length in bytes."""
        return self._length

    @property
    def mem_type(self):
        """MemType.DEVICE_SIDE or MemType.HOST_SIDE."""
        return self._mem_type

    @property
    def owned(self):
        """Whether this object owns the right to free the memory."""
        return self._owned

    @property
    def instance_id(self):
        """The allocating instance, or None for an external-address descriptor."""
        return self._instance_id

    @property
    def release_called(self):
        """Whether a free of the memory has been started (for peer views: of the origin)."""
        if self._released:
            return True
        return self._origin is not None and self._origin._released

    # -- value semantics ---------------------------------------------------------
    def __eq__(self, other):
        if not isinstance(other, Buffer):
            return NotImplemented
        return (self._addr, self._length, self._mem_type) == (other._addr, other._length, other._mem_type)

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self):
        return hash((self._addr, self._length, int(self._mem_type)))

    def __repr__(self):
        kind = "owned" if self._owned else ("peer view" if self._origin is not None else "external")
        extra = ", released" if self.release_called else ""
        return (f"Buffer(addr={self._addr:#x}, length={self._length}, mem_type={self._mem_type.name}, "
                f"{kind}, instance_id={self._instance_id}{extra})")

    def __reduce__(self):
        raise TypeError("a Buffer describes memory of this process and cannot be pickled")

    def __bool__(self):
        return True

    # -- data access -------------------------------------------------------------
    def _check_readable(self):
        if self.release_called:
            raise AclshmemInvalid("the Buffer's memory has been freed")

    def view(self, fmt="B"):
        """A writable memoryview of the memory, cast to the struct format ``fmt``."""
        self._check_readable()
        mv = memoryview(self).cast("B")
        return mv if fmt == "B" else mv.cast(fmt)

    def numpy(self, dtype="uint8"):
        """A NumPy array over the memory (no copy): ``length // itemsize`` elements."""
        self._check_readable()
        import numpy as np

        dt = np.dtype(dtype)
        count = self._length // dt.itemsize
        return np.frombuffer(memoryview(self).cast("B"), dtype=dt, count=count)


_classes = {}
_classes_lock = threading.Lock()
_MAX_CACHED_CLASSES = 4096


def _sized_class(length):
    """The Buffer subclass whose ctypes array length is ``length`` bytes (cached)."""
    if length > sys.maxsize:
        # Larger than any Python buffer can be: the object keeps no byte view.
        return Buffer
    cls = _classes.get(length)
    if cls is None:
        with _classes_lock:
            cls = _classes.get(length)
            if cls is None:
                cls = type(Buffer)("Buffer", (Buffer,), {
                    "_length_": length,
                    "__module__": Buffer.__module__,
                    "__qualname__": "Buffer",
                    "__doc__": Buffer.__doc__,
                })
                if len(_classes) >= _MAX_CACHED_CLASSES:
                    _classes.clear()
                _classes[length] = cls
    return cls


def check_buffer(buf, name):
    """A usable Buffer: not freed, and allocated by the active instance if it has one.
    (External descriptors may name any memory; the library checks symmetric addresses.)"""
    if not isinstance(buf, Buffer):
        raise AclshmemInvalid(f"{name} must be a Buffer, not {type(buf).__name__}")
    if buf.release_called:
        raise AclshmemInvalid(f"{name} has been freed and cannot be used any more")
    if buf.instance_id is not None:
        active = active_instance_id()
        if active != buf.instance_id:
            raise AclshmemInvalid(
                f"{name} was allocated by instance {buf.instance_id} but the active instance is {active}"
            )
    return buf
