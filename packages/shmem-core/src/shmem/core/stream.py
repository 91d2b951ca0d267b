"""Streams of the cpu platform: ordered queues served by a worker thread.

An on-stream call only enqueues: the library reads its source and writes its destination
later, when the stream runs it.  So the Python objects behind those addresses (Buffers,
tensors, the memory they own) must live until then, even if the caller drops them at
once.  :func:`keep_alive` holds them until the stream is known to have run the
operation:

* a completion marker (a one-block kernel that calls back into Python) is enqueued
  behind the operation; when the stream runs it, what it covers is set free, to be
  dropped by the next stream call of a Python thread (so no destructor ever runs on a
  stream's worker, where it could wait for a lock the thread draining the stream holds).
  At most one marker per stream is queued at a time, and a new one waits 1 ms after the
  previous one: operations enqueued meanwhile wait for the next one, so a long queue or
  a tight loop costs a marker a millisecond, not one per operation;
* a successful synchronize (and a host barrier or sync, which drain the default stream)
  releases what was held for work enqueued before it; closing a stream releases all of
  its holdings; before a finalize, the instance's streams get a last marker, which its
  drain runs.

Every on-stream call of ``shmem.core`` and ``shmem_torch`` does this for its operands
(``shmem.core.put`` and ``get`` for external Buffers only: dropping a Buffer of the
symmetric heap frees nothing, only ``free`` does); call it yourself for memory you hand
to ``shmem._pyshmem``'s on-stream functions or to kernels.

A :class:`Stream` that is garbage-collected while still open is closed by the collector,
with a ``ResourceWarning`` as for an unclosed file: its work is run first, then its
worker thread ends.  Where the collector runs on a thread that must not wait for a stream
(a stream's worker, or while this module's lock is held), the close is left to the next
stream call of a Python thread (or to finalize).  Finalizing an instance destroys its
streams: their Stream objects are closed then.
"""

import atexit
import itertools
import sys
import threading
import time
import warnings
import weakref
from typing import Any, Callable, Dict, List, Optional, Tuple, TypeVar, Union

from .. import _pyshmem, _state
from .._errors import AclshmemError, AclshmemInvalid
from ._state import register_finalize_hook
from .utils import SIZE_T_MAX, active_instance_id, check_rc

__all__ = ["Stream", "StreamLike", "synchronize", "keep_alive"]

# What a ``stream`` argument takes: a Stream, its handle, or 0 / None for the default stream
# (where the call allows None).
StreamLike = Union["Stream", int, None]
_Key = Union[int, Tuple[str, Optional[int]]]  # a handle, or ("default", instance id)
_Batch = List[Tuple[int, Tuple[object, ...]]]  # (ticket, objects held for that operation)
_T = TypeVar("_T")


class _Holdings:
    """What one stream holds for operations no marker covers yet."""

    __slots__ = ("handle", "ticket", "unmarked", "markers_queued", "last_marker")

    def __init__(self, handle: int) -> None:
        self.handle = handle          # 0: the default stream of the instance in the key
        self.ticket = 0               # numbers the operations, in enqueue order
        self.unmarked: _Batch = []    # (ticket, objects)
        self.markers_queued = 0
        self.last_marker = -1.0       # time.monotonic() of the last marker launched


# A new marker waits this long after the previous one of its stream.  A marker costs a
# kernel launch here and, when the stream runs it, a call back into Python, which has to
# take the GIL from the thread that enqueues: with a marker behind nearly every operation
# (the stream runs the last one at once), a loop of 8-byte puts spent ~30 us per put
# handing the GIL back and forth.  At most one marker a millisecond, the objects of an
# operation are held that much longer at most (or until the next call on the stream, or
# its synchronize, when the loop stops).
_MARKER_SPACING = 0.001


