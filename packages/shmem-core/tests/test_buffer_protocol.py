"""Buffer as a Python buffer: memoryview, NumPy, DLPack, slicing, and no use after free or
finalize.

The 2-PE checks live in jobs_buffer.py (one job runs them all).  The finalize cases run
their own jobs: a view kept past finalize is the point of the test."""

import pytest

import jobs_buffer
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
