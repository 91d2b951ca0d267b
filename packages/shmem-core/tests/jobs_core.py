"""Checks of shmem.core run as one 4-PE job (see test_core.py)."""

import re
import threading

import numpy as np

from harness import Checks, raises, ring
from shmem import _pyshmem, core
from shmem.core import AclshmemError, AclshmemInvalid, ComparisonType, MemType, SignalOp

NPES = 4
checks = Checks()


def main():
    return checks.run()


def me_n():
    return core.my_pe(), core.n_pes()


@checks
def identity():
    me, n = me_n()
    assert n == NPES and 0 <= me < n
    assert core.team_my_pe(core.ACLSHMEM_TEAM_WORLD) == me
    assert core.team_n_pes(core.ACLSHMEM_TEAM_WORLD) == n
    for bad_team in (2047, -1, 5, 2 ** 40):
        assert core.team_my_pe(bad_team) == -1
        assert core.team_n_pes(bad_team) == -1
    for bad in (True, "0", 1.0, None):
        raises(AclshmemInvalid, core.team_my_pe, bad)
        raises(AclshmemInvalid, core.team_n_pes, bad)
    assert core.init_status() is core.InitStatus.INITIALIZED
    assert core.current_instance() == 0
    return me


@checks
def version_and_unique_ids():
    assert re.fullmatch(r"libaclshmem_version=\d+\.\d+", core.get_version())
    a = core.get_unique_id()
    b = core.get_unique_id(empty=True)
    assert isinstance(a, bytes) and len(a) == 136 and a != b
    uid = core.UniqueID.from_bytes(a)
    assert core.UniqueID is core.UniqueId
    assert uid.to_bytes() == a and uid.version == _pyshmem.ACLSHMEM_UNIQUEID_VERSION
    assert len(uid.internal) == 124


@checks
def buffer_allocation():
    b = core.buffer(1000)
    assert isinstance(b, core.Buffer) and b.length == 1000 and len(b) == 1000
    assert b.owned and b.instance_id == 0 and not b.release_called
    assert b.mem_type is MemType.DEVICE_SIDE
    base = _pyshmem.aclshmemx_get_heap_base(MemType.DEVICE_SIDE)
    assert base and b.addr >= base
    c = core.buffer(10, release=True, except_on_del=False, mem_type=MemType.DEVICE_SIDE)
    assert c.addr != b.addr
    core.free(c)
    core.free(b)
    assert b.release_called and c.release_called


@checks
def buffer_bad_inputs():
    for bad in (0, -1, True, 1.5, "8", None):
        raises(AclshmemInvalid, core.buffer, bad)
    raises(AclshmemInvalid, core.buffer, 8, mem_type="DEVICE_SIDE")
    raises(AclshmemInvalid, core.buffer, 8, mem_type=7)
    raises(AclshmemInvalid, core.buffer, 8, mem_type=SignalOp.SIGNAL_ADD)
    err = raises(AclshmemError, core.buffer, 1 << 40)  # far beyond the heap, on every PE
    assert err.msg and "buffer" in err.msg
    b = core.buffer(8)  # the heap is still usable
    core.free(b)


@checks
def host_side_heap():
    me, n = me_n()
    b = core.buffer(256, mem_type=MemType.HOST_SIDE)
    assert b.mem_type is MemType.HOST_SIDE
    base = _pyshmem.aclshmemx_get_heap_base(MemType.HOST_SIDE)
    assert base and b.addr >= base
    b.numpy()[:] = me
    core.barrier_all()
    right = (me + 1) % n
    assert core.get_peer_buffer(b, right).numpy()[0] == right
    out = core.buffer(256)
    core.get(out, b, right, 0)
    core.synchronize(0)
    assert (out.numpy() == right).all()
    core.barrier_all()
    core.free(out)
    core.free(b)


