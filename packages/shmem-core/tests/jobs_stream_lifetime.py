"""The operands of on-stream calls live until the stream has run them, as one 2-PE job.

Each check blocks a stream with an on-stream wait on a local signal word first, so the
operation behind it cannot run until the check releases the wait: what happens to a
dropped operand in between is then certain, not a race.  A source Buffer here describes
memory of a ctypes array, and a finalizer scribbles over that memory when the Buffer
dies, as a reuse of freed memory would (without ever freeing it, so old code gives wrong
data, not a crash)."""

import ctypes
import gc
import time
import weakref

from harness import Checks
from shmem import core
from shmem.core import stream as stream_mod

NPES = 2
checks = Checks()
PAYLOAD = bytes(range(1, 65))


def main():
    return checks.run()


def _temporary_source(payload):
    """(Buffer over a private copy of payload, weakref to it): when the Buffer dies, its
    memory is overwritten with 0xEE."""
    mem = ctypes.create_string_buffer(payload, len(payload))
    buf = core.Buffer(ctypes.addressof(mem), len(payload))
    weakref.finalize(buf, ctypes.memset, mem, 0xEE, len(payload))
    return buf, weakref.ref(buf)


def _block(stream):
    """A symmetric signal word, and a wait for it enqueued on stream."""
    sig = core.calloc(1, 4)
    core.signal_wait(sig, 1, core.ComparisonType.CMP_EQ, stream)
    return sig


def _unblock(sig, stream):
    """Sets this PE's own signal word from another stream: the blocked stream goes on."""
    with core.Stream() as other:
        core.signal_op(sig, 1, core.SignalOp.SIGNAL_SET, core.my_pe(), other)
        other.synchronize()
    if isinstance(stream, core.Stream):
        stream.synchronize()
    else:
        core.synchronize(stream)


def _churn():
    gc.collect()
    return [ctypes.create_string_buffer(len(PAYLOAD)) for _ in range(8)]  # as a program would


def _put_of_a_dropped_source(stream):
    me, n = core.my_pe(), core.n_pes()
    dst = core.calloc(1, len(PAYLOAD))
    sig = _block(stream)
    src, alive = _temporary_source(PAYLOAD)
    core.put(dst, src, (me + 1) % n, stream)
    del src
    fresh = _churn()
    held = alive() is not None
    _unblock(sig, stream)
    core.barrier_all()
    got = bytes(dst.numpy())
    del fresh
    gc.collect()
    released = alive() is None
    core.barrier_all()
    core.free(sig)
    core.free(dst)
    assert got == PAYLOAD, f"the target received {got.hex()}, not the source's data"
    assert held, "the source Buffer was collected before the stream ran the put"
    assert released, "the source Buffer is still held after the stream ran the put and was synchronized"


@checks
def put_on_a_stream_keeps_its_dropped_source():
    with core.Stream() as s:
        _put_of_a_dropped_source(s)


@checks
def put_on_the_default_stream_keeps_its_dropped_source():
    _put_of_a_dropped_source(0)


@checks
def get_on_a_stream_keeps_its_dropped_destination():
    me, n = core.my_pe(), core.n_pes()
    src = core.buffer(len(PAYLOAD))
    src.numpy()[:] = list(PAYLOAD)
    core.barrier_all()
    with core.Stream() as s:
        sig = _block(s)
        mem = ctypes.create_string_buffer(len(PAYLOAD))
        dst = core.Buffer(ctypes.addressof(mem), len(PAYLOAD))
        alive = weakref.ref(dst)
        core.get(dst, src, (me + 1) % n, s)
        del dst
        gc.collect()
        held = alive() is not None
        _unblock(sig, s)
    got = mem.raw
    core.barrier_all()
    core.free(sig)
    core.free(src)
    assert held, "the destination Buffer was collected before the stream ran the get"
    assert got == PAYLOAD, got.hex()


@checks
def the_stream_releases_what_it_ran_without_a_synchronize():
    """The completion marker, not only a synchronize, ends the holding: a program that
    never synchronizes does not accumulate every source it ever sent."""
    me, n = core.my_pe(), core.n_pes()
    dst = core.calloc(1, len(PAYLOAD))
    with core.Stream() as s:
        refs = []
        for _ in range(20):
            src, alive = _temporary_source(PAYLOAD)
            core.put(dst, src, (me + 1) % n, s)
            refs.append(alive)
            del src
        deadline = time.monotonic() + 30
        while any(r() is not None for r in refs) and time.monotonic() < deadline:
            time.sleep(0.01)
            # one more operation: the sources behind a marker already queued get the next one
            stream_mod.keep_alive(s, object())
            gc.collect()
        left = sum(r() is not None for r in refs)
        s.synchronize()
    core.barrier_all()
    core.free(dst)
    assert left == 0, f"{left} of 20 sources still held though the stream ran their puts"


@checks
def signal_words_of_on_stream_calls_are_held():
    word = core.calloc(1, 4)
    with core.Stream() as s:
        sig = _block(s)
        view = core.Buffer(word.addr, 4)  # a temporary descriptor of the word
        alive = weakref.ref(view)
        core.signal_op(view, 5, core.SignalOp.SIGNAL_SET, core.my_pe(), s)
        del view
        gc.collect()
        held = alive() is not None
        _unblock(sig, s)
    core.barrier_all()
    value = word.numpy("int32")[0]
    core.free(sig)
    core.free(word)
    assert held, "the signal's Buffer was collected before the stream ran the signal_op"
    assert value == 5


@checks
def keep_alive_checks_its_stream_argument():
    for bad in ("0", -1, 1.0, True):
        try:
            stream_mod.keep_alive(bad, object())
        except core.AclshmemInvalid:
            continue
        raise AssertionError(f"keep_alive accepted stream {bad!r}")
    stream_mod.keep_alive(0)  # nothing to hold: nothing happens
    with core.Stream() as s:
        handle = s.handle
    # a stream that is gone: the objects are held for good (never released too early)
    token = object()
    stream_mod.keep_alive(handle, token)
    assert any(token in objects for _ticket, objects in stream_mod._held_forever)
