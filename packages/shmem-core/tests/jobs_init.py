"""Jobs that initialise the library themselves (run_pes(..., init=False)) or need a special
environment: every init path, finalize, TLS off, several instances, profiling, sizes."""

import ctypes
import gc
import os
import warnings

from harness import free_port, raises
from shmem import _pyshmem as P, _state, core, testing
from shmem.core import AclshmemError, AclshmemInvalid

MB = 1 << 20


def _new_uid():
    return testing.broadcast(core.get_unique_id() if testing.pe() == 0 else None)


def _ring_check():
    me, n = core.my_pe(), core.n_pes()
    src = core.buffer(8)
    dst = core.calloc(1, 8)
    src.numpy("int64")[0] = me
    core.barrier_all()
    core.put(dst, src, (me + 1) % n, 0)
    core.synchronize(0)
    core.barrier_all()
    assert dst.numpy("int64")[0] == (me - 1) % n
    core.barrier_all()
    core.free(dst)
    core.free(src)


def init_paths():
    rank, n = testing.pe(), testing.npes()
    uid = _new_uid()
    # -- rejected before anything reaches the library
    for bad in (0, -1, True, 1.5, "1M"):
        raises(AclshmemInvalid, core.init, mem_size=bad)
    for bad in (True, -1, 255, "0", 1.0):
        raises(AclshmemInvalid, core.init, mem_size=MB, instance_id=bad)
    raises(AclshmemInvalid, core.init, mem_size=MB, initializer_method="mpi")
    raises(AclshmemInvalid, core.init, mem_size=MB, initializer_method=None)
    raises(AclshmemInvalid, core.init, uid=b"x" * 10, rank=rank, nranks=n, mem_size=MB)
    raises(AclshmemInvalid, core.init, uid=uid + b"x", rank=rank, nranks=n, mem_size=MB)
    raises(AclshmemInvalid, core.init, uid="a string", rank=rank, nranks=n, mem_size=MB)
    raises(AclshmemInvalid, core.init, uid=uid, mem_size=MB)  # rank and nranks missing
    raises(AclshmemInvalid, core.init, uid=uid, rank=rank, mem_size=MB)
    raises(AclshmemInvalid, core.init, uid=uid, rank=n, nranks=n, mem_size=MB)
    raises(AclshmemInvalid, core.init, uid=uid, rank=-1, nranks=n, mem_size=MB)
    raises(AclshmemInvalid, core.init, uid=uid, rank=True, nranks=n, mem_size=MB)
    raises(AclshmemInvalid, core.init, uid=uid, rank=0, nranks=0, mem_size=MB)
    raises(AclshmemInvalid, core.init, uid=uid, rank=0, nranks=2.0, mem_size=MB)
    saved = os.environ.pop("SHMEM_RUN_MEM_SIZE")
    try:
        raises(AclshmemInvalid, core.init, match="mem_size")
    finally:
        os.environ["SHMEM_RUN_MEM_SIZE"] = saved
    raises(AclshmemInvalid, core.init, mem_size=MB, instance_id=1, match="uid")  # launcher's uid: instance 0
    assert core.init_status() is core.InitStatus.NOT_INITIALIZED
    raises(AclshmemError, core.current_instance)
    raises(AclshmemError, core.finalize)
    raises(AclshmemError, core.finalize, 0)

    # -- the launcher's environment (what python -m shmem.run provides)
    core.init(mem_size=8 * MB)
    assert core.my_pe() == rank and core.n_pes() == n
    assert core.init_status() is core.InitStatus.INITIALIZED
    raises(AclshmemError, core.init, mem_size=8 * MB)  # initialised already
    _ring_check()
    core.finalize()
    assert core.init_status() is core.InitStatus.NOT_INITIALIZED
    # put's checks ask again after a finalize (the state the ring check cached is gone)
    assert _state.active_instance() is None
    private = ctypes.create_string_buffer(8)
    ext = core.Buffer(ctypes.addressof(private), 8)
    raises(AclshmemInvalid, core.put, ext, ext, 0, 0, match="not initialised")

    # -- the seed's style, with a UniqueID object, bytes, bytearray and memoryview
    for form in (core.UniqueID.from_bytes, bytes, bytearray, memoryview):
        core.init(uid=form(_new_uid()), rank=rank, nranks=n, mem_size=8 * MB, initializer_method="uid",
                  device=0, mpi_comm=None)
        _ring_check()
        core.finalize()

    # -- finalize releases what is left, with a warning
    core.init(uid=_new_uid(), rank=rank, nranks=n, mem_size=8 * MB, initializer_method="uid")
    leftover = core.buffer(64)
    dropped_addr = core.buffer(32).addr  # the Buffer object is dropped at once ...
    gc.collect()
    again = core.buffer(32)              # ... but its memory was not freed: no reuse
    assert again.addr != dropped_addr
    core.free(again)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        core.finalize()
    assert any(issubclass(w.category, core.AclshmemWarning) and "2 symmetric buffer(s)" in str(w.message)
               for w in caught), [str(w.message) for w in caught]
    assert leftover.release_called
    raises(AclshmemInvalid, core.free, leftover)

    # -- low level: set_attr_uniqueid_args + init_attr; the attr keeps its own uid copy
    uid_obj = P.UniqueId.from_bytes(_new_uid())
    attr = P.InitAttr()
    assert P.aclshmemx_set_attr_uniqueid_args(rank, n, 8 * MB, uid_obj, attr) == P.ACLSHMEM_SUCCESS
    assert (attr.my_rank, attr.n_ranks, attr.local_mem_size) == (rank, n, 8 * MB)
    del uid_obj
    gc.collect()
    assert P.aclshmemx_init_attr(P.InitMode.UNIQUEID, attr) == P.ACLSHMEM_SUCCESS
    assert P.aclshmemx_init_status() is P.InitStatus.INITIALIZED
    assert P.aclshmemx_finalize(0) == P.ACLSHMEM_SUCCESS
    assert P.aclshmemx_init_status() is P.InitStatus.NOT_INITIALIZED

    # -- aclshmem_init_using_unique_id / aclshmem_finalize (and its misspelt alias)
    assert P.aclshmem_init_using_unique_id(rank, n, 8 * MB, _new_uid()) == P.ACLSHMEM_SUCCESS
    assert P.my_pe() == rank
    assert P.aclshmem_finialize() == P.ACLSHMEM_SUCCESS

    # -- DEFAULT mode: aclshmem_init with ip_port = tcp://host:port
    port = testing.broadcast(free_port() if rank == 0 else None)
    attr = P.InitAttr()
    attr.my_rank, attr.n_ranks, attr.local_mem_size = rank, n, 8 * MB
    attr.ip_port = f"tcp://127.0.0.1:{port}"
    assert os.environ.get("SHMEM_JOB_SECRET")  # run_pes gives the PEs one
    assert P.aclshmem_init(attr) == P.ACLSHMEM_SUCCESS
    _ring_check()
    assert P.aclshmem_finalize() == P.ACLSHMEM_SUCCESS

    # -- DEFAULT mode with TLS on but no job secret: anyone could join, so refused at once
    secret = os.environ.pop("SHMEM_JOB_SECRET")
    assert P.aclshmem_init(attr) == P.ACLSHMEM_INVALID_PARAM
    assert "SHMEM_JOB_SECRET" in P.aclshmemx_get_last_error()
    assert P.aclshmemx_init_status() is P.InitStatus.NOT_INITIALIZED
    os.environ["SHMEM_JOB_SECRET"] = secret

    # -- refused attributes: checked before any traffic, the same on every PE
    bad = P.InitAttr()
    bad.my_rank, bad.n_ranks, bad.local_mem_size = n, n, MB
    bad.ip_port = "tcp://127.0.0.1:4000"
    assert P.aclshmemx_init_attr(P.InitMode.DEFAULT, bad) != P.ACLSHMEM_SUCCESS
    bad.my_rank, bad.local_mem_size = rank, 0
    assert P.aclshmemx_init_attr(P.InitMode.DEFAULT, bad) != P.ACLSHMEM_SUCCESS
    bad.local_mem_size = MB
    assert P.aclshmemx_init_attr(P.InitMode.MPI, bad) == P.ACLSHMEM_NOT_SUPPORTED
    bad.ip_port = "not a url"
    assert P.aclshmemx_init_attr(P.InitMode.DEFAULT, bad) == P.ACLSHMEM_INVALID_PARAM
    assert P.aclshmemx_init_status() is P.InitStatus.NOT_INITIALIZED
    raises(TypeError, P.aclshmemx_init_attr, P.InitMode.UNIQUEID, "attr")
    raises(ValueError, P.aclshmemx_init_attr, 3, bad)
    return rank


