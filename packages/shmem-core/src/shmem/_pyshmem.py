"""``shmem._pyshmem``: the low-level API, one Python function per C function.

Pointers and streams are plain integers (0 is NULL, and stream 0 is the active
instance's default stream).  Functions return what the C function returns (result
codes are ints); the few exceptions to that rule are the ones the API reference
names: ``aclshmem_malloc``/``calloc``/``align`` raise ``RuntimeError`` when they
return NULL, the team splits and ``aclshmem_team_get_config`` raise ``RuntimeError``
on an error code (for the team splits it is ``shmem.core.AclshmemError``, a
``RuntimeError`` that carries the library's message and the code), and calls that
take a team raise ``ValueError`` for a team that is not alive.  The last error message of the calling thread is available from
``aclshmemx_get_last_error()``.

Every call goes through cffi, which releases the GIL for the duration of the C
call, so blocking calls (barriers, waits) do not stall other Python threads.

The typed and sized families (``aclshmem_int32_iput``, ``aclshmem_put64_nbi``,
``aclshmem_float_wait_until_any``, ``aclshmem_int64_atomic_fetch_add``, ...), and put, get
and the signal calls, are made from one template per parameter kind and the type tables of
``shmem._native`` (by ``shmem._ffi_build``, into the module ``_pyshmem_families`` when the
package is built; at import in a source checkout that was not).  Their fast path is one
cffi call with the arguments as given (addresses as plain ints: see
``shmem._native.address_function``); only an argument that is not an int, or that cffi
refuses, goes through the checks that raise the errors described here.  Values of the 16-bit
floating-point types ``half`` and ``bfloat16`` are their bit patterns (ints 0..65535),
as in C (``aclshmem_half_t`` is a ``uint16_t``); ``shmem.core.atomic_fetch_add`` and
the other AMO calls of ``shmem.core`` take and return numbers instead.
"""

import atexit
import enum
import itertools
import operator
import struct
import threading
import typing as _typing

from . import _native
from ._errors import AclshmemError as _AclshmemError

# ---------------------------------------------------------------------------
# Constants
# ---------------------------------------------------------------------------

ACLSHMEM_SUCCESS = 0
ACLSHMEM_INVALID_PARAM = -1
ACLSHMEM_INVALID_VALUE = -2
ACLSHMEM_SMEM_ERROR = -3
ACLSHMEM_INNER_ERROR = -4
ACLSHMEM_NOT_INITED = -5
ACLSHMEM_BOOTSTRAP_ERROR = -6
ACLSHMEM_TIMEOUT_ERROR = -7
ACLSHMEM_MALLOC_FAILED = -8
ACLSHMEM_DL_FUNC_FAILED = -9
ACLSHMEM_INNER_TIMEOUT = -10
ACLSHMEM_UNDER_API_UNLOAD = -11
ACLSHMEM_NOT_SUPPORTED = -100

ERROR_NAMES = {
    value: name
    for name, value in globals().items()
    if name.startswith("ACLSHMEM_") and isinstance(value, int)
}

ACLSHMEM_TEAM_WORLD = 0
ACLSHMEM_TEAM_INVALID = -1
ACLSHMEM_MAX_TEAMS = 2048
ACLSHMEM_MAX_PES = 16384
ACLSHMEM_MAX_INSTANCES = 255
ACLSHMEM_MAX_INSTANCE_ID = ACLSHMEM_MAX_INSTANCES - 1
ACLSHMEM_MAX_QP_NUM = 32
ACLSHMEM_MAX_LOCAL_SIZE = 40 * 1024 ** 3
ACLSHMEM_MAX_NAME_LEN = 256
ACLSHMEM_MAX_IP_PORT_LEN = 64
ACLSHMEM_UNIQUE_ID_INNER_LEN = 124
ACLSHMEM_UNIQUE_ID_SIZE = 136

#: aclshmemx_reduce_local's ``type`` and ``op`` values by name ("float", "sum", ...).
LOCAL_REDUCE_TYPES = dict(_native.LOCAL_REDUCE_TYPES)
LOCAL_REDUCE_OPS = dict(_native.LOCAL_REDUCE_OPS)
ACLSHMEM_UNIQUEID_VERSION = (1 << 16) + ACLSHMEM_UNIQUE_ID_SIZE
ACLSHMEM_DEFAULT_TIMEOUT = 120
ACLSHMEM_CYCLE_PROF_MAX_BLOCK = 64
ACLSHMEM_CYCLE_PROF_FRAME_CNT = 1024
# (1 << 16) + sizeof(aclshmem_init_optional_attr_t), a 24-byte structure.
ACLSHMEM_INIT_OPTIONAL_ATTR_VERSION = (1 << 16) + 24

_SIZE_MAX = 2 ** 64 - 1
_INTPTR_MAX = 2 ** 63 - 1

# ---------------------------------------------------------------------------
# Enumerations
# ---------------------------------------------------------------------------


class OpEngineType(enum.IntEnum):
    """Data transfer engines (a bitmask in C: data_op_engine_type_t)."""

    MTE = 0x01
    SDMA = 0x02
    ROCE = 0x04
    UDMA = 0x08


class MemType(enum.IntEnum):
    """Which symmetric heap (aclshmem_mem_type_t)."""

    HOST_SIDE = 0
    DEVICE_SIDE = 1


class InitStatus(enum.IntEnum):
    """aclshmemx_init_status_t."""

    NOT_INITIALIZED = 0
    SHM_CREATED = 1
    INITIALIZED = 2
    INVALID = 0x7FFFFFFF


class SignalOp(enum.IntEnum):
    """How a signal word is updated (aclshmem_signal_op_type_t)."""

    SIGNAL_SET = 0
    SIGNAL_ADD = 1


class CmpOp(enum.IntEnum):
    """Comparisons of the wait/test families (aclshmem_cmp_op_type_t)."""

    CMP_EQ = 0
    CMP_NE = 1
    CMP_GT = 2
    CMP_GE = 3
    CMP_LT = 4
    CMP_LE = 5


class InitMode(enum.IntEnum):
    """Bootstrap flags of aclshmemx_init_attr (aclshmemx_bootstrap_t)."""

    DEFAULT = 1 << 0
    MPI = 1 << 1
    UNIQUEID = 1 << 3


