"""The argument checks that the modules of ``shmem.core`` share, and the conversion of a
failed library call into an exception.  The checks of a ``shmem.core`` type live beside it
(``check_buffer`` in ``buffer``, ``check_stream`` in ``stream``); the exceptions are
``shmem._errors``'s."""

import enum
from typing import Any, Callable, Optional, Type, TypeVar

_E = TypeVar("_E", bound=enum.Enum)

from .. import _pyshmem, _state
from .._pyshmem_types import is_valid_team
from .._errors import AclshmemError, AclshmemInvalid, AclshmemWarning
from .._pyshmem import MemType

__all__ = ["AclshmemError", "AclshmemInvalid", "AclshmemWarning", "MemType"]

INTPTR_MAX = 2 ** 63 - 1
SIZE_T_MAX = 2 ** 64 - 1
UINT32_MAX = 2 ** 32 - 1
INT32_MIN, INT32_MAX = -(2 ** 31), 2 ** 31 - 1
MAX_INSTANCE_ID = _pyshmem.ACLSHMEM_MAX_INSTANCE_ID

# ---------------------------------------------------------------------------
# Argument checks (every rejection is an AclshmemInvalid with a message)
# ---------------------------------------------------------------------------


def check_int(value: object, name: str, lo: Optional[int] = None, hi: Optional[int] = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise AclshmemInvalid(f"{name} must be a non-bool integer, not {type(value).__name__} ({value!r})")
    if lo is not None and value < lo:
        raise AclshmemInvalid(f"{name} must be >= {lo}, not {value}")
    if hi is not None and value > hi:
        raise AclshmemInvalid(f"{name} must be <= {hi}, not {value}")
    return int(value)


def check_instance_id(value: object, name: str = "instance_id") -> int:
    return check_int(value, name, 0, MAX_INSTANCE_ID)


def check_enum(value: object, enum_cls: Type[_E], name: str) -> _E:
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


def check_mem_type(value: object) -> MemType:
    return check_enum(value, MemType, "mem_type")


def check_team(team: Any, name: str = "team") -> int:
    """A live team ID in [0, 2047]."""
    check_int(team, name)
    if not 0 <= team < _pyshmem.ACLSHMEM_MAX_TEAMS:
        raise AclshmemInvalid(f"{name} must be in [0, {_pyshmem.ACLSHMEM_MAX_TEAMS - 1}], not {team}")
    if not is_valid_team(team):
        raise AclshmemInvalid(f"{name} {team} is not a live team (never created, destroyed, "
                              "or the library is not initialised)")
    return int(team)


def check_pe(pe: Any, name: str = "remote_pe") -> int:
    check_int(pe, name)
    state = _state.active_instance()  # cached: no call into the library
    if state is not None and 0 <= pe < state[1]:
        return int(pe)
    n = _pyshmem.pe_count()
    if n <= 0:
        raise AclshmemInvalid(f"{name}: the library is not initialised (no PEs)")
    if not 0 <= pe < n:
        raise AclshmemInvalid(f"{name} must satisfy 0 <= {name} < {n}, not {pe}")
    return int(pe)


def active_instance_id() -> Optional[int]:
    ctx = _pyshmem.aclshmemx_instance_ctx_get()
    return None if ctx is None else ctx.id


def native_error(api: str, rc: Optional[int] = None) -> AclshmemError:
    """An AclshmemError for a failed call, carrying the library's last-error text."""
    text = _pyshmem.aclshmemx_get_last_error() or "no message from libaclshmem"
    if rc is not None:
        name = _pyshmem.ERROR_NAMES.get(rc, str(rc))
        return AclshmemError(f"{api} failed ({name}): {text}", rc)
    return AclshmemError(f"{api} failed: {text}")


def call_void(api: str, func: Callable[..., Any], *args: Any) -> None:
    """Calls a void binding and raises AclshmemError when it set a last error.

    libaclshmem keeps the message of the last *failing* call (a success leaves it alone),
    so it is cleared first: any message afterwards is this call's.  Clearing and looking
    are a write and a read of the thread's error buffer (``shmem._state.last_error_flag``), not
    calls into the library; only a failure fetches the text."""
    flag = _state.last_error_flag()
    flag[0] = 0
    func(*args)
    if flag[0]:
        raise AclshmemError(f"{api} failed: {_pyshmem.aclshmemx_get_last_error()}")


def check_rc(api: str, rc: int) -> None:
    if rc != _pyshmem.ACLSHMEM_SUCCESS:
        raise native_error(api, rc)
