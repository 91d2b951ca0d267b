"""A Stream that is garbage-collected while open closes itself, with a ResourceWarning
like an unclosed file; as one 2-PE job (test_stream_gc.py).

"Closed" is checked for real: the library no longer knows the handle, and the process
has one thread fewer (the stream's worker)."""

import ctypes
import gc
import os
import sys
import time
import warnings

from harness import Checks
from shmem import _native, _pyshmem, core, testing
from shmem.core import stream as stream_mod

NPES = 2
checks = Checks()


def main():
    return checks.run()


def _threads():
    return len(os.listdir("/proc/self/task"))


def _alive(handle):
    """Whether the library still knows stream ``handle`` (synchronize of a destroyed
    stream fails with INVALID_PARAM)."""
    rc = _pyshmem.aclshmemx_stream_synchronize(handle)
    _pyshmem.aclshmemx_clear_last_error()
    return rc == _pyshmem.ACLSHMEM_SUCCESS


def _resource_warnings(caught):
    return [w for w in caught if issubclass(w.category, ResourceWarning)]


def _slow_kernel(stream, seconds):
    """Enqueues a kernel that sleeps: the work behind it is still queued for a while."""
    ffi, lib = _native.load()
    fn = ffi.callback("aclshmemx_kernel_fn", lambda b, d, a: time.sleep(seconds))
    assert lib.aclshmemx_kernel_launch(ffi.cast("aclrtStream", stream.handle), fn, 1, ffi.NULL) == 0
    return fn  # the caller keeps the callback alive until the stream ran it


@checks
def collected_stream_warns_runs_its_work_and_ends_its_worker():
    me, peer = core.my_pe(), (core.my_pe() + 1) % core.n_pes()
    dst = core.calloc(1, 64)
    src = core.Buffer(ctypes.addressof(payload := ctypes.create_string_buffer(bytes([me + 1]) * 64, 64)), 64)
    threads = _threads()
    stream = core.Stream()
    handle = stream.handle
    assert _threads() == threads + 1
    kernel = _slow_kernel(stream, 0.3)
    core.put(dst, src, peer, stream)  # queued behind the sleep: not run yet
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        del stream
        gc.collect()
    found = _resource_warnings(caught)
    assert len(found) == 1 and f"unclosed Stream(handle={handle:#x})" in str(found[0].message), found
    assert not _alive(handle) and _threads() == threads
    # Closing ran the queued put: PE peer's dst holds our bytes now, before any barrier.
    there = core.get_peer_buffer(dst, peer)
    assert bytes(there.view()) == bytes([me + 1]) * 64
    core.barrier_all()
    del kernel, payload
    core.free(dst)


@checks
def collected_in_a_reference_cycle():
    threads = _threads()
    stream = core.Stream()
    stream.me = stream  # only the cycle collector can find it
    handle = stream.handle
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        del stream
        assert _alive(handle)
        gc.collect()
    assert len(_resource_warnings(caught)) == 1
    assert not _alive(handle) and _threads() == threads


@checks
def closed_streams_give_no_warning():
    threads = _threads()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with core.Stream() as first:
            first.synchronize()
        second = core.Stream()
        second.close()
        second.close()  # idempotent
        assert first.closed and second.closed
        del first, second
        gc.collect()
    assert _resource_warnings(caught) == []
    assert _threads() == threads


@checks
def collected_on_a_stream_worker_is_closed_by_the_next_python_call():
    """The last reference dies inside a kernel (on another stream's worker thread, which
    must not wait for streams): the warning comes at once, the close at the next stream
    call of a Python thread."""
    threads = _threads()
    victim = core.Stream()
    handle = victim.handle
    holder = [victim]
    del victim
    ffi, lib = _native.load()
    fn = ffi.callback("aclshmemx_kernel_fn", lambda b, d, a: holder.clear())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with core.Stream() as host:
            assert lib.aclshmemx_kernel_launch(ffi.cast("aclrtStream", host.handle), fn, 1, ffi.NULL) == 0
            assert _pyshmem.aclshmemx_stream_synchronize(host.handle) == 0  # the raw call: nothing closed
            assert holder == [] and len(_resource_warnings(caught)) == 1
            assert _alive(handle), "destroyed on the worker thread"
            host.synchronize()  # a stream call of this thread closes it
            assert not _alive(handle)
    assert _threads() == threads


@checks
def an_error_filter_still_closes():
    """With ResourceWarning as an error (pytest -W error), the destructor cannot raise:
    Python reports the warning as unraisable, and the stream is closed anyway."""
    reported = []
    old_hook = sys.unraisablehook
    sys.unraisablehook = reported.append
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", ResourceWarning)
            stream = core.Stream()
            handle = stream.handle
            del stream
            gc.collect()
    finally:
        sys.unraisablehook = old_hook
    assert len(reported) == 1 and isinstance(reported[0].exc_value, ResourceWarning)
    assert not _alive(handle)


@checks
def finalize_closes_the_streams_of_its_instance():
    """Finalize destroys an instance's streams; their Stream objects are closed then, so a
    later close or collection does nothing (and gives no warning)."""
    threads = _threads()
    uid = testing.broadcast(core.get_unique_id() if core.my_pe() == 0 else None)
    core.init(uid=uid, rank=core.my_pe(), nranks=core.n_pes(), mem_size=1 << 20, instance_id=3)
    with core.multi_instance(3):
        stream = core.Stream()
        other_instance = stream.handle
    kept = core.Stream()  # of instance 0: lives on
    core.finalize(3)
    assert stream.closed and not kept.closed and not _alive(other_instance)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        stream.close()
        del stream
        gc.collect()
    assert _resource_warnings(caught) == []
    kept.close()
    assert _threads() == threads  # instance 3's threads went with it, the stream's worker too
    assert stream_mod._streams == {}