# The enumerators are also module attributes, as pybind11's export_values() makes them.
HOST_SIDE, DEVICE_SIDE = MemType.HOST_SIDE, MemType.DEVICE_SIDE
SIGNAL_SET, SIGNAL_ADD = SignalOp.SIGNAL_SET, SignalOp.SIGNAL_ADD
CMP_EQ, CMP_NE, CMP_GT, CMP_GE, CMP_LT, CMP_LE = tuple(CmpOp)

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


def _mem_type(value):
    if value is None:
        return int(MemType.DEVICE_SIDE)
    return _enum(value, MemType, "mem_type")


def _instance_id(value):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"instance_id must be an integer from 0 to {ACLSHMEM_MAX_INSTANCE_ID}, "
                        f"not {type(value).__name__}")
    if not 0 <= value <= ACLSHMEM_MAX_INSTANCE_ID:
        raise ValueError(f"instance_id must be from 0 to {ACLSHMEM_MAX_INSTANCE_ID}, not {value}")
    return int(value)


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


def aclshmemx_get_last_error():
    """The message of the last failing libaclshmem call in this thread ("" if none)."""
    ffi, lib = _native.load()
    p = lib.aclshmemx_get_last_error()
    if p == ffi.NULL:
        return ""
    return ffi.string(p).decode("utf-8", "replace")


def aclshmemx_clear_last_error():
    """Forgets this thread's last error, so a later message belongs to a later call."""
    _native.load()[1].aclshmemx_clear_last_error()


_thread_state = threading.local()


def _last_error_flag():
    """This thread's last-error buffer of libaclshmem as a ``uint8_t *``: its first byte is 0
    while there is no message.  Writing 0 there is what ``aclshmemx_clear_last_error`` does,
    and reading it tells whether a void call failed, without a call into the library: the
    success path of a checked call then costs one foreign call, not three (clear, call, get).
    (``aclshmemx_get_last_error`` returns the calling thread's own buffer, the same one for
    the thread's whole life: aclshmem/init.h.)"""
    try:
        return _thread_state.error_flag
    except AttributeError:
        ffi, lib = _native.load()
        flag = _thread_state.error_flag = ffi.cast("uint8_t *", lib.aclshmemx_get_last_error())
        return flag


def _error_text(rc=None):
    msg = aclshmemx_get_last_error()
    if rc is not None:
        name = ERROR_NAMES.get(rc, str(rc))
        return f"{msg} [{name}]" if msg else f"error {name}"
    return msg or "no error message from libaclshmem"


# ---------------------------------------------------------------------------
# Classes
# ---------------------------------------------------------------------------


class OptionalAttr:
    """Optional initialisation attributes (aclshmem_init_optional_attr_t)."""

    def __init__(self):
        self.version = ACLSHMEM_INIT_OPTIONAL_ATTR_VERSION
        self.data_op_engine_type = OpEngineType.MTE
        self.shm_init_timeout = ACLSHMEM_DEFAULT_TIMEOUT
        self.shm_create_timeout = ACLSHMEM_DEFAULT_TIMEOUT
        self.control_operation_timeout = ACLSHMEM_DEFAULT_TIMEOUT
        self.sockFd = -1

    def __repr__(self):
        return (f"OptionalAttr(version={self.version}, data_op_engine_type={self.data_op_engine_type!r}, "
                f"shm_init_timeout={self.shm_init_timeout}, shm_create_timeout={self.shm_create_timeout}, "
                f"control_operation_timeout={self.control_operation_timeout}, sockFd={self.sockFd})")

    def _fill(self, c):
        c.version = _int(self.version, "version")
        engine = self.data_op_engine_type
        c.data_op_engine_type = int(engine.value) if isinstance(engine, enum.Enum) else _int(engine, "data_op_engine_type")
        c.shm_init_timeout = _int(self.shm_init_timeout, "shm_init_timeout")
        c.shm_create_timeout = _int(self.shm_create_timeout, "shm_create_timeout")
        c.control_operation_timeout = _int(self.control_operation_timeout, "control_operation_timeout")
        c.sockFd = _int(self.sockFd, "sockFd")

    def _load(self, c):
        self.version = int(c.version)
        engine = int(c.data_op_engine_type)
        try:
            self.data_op_engine_type = OpEngineType(engine)
        except ValueError:
            self.data_op_engine_type = engine
        self.shm_init_timeout = int(c.shm_init_timeout)
        self.shm_create_timeout = int(c.shm_create_timeout)
        self.control_operation_timeout = int(c.control_operation_timeout)
        self.sockFd = int(c.sockFd)


class InitAttr:
    """Initialisation attributes (aclshmemx_init_attr_t).

    ``my_rank`` and ``n_ranks`` are the C fields ``my_pe`` and ``n_pes``.  After
    ``aclshmemx_set_attr_uniqueid_args`` the object keeps its own copy of the unique ID,
    so it stays usable when the caller's ``UniqueId`` is gone.
    """

    def __init__(self):
        self.my_rank = 0
        self.n_ranks = 0
        self.ip_port = ""
        self.local_mem_size = 0
        self.option_attr = OptionalAttr()
        self._instance_id = 0
        self._uid = None  # owned cdata aclshmemx_uniqueid_t *, the C field comm_args

    @property
    def instance_id(self):
        return self._instance_id

    @instance_id.setter
    def instance_id(self, value):
        self._instance_id = _instance_id(value)

    def __repr__(self):
        return (f"InitAttr(my_rank={self.my_rank}, n_ranks={self.n_ranks}, ip_port={self.ip_port!r}, "
                f"local_mem_size={self.local_mem_size}, instance_id={self.instance_id}, "
                f"option_attr={self.option_attr!r})")

    def _to_c(self):
        ffi = _native.get_ffi()
        c = ffi.new("aclshmemx_init_attr_t *")
        c.my_pe = _int(self.my_rank, "my_rank")
        c.n_pes = _int(self.n_ranks, "n_ranks")
        ip = self.ip_port or ""
        ip = ip.encode() if isinstance(ip, str) else bytes(ip)
        if len(ip) >= ACLSHMEM_MAX_IP_PORT_LEN:
            raise ValueError(f"ip_port is longer than {ACLSHMEM_MAX_IP_PORT_LEN - 1} bytes")
        c.ip_port = ip
        size = _int(self.local_mem_size, "local_mem_size")
        if not 0 <= size <= _SIZE_MAX:
            raise ValueError(f"local_mem_size {size} is out of range")
        c.local_mem_size = size
        if not isinstance(self.option_attr, OptionalAttr):
            raise TypeError("option_attr must be an OptionalAttr")
        self.option_attr._fill(c.option_attr)
        c.comm_args = self._uid if self._uid is not None else ffi.NULL
        c.instance_id = self._instance_id
        return c

    def _load(self, c):
        ffi = _native.get_ffi()
        self.my_rank = int(c.my_pe)
        self.n_ranks = int(c.n_pes)
        self.ip_port = ffi.string(c.ip_port).decode("utf-8", "replace")
        self.local_mem_size = int(c.local_mem_size)
        self.option_attr._load(c.option_attr)
        iid = int(c.instance_id)
        if 0 <= iid <= ACLSHMEM_MAX_INSTANCE_ID:
            self._instance_id = iid