@checks
def calloc_and_align():
    dirty = core.buffer(128)
    dirty.numpy()[:] = 0xAB
    core.free(dirty)
    c = core.calloc(16, 8)
    assert c.length == 128 and c.owned and not c.numpy().any()
    a = core.align(4096, 100)
    assert a.addr % 4096 == 0 and a.length == 100
    h = core.align(64, 8, mem_type=MemType.HOST_SIDE)
    assert h.addr % 64 == 0 and h.mem_type is MemType.HOST_SIDE
    hc = core.calloc(3, 5, mem_type=MemType.HOST_SIDE)
    assert hc.length == 15 and not hc.numpy().any()
    for args in ((0, 8), (8, 0), (True, 1), (1, True), (-1, 4), (2 ** 33, 2 ** 33), (1.0, 8)):
        raises(AclshmemInvalid, core.calloc, *args)
    raises(AclshmemInvalid, core.calloc, 1, 8, mem_type=3)
    for args in ((3, 8), (0, 8), (8, 0), (-8, 8), (True, 8), (8, 2 ** 64)):
        raises(AclshmemInvalid, core.align, *args)
    for b in (hc, h, a, c):
        core.free(b)


@checks
def free_rules():
    me, _ = me_n()
    b = core.buffer(64)
    peer = core.get_peer_buffer(b, me)
    ext = core.Buffer(b.addr, 8)
    assert ext.instance_id is None and not ext.owned
    raises(AclshmemInvalid, core.free, ext, match="own")
    raises(AclshmemInvalid, core.free, peer, match="own")
    raises(AclshmemInvalid, core.free, "not a buffer")
    raises(AclshmemInvalid, core.free, None)
    core.free(b)
    raises(AclshmemInvalid, core.free, b, match="freed")  # double free
    assert peer.release_called  # the peer view follows its origin
    raises(AclshmemInvalid, core.get_peer_buffer, b, 0, match="freed")
    raises(AclshmemInvalid, core.get_peer_buffer, peer, 0, match="freed")
    raises(AclshmemInvalid, core.put, b, ext, 0, 0)
    raises(AclshmemInvalid, core.get, ext, peer, 0, 0)
    raises(AclshmemInvalid, b.numpy)


@checks
def buffer_protocol_and_numpy():
    b = core.buffer(64)
    mv = memoryview(b)
    assert mv.nbytes == 64 and mv.readonly is False
    b.view()[0:4] = b"abcd"
    assert bytes(b)[:4] == b"abcd"
    arr = b.numpy("float64")
    assert arr.shape == (8,)
    arr[:] = 1.5
    assert b.view("d")[3] == 1.5
    assert np.frombuffer(b, dtype=np.uint8).shape == (64,)
    assert core.Buffer(b.addr, 64) == b and hash(core.Buffer(b.addr, 64)) == hash(b)
    assert core.Buffer(b.addr, 64, MemType.HOST_SIDE) != b
    core.free(b)


@checks
def buffer_constructor_checks():
    for args in ((0, 8), (-8, 8), (True, 8), (8, 0), (8, -1), (8, True), (2 ** 63, 8), (8, 2 ** 64),
                 (8.0, 8), ("8", 8), (None, 8)):
        raises(AclshmemInvalid, core.Buffer, *args)
    raises(AclshmemInvalid, core.Buffer, 8, 8, "HOST_SIDE")
    x = core.Buffer(2 ** 63 - 1, 1)
    assert x.addr == 2 ** 63 - 1 and x.instance_id is None and not x.release_called
    for attr in ("owned", "instance_id", "release_called", "addr", "length", "mem_type"):
        raises(AttributeError, setattr, x, attr, 1)


