"""The constants, enumerations and classes of ``shmem._pyshmem`` (which re-exports them),
the last-error calls and the team checks its functions share."""

import enum
import struct
import typing as _typing

from . import _abi, _native
from ._pyshmem_args import _SIZE_MAX, _enum, _int

__all__ = [
    "ACLSHMEM_SUCCESS",
    "ACLSHMEM_INVALID_PARAM",
    "ACLSHMEM_INVALID_VALUE",
    "ACLSHMEM_SMEM_ERROR",
    "ACLSHMEM_INNER_ERROR",
    "ACLSHMEM_NOT_INITED",
    "ACLSHMEM_BOOTSTRAP_ERROR",
    "ACLSHMEM_TIMEOUT_ERROR",
    "ACLSHMEM_MALLOC_FAILED",
    "ACLSHMEM_DL_FUNC_FAILED",
    "ACLSHMEM_INNER_TIMEOUT",
    "ACLSHMEM_UNDER_API_UNLOAD",
    "ACLSHMEM_NOT_SUPPORTED",
    "ERROR_NAMES",
    "ACLSHMEM_TEAM_WORLD",
    "ACLSHMEM_TEAM_INVALID",
    "ACLSHMEM_MAX_TEAMS",
    "ACLSHMEM_MAX_PES",
    "ACLSHMEM_MAX_INSTANCES",
    "ACLSHMEM_MAX_INSTANCE_ID",
    "ACLSHMEM_MAX_QP_NUM",
    "ACLSHMEM_MAX_LOCAL_SIZE",
    "ACLSHMEM_MAX_NAME_LEN",
    "ACLSHMEM_MAX_IP_PORT_LEN",
    "ACLSHMEM_UNIQUE_ID_INNER_LEN",
    "ACLSHMEM_UNIQUE_ID_SIZE",
    "LOCAL_REDUCE_TYPES",
    "LOCAL_REDUCE_OPS",
    "ACLSHMEM_UNIQUEID_VERSION",
    "ACLSHMEM_DEFAULT_TIMEOUT",
    "ACLSHMEM_CYCLE_PROF_MAX_BLOCK",
    "ACLSHMEM_CYCLE_PROF_FRAME_CNT",
    "ACLSHMEM_INIT_OPTIONAL_ATTR_VERSION",
    "OpEngineType",
    "MemType",
    "InitStatus",
    "SignalOp",
    "CmpOp",
    "InitMode",
    "HOST_SIDE",
    "DEVICE_SIDE",
    "SIGNAL_SET",
    "SIGNAL_ADD",
    "CMP_EQ",
    "CMP_NE",
    "CMP_GT",
    "CMP_GE",
    "CMP_LT",
    "CMP_LE",
    "aclshmemx_get_last_error",
    "aclshmemx_clear_last_error",
    "OptionalAttr",
    "InitAttr",
    "UniqueId",
    "TeamConfig",
    "InstanceContext",
    "Handle",
    "ProfData",
]

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

#: aclshmemx_reduce_local's ``dtype`` and ``op`` values by name ("float", "sum", ...): the
#: C enums aclshmemx_type_t and aclshmemx_reduce_op_t.
LOCAL_REDUCE_TYPES = {name[len("ACLSHMEMX_TYPE_"):]: value for name, value in _abi.ENUMS["aclshmemx_type_t"]
                      if name != "ACLSHMEMX_TYPE_COUNT"}
LOCAL_REDUCE_OPS = {name[len("ACLSHMEMX_OP_"):].lower(): value for name, value in _abi.ENUMS["aclshmemx_reduce_op_t"]
                    if name != "ACLSHMEMX_OP_COUNT"}
ACLSHMEM_UNIQUEID_VERSION = (1 << 16) + ACLSHMEM_UNIQUE_ID_SIZE
ACLSHMEM_DEFAULT_TIMEOUT = 120
ACLSHMEM_CYCLE_PROF_MAX_BLOCK = 64
ACLSHMEM_CYCLE_PROF_FRAME_CNT = 1024
# (1 << 16) + sizeof(aclshmem_init_optional_attr_t), a 24-byte structure.
ACLSHMEM_INIT_OPTIONAL_ATTR_VERSION = (1 << 16) + 24


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


def aclshmemx_get_last_error() -> str:
    """The message of the last failing libaclshmem call in this thread ("" if none)."""
    ffi, lib = _native.load()
    p = lib.aclshmemx_get_last_error()
    if p == ffi.NULL:
        return ""
    return ffi.string(p).decode("utf-8", "replace")


def aclshmemx_clear_last_error() -> None:
    """Forgets this thread's last error, so a later message belongs to a later call."""
    _native.load()[1].aclshmemx_clear_last_error()


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


def is_valid_team(team_id: object) -> bool:
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
    if not is_valid_team(team_id):
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


if _typing.TYPE_CHECKING:  # what aclshmemx_describe returns, for type checkers
    from typing import List, Optional, TypedDict

    class _PluginDescription(TypedDict):
        status: str
        from_env: bool
        path: Optional[str]
        name: Optional[str]
        version: Optional[str]
        abi: Optional[int]
        expected_abi: int
        reason: Optional[str]
        data_plane: str
        data_plane_error: bool

    class _Description(TypedDict):
        version: Optional[str]
        library_path: Optional[str]
        initialized: bool
        my_pe: int
        n_pes: int
        transports_available: List[str]
        transports_in_use: List[str]
        ucx_plugin: _PluginDescription
