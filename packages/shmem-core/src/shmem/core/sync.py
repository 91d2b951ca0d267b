"""Barriers and handles: barrier, barrier_all, sync, sync_all, the on-stream barriers,
handle_wait."""

from typing import Any, Callable, Union

from .. import _pyshmem
from .._pyshmem import ACLSHMEM_MAX_TEAMS, ACLSHMEM_TEAM_INVALID, ACLSHMEM_TEAM_WORLD, Handle
from .._errors import AclshmemInvalid
from .stream import Stream, _drained_by, check_stream
from .utils import call_void, check_team

__all__ = ["barrier", "barrier_all", "sync", "sync_all", "barrier_on_stream", "barrier_all_on_stream",
           "handle_wait", "Handle", "ACLSHMEM_TEAM_WORLD", "ACLSHMEM_TEAM_INVALID", "ACLSHMEM_MAX_TEAMS"]


def _host_barrier(api: str, func: Callable[..., Any], *args: Any) -> None:
    # The host barriers and syncs first complete the default stream's work (aclshmem/stream.h),
    # so what was held for it can go.
    _drained_by(0, lambda: call_void(api, func, *args))


def barrier(team: int) -> None:
    """Collective: blocks until every PE of ``team`` (a live team ID) arrives."""
    t = check_team(team)
    _host_barrier("barrier", _pyshmem.aclshmem_barrier, t)


def barrier_all() -> None:
    """Collective: blocks until every PE arrives."""
    _host_barrier("barrier_all", _pyshmem.aclshmem_barrier_all)


def sync(team: int) -> None:
    """Collective: synchronises ``team`` and makes earlier host stores visible."""
    t = check_team(team)
    _host_barrier("sync", _pyshmem.aclshmem_sync, t)


def sync_all() -> None:
    """Collective: synchronises every PE and makes earlier host stores visible."""
    _host_barrier("sync_all", _pyshmem.aclshmem_sync_all)


def barrier_on_stream(team: int, stream: Union[Stream, int]) -> None:
    """Enqueues a barrier of ``team`` on ``stream`` (0: the default stream)."""
    t = check_team(team)
    s = check_stream(stream)
    call_void("barrier_on_stream", _pyshmem.aclshmemx_barrier_on_stream, t, s)


def barrier_all_on_stream(stream: Union[Stream, int]) -> None:
    """Enqueues a world barrier on ``stream`` (0: the default stream)."""
    s = check_stream(stream)
    call_void("barrier_all_on_stream", _pyshmem.aclshmemx_barrier_all_on_stream, s)


def handle_wait(handle: Handle, stream: Union[Stream, int]) -> None:
    """Enqueues a completion wait and rendezvous of the handle's team on ``stream``; every
    member of that team must call it, in the same order."""
    if not isinstance(handle, Handle):
        raise AclshmemInvalid(f"handle must be a Handle, not {type(handle).__name__}")
    check_team(handle.team_id, "handle.team_id")
    s = check_stream(stream)
    call_void("handle_wait", _pyshmem.aclshmemx_handle_wait, handle, s)