class _HybridMethod:
    """A method that works on the class (returning a new object) and on an instance
    (updating it in place and returning it)."""

    def __init__(self, func):
        self.func = func
        self.__doc__ = func.__doc__

    def __get__(self, obj, cls):
        def bound(*args, **kwargs):
            return self.func(cls, obj, *args, **kwargs)

        bound.__doc__ = self.func.__doc__
        bound.__name__ = self.func.__name__
        return bound


_UID_HEAD = struct.Struct("=iii")


class UniqueId:
    """The 136-byte unique ID of UID initialisation (aclshmemx_uniqueid_t)."""

    __slots__ = ("version", "my_pe", "n_pes", "_internal")

    def __init__(self):
        self.version = ACLSHMEM_UNIQUEID_VERSION
        self.my_pe = 0
        self.n_pes = 0
        self._internal = bytes(ACLSHMEM_UNIQUE_ID_INNER_LEN)

    @property
    def internal(self):
        """The opaque 124-byte part (PE 0's address and the job secret)."""
        return self._internal

    @internal.setter
    def internal(self, value):
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise TypeError("internal must be bytes")
        value = bytes(value)
        if len(value) != ACLSHMEM_UNIQUE_ID_INNER_LEN:
            raise ValueError(f"internal must be exactly {ACLSHMEM_UNIQUE_ID_INNER_LEN} bytes, not {len(value)}")
        self._internal = value

    def to_bytes(self):
        """The native structure, exactly 136 bytes."""
        return _UID_HEAD.pack(self.version, self.my_pe, self.n_pes) + self._internal

    @_HybridMethod
    def from_bytes(cls, obj, data):
        """Restores a UID from exactly 136 bytes.  ``UniqueId.from_bytes(b)`` returns a new
        object; ``uid.from_bytes(b)`` fills ``uid`` and returns it."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"a unique ID is restored from bytes, not {type(data).__name__}")
        data = bytes(data)
        if len(data) != ACLSHMEM_UNIQUE_ID_SIZE:
            raise ValueError(f"a unique ID is exactly {ACLSHMEM_UNIQUE_ID_SIZE} bytes, not {len(data)}")
        target = obj if obj is not None else cls()
        target.version, target.my_pe, target.n_pes = _UID_HEAD.unpack_from(data)
        target._internal = data[_UID_HEAD.size:]
        return target

    def __eq__(self, other):
        if not isinstance(other, UniqueId):
            return NotImplemented
        return self.to_bytes() == other.to_bytes()

    def __hash__(self):
        return hash(self.to_bytes())

    def __repr__(self):
        return f"UniqueId(version={self.version}, my_pe={self.my_pe}, n_pes={self.n_pes})"

    def __reduce__(self):
        return (_unique_id_from_bytes, (self.to_bytes(),))

    def _to_c(self):
        ffi = _native.get_ffi()
        c = ffi.new("aclshmemx_uniqueid_t *")
        ffi.memmove(c, self.to_bytes(), ACLSHMEM_UNIQUE_ID_SIZE)
        return c

    @classmethod
    def _from_c(cls, c):
        return cls.from_bytes(_native.get_ffi().buffer(c, ACLSHMEM_UNIQUE_ID_SIZE)[:])


def _unique_id_from_bytes(data):
    return UniqueId.from_bytes(data)


class TeamConfig:
    """Team configuration (aclshmem_team_config_t)."""

    def __init__(self, num_contexts=0):
        self.num_contexts = num_contexts
        self.version = 0
        self.uniqueid = 0

    def __repr__(self):
        return f"TeamConfig(num_contexts={self.num_contexts}, version={self.version}, uniqueid={self.uniqueid})"


class InstanceContext:
    """A read-only snapshot of the active instance context."""

    __slots__ = ("_id",)

    def __init__(self, instance_id):
        self._id = int(instance_id)

    @property
    def id(self):
        """The instance id (read-only)."""
        return self._id

    def __eq__(self, other):
        if not isinstance(other, InstanceContext):
            return NotImplemented
        return self._id == other._id

    def __hash__(self):
        return hash(self._id)

    def __repr__(self):
        return f"InstanceContext(id={self._id})"


def _is_valid_team(team_id):
    """True when team_id is a non-bool int in [0, ACLSHMEM_MAX_TEAMS) naming a live team."""
    if isinstance(team_id, bool) or not isinstance(team_id, int):
        return False
    if not 0 <= team_id < ACLSHMEM_MAX_TEAMS:
        return False
    _, lib = _native.load()
    if lib.aclshmemx_init_status() != InitStatus.INITIALIZED:
        return False
    if team_id == ACLSHMEM_TEAM_WORLD:
        return True
    return lib.aclshmem_team_n_pes(int(team_id)) > 0


def _check_team(team_id, api):
    if not _is_valid_team(team_id):
        raise ValueError(
            f"{api}: team {team_id!r} is not a live team (a non-bool integer from 0 to "
            f"{ACLSHMEM_MAX_TEAMS - 1} naming a team that exists and has not been destroyed)"
        )
    return int(team_id)


class Handle:
    """A team-scoped handle for ``aclshmemx_handle_wait``."""

    __slots__ = ("_team_id",)

    def __init__(self, team_id=ACLSHMEM_TEAM_WORLD):
        self._team_id = _check_team(team_id, "Handle")

    @property
    def team_id(self):
        """The team whose members take part in handle_wait; a live team id in 0..2047."""
        return self._team_id

    @team_id.setter
    def team_id(self, value):
        self._team_id = _check_team(value, "Handle.team_id")

    def __repr__(self):
        return f"Handle(team_id={self._team_id})"


class ProfData:
    """A deep copy of this PE's cycle profile: 64 blocks x 1024 frames."""

    __slots__ = ("_pe_id", "_ccount", "_cycles")

    def __init__(self, pe_id, ccount, cycles):
        self._pe_id = int(pe_id)
        self._ccount = ccount
        self._cycles = cycles

    @property
    def pe_id(self):
        return self._pe_id

    @property
    def ccount(self):
        return [list(row) for row in self._ccount]

    @property
    def cycles(self):
        return [list(row) for row in self._cycles]

    def __repr__(self):
        return f"ProfData(pe_id={self._pe_id})"

    @classmethod
    def _from_c(cls, p):
        ffi = _native.get_ffi()
        ccount = []
        cycles = []
        for b in range(ACLSHMEM_CYCLE_PROF_MAX_BLOCK):
            block = p.block_prof[b]
            ccount.append(tuple(ffi.unpack(block.ccount, ACLSHMEM_CYCLE_PROF_FRAME_CNT)))
            cycles.append(tuple(ffi.unpack(block.cycles, ACLSHMEM_CYCLE_PROF_FRAME_CNT)))
        return cls(p.pe_id, tuple(ccount), tuple(cycles))


