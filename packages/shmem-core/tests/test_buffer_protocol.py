"""Buffer as a Python buffer: memoryview, NumPy, DLPack, slicing, and no use after free or
finalize.

The 2-PE checks live in jobs_buffer.py (one job runs them all).  The finalize cases run
their own jobs: a view kept past finalize is the point of the test."""

import pytest

import jobs_buffer
import jobs_exporter_fallback
from harness import assert_check, pytest_params
from shmem import testing


@pytest.fixture(scope="module")
def results():
    return testing.run_pes(jobs_buffer.NPES, jobs_buffer.main, timeout=180, mem_size=1 << 20)


@pytest.mark.parametrize("name", pytest_params(jobs_buffer.checks))
def test_buffer(results, name):
    assert_check(results, name)


def keep_views_past_finalize():
    """Keeps a memoryview, a NumPy array and a peer view past finalize, then uses them."""
    import warnings

    import numpy as np

    from shmem import core, testing

    core.init(mem_size=1 << 20)
    me, n = core.my_pe(), core.n_pes()
    b = core.buffer(4096)
    b.numpy()[:] = me + 1
    core.barrier_all()
    mv = memoryview(b)
    arr = b.numpy("int32")
    peer = np.frombuffer(core.get_peer_buffer(b, (me + 1) % n), dtype=np.uint8)
    assert peer[0] == (me + 1) % n + 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        core.finalize()
    # Before: reading mv after finalize killed the process (SIGSEGV, exit 139).
    seen = (int(arr[5]), int(peer[100]), mv[0])  # NumPy first: it needs no new Buffer feature
    mv[0] = 1  # reaches nobody
    arr[:] = 7
    peer[:] = 3
    messages = [str(w.message) for w in caught]
    assert any("read zeros" in m for m in messages), messages
    assert b.release_called
    # A new life of the instance gets fresh memory; the stale views stay apart from it.
    uid = testing.broadcast(core.get_unique_id() if me == 0 else None)
    core.init(uid=uid, rank=me, nranks=n, mem_size=1 << 20)
    c = core.buffer(4096)
    c.numpy()[:] = 5
    arr[:] = 8
    assert (c.numpy() == 5).all()
    core.free(c)
    core.finalize()
    return seen


def test_views_survive_finalize():
    assert testing.run_pes(2, keep_views_past_finalize, init=False, timeout=120) == [(0, 0, 0)] * 2


def dlpack_past_finalize():
    import numpy as np

    from shmem import core

    core.init(mem_size=1 << 20)
    b = core.buffer(64)
    b[0] = 1
    a = np.from_dlpack(b)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        core.finalize()
    return int(a[0])


def test_dlpack_view_survives_finalize():
    assert testing.run_pes(2, dlpack_past_finalize, init=False, timeout=120) == [0, 0]


