"""The classes and enums of shmem._pyshmem / shmem.core, and what the library answers in a
process that never initialised it (no PEs needed)."""

import pickle

import pytest

import shmem
from shmem import _pyshmem as P, core
from shmem.core import AclshmemError, AclshmemInvalid


def test_enums_have_the_c_values():
    assert [(m.name, m.value) for m in P.OpEngineType] == [("MTE", 1), ("SDMA", 2), ("ROCE", 4), ("UDMA", 8)]
    assert [(m.name, m.value) for m in P.MemType] == [("HOST_SIDE", 0), ("DEVICE_SIDE", 1)]
    assert [(m.name, m.value) for m in P.InitStatus] == [("NOT_INITIALIZED", 0), ("SHM_CREATED", 1),
                                                         ("INITIALIZED", 2), ("INVALID", 0x7FFFFFFF)]
    assert [(m.name, m.value) for m in P.SignalOp] == [("SIGNAL_SET", 0), ("SIGNAL_ADD", 1)]
    assert [m.name for m in P.CmpOp] == ["CMP_EQ", "CMP_NE", "CMP_GT", "CMP_GE", "CMP_LT", "CMP_LE"]
    assert [m.value for m in P.CmpOp] == list(range(6))
    assert [(m.name, m.value) for m in P.InitMode] == [("DEFAULT", 1), ("MPI", 2), ("UNIQUEID", 8)]
    assert core.ComparisonType is P.CmpOp and core.MemType is P.MemType and core.SignalOp is P.SignalOp
    assert (P.ACLSHMEM_TEAM_WORLD, P.ACLSHMEM_TEAM_INVALID, P.ACLSHMEM_MAX_TEAMS) == (0, -1, 2048)
    assert core.ACLSHMEM_TEAM_WORLD == 0


def test_optional_attr_and_init_attr():
    o = P.OptionalAttr()
    assert o.data_op_engine_type is P.OpEngineType.MTE and o.sockFd == -1
    assert o.shm_init_timeout == o.shm_create_timeout == o.control_operation_timeout == 120
    assert o.version == (1 << 16) + 24
    a = P.InitAttr()
    assert (a.my_rank, a.n_ranks, a.ip_port, a.local_mem_size, a.instance_id) == (0, 0, "", 0, 0)
    assert isinstance(a.option_attr, P.OptionalAttr)
    a.instance_id = 254
    assert a.instance_id == 254
    for bad in (True, 1.0, "1", None):
        with pytest.raises(TypeError):
            a.instance_id = bad
    for bad in (-1, 255, 10 ** 6):
        with pytest.raises(ValueError):
            a.instance_id = bad
    assert a.instance_id == 254
    a.ip_port = "x" * 64
    with pytest.raises(ValueError):
        a._to_c()
    assert "InitAttr" in repr(a) and "OptionalAttr" in repr(o)


def test_unique_id():
    u = P.UniqueId()
    assert (u.version, u.my_pe, u.n_pes, u.internal) == (65672, 0, 0, bytes(124))
    data = u.to_bytes()
    assert len(data) == 136
    raw = bytes(range(136))
    v = P.UniqueId.from_bytes(raw)
    assert v.to_bytes() == raw and v.internal == raw[12:]
    w = P.UniqueId()
    assert w.from_bytes(bytearray(raw)) is w and w == v and hash(w) == hash(v)
    assert P.UniqueId.from_bytes(memoryview(raw)) == v
    assert pickle.loads(pickle.dumps(v)) == v
    for bad in (raw[:135], raw + b"x", b""):
        with pytest.raises(ValueError, match="136"):
            P.UniqueId.from_bytes(bad)
    for bad in ("text", 136, None):
        with pytest.raises(TypeError):
            P.UniqueId.from_bytes(bad)
    with pytest.raises(ValueError):
        v.internal = b"short"
    with pytest.raises(TypeError):
        v.internal = "x" * 124
    assert core.UniqueID is P.UniqueId