# ---------------------------------------------------------------------------
# Init, finalize, unique IDs
# ---------------------------------------------------------------------------


def aclshmemx_init_status():
    """The active instance's InitStatus."""
    _, lib = _native.load()
    v = lib.aclshmemx_init_status()
    try:
        return InitStatus(v)
    except ValueError:
        return InitStatus.INVALID


def aclshmemx_get_uniqueid(uid):
    """Fills ``uid`` (a UniqueId) with a new unique ID; returns the result code."""
    if not isinstance(uid, UniqueId):
        raise TypeError("uid must be a UniqueId")
    ffi, lib = _native.load()
    c = ffi.new("aclshmemx_uniqueid_t *")
    rc = lib.aclshmemx_get_uniqueid(c)
    if rc == ACLSHMEM_SUCCESS:
        uid.from_bytes(ffi.buffer(c, ACLSHMEM_UNIQUE_ID_SIZE)[:])
    return rc


def aclshmem_get_unique_id():
    """A new unique ID as 136 bytes; raises RuntimeError on failure."""
    uid = UniqueId()
    rc = aclshmemx_get_uniqueid(uid)
    if rc != ACLSHMEM_SUCCESS:
        raise RuntimeError(f"aclshmemx_get_uniqueid failed: {_error_text(rc)}")
    return uid.to_bytes()


def _as_unique_id(uid):
    if isinstance(uid, UniqueId):
        return uid
    if isinstance(uid, (bytes, bytearray, memoryview)):
        return UniqueId.from_bytes(uid)
    raise TypeError(f"uid must be a UniqueId or its {ACLSHMEM_UNIQUE_ID_SIZE} bytes, not {type(uid).__name__}")


def aclshmemx_set_attr_uniqueid_args(my_pe, n_pes, local_mem_size, uid, attr):
    """Fills ``attr`` (an InitAttr) for unique-ID initialisation; returns the result code."""
    if not isinstance(attr, InitAttr):
        raise TypeError("attr must be an InitAttr")
    uid = _as_unique_id(uid)
    owned = uid._to_c()  # the attr keeps this copy, so the caller's uid may go away
    c = attr._to_c()
    rc = _native.lib.aclshmemx_set_attr_uniqueid_args(
        _int(my_pe, "my_pe"), _int(n_pes, "n_pes"), _int(local_mem_size, "local_mem_size"), owned, c
    )
    if rc == ACLSHMEM_SUCCESS:
        attr._load(c)
        attr._uid = owned
    return rc


# The active instance as (id, number of PEs), for the checks of shmem.core's hot paths:
# asked of the library once, then kept until a call of this module that can change the
# active instance (init, finalize, switching) drops it.  The generation keeps a thread that
# asked the library before such a change from storing its outdated answer after it.
_generations = itertools.count()
_active_generation = next(_generations)
_active_state = None


def _instance_changed():
    global _active_state, _active_generation
    _active_generation = next(_generations)
    _active_state = None


def _active_instance_state():
    """``(instance id, number of PEs)`` of the active, initialised instance, or None.

    Cached: only the calls of this module that change the active instance refresh it (a
    program that switches instances through its own cffi binding must not rely on it).
    In a kernel or stream-worker thread the library acts on that stream's instance, which
    may differ; the library's own checks still apply there."""
    state = _active_state
    if state is not None:
        return state
    return _refresh_active_state()


def _refresh_active_state():
    global _active_state
    generation = _active_generation
    ffi, lib = _native.load()
    p = lib.aclshmemx_instance_ctx_get()
    if p == ffi.NULL or lib.aclshmemx_init_status() != InitStatus.INITIALIZED:
        return None
    state = (int(p.id), int(lib.aclshmem_n_pes()))
    if state[1] <= 0:
        return None
    if generation == _active_generation:
        _active_state = state
    return state


def aclshmemx_init_attr(bootstrap_flags, attributes):
    """Collective: initialises an instance from ``attributes``; returns the result code."""
    flags = _enum(bootstrap_flags, InitMode, "bootstrap_flags")
    if not isinstance(attributes, InitAttr):
        raise TypeError("attributes must be an InitAttr")
    c = attributes._to_c()
    try:
        return _native.lib.aclshmemx_init_attr(flags, c)
    finally:
        _instance_changed()


def aclshmem_init(attributes):
    """Collective: initialises with ``InitMode.DEFAULT`` (``ip_port`` = "tcp://host:port")."""
    return aclshmemx_init_attr(InitMode.DEFAULT, attributes)


def aclshmem_init_using_unique_id(rank, world, mem_size, uid):
    """Collective: unique-ID initialisation in one call; returns the result code."""
    attr = InitAttr()
    rc = aclshmemx_set_attr_uniqueid_args(rank, world, mem_size, uid, attr)
    if rc != ACLSHMEM_SUCCESS:
        return rc
    return aclshmemx_init_attr(InitMode.UNIQUEID, attr)


def aclshmem_finalize():
    """Collective: finalises the active instance; returns the result code."""
    try:
        return _native.lib.aclshmem_finalize()
    finally:
        _instance_changed()


aclshmem_finialize = aclshmem_finalize  # the original's misspelt, deprecated alias


def aclshmemx_finalize(instance_id):
    """Collective: finalises instance ``instance_id`` (0..254); returns the result code."""
    try:
        return _native.lib.aclshmemx_finalize(_instance_id(instance_id))
    finally:
        _instance_changed()