def torch_frombuffer_past_finalize():
    """torch.frombuffer keeps no export, only a reference to what exported the memory: it
    must count as a view all the same."""
    import warnings

    import torch

    from shmem import core

    core.init(mem_size=1 << 20)
    b = core.buffer(4096)
    b[0] = 1
    t = torch.frombuffer(b, dtype=torch.uint8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        core.finalize()
    t[1] = 2  # reaches nobody (before: a segmentation fault, the heap was unmapped under it)
    return int(t[0]), int(t.sum())


def test_torch_frombuffer_view_survives_finalize():
    pytest.importorskip("torch")
    assert testing.run_pes(2, torch_frombuffer_past_finalize, init=False, timeout=120) == [(0, 2)] * 2


def finalize_and_record():
    """core.finalize(): (its AclshmemError's text or None, the warnings' texts)."""
    import warnings

    from shmem import core

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            core.finalize()
            error = None
        except core.AclshmemError as exc:
            error = str(exc)
    return error, [str(w.message) for w in caught]


def views_survive_a_failed_finalize():
    """PE 1 leaves without finalizing; PE 0's finalize fails (its last barrier meets a dead
    PE) but unmaps the heaps all the same; its views must then read zeros."""
    import numpy as np

    from shmem import _pyshmem, core, testing

    core.init(mem_size=1 << 20)
    me = core.my_pe()
    b = core.buffer(8192)
    b.numpy()[:] = me + 1
    core.barrier_all()
    if me == 1:
        testing.exit_pe("left without finalizing")
    arr = b.numpy("int32")
    mv = memoryview(b)
    dl = np.from_dlpack(b[4096:])
    peer = np.frombuffer(core.get_peer_buffer(b, 1), dtype=np.uint8)
    views = [arr, np.asarray(mv), dl, peer]
    try:
        import torch
    except ImportError:
        pass
    else:
        views.append(torch.from_dlpack(b[:64]).numpy())
    assert [int(v[0]) for v in views] == [0x01010101, 1, 1, 2] + [1] * (len(views) - 4)
    error, messages = finalize_and_record()
    # Before: the zero pages were mapped only after a successful finalize, and this read
    # was a segmentation fault.
    seen = [int(v.max()) for v in views] + [mv[100]]
    mv[0] = 9  # writes reach nobody
    arr[:] = 7
    peer[:] = 3
    warned = [m for m in messages if "read zeros" in m]
    finalized = _pyshmem.aclshmemx_init_status() == _pyshmem.InitStatus.NOT_INITIALIZED
    return error, seen, len(warned), finalized


def test_views_survive_a_failed_finalize():
    pe0, pe1 = testing.run_pes(2, views_survive_a_failed_finalize, init=False, timeout=120)
    assert pe1 == "left without finalizing"
    error, seen, warned, finalized = pe0
    assert error is not None and "PE 1" in error, error  # finalize's own error reaches the user
    assert seen == [0] * len(seen)
    assert warned == 1 and finalized


def view_of_heap_kept_for_an_abandoned_kernel():
    """A stream kernel that never returns makes finalize abandon it and keep the heaps:
    views of them stay on the real memory (no zero pages over it, no 'unsafe' warning)."""
    import time

    from shmem import _native, _pyshmem, core

    uid = core.get_unique_id()
    attr = _pyshmem.InitAttr()
    assert _pyshmem.aclshmemx_set_attr_uniqueid_args(0, 1, 1 << 20, uid, attr) == 0
    attr.option_attr.control_operation_timeout = 1  # seconds: finalize gives up on the kernel soon
    assert _pyshmem.aclshmemx_init_attr(_pyshmem.InitMode.UNIQUEID, attr) == 0
    b = core.buffer(4096)
    b[0] = 42
    mv = memoryview(b)
    ffi = _native.get_ffi()
    stuck = ffi.callback("aclshmemx_kernel_fn", lambda block, blocks, arg: time.sleep(30))
    assert _native.lib.aclshmemx_kernel_launch(ffi.NULL, stuck, 1, ffi.NULL) == 0
    error, messages = finalize_and_record()
    messages = [m for m in messages if "view(s)" in m]
    mv[1] = 43
    return error, mv[0], bytes(mv[:2]), messages


def test_view_of_heap_kept_for_an_abandoned_kernel():
    [(error, first, both, messages)] = testing.run_pes(1, view_of_heap_kept_for_an_abandoned_kernel,
                                                       init=False, timeout=120)
    assert "kernel" in error, error
    assert first == 42 and both == bytes([42, 43])  # the real (kept) memory, not zero pages
    assert len(messages) == 1 and "keeps mapped for a stream kernel" in messages[0], messages
    assert "do not use" not in messages[0], messages


def test_views_are_counted_on_the_fallback_exporter():
    results = testing.run_pes(2, jobs_exporter_fallback.counted_views_on_the_fallback, init=False, timeout=120)
    assert results == [(True, True, True, 0)] * 2