def test_small_value_classes():
    cfg = P.TeamConfig(4)
    assert cfg.num_contexts == 4 and "TeamConfig" in repr(cfg)
    ctx = P.InstanceContext(3)
    assert ctx.id == 3 and ctx == P.InstanceContext(3) and ctx != P.InstanceContext(4)
    with pytest.raises(AttributeError):
        ctx.id = 5
    rows = tuple(tuple(range(1024)) for _ in range(64))
    prof = P.ProfData(2, rows, rows)
    assert prof.pe_id == 2 and len(prof.ccount) == 64 and len(prof.cycles[63]) == 1024
    copy = prof.ccount
    copy[0][0] = -1
    assert prof.ccount[0][0] == 0
    with pytest.raises(AttributeError):
        prof.pe_id = 1


def test_exceptions():
    e = AclshmemError("boom", code=-5)
    assert e.msg == "boom" and e.code == -5 and isinstance(e, RuntimeError)
    i = AclshmemInvalid("bad")
    assert i.msg == "bad" and isinstance(i, ValueError)


def test_the_library_before_init(lib):
    assert P.aclshmemx_init_status() is P.InitStatus.NOT_INITIALIZED
    assert core.init_status() is core.InitStatus.NOT_INITIALIZED
    assert P.aclshmemx_get_heap_base() == 0 and P.aclshmemx_get_heap_base(P.MemType.HOST_SIDE) == 0
    assert P.aclshmemx_instance_ctx_get() is None
    with pytest.raises(AclshmemError):
        core.current_instance()
    with pytest.raises(ValueError):
        P.Handle()
    with pytest.raises(AclshmemInvalid):
        core.barrier(0)
    with pytest.raises(RuntimeError):
        P.aclshmem_malloc(64)
    assert P.aclshmemx_malloc(64) == 0
    with pytest.raises(AclshmemError):
        core.buffer(64)
    with pytest.raises(AclshmemInvalid):
        core.put(core.Buffer(8, 8), core.Buffer(8, 8), 0)  # no PEs
    assert P.aclshmem_info_get_version() == (1, 1)
    assert P.aclshmem_info_get_name().startswith("ACLSHMEM")
    assert P.get_ffts_config() == "0"
    assert core.get_version() == "libaclshmem_version=1.1"
    uid = core.get_unique_id()
    assert len(uid) == 136 and uid != core.get_unique_id()
    u = P.UniqueId()
    assert P.aclshmemx_get_uniqueid(u) == 0 and u.version == 65672 and any(u.internal)
    assert isinstance(P.aclshmem_get_unique_id(), bytes)
    assert isinstance(P.aclshmemx_get_last_error(), str)


def test_settings_before_init(lib):
    assert shmem.set_conf_store_tls(False, "") == P.ACLSHMEM_SUCCESS
    assert shmem.set_conf_store_tls(True, "") == P.ACLSHMEM_SUCCESS
    assert shmem.set_conf_store_tls(True, None) == P.ACLSHMEM_SUCCESS
    assert shmem.set_conf_store_tls_key("-----BEGIN KEY-----", "cipher", lambda c: c[::-1]) == P.ACLSHMEM_SUCCESS
    assert shmem.set_conf_store_tls_key("", "pw", None) != P.ACLSHMEM_SUCCESS  # an empty key is refused
    with pytest.raises(TypeError):
        shmem.set_conf_store_tls_key("k", "pw", "not callable")
    assert P.aclshmemx_set_qp_num(P.OpEngineType.MTE, 2) == P.ACLSHMEM_NOT_SUPPORTED
    assert P.aclshmemx_set_qp_num(P.OpEngineType.ROCE, 2) == P.ACLSHMEM_NOT_SUPPORTED  # no ROCE on cpu
    assert P.aclshmemx_set_qp_num(P.OpEngineType.ROCE, 0) == P.ACLSHMEM_INVALID_VALUE
    assert P.set_log_level(3) == P.ACLSHMEM_SUCCESS
    assert P.set_extern_logger(lambda level, msg: None) == P.ACLSHMEM_SUCCESS
    assert P.set_extern_logger(None) == P.ACLSHMEM_SUCCESS
    with pytest.raises(ValueError):
        P.aclshmemx_finalize(255)
    assert P.aclshmemx_finalize(0) != P.ACLSHMEM_SUCCESS  # nothing to finalise
    assert P.aclshmem_finalize() != P.ACLSHMEM_SUCCESS
