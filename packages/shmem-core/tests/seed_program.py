"""A SHMEM program written only from the Python API reference (the seed), run as N plain
processes by test_seed_program.py:

    python seed_program.py RANK NRANKS RENDEZVOUS_DIR

Rank 0 makes the unique ID with core.get_unique_id() and hands the bytes to the other
ranks (here through a file in RENDEZVOUS_DIR; torch.distributed or MPI would do the same
job), then every rank calls core.init(uid=..., rank=..., nranks=..., mem_size=...,
initializer_method="uid").  Prints "SEED PROGRAM OK <rank>" when every step passed.
"""

import os
import sys
import time

import numpy as np

import shmem
import shmem._pyshmem as ash
import shmem.core as core
from shmem.core import AclshmemError, AclshmemInvalid, Buffer, ComparisonType, MemType, SignalOp

MEM_SIZE = 64 * 1024 * 1024


def expect(exc, fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except exc:
        return
    raise AssertionError(f"{fn.__name__}{args} did not raise {exc.__name__}")


def share_unique_id(rank, directory):
    path = os.path.join(directory, "uid.bin")
    if rank == 0:
        uid = core.get_unique_id()
        with open(path + ".tmp", "wb") as f:
            f.write(uid)
        os.replace(path + ".tmp", path)
        return uid
    deadline = time.time() + 60
    while not os.path.exists(path):
        if time.time() > deadline:
            raise TimeoutError("no unique ID from rank 0")
        time.sleep(0.01)
    with open(path, "rb") as f:
        return f.read()


def main():
    rank, nranks, directory = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    assert shmem.set_conf_store_tls(False, "") == 0  # as the original's tests do
    uid = share_unique_id(rank, directory)
    assert len(uid) == 136
    core.init(uid=uid, rank=rank, nranks=nranks, mem_size=MEM_SIZE, initializer_method="uid")
    assert core.init_status() == core.InitStatus.INITIALIZED
    me, n = core.my_pe(), core.n_pes()
    assert (me, n) == (rank, nranks)
    right, left = (me + 1) % n, (me - 1) % n
    assert core.get_version().startswith("libaclshmem_version=")

    # Buffer semantics and allocation
    buf = core.buffer(1024)
    assert buf.owned and buf.instance_id == 0 and not buf.release_called and buf.length == 1024
    assert buf.mem_type == MemType.DEVICE_SIDE
    ext = Buffer(buf.addr, 16)
    assert not ext.owned and ext.instance_id is None
    expect(AclshmemInvalid, core.free, ext)
    expect(AclshmemInvalid, Buffer, 0, 16)
    expect(AclshmemInvalid, Buffer, 16, 0)
    expect(AclshmemInvalid, Buffer, True, 16)
    zeros = core.calloc(32, 4)
    assert not np.frombuffer(memoryview(zeros).cast("B"), dtype=np.uint8).any()
    aligned = core.align(1024, 64, MemType.DEVICE_SIDE)
    assert aligned.addr % 1024 == 0
    host = core.buffer(64, mem_type=MemType.HOST_SIDE)

    # put / get on the default stream
    src = np.frombuffer(memoryview(buf).cast("B"), dtype=np.int32)
    src[:] = me
    core.barrier_all()
    dst = core.calloc(256, 4)
    core.put(dst, buf, right, 0)
    core.synchronize(0)
    core.barrier_all()
    assert (dst.numpy("int32") == left).all()
    back = core.buffer(1024)
    core.get(back, buf, right, None)
    core.synchronize()
    assert (back.numpy("int32") == right).all()

    # put / get on a Stream
    with core.Stream() as stream:
        core.barrier_all()
        src[:] = 1000 + me
        core.barrier_all()
        core.put(dst, buf, right, stream.handle)
        stream.synchronize()
        core.barrier_all()
        assert (dst.numpy("int32") == 1000 + left).all()
        core.get(back, buf, left, stream)
        stream.synchronize()
        assert (back.numpy("int32") == 1000 + left).all()

        # put_signal / signal_op / signal_wait
        sig = core.calloc(1, 4)
        core.barrier_all()
        core.put_signal(dst, buf, sig, 1, SignalOp.SIGNAL_SET, right)
        core.signal_wait(sig, 1, ComparisonType.CMP_EQ, stream.handle)
        stream.synchronize()
        core.barrier_all()
        core.signal_op(sig, 2, SignalOp.SIGNAL_ADD, right, stream.handle)
        core.signal_wait(sig, 3, ComparisonType.CMP_GE, stream.handle)
        core.quiet(stream.handle)
        stream.synchronize()
        assert sig.numpy("int32")[0] == 3
        expect(AclshmemInvalid, core.signal_op, sig, 1, SignalOp.SIGNAL_SET, right)  # stream None
        expect(AclshmemInvalid, core.signal_wait, Buffer(sig.addr, 2), 1, ComparisonType.CMP_EQ, 0)

        # barriers on streams, Handles
        core.barrier_on_stream(core.ACLSHMEM_TEAM_WORLD, stream.handle)
        core.barrier_all_on_stream(stream.handle)
        core.handle_wait(core.Handle(), stream.handle)
        stream.synchronize()

    # peer buffers
    core.barrier_all()
    peer = core.get_peer_buffer(buf, right)
    assert np.frombuffer(memoryview(peer).cast("B"), dtype=np.int32)[0] == 1000 + right
    expect(AclshmemError, core.get_peer_buffer, buf, n)

    # barriers
    core.barrier(core.ACLSHMEM_TEAM_WORLD)
    core.sync(core.ACLSHMEM_TEAM_WORLD)
    core.sync_all()
    expect(AclshmemInvalid, core.barrier, 2048)
    expect(ValueError, core.Handle, 2048)

    # teams via _pyshmem
    x_team, y_team = ash.team_split_2d(core.ACLSHMEM_TEAM_WORLD, 1)
    assert ash.team_n_pes(x_team) == 1 and ash.team_n_pes(y_team) == n
    evens = ash.team_split_strided(core.ACLSHMEM_TEAM_WORLD, 0, 2, (n + 1) // 2)
    if me % 2 == 0:
        assert ash.team_my_pe(evens) == me // 2
        assert ash.team_translate_pe(evens, 0, core.ACLSHMEM_TEAM_WORLD) == 0
        core.barrier(evens)
        h = core.Handle(evens)
        core.handle_wait(h, 0)
        core.synchronize(0)
        ash.team_destroy(evens)
    else:
        assert evens == ash.ACLSHMEM_TEAM_INVALID
    ash.team_destroy(x_team)
    ash.team_destroy(y_team)

    # every wait/test family (int32 on a local symmetric array that satisfies them)
    ivars = core.calloc(4, 4)
    arr = ivars.numpy("int32")
    arr[:] = [1, 2, 3, 4]
    res = np.zeros(1, np.uint64)
    ires = np.zeros(1, np.int32)
    idx = np.zeros(4, np.uint64)
    cmpv = np.array([1, 2, 3, 4], np.int32)
    EQ, GE = ash.CmpOp.CMP_EQ, ash.CmpOp.CMP_GE
    a = ivars.addr
    ash.aclshmem_int32_wait_until(a, EQ, 1)
    ash.aclshmem_int32_wait(a, 0)
    ash.aclshmem_int32_wait_until_all(a, 4, 0, GE, 1)
    ash.aclshmem_int32_wait_until_any(a, 4, 0, EQ, 2, res.ctypes.data)
    assert res[0] == 1
    ash.aclshmem_int32_wait_until_some(a, 4, idx.ctypes.data, 0, GE, 3, res.ctypes.data)
    assert res[0] == 2
    ash.aclshmem_int32_wait_until_all_vector(a, 4, 0, EQ, cmpv.ctypes.data)
    ash.aclshmem_int32_wait_until_any_vector(a, 4, 0, EQ, cmpv.ctypes.data, res.ctypes.data)
    ash.aclshmem_int32_wait_until_some_vector(a, 4, idx.ctypes.data, 0, EQ, cmpv.ctypes.data, res.ctypes.data)
    assert res[0] == 4
    ash.aclshmem_int32_test(a, EQ, 1, ires.ctypes.data)
    assert ires[0] == 1
    ash.aclshmem_int32_test_any(a, 4, 0, EQ, 4, res.ctypes.data)
    assert res[0] == 3
    ash.aclshmem_int32_test_some(a, 4, idx.ctypes.data, 0, GE, 2, res.ctypes.data)
    assert res[0] == 3
    ash.aclshmem_int32_test_all_vector(a, 4, 0, EQ, cmpv.ctypes.data, ires.ctypes.data)
    assert ires[0] == 1
    ash.aclshmem_int32_test_any_vector(a, 4, 0, EQ, cmpv.ctypes.data, res.ctypes.data)
    assert res[0] in (0, 1, 2, 3)  # all four hold: any of them (a series returns each in turn)
    ash.aclshmem_int32_test_some_vector(a, 4, idx.ctypes.data, 0, EQ, cmpv.ctypes.data, res.ctypes.data)
    assert res[0] == 4
    assert ash.aclshmem_signal_wait_until(a, EQ, 1) == 1

    for b in (ivars, sig, back, dst, host, aligned, zeros, buf):
        core.free(b)
    assert buf.release_called
    expect(AclshmemInvalid, core.free, buf)
    core.finalize()
    assert core.init_status() == core.InitStatus.NOT_INITIALIZED
    print(f"SEED PROGRAM OK {rank}", flush=True)


if __name__ == "__main__":
    main()