def aclshmemx_set_qp_num(engine, qp_num):
    """Queue pairs per peer connection for an engine; before init only."""
    return _native.lib.aclshmemx_set_qp_num(
        _enum(engine, OpEngineType, "engine"), _int(qp_num, "qp_num")
    )


def aclshmemx_instance_ctx_get():
    """An InstanceContext snapshot of the active instance, or None."""
    ffi, lib = _native.load()
    p = lib.aclshmemx_instance_ctx_get()
    if p == ffi.NULL:
        return None
    return InstanceContext(p.id)


def aclshmemx_instance_ctx_set(instance_id):
    """Makes ``instance_id`` the active instance; returns the result code."""
    try:
        return _native.lib.aclshmemx_instance_ctx_set(_instance_id(instance_id))
    finally:
        _instance_changed()


def aclshmem_info_get_version():
    """(major, minor) of the library's API."""
    ffi, lib = _native.load()
    major = ffi.new("int *")
    minor = ffi.new("int *")
    lib.aclshmem_info_get_version(major, minor)
    return (major[0], minor[0])


def aclshmem_info_get_name():
    """The vendor-defined name string."""
    ffi, lib = _native.load()
    buf = ffi.new("char[]", ACLSHMEM_MAX_NAME_LEN)
    lib.aclshmem_info_get_name(buf)
    return ffi.string(buf).decode("utf-8", "replace")


def _enum_names(ffi, ctype, prefix):
    """{value: "name"} of a C enum, its prefix dropped and lower-cased (C is the one source)."""
    return {v: n[len(prefix):].lower() for v, n in ffi.typeof(ctype).elements.items()}


def _c_text(ffi, p):
    return None if p == ffi.NULL else ffi.string(p).decode("utf-8", "replace")


def aclshmemx_describe(load=True):
    """The library's account of itself (``aclshmemx_describe``), as a dict: ``version``,
    ``library_path``, ``initialized``, ``my_pe`` and ``n_pes`` (-1 before init),
    ``transports_available`` and ``transports_in_use`` (lists of "shm", "ucx") and
    ``ucx_plugin``: ``status`` ("loaded", "not_loaded_yet", "disabled", "not_found",
    "load_failed", "not_a_plugin", "mismatch"), ``from_env``, ``path``, ``name``,
    ``version``, ``abi``, ``expected_abi``, ``reason``, ``data_plane`` and
    ``data_plane_error``.  ``load=False`` leaves a plug-in that no job has needed unloaded.
    Raises AclshmemError when the library refuses the call."""
    ffi, lib = _native.load()
    d = ffi.new("aclshmemx_description_t *")
    d.size = ffi.sizeof("aclshmemx_description_t")
    rc = lib.aclshmemx_describe(d, 0 if load else lib.ACLSHMEMX_DESCRIBE_NO_LOAD)
    if rc != ACLSHMEM_SUCCESS:
        raise _AclshmemError(f"aclshmemx_describe failed: {_error_text(rc)}", rc)
    kinds = _enum_names(ffi, "aclshmemx_transport_kind_t", "ACLSHMEMX_TRANSPORT_")
    u = d.ucx
    return {
        "version": _c_text(ffi, d.version),
        "library_path": _c_text(ffi, d.library_path),
        "initialized": bool(d.initialized),
        "my_pe": d.my_pe,
        "n_pes": d.n_pes,
        "transports_available": [n for bit, n in sorted(kinds.items()) if d.transports_available & bit],
        "transports_in_use": [n for bit, n in sorted(kinds.items()) if d.transports_in_use & bit],
        "ucx_plugin": {
            "status": _enum_names(ffi, "aclshmemx_plugin_status_t", "ACLSHMEMX_PLUGIN_")[u.status],
            "from_env": bool(u.from_env),
            "path": _c_text(ffi, u.path),
            "name": _c_text(ffi, u.name),
            "version": _c_text(ffi, u.version),
            "abi": u.abi or None,
            "expected_abi": u.expected_abi,
            "reason": _c_text(ffi, u.reason),
            "data_plane": ffi.string(u.data_plane).decode("utf-8", "replace"),
            "data_plane_error": bool(u.data_plane_error),
        },
    }


def aclshmem_global_exit(status):
    """Ends every PE of the job with exit status ``status``."""
    _native.lib.aclshmem_global_exit(_int(status, "status"))


# ---------------------------------------------------------------------------
# TLS and logging (callbacks are kept alive here)
# ---------------------------------------------------------------------------

_keepalive_lock = threading.Lock()
_callbacks = []  # every callback ever handed to C: C may call an old one concurrently
_logger_installed = False


def set_conf_store_tls(enable, tls_info):
    """Turns TLS of the control plane on or off; ``tls_info`` may be empty.  Takes effect
    at the next init.  Returns the result code."""
    info, n = _text(tls_info, "tls_info")
    return _native.lib.aclshmemx_set_conf_store_tls(bool(enable), info, n)


def set_conf_store_tls_key(tls_pk, tls_pk_pw, py_decrypt_func):
    """Sets the TLS private key and its password, and registers ``py_decrypt_func(cipher:
    str) -> str`` which decrypts the password.  Returns the result code."""
    ffi, lib = _native.load()
    pk, pk_len = _text(tls_pk, "tls_pk")
    pw, pw_len = _text(tls_pk_pw, "tls_pk_pw")
    if py_decrypt_func is None:
        handler = ffi.NULL
    else:
        if not callable(py_decrypt_func):
            raise TypeError("py_decrypt_func must be callable (cipher_text: str) -> str")

        def decrypt(cipher, cipher_len, plain, plain_len):
            text = ffi.unpack(cipher, cipher_len).decode("utf-8", "replace")
            result = py_decrypt_func(text)
            data = result.encode() if isinstance(result, str) else bytes(result)
            capacity = plain_len[0]  # bytes available, not counting the terminating NUL
            if len(data) > capacity:
                return -1
            ffi.memmove(plain, data, len(data))
            plain[len(data)] = b"\0"
            plain_len[0] = len(data)
            return 0

        handler = ffi.callback("aclshmem_decrypt_handler", decrypt, error=-1)
        with _keepalive_lock:
            _callbacks.append(handler)
    return lib.aclshmemx_set_config_store_tls_key(pk, pk_len, pw, pw_len, handler)