@checks
def peer_buffers():
    me, n = me_n()
    b = core.buffer(64)
    b.numpy("int64")[:] = me * 100 + np.arange(8)
    core.barrier_all()
    for pe in range(n):
        p = core.get_peer_buffer(b, pe)
        assert not p.owned and p.instance_id == 0 and p.length == 64
        assert list(p.numpy("int64")) == [pe * 100 + i for i in range(8)]
    assert core.get_peer_buffer(b, me).addr == b.addr
    for bad in (n, -1, 1000):
        raises(AclshmemError, core.get_peer_buffer, b, bad)
    raises(AclshmemInvalid, core.get_peer_buffer, b, True)
    raises(AclshmemInvalid, core.get_peer_buffer, b, "0")
    raises(AclshmemInvalid, core.get_peer_buffer, 12345, 0)
    raises(AclshmemError, core.get_peer_buffer, core.Buffer(8, 8), 0)  # not a symmetric address
    core.barrier_all()
    core.free(b)


@checks
def put_get_default_stream():
    me, n, right, left = ring()
    src = core.buffer(256)
    dst = core.calloc(256, 1)
    src.numpy()[:] = me
    core.barrier_all()
    core.put(dst, src, right)  # stream None: the default stream
    core.synchronize(0)
    core.barrier_all()
    assert (dst.numpy() == left).all()
    local = core.buffer(256)
    core.get(local, src, right, 0)
    core.synchronize()
    assert (local.numpy() == right).all()
    # A private (non-symmetric) source: any local memory will do.
    private = np.full(16, 200 + me, dtype=np.uint8)
    core.barrier_all()
    core.put(dst, core.Buffer(private.ctypes.data, private.nbytes), right, 0)
    core.synchronize(0)
    core.barrier_all()
    assert (dst.numpy()[:16] == 200 + left).all() and (dst.numpy()[16:] == left).all()
    core.barrier_all()
    for b in (local, dst, src):
        core.free(b)


@checks
def put_get_on_streams():
    me, n, right, left = ring()
    src = core.buffer(64)
    d1 = core.calloc(64, 1)
    d2 = core.calloc(64, 1)
    src.numpy()[:] = 10 + me
    core.barrier_all()
    with core.Stream() as s:
        assert isinstance(s.handle, int) and s.handle > 0 and not s.closed
        core.put(d1, src, right, s)          # the Stream object
        core.put(d2, src, right, s.handle)   # or its handle
        s.synchronize()
        core.barrier_all()
        assert (d1.numpy() == 10 + left).all() and (d2.numpy() == 10 + left).all()
        got = core.buffer(64)
        core.get(got, src, left, s.handle)
        core.synchronize(s.handle)
        assert (got.numpy() == 10 + left).all()
    assert s.closed
    s.close()  # closing twice is fine
    raises(AclshmemInvalid, getattr, s, "handle")
    raises(AclshmemInvalid, core.put, d1, src, right, s)
    core.barrier_all()
    for b in (got, d2, d1, src):
        core.free(b)


@checks
def rma_bad_inputs():
    _, n = me_n()
    big = core.buffer(64)
    small = core.buffer(16)
    raises(AclshmemInvalid, core.put, small, big, 0, match="shorter")
    raises(AclshmemInvalid, core.get, small, big, 0, match="shorter")
    for pe in (n, -1, True, 1.0, None, "0"):
        raises(AclshmemInvalid, core.put, big, small, pe)
        raises(AclshmemInvalid, core.get, big, small, pe)
    for s in (-1, True, 1.5, "0"):
        raises(AclshmemInvalid, core.put, big, small, 0, s)
        raises(AclshmemInvalid, core.get, big, small, 0, s)
    raises(AclshmemInvalid, core.put, "dst", small, 0)
    raises(AclshmemInvalid, core.put, big, 3, 0)
    raises(AclshmemInvalid, core.synchronize, None)
    raises(AclshmemInvalid, core.synchronize, -5)
    core.free(small)
    core.free(big)