def tls_off():
    rank = testing.pe()
    assert P.set_conf_store_tls(False, "") == P.ACLSHMEM_SUCCESS
    try:
        core.init(mem_size=8 * MB)
        _ring_check()
        core.finalize()
    finally:
        assert P.set_conf_store_tls(True, "") == P.ACLSHMEM_SUCCESS
    return rank


def multi_instance():
    rank, n = testing.pe(), testing.npes()
    uid1 = _new_uid()
    b0 = core.buffer(64)
    assert _state.active_instance() == (0, n)
    core.init(uid=uid1, rank=rank, nranks=n, mem_size=8 * MB, instance_id=1)
    core.set_instance(1)
    assert _state.active_instance() == (1, n)
    assert core.current_instance() == 1 and core.my_pe() == rank and core.n_pes() == n
    b1 = core.buffer(64)
    assert b1.instance_id == 1 and b0.instance_id == 0
    raises(AclshmemInvalid, core.put, b0, b0, 0, 0, match="instance")
    raises(AclshmemInvalid, core.free, b0, match="instance")
    raises(AclshmemInvalid, core.get_peer_buffer, b0, 0, match="instance")
    _ring_check()
    with core.multi_instance(0) as iid:
        assert iid == 0 and core.current_instance() == 0 and _state.active_instance() == (0, n)
        raises(AclshmemInvalid, core.put, b1, b1, 0, 0, match="instance")
        _ring_check()
    assert core.current_instance() == 1
    raises(RuntimeError, P.team_split_strided, 0, 0, 1, 1)  # only WORLD on other instances
    core.free(b1)
    core.finalize(1)
    # The library made instance 0 active again; the state cached for put's checks follows.
    assert _state.active_instance() == (0, n)
    core.set_instance(0)
    assert core.current_instance() == 0
    core.free(b0)
    return rank