def set_log_level(level):
    """Log level of every module: 0 debug, 1 info, 2 warn, 3 error, 4 fatal."""
    return _native.lib.aclshmemx_set_log_level(_int(level, "level"))


def _reset_logger_at_exit():
    # Log lines may come from library threads; none must reach Python while it shuts down.
    if _logger_installed and _native.is_loaded():
        try:
            _native.lib.aclshmemx_set_extern_logger(_native.get_ffi().NULL)
        except Exception:
            pass


def set_extern_logger(func):
    """Routes the library's log lines to ``func(level: int, msg: str)``; None restores the
    default output.  Returns the result code."""
    global _logger_installed
    ffi, lib = _native.load()
    if func is None:
        return lib.aclshmemx_set_extern_logger(ffi.NULL)
    if not callable(func):
        raise TypeError("func must be callable as func(level: int, msg: str)")

    def log(level, msg):
        func(int(level), ffi.string(msg).decode("utf-8", "replace") if msg != ffi.NULL else "")

    cb = ffi.callback("void(int, const char *)", log)
    with _keepalive_lock:
        _callbacks.append(cb)
        if not _logger_installed:
            atexit.register(_reset_logger_at_exit)
        _logger_installed = True
    return lib.aclshmemx_set_extern_logger(cb)


def get_ffts_config():
    """The FFTS configuration word, as a string (always "0" on the cpu platform)."""
    return str(int(_native.lib.util_get_ffts_config()))


# ---------------------------------------------------------------------------
# Memory
# ---------------------------------------------------------------------------


def _size(value, what):
    v = _int(value, what)
    if not 0 <= v <= _SIZE_MAX:
        raise OverflowError(f"{what} {v} does not fit in size_t")
    return v


def _alloc_or_raise(api, p):
    ffi = _native.get_ffi()
    if p == ffi.NULL:
        raise RuntimeError(f"{api} failed: {_error_text()}")
    return int(ffi.cast("uintptr_t", p))


def _as_int(p):
    return int(_native.get_ffi().cast("uintptr_t", p))


def aclshmem_malloc(size):
    """Collective: ``size`` bytes of the device-side heap; raises RuntimeError when the
    library returns NULL (size 0 included)."""
    return _alloc_or_raise(f"aclshmem_malloc({size})", _native.lib.aclshmem_malloc(_size(size, "size")))


def aclshmem_calloc(nmemb, size):
    """Collective: zeroed ``nmemb * size`` bytes; raises RuntimeError on NULL."""
    return _alloc_or_raise(
        f"aclshmem_calloc({nmemb}, {size})",
        _native.lib.aclshmem_calloc(_size(nmemb, "nmemb"), _size(size, "size")),
    )


def aclshmem_align(alignment, size):
    """Collective: ``size`` bytes aligned to ``alignment`` (a power of 2); raises
    RuntimeError on NULL."""
    return _alloc_or_raise(
        f"aclshmem_align({alignment}, {size})",
        _native.lib.aclshmem_align(_size(alignment, "alignment"), _size(size, "size")),
    )


def aclshmem_free(ptr):
    """Collective: frees memory of aclshmem_malloc/calloc/align (0 does nothing)."""
    _native.lib.aclshmem_free(_ptr("void *", ptr, "ptr"))


def aclshmemx_malloc(size, mem_type=MemType.DEVICE_SIDE):
    """Collective: ``size`` bytes of the heap ``mem_type``; 0 on failure."""
    return _as_int(_native.lib.aclshmemx_malloc(_size(size, "size"), _mem_type(mem_type)))


def aclshmemx_calloc(count, size, mem_type=MemType.DEVICE_SIDE):
    """Collective: zeroed ``count * size`` bytes of the heap ``mem_type``; 0 on failure."""
    return _as_int(
        _native.lib.aclshmemx_calloc(_size(count, "count"), _size(size, "size"), _mem_type(mem_type))
    )


def aclshmemx_align(alignment, size, mem_type=MemType.DEVICE_SIDE):
    """Collective: aligned ``size`` bytes of the heap ``mem_type``; 0 on failure."""
    return _as_int(
        _native.lib.aclshmemx_align(_size(alignment, "alignment"), _size(size, "size"), _mem_type(mem_type))
    )


def aclshmemx_free(ptr, mem_type=MemType.DEVICE_SIDE):
    """Collective: frees memory of the heap ``mem_type``."""
    _native.lib.aclshmemx_free(_ptr("void *", ptr, "ptr"), _mem_type(mem_type))


def aclshmemx_get_heap_base(mem_type=None):
    """Start of this PE's heap (DEVICE_SIDE when mem_type is None); 0 if not initialised."""
    return _as_int(_native.lib.aclshmemx_get_heap_base(_mem_type(mem_type)))


def aclshmem_ptr(ptr, peer):
    """The address of ``ptr``'s symmetric twin on PE ``peer``, usable by this process;
    0 for a bad address or PE, or a PE on another node."""
    return _as_int(_native.lib.aclshmem_ptr(_ptr("void *", ptr, "ptr"), _int(peer, "peer")))


# ---------------------------------------------------------------------------
# PEs and teams
# ---------------------------------------------------------------------------

_INT_MIN, _INT_MAX = -(2 ** 31), 2 ** 31 - 1


def _team_arg(team):
    """A team argument for functions that answer -1 for a bad team."""
    if isinstance(team, bool):
        raise TypeError("team must be an integer team ID, not bool")
    t = _int(team, "team")
    return t if _INT_MIN <= t <= _INT_MAX else None


def my_pe(team=None):
    """This PE's number in the world team, or in ``team`` (-1 if it is invalid)."""
    if team is None:
        return _native.lib.aclshmem_my_pe()
    return team_my_pe(team)


def pe_count(team=None):
    """The number of PEs of the world team, or of ``team`` (-1 if it is invalid)."""
    if team is None:
        return _native.lib.aclshmem_n_pes()
    return team_n_pes(team)


def team_my_pe(team_id):
    """This PE's number in ``team_id``; -1 on error."""
    t = _team_arg(team_id)
    return -1 if t is None else _native.lib.aclshmem_team_my_pe(t)


def team_n_pes(team_id):
    """The number of PEs in ``team_id``; -1 on error."""
    t = _team_arg(team_id)
    return -1 if t is None else _native.lib.aclshmem_team_n_pes(t)