@checks
def rma_failures_of_the_library_raise():
    """What only the library can refuse (here: a symmetric side that is not in the heap)
    raises AclshmemError with its message, on the checked fast path too, and leaves
    nothing behind for the next call."""
    me, n = me_n()
    right = (me + 1) % n
    src = core.buffer(16)
    private = np.zeros(16, dtype=np.uint8)
    outside = core.Buffer(private.ctypes.data, private.nbytes)  # external: the library checks it
    for _ in range(2):
        err = raises(AclshmemError, core.put, outside, src, right, 0, match="symmetric heap")
        assert err.msg.startswith("put failed: "), err.msg
        raises(AclshmemError, core.get, src, outside, right, match="symmetric heap")
    core.put(src, src, right)  # a good call right after: no stale error
    core.synchronize()
    errors = []

    def failing_in_a_thread():
        try:
            core.put(outside, src, right, 0)
        except AclshmemError as exc:
            errors.append(exc)

    t = threading.Thread(target=failing_in_a_thread)
    t.start()
    t.join()
    assert len(errors) == 1, errors
    core.put(src, src, right, 0)  # this thread's error buffer is its own
    core.synchronize()
    core.barrier_all()
    core.free(src)


@checks
def put_signal_blocking():
    me, n, right, left = ring()
    data = core.calloc(64, 1)
    src = core.buffer(64)
    sig = core.calloc(1, 4)
    total = core.calloc(1, 4)
    src.numpy()[:] = me + 1
    core.barrier_all()
    core.put_signal(data, src, sig, 7, SignalOp.SIGNAL_SET, right)
    core.signal_wait(sig, 7, ComparisonType.CMP_EQ, 0)
    core.synchronize(0)
    assert (data.numpy() == left + 1).all()
    assert sig.numpy("int32")[0] == 7
    core.barrier_all()  # PE 0 has checked its data before everyone writes to it
    core.put_signal(data, src, total, 1, SignalOp.SIGNAL_ADD, 0, stream=None)
    core.barrier_all()
    if me == 0:
        assert total.numpy("int32")[0] == n
    core.barrier_all()
    for b in (total, sig, src, data):
        core.free(b)


@checks
def signal_op_and_wait():
    me, n = me_n()
    right = (me + 1) % n
    sig = core.calloc(1, 4)
    count = core.calloc(1, 4)
    core.barrier_all()
    core.signal_op(sig, 5, SignalOp.SIGNAL_SET, right, 0)
    core.signal_wait(sig, 5, ComparisonType.CMP_EQ, 0)
    core.synchronize(0)
    assert sig.numpy("int32")[0] == 5
    with core.Stream() as s:
        core.signal_op(count, 1, SignalOp.SIGNAL_ADD, 0, s)
        core.quiet(s)
        s.synchronize()
        if me == 0:
            core.signal_wait(count, n, ComparisonType.CMP_GE, s)
            s.synchronize()
            assert count.numpy("int32")[0] == n
    core.barrier_all()
    # Every comparison, each true for the local value 5.
    for cmp, value in ((ComparisonType.CMP_EQ, 5), (ComparisonType.CMP_NE, 4), (ComparisonType.CMP_GT, 4),
                       (ComparisonType.CMP_GE, 5), (ComparisonType.CMP_LT, 6), (ComparisonType.CMP_LE, 5)):
        core.signal_wait(sig, value, cmp, 0)
    core.quiet(0)
    core.synchronize(0)
    core.barrier_all()
    core.free(count)
    core.free(sig)