def profiling_on():
    rank = testing.pe()
    P.aclshmemx_prof_start(3)
    core.barrier_all()
    P.aclshmemx_prof_end(3)
    data = core.get_prof()
    if rank == 0:
        assert isinstance(data, core.ProfData) and data.pe_id == 0
        cc, cy = data.ccount, data.cycles
        assert len(cc) == 64 and all(len(row) == 1024 for row in cc)
        assert len(cy) == 64 and all(len(row) == 1024 for row in cy)
        assert cc[0][3] >= 1 and cy[0][3] > 0
        cc[0][3] = -5  # a copy: the snapshot does not change
        assert data.ccount[0][3] >= 1
        raises(AttributeError, setattr, data, "pe_id", 7)
        verbose = core.get_prof(verbose=True)
        assert verbose is not None and verbose.pe_id == 0
    else:
        assert data is None
    core.show_prof()
    return rank


def ring_sum():
    """Every PE adds its rank into every other PE with put + barrier; used for 1..8 PEs."""
    me, n = core.my_pe(), core.n_pes()
    slots = core.calloc(n, 8)
    mine = core.buffer(8)
    mine.numpy("int64")[0] = me + 1
    core.barrier_all()
    for pe in range(n):
        core.put(core.Buffer(slots.addr + 8 * me, 8), mine, pe, 0)
    core.synchronize(0)
    core.barrier_all()
    values = slots.numpy("int64").tolist()
    core.barrier_all()
    core.free(mine)
    core.free(slots)
    assert values == list(range(1, n + 1)), values
    return sum(values)



def tls_with_certificates(directory, password_ok=True):
    """TLS with certificates: the key password is "decrypted" by a Python callback that
    libaclshmem calls during init."""
    rank = testing.pe()
    info = (f"tlsCaPath: {directory}; tlsCaFile: ca.pem; tlsCert: {directory}/node.pem; "
            f"tlsPk: {directory}/node.key")
    assert P.set_conf_store_tls(True, info) == P.ACLSHMEM_SUCCESS
    with open(os.path.join(directory, "node.key")) as f:
        key = f.read()
    calls = []

    def decrypt(cipher):
        calls.append(cipher)
        return cipher[::-1] if password_ok else "wrong"

    assert P.set_conf_store_tls_key(key, "wp-terces", decrypt) == P.ACLSHMEM_SUCCESS
    try:
        if password_ok:
            core.init(mem_size=8 * MB)
            _ring_check()
            core.finalize()
        else:
            err = raises(AclshmemError, core.init, mem_size=8 * MB)
            assert "TLS" in str(err) or "key" in str(err), err
    finally:
        assert P.set_conf_store_tls(True, "") == P.ACLSHMEM_SUCCESS
    assert calls and calls[0] == "wp-terces", calls
    return rank


def finalize_hooks():
    """register_finalize_hook: hooks run before finalize, with the instance id, while the
    heap is still mapped; a non-callable is refused; registering twice runs once."""
    seen = []
    buf = core.buffer(64)
    buf.numpy("uint8")[:] = 7

    def hook(instance_id):
        seen.append((instance_id, int(buf.numpy("uint8")[0])))  # still readable here

    core.register_finalize_hook(hook)
    core.register_finalize_hook(hook)
    raises(AclshmemInvalid, core.register_finalize_hook, 42)
    core.free(buf)
    seen_before = list(seen)
    buf = core.buffer(64)
    buf.numpy("uint8")[:] = 9
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # buf is deliberately left for finalize
        core.finalize()
    assert seen_before == [] and seen == [(0, 9)], seen
    return core.init_status().name