def team_split_strided(parent, start, stride, size):
    """Collective over ``parent``: PEs start, start+stride, ... (size of them).  Returns the
    new team ID, or ACLSHMEM_TEAM_INVALID on a PE that is not a member.  Every PE of
    ``parent`` must ask for the same split; when one asked for something else (or its own
    arguments are invalid) the split fails on every PE and no team is created.  Raises
    ``shmem.core.AclshmemError`` (a RuntimeError) with the library's message when the
    library returns an error code."""
    ffi, lib = _native.load()
    out = ffi.new("aclshmem_team_t *", ACLSHMEM_TEAM_INVALID)
    rc = lib.aclshmem_team_split_strided(
        _int(parent, "parent"), _int(start, "start"), _int(stride, "stride"), _int(size, "size"), out
    )
    if rc != ACLSHMEM_SUCCESS:
        raise _AclshmemError(f"aclshmem_team_split_strided failed: {_error_text(rc)}", rc)
    return int(out[0])


def team_split_2d(parent, x_range):
    """Collective over ``parent``: rows of ``x_range`` PEs and columns.  Returns
    ``(x_team_id, y_team_id)``.  Every PE of ``parent`` must pass the same ``x_range``;
    raises ``shmem.core.AclshmemError`` (a RuntimeError) with the library's message on
    failure, on every PE."""
    ffi, lib = _native.load()
    x = ffi.new("aclshmem_team_t *", ACLSHMEM_TEAM_INVALID)
    y = ffi.new("aclshmem_team_t *", ACLSHMEM_TEAM_INVALID)
    rc = lib.aclshmem_team_split_2d(_int(parent, "parent"), _int(x_range, "x_range"), x, y)
    if rc != ACLSHMEM_SUCCESS:
        raise _AclshmemError(f"aclshmem_team_split_2d failed: {_error_text(rc)}", rc)
    return (int(x[0]), int(y[0]))


def team_translate_pe(src_team, src_pe, dest_team):
    """``src_pe`` of ``src_team`` numbered in ``dest_team``; -1 on error."""
    a = _team_arg(src_team)
    b = _team_arg(dest_team)
    if a is None or b is None:
        return -1
    return _native.lib.aclshmem_team_translate_pe(a, _int(src_pe, "src_pe"), b)


def team_destroy(team):
    """Destroys ``team`` (collective over its members)."""
    t = _team_arg(team)
    if t is not None:
        _native.lib.aclshmem_team_destroy(t)


def aclshmem_team_get_config(team):
    """The TeamConfig of ``team``; raises RuntimeError on failure."""
    ffi, lib = _native.load()
    c = ffi.new("aclshmem_team_config_t *")
    t = _team_arg(team)
    rc = ACLSHMEM_INVALID_PARAM if t is None else lib.aclshmem_team_get_config(t, c)
    if rc != ACLSHMEM_SUCCESS:
        raise RuntimeError(f"aclshmem_team_get_config({team}) failed: {_error_text(rc)}")
    cfg = TeamConfig(int(c.num_contexts))
    cfg.version = int(c.version)
    cfg.uniqueid = int(c.uniqueid)
    return cfg


# ---------------------------------------------------------------------------
# RMA and signals (put, get and the signal calls are templated: see the end of the module)
# ---------------------------------------------------------------------------


def aclshmem_quiet():
    """Completes every RMA and signal this PE issued."""
    _native.lib.aclshmem_quiet()


def aclshmem_fence():
    """Orders earlier RMA to each PE before later RMA to that PE."""
    _native.lib.aclshmem_fence()


def _make_engine_setter(engine, minimum):
    c_name = f"aclshmemx_set_{engine}_config"

    def setter(offset, ub_size, sync_id):
        return getattr(_native.lib, c_name)(_int(offset, "offset"), _int(ub_size, "ub_size"),
                                            _int(sync_id, "sync_id"))

    setter.__name__ = setter.__qualname__ = c_name
    setter.__doc__ = (f"Sets the {engine.upper()} workspace (offset, ub_size >= {minimum}, sync_id) of the "
                      "active instance; returns ACLSHMEM_SUCCESS or a native error code.")
    return setter


# aclshmemx_set_{mte,sdma,rdma,udma}_config: one C call each, the same shape.
for _engine, _minimum in (("mte", 0), ("sdma", 0), ("rdma", 128), ("udma", 128)):
    globals()[f"aclshmemx_set_{_engine}_config"] = _make_engine_setter(_engine, _minimum)


def aclshmemx_get_engine_config(engine):
    """The active instance's workspace setting of ``engine`` (OpEngineType; ROCE is the
    rdma setting) as ``(offset, ub_size, sync_id)``; raises RuntimeError on failure."""
    ffi, lib = _native.load()
    c = ffi.new("aclshmem_ub_config_t *")
    rc = lib.aclshmemx_get_engine_config(_enum(engine, OpEngineType, "engine"), c)
    if rc != ACLSHMEM_SUCCESS:
        raise RuntimeError(f"aclshmemx_get_engine_config failed: {_error_text(rc)}")
    return (int(c.aclshmem_ub) & _SIZE_MAX, int(c.ub_size), int(c.sync_id))


# ---------------------------------------------------------------------------
# Streams and stream-ordered operations
# ---------------------------------------------------------------------------


def aclshmemx_stream_create():
    """A new stream; returns its handle (an int).  Raises RuntimeError on failure."""
    ffi, lib = _native.load()
    out = ffi.new("aclrtStream *")
    rc = lib.aclshmemx_stream_create(out)
    if rc != ACLSHMEM_SUCCESS:
        raise RuntimeError(f"aclshmemx_stream_create failed: {_error_text(rc)}")
    return _as_int(out[0])


def aclshmemx_stream_synchronize(stream):
    """Waits for everything enqueued on ``stream``; returns the first error that happened
    on it (0 = default stream)."""
    return _native.lib.aclshmemx_stream_synchronize(_stream(stream))


def aclshmemx_stream_destroy(stream):
    """Destroys a stream made by aclshmemx_stream_create; returns the result code."""
    return _native.lib.aclshmemx_stream_destroy(_stream(stream))


def aclshmemx_block_idx():
    """Inside a kernel: this block's index (0 outside one)."""
    return _native.lib.aclshmemx_block_idx()


def aclshmemx_block_num():
    """Inside a kernel: the number of blocks (1 outside one)."""
    return _native.lib.aclshmemx_block_num()