_lock = threading.Lock()
_monotonic = time.monotonic
_holdings: Dict[_Key, _Holdings] = {}
_marker_batches: Dict[int, Tuple[_Key, _Batch]] = {}  # marker token -> (stream key, batch)
_ran: List[_Batch] = []  # batches whose marker ran: dropped by the next stream call
_tokens = itertools.count(1)
# Held for good: their marker could not be enqueued (the stream was being destroyed), so
# nothing tells when the operation ran.  A rare race; never a use after free.
_held_forever: _Batch = []
_marker_fn: Optional[Any] = None  # the cffi callback of the marker kernel
# Streams made by Stream objects and not destroyed yet: handle -> (instance id, the
# object, its serial number).  The serial tells a stream from a later one at the same
# address.
_streams: Dict[int, Tuple[Optional[int], "weakref.ref[Stream]", int]] = {}
_serials = itertools.count(1)
# (handle, serial) of Streams the collector found open where it could not destroy them.
_collected: List[Tuple[int, int]] = []


def _stream_key(handle: int) -> _Key:
    """Handle 0 names the active instance's default stream: a different one per instance."""
    if handle:
        return handle
    state = _state.active_instance()  # cached, as hold() keys it
    return ("default", state[0] if state is not None else active_instance_id())


def _marker_ran(block_idx: int, block_dim: int, arg: int) -> None:
    """The marker kernel, run by the stream's worker thread: everything enqueued before it
    has run, so what it covers is free to go."""
    with _lock:
        entry = _marker_batches.pop(arg, None)
        if entry is None:
            return
        key, batch = entry
        held = _holdings.get(key)
        if held is not None and held.markers_queued:
            held.markers_queued -= 1
        if batch:
            _ran.append(batch)


def _drop_ran() -> None:
    """Drops (in the calling thread, outside the lock) what markers have set free, and
    closes the streams the collector left to a Python thread."""
    global _ran
    if _ran:  # (read without the lock: what a marker adds meanwhile is dropped next time)
        with _lock:
            done, _ran = _ran, []
        del done
    if _collected and _may_wait_for_streams():
        _close_collected()


def _enqueue_marker_locked(key: _Key, held: _Holdings) -> int:
    """Takes held's unmarked operations into a new marker batch; returns its token."""
    token = next(_tokens)
    _marker_batches[token] = (key, held.unmarked)
    held.unmarked = []
    held.markers_queued += 1
    return token


def _launch_marker(key: _Key, held: _Holdings, token: int) -> None:
    # (_pyshmem keeps the one C callback of _marker_ran for the life of the process: the
    # library may call it until the stream ran it.)
    rc = _pyshmem.aclshmemx_kernel_launch(held.handle, _marker_ran, 1, token)
    if rc == _pyshmem.ACLSHMEM_SUCCESS:
        return
    _pyshmem.aclshmemx_clear_last_error()  # the caller's operation succeeded; this failure is ours
    with _lock:
        _key, batch = _marker_batches.pop(token, (None, []))
        held.markers_queued -= 1
        _held_forever.extend(batch)


def keep_alive(stream: StreamLike, *objects: object) -> None:
    """Keeps ``objects`` referenced until ``stream`` (a Stream, its handle, or 0 / None for
    the default stream) has run everything enqueued on it so far.

    Call it right after enqueuing an operation whose memory the objects own (the
    on-stream calls of ``shmem.core`` and ``shmem_torch`` do)."""
    handle = check_stream(stream, allow_none=True)
    _drop_ran()
    if objects:
        _hold(_stream_key(handle), handle, objects)


def hold(handle: int, instance_id: int, *objects: object) -> None:
    """keep_alive for callers that checked the stream handle (an int) and know the active
    instance (``shmem._state.active_instance()``): the hot path of put and get."""
    if _ran or _collected:
        _drop_ran()
    _hold(("default", instance_id) if handle == 0 else handle, handle, objects)


def _hold(key: _Key, handle: int, objects: Tuple[object, ...]) -> None:
    now = _monotonic()
    with _lock:
        held = _holdings.get(key)
        if held is None:
            held = _holdings[key] = _Holdings(handle)
        held.ticket += 1
        held.unmarked.append((held.ticket, objects))
        token = None
        if not held.markers_queued and now - held.last_marker >= _MARKER_SPACING:
            held.last_marker = now
            token = _enqueue_marker_locked(key, held)
    if token is not None:
        _launch_marker(key, held, token)