@checks
def signal_bad_inputs():
    _, n = me_n()
    sig = core.buffer(8)
    data = core.buffer(8)
    tiny = core.Buffer(sig.addr, 2)
    misaligned = core.Buffer(sig.addr + 2, 4)
    SET = SignalOp.SIGNAL_SET
    raises(AclshmemInvalid, core.signal_op, tiny, 1, SET, 0, 0, match="4 bytes")
    raises(AclshmemInvalid, core.signal_op, misaligned, 1, SET, 0, 0, match="aligned")
    raises(AclshmemInvalid, core.signal_op, sig, 1, SET, 0, match="None")  # stream is required
    raises(AclshmemInvalid, core.signal_op, sig, 1, SET, 0, None)
    raises(AclshmemInvalid, core.signal_op, sig, 1, "SET", 0, 0)
    raises(AclshmemInvalid, core.signal_op, sig, 1, 7, 0, 0)
    raises(AclshmemInvalid, core.signal_op, sig, 1, ComparisonType.CMP_EQ, 0, 0)
    raises(AclshmemInvalid, core.signal_op, sig, 2 ** 31, SET, 0, 0)
    raises(AclshmemInvalid, core.signal_op, sig, True, SET, 0, 0)
    raises(AclshmemInvalid, core.signal_op, sig, 1, SET, n, 0)
    raises(AclshmemInvalid, core.signal_op, sig, 1, SET, True, 0)
    raises(AclshmemInvalid, core.signal_op, "sig", 1, SET, 0, 0)
    raises(AclshmemInvalid, core.signal_wait, sig, 1, 9, 0)
    raises(AclshmemInvalid, core.signal_wait, sig, 1, SET, 0)
    raises(AclshmemInvalid, core.signal_wait, sig, 1, ComparisonType.CMP_EQ, None)
    raises(AclshmemInvalid, core.signal_wait, sig, 1, ComparisonType.CMP_EQ, -1)
    raises(AclshmemInvalid, core.signal_wait, tiny, 1, ComparisonType.CMP_EQ, 0)
    raises(AclshmemInvalid, core.put_signal, data, data, tiny, 1, SET, 0)
    raises(AclshmemInvalid, core.put_signal, data, data, misaligned, 1, SET, 0)
    raises(AclshmemInvalid, core.put_signal, data, data, sig, 1, ComparisonType.CMP_EQ, 0)
    raises(AclshmemInvalid, core.put_signal, data, data, sig, 1, SET, -1)
    raises(AclshmemInvalid, core.put_signal, core.Buffer(data.addr, 4), data, sig, 1, SET, 0)
    raises(AclshmemInvalid, core.quiet, None)
    raises(AclshmemInvalid, core.quiet, True)
    raises(AclshmemInvalid, core.quiet, -3)
    core.free(data)
    core.free(sig)


