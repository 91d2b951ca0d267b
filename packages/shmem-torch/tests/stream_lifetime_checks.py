"""Checks, run inside a 2-PE job, that shmem_torch's on-stream calls keep their tensors
alive until the stream has run them.

Each check first blocks the stream with an on-stream wait on a local signal word, so
the operation behind it cannot run until the check releases the wait.  Meanwhile the
check drops its temporary tensor and allocates new ones of the same size, which reuse
its memory if nothing holds it (the old defect: the peer then received their data)."""

import gc
import traceback
import weakref

import torch

NUMEL = 512  # 4 KiB of int64: the allocator hands freed blocks of this size out again
CHECKS = []


def check(fn):
    CHECKS.append(fn)
    return fn


def names():
    return [fn.__name__ for fn in CHECKS]


def run():
    """Runs every check on this PE; returns {name: ("ok", None) | ("fail", traceback)}."""
    import shmem_torch as st
    from shmem import testing

    torch.set_num_threads(1)
    results = {}
    for fn in CHECKS:
        try:
            fn()
            st.barrier()
            results[fn.__name__] = ("ok", None)
        except BaseException:
            results[fn.__name__] = ("fail", traceback.format_exc())
            testing.exit_pe(results)  # the peers may be inside a barrier this PE skips
    return results


def _pes():
    from shmem import core

    me, n = core.my_pe(), core.n_pes()
    return me, (me + 1) % n, (me - 1) % n


def _unblock(sig, stream):
    """Sets this PE's own signal word from another stream, then waits for ``stream``."""
    from shmem import core

    with core.Stream() as other:
        core.signal_op(core.Buffer(sig.data_ptr(), 4), 1, core.SignalOp.SIGNAL_SET, core.my_pe(), other)
        other.synchronize()
    stream.synchronize()


def _reuse_freed_memory():
    gc.collect()
    return [torch.full((NUMEL,), -1, dtype=torch.int64) for _ in range(16)]


@check
def put_of_a_temporary_source():
    import shmem_torch as st
    from shmem import core

    me, nxt, prv = _pes()
    dst = st.zeros(NUMEL, dtype=torch.int64)
    sig = st.zeros(1, dtype=torch.int32)
    st.barrier()
    with core.Stream() as s:
        st.signal_wait_until(sig, "eq", 1, stream=s)
        src = torch.full((NUMEL,), 7 + me, dtype=torch.int64)
        alive = weakref.ref(src)
        st.put(dst, src, nxt, stream=s)
        del src
        fresh = _reuse_freed_memory()
        held = alive() is not None
        _unblock(sig, s)
    st.barrier()
    got = dst.clone()
    del fresh
    gc.collect()
    released = alive() is None
    st.barrier()
    st.aclshmem_free_tensor(sig)
    st.aclshmem_free_tensor(dst)
    assert torch.equal(got, torch.full((NUMEL,), 7 + prv, dtype=torch.int64)), got[:4].tolist()
    assert held, "the source tensor was freed before the stream ran the put"
    assert released, "the source tensor is still held after the stream ran the put"


@check
def put_signal_of_a_temporary_source():
    import shmem_torch as st
    from shmem import core

    me, nxt, prv = _pes()
    dst = st.zeros(NUMEL, dtype=torch.int64)
    arrived = st.zeros(1, dtype=torch.int32)
    sig = st.zeros(1, dtype=torch.int32)
    st.barrier()
    with core.Stream() as s:
        st.signal_wait_until(sig, "eq", 1, stream=s)
        st.put_signal(dst, torch.full((NUMEL,), 100 + me, dtype=torch.int64), arrived, 1, "set", nxt, stream=s)
        fresh = _reuse_freed_memory()
        _unblock(sig, s)
    st.signal_wait_until(arrived, "eq", 1)
    got = dst.clone()
    del fresh
    st.barrier()
    st.aclshmem_free_tensor(sig)
    st.aclshmem_free_tensor(arrived)
    st.aclshmem_free_tensor(dst)
    assert torch.equal(got, torch.full((NUMEL,), 100 + prv, dtype=torch.int64)), got[:4].tolist()


@check
def get_into_a_temporary_destination():
    import shmem_torch as st
    from shmem import core

    me, nxt, prv = _pes()
    src = st.full(NUMEL, 50 + me, dtype=torch.int64)
    sig = st.zeros(1, dtype=torch.int32)
    st.barrier()
    with core.Stream() as s:
        st.signal_wait_until(sig, "eq", 1, stream=s)
        dst = torch.zeros(NUMEL, dtype=torch.int64)
        alive = weakref.ref(dst)
        st.get(dst, src, nxt, stream=s)
        del dst
        gc.collect()
        held = alive()
        ok = held is not None
        del held
        _unblock(sig, s)
    st.barrier()
    st.aclshmem_free_tensor(sig)
    st.aclshmem_free_tensor(src)
    assert ok, "the destination tensor was freed before the stream ran the get"