# ---------------------------------------------------------------------------
# Barriers and handles
# ---------------------------------------------------------------------------


def aclshmem_barrier(team):
    """Collective: blocks until every PE of ``team`` arrives; ValueError for a team that
    is not alive."""
    _native.lib.aclshmem_barrier(_check_team(team, "aclshmem_barrier"))


def aclshmem_barrier_all():
    """Collective over the world team."""
    _native.lib.aclshmem_barrier_all()


def aclshmem_sync(team):
    """Collective: synchronises ``team``; ValueError for a team that is not alive."""
    _native.lib.aclshmem_sync(_check_team(team, "aclshmem_sync"))


def aclshmem_sync_all():
    """Collective: synchronises the world team."""
    _native.lib.aclshmem_sync_all()


def aclshmemx_barrier_vec(team):
    """The original's vector-core barrier: on the cpu platform every kernel block is a
    vector core, so it is ``aclshmem_barrier`` (inside a kernel every block of the calling
    kernel takes part); ValueError for a team that is not alive."""
    _native.lib.aclshmemx_barrier_vec(_check_team(team, "aclshmemx_barrier_vec"))


def aclshmemx_barrier_all_vec():
    """``aclshmemx_barrier_vec`` over the world team."""
    _native.lib.aclshmemx_barrier_all_vec()


def aclshmemx_barrier_on_stream(team, stream):
    """Enqueues a barrier of ``team`` on ``stream``; ValueError for a team that is not alive."""
    t = _check_team(team, "aclshmemx_barrier_on_stream")
    _native.lib.aclshmemx_barrier_on_stream(t, _stream(stream))


def aclshmemx_barrier_all_on_stream(stream):
    """Enqueues a world barrier on ``stream``."""
    _native.lib.aclshmemx_barrier_all_on_stream(_stream(stream))


def aclshmemx_handle_wait(handle, stream):
    """Enqueues a completion wait and rendezvous of the handle's team on ``stream``."""
    if not isinstance(handle, Handle):
        raise TypeError(f"handle must be a Handle, not {type(handle).__name__}")
    t = _check_team(handle.team_id, "aclshmemx_handle_wait")
    ffi = _native.get_ffi()
    h = ffi.new("aclshmem_handle_t *")
    h.team_id = t
    _native.lib.aclshmemx_handle_wait(h[0], _stream(stream))


# ---------------------------------------------------------------------------
# Profiling
# ---------------------------------------------------------------------------


def aclshmemx_get_prof(verbose=False):
    """A deep copy of this PE's profile, or None where profiling is off (only the PE named
    by SHMEM_CYCLE_PROF_PE records)."""
    ffi, lib = _native.load()
    out = ffi.new("aclshmem_prof_pe_t **")
    lib.aclshmemx_get_prof(out, bool(verbose))
    p = out[0]
    if p == ffi.NULL or p.pe_id < 0:
        return None
    return ProfData._from_c(p)


def aclshmemx_show_prof():
    """Prints the profile of the active instance."""
    _native.lib.aclshmemx_show_prof()


def aclshmemx_prof_start(frame):
    """Starts timing user profiling frame ``frame`` (0..999) in this block."""
    _native.lib.aclshmemx_prof_start(_int(frame, "frame"))


def aclshmemx_prof_end(frame):
    """Ends user frame ``frame``: adds one count and the cycles since prof_start."""
    _native.lib.aclshmemx_prof_end(_int(frame, "frame"))


# ---------------------------------------------------------------------------
# The templated functions: the families, put/get/signals and the seed's aliases
# ---------------------------------------------------------------------------


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


_address_functions = {}


def _address_function(name):
    """``_native.address_function(name)``, made once: the C function ``name`` taking its
    pointers as integer addresses."""
    fn = _address_functions.get(name)
    if fn is None:
        fn = _address_functions[name] = _native.address_function(name)
    return fn


class _LazyFunction:
    """Stands for the address function of ``name`` in the module global ``_c_<name>`` of
    the templated functions until their first call, which loads the library, makes the
    function and puts it in its place: later calls find it as a plain global (an
    attribute of an object with ``__getattr__`` took ~40 ns more per call)."""

    __slots__ = ("namespace", "name")

    def __init__(self, namespace, name):
        self.namespace = namespace
        self.name = name

    def __call__(self, *args):
        fn = self.namespace[f"_c_{self.name}"] = _address_function(self.name)
        return fn(*args)


def _templated_module(part="base"):
    """The module of the templated functions (part "coll": the collectives' typed
    families): the one generated at build time when it was made from these sources, else
    the same text compiled now (a source checkout)."""
    import importlib

    from . import _ffi_build

    name = _ffi_build.COLL_FAMILIES_MODULE if part == "coll" else _ffi_build.FAMILIES_MODULE
    try:
        module = importlib.import_module(name)
    except ImportError:
        module = None
    if module is not None and _native.is_fresh(module):
        return module
    import linecache
    import sys
    import types

    source = _ffi_build.families_source(_native, None, part)
    filename = f"<generated {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # for tracebacks
    module = types.ModuleType(name)
    module.__package__ = __package__
    sys.modules[name] = module
    exec(compile(source, filename, "exec"), module.__dict__)
    return module


def _adopt(module):
    """The module's functions as functions of this module."""
    for name in module.__all__:
        fn = globals()[name] = getattr(module, name)
        fn.__module__ = __name__  # documented, and shown in help(), as functions of this module


_collectives_lock = threading.Lock()


def __getattr__(name):
    # The collectives' typed families (two thirds of the templated functions) are made at
    # their first use, not at import: a program that never calls one does not pay for them.
    if _native.is_collective(name):
        with _collectives_lock:
            if name not in globals():
                _adopt(_templated_module("coll"))
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if _typing.TYPE_CHECKING:
    from ._pyshmem_coll_families import *  # noqa: F401,F403  (what type checkers see)
    from ._pyshmem_families import *  # noqa: F401,F403
    from ._pyshmem_families import SEED_ALIASES
else:
    _module = _templated_module()
    _adopt(_module)
    #: {seed name: C function}: the original's Python API names the sized put-with-signal
    #: family aclshmemx_put{BITS}_signal[_nbi]; the C library has aclshmem_put{BITS}_signal[_nbi].
    SEED_ALIASES = dict(_module.SEED_ALIASES)
    del _module

#: The generated families (names of shmem._native.family_functions()).
GENERATED = [_entry[0] for _entry in _native.family_functions()]