@checks
def barriers_and_sync():
    me, n = me_n()
    core.barrier(core.ACLSHMEM_TEAM_WORLD)
    core.barrier_all()
    core.sync(0)
    core.sync_all()
    core.barrier_on_stream(0, 0)
    core.barrier_all_on_stream(0)
    core.synchronize(0)
    with core.Stream() as s:
        core.barrier_on_stream(0, s.handle)
        core.barrier_all_on_stream(s)
        s.synchronize()
    # A team of the even PEs.
    team = _pyshmem.team_split_strided(0, 0, 2, n // 2)
    if me % 2 == 0:
        assert team > 0 and core.team_n_pes(team) == n // 2 and core.team_my_pe(team) == me // 2
        core.barrier(team)
        core.sync(team)
        core.barrier_on_stream(team, 0)
        core.handle_wait(core.Handle(team), 0)
        core.synchronize(0)
        _pyshmem.team_destroy(team)
        raises(AclshmemInvalid, core.barrier, team, match="live")
        raises(AclshmemInvalid, core.sync, team)
    else:
        assert team == core.ACLSHMEM_TEAM_INVALID


@checks
def barrier_bad_inputs():
    for team in (-1, 2048, True, 1.0, None, "0", 7):
        raises(AclshmemInvalid, core.barrier, team)
        raises(AclshmemInvalid, core.sync, team)
        raises(AclshmemInvalid, core.barrier_on_stream, team, 0)
    for s in (None, -1, True, "0"):
        raises(AclshmemInvalid, core.barrier_on_stream, 0, s)
        raises(AclshmemInvalid, core.barrier_all_on_stream, s)


@checks
def handles():
    h = core.Handle()
    assert h.team_id == core.ACLSHMEM_TEAM_WORLD
    core.handle_wait(h, 0)
    core.synchronize(0)
    with core.Stream() as s:
        core.handle_wait(h, s.handle)
        s.synchronize()
    for bad in (True, 2048, -1, 7, 1.0, "0"):
        raises(ValueError, core.Handle, bad)
    h2 = core.Handle(0)
    raises(ValueError, setattr, h2, "team_id", 9)
    raises(ValueError, setattr, h2, "team_id", False)
    assert h2.team_id == 0
    h2.team_id = core.ACLSHMEM_TEAM_WORLD
    raises(AclshmemInvalid, core.handle_wait, 0, 0)
    raises(AclshmemInvalid, core.handle_wait, h, None)
    raises(AclshmemInvalid, core.handle_wait, h, -1)


@checks
def engine_configs():
    core.set_mte_config(0, 16 * 1024, 0)
    core.set_sdma_config(191 * 1024, 64, 0)
    core.set_rdma_config(190 * 1024, 128, 0)
    core.set_udma_config(189 * 1024, 128, 1)
    E = _pyshmem.OpEngineType
    assert _pyshmem.aclshmemx_get_engine_config(E.MTE) == (0, 16 * 1024, 0)
    assert _pyshmem.aclshmemx_get_engine_config(E.SDMA) == (191 * 1024, 64, 0)
    assert _pyshmem.aclshmemx_get_engine_config(E.ROCE) == (190 * 1024, 128, 0)
    assert _pyshmem.aclshmemx_get_engine_config(E.UDMA) == (189 * 1024, 128, 1)
    core.set_mte_config(2 ** 64 - 1, 2 ** 32 - 1, 2 ** 32 - 1)
    assert _pyshmem.aclshmemx_get_engine_config(E.MTE) == (2 ** 64 - 1, 2 ** 32 - 1, 2 ** 32 - 1)
    for fn in (core.set_mte_config, core.set_sdma_config, core.set_rdma_config, core.set_udma_config):
        for args in ((-1, 128, 0), (2 ** 64, 128, 0), (0, 2 ** 32, 0), (0, 128, -1), (0, 128, 2 ** 32),
                     (True, 128, 0), (0, 128.0, 0), (0, None, 0)):
            raises(AclshmemInvalid, fn, *args)
    raises(AclshmemInvalid, core.set_rdma_config, 0, 127, 0)
    raises(AclshmemInvalid, core.set_udma_config, 0, 127, 0)
    assert _pyshmem.aclshmemx_get_engine_config(E.UDMA) == (189 * 1024, 128, 1)  # unchanged
    core.set_sdma_config(0, 0, 0)  # no minimum for SDMA and MTE
    core.set_mte_config(0, 16 * 1024, 0)


@checks
def instances():
    assert core.current_instance() == 0
    core.set_instance(0)
    with core.multi_instance(0) as iid:
        assert iid == 0 and core.current_instance() == 0
    assert core.current_instance() == 0
    for bad in (True, -1, 255, "0", None):
        raises(AclshmemInvalid, core.set_instance, bad)
        raises(AclshmemInvalid, core.finalize, bad) if bad is not None else None
    raises(AclshmemError, core.set_instance, 3)  # never initialised
    assert core.current_instance() == 0
    ctx = _pyshmem.aclshmemx_instance_ctx_get()
    assert ctx == core.InstanceContext(0) and ctx.id == 0
    raises(AttributeError, setattr, ctx, "id", 3)


@checks
def profiling_off():
    assert core.get_prof() is None  # SHMEM_CYCLE_PROF_PE is not set in this job
    assert core.get_prof(verbose=False) is None
    core.show_prof()
    raises(AclshmemInvalid, core.get_prof, "yes")
    raises(AclshmemInvalid, core.get_prof, 1)