def _ticket(handle: int) -> int:
    """The number of the last operation held for stream ``handle``."""
    key = _stream_key(handle)
    with _lock:
        held = _holdings.get(key)
        return 0 if held is None else held.ticket


def _ran_through(handle: int, ticket: int) -> None:
    """Stream ``handle`` has run everything up to operation ``ticket``: releases it."""
    key = _stream_key(handle)
    with _lock:
        held = _holdings.get(key)
        if held is None:
            return
        done = [entry for entry in held.unmarked if entry[0] <= ticket]
        held.unmarked = [entry for entry in held.unmarked if entry[0] > ticket]
    del done


def _drained_by(handle: int, call: Callable[[], _T]) -> _T:
    """Returns call(), a library call that, when it returns without raising, has run
    everything enqueued on stream ``handle`` before it; then releases what was held for
    that work."""
    ticket = _ticket(handle)
    result = call()
    _ran_through(handle, ticket)
    _drop_ran()
    return result


def _forget(handle: int) -> None:
    key = _stream_key(handle)
    with _lock:
        held = _holdings.pop(key, None)
    del held
    _drop_ran()


def _last_markers(instance_id: int) -> None:
    """Before a finalize: a marker behind the held operations of every stream it will drain
    (of the instance, or of unknown instance), so that they are released by that drain."""
    active = active_instance_id()
    launches = []
    with _lock:
        for key, held in _holdings.items():
            if not held.unmarked:
                continue
            if isinstance(key, tuple) and not (key[1] == instance_id == active):
                continue  # another instance's default stream (handle 0 would not reach it)
            launches.append((key, held, _enqueue_marker_locked(key, held)))
    for key, held, token in launches:
        _launch_marker(key, held, token)


register_finalize_hook(_last_markers)


def _streams_die_with(instance_id: int) -> None:
    """Before a finalize: the instance's streams are destroyed by it, so their Stream
    objects are closed (a later close or collection must not touch the dead handle,
    which a new stream may reuse)."""
    with _lock:
        dying = [(h, ref) for h, (iid, ref, _) in _streams.items() if iid == instance_id]
        for handle, _ in dying:
            del _streams[handle]
    for _, ref in dying:
        stream = ref()
        if stream is not None:
            stream._handle = None


register_finalize_hook(_streams_die_with)


def _may_wait_for_streams() -> bool:
    """Whether this thread may wait for a stream's work: not a thread the library made (a
    stream's worker, running a kernel: it may be the very stream, or one it feeds), and
    not while this module's lock is held (a marker on the stream needs it)."""
    if isinstance(threading.current_thread(), threading._DummyThread):  # not made by Python
        return False
    if not _lock.acquire(blocking=False):
        return False
    _lock.release()
    return True


def _destroy_collected(handle: int, serial: int) -> None:
    """Destroys the stream of a collected Stream, unless finalize did already."""
    with _lock:
        known = _streams.get(handle)
        if known is None or known[2] != serial:
            return
        del _streams[handle]
    error_before = _pyshmem.aclshmemx_get_last_error()
    if _pyshmem.aclshmemx_stream_destroy(handle) == _pyshmem.ACLSHMEM_SUCCESS:
        _forget(handle)
    elif not error_before:
        _pyshmem.aclshmemx_clear_last_error()  # the collector's failure is nobody's last error


def _close_collected() -> None:
    while _collected:
        try:
            handle, serial = _collected.pop()
        except IndexError:  # another thread took the last one
            return
        _destroy_collected(handle, serial)


@atexit.register
def _wait_for_markers_at_exit() -> None:
    """A marker that ran after the interpreter is gone would call into freed state.  At
    exit, give the streams time to run the markers still queued while they make progress
    (a stream blocked for good, e.g. on a wait nobody satisfies, ends the wait soon)."""
    deadline = time.monotonic() + 10.0
    left, stalled_since = len(_marker_batches), time.monotonic()
    while _marker_batches and time.monotonic() < deadline:
        time.sleep(0.005)
        if len(_marker_batches) != left:
            left, stalled_since = len(_marker_batches), time.monotonic()
        elif time.monotonic() - stalled_since > 0.2:
            break


class Stream:
    """A stream for the ``stream`` arguments of the API (pass the object or ``.handle``).

    ``synchronize()`` waits for everything enqueued so far; ``close()`` destroys it.  Use
    it as a context manager to close it automatically."""

    _handle: Optional[int] = None  # None: closed (or never made)
    _serial = 0

    def __init__(self) -> None:
        _drop_ran()
        try:
            handle = _pyshmem.aclshmemx_stream_create()
        except RuntimeError as exc:
            raise AclshmemError(f"Stream: {exc}") from None
        self._serial = next(_serials)
        with _lock:
            _streams[handle] = (active_instance_id(), weakref.ref(self), self._serial)
        self._handle = handle

    def __del__(self) -> None:
        handle = self._handle
        if handle is None:
            return
        self._handle = None
        if sys.is_finalizing():
            return  # the process is ending, and its threads with it
        try:  # an "error" filter makes the warning an exception: Python reports it as unraisable
            warnings.warn(f"unclosed Stream(handle={handle:#x}): close it, or use it as a context manager",
                          ResourceWarning, source=self)
        finally:
            if _may_wait_for_streams():
                _destroy_collected(handle, self._serial)
            else:
                _collected.append((handle, self._serial))

    @property
    def handle(self) -> int:
        """The stream's address as an int."""
        if self._handle is None:
            raise AclshmemInvalid("the stream is closed (by close(), or by the finalize of its instance)")
        return self._handle

    @property
    def closed(self) -> bool:
        """True once close() destroyed the stream."""
        return self._handle is None

    def synchronize(self) -> None:
        """Waits for everything enqueued on the stream; raises AclshmemError with the first
        error that happened on it."""
        handle = self.handle
        _drained_by(handle, lambda: check_rc("Stream.synchronize", _pyshmem.aclshmemx_stream_synchronize(handle)))

    def close(self) -> None:
        """Waits for the stream and destroys it (closing twice is allowed)."""
        if self._handle is None:
            return
        handle, self._handle = self._handle, None
        with _lock:
            _streams.pop(handle, None)
        rc = _pyshmem.aclshmemx_stream_destroy(handle)
        if rc == _pyshmem.ACLSHMEM_SUCCESS:
            _forget(handle)  # destroy ran everything enqueued
        check_rc("Stream.close", rc)

    def __enter__(self) -> "Stream":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __int__(self) -> int:
        return self.handle

    def __index__(self) -> int:
        return self.handle

    def __repr__(self) -> str:
        return "Stream(closed)" if self._handle is None else f"Stream(handle={self._handle:#x})"


def check_stream(stream: object, name: str = "stream", allow_none: bool = False) -> int:
    """A stream argument as an int: a non-bool, non-negative integer, or a Stream object.
    None is the default stream where allow_none, an error otherwise."""
    if stream is None:
        if allow_none:
            return 0
        raise AclshmemInvalid(f"{name} is required: pass 0 for the default stream (None is rejected)")
    if type(stream) is int and 0 <= stream <= SIZE_T_MAX:  # the common case first
        return stream
    if isinstance(stream, Stream):  # a Stream object stands for its handle
        return stream.handle
    if isinstance(stream, bool) or not isinstance(stream, int):
        raise AclshmemInvalid(f"{name} must be a non-bool integer stream address, not {type(stream).__name__}")
    if stream < 0 or stream > SIZE_T_MAX:
        raise AclshmemInvalid(f"{name} must be a non-negative stream address, not {stream}")
    return int(stream)


def synchronize(stream: Union[Stream, int] = 0) -> None:
    """Waits for everything enqueued on ``stream`` (0: the default stream)."""
    s = check_stream(stream)
    _drained_by(s, lambda: check_rc("synchronize", _pyshmem.aclshmemx_stream_synchronize(s)))
