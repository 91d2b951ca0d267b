"""Importing shmem: no torch, no native library needed, every seed name present."""

import os
import subprocess
import sys
import textwrap

import shmem
from shmem import _native, _pyshmem, core

PKG_ROOT = os.path.dirname(os.path.dirname(shmem.__file__))


def _run(code, **env_extra):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([PKG_ROOT, os.environ.get("PYTHONPATH", "")]))
    env.update(env_extra)
    return subprocess.run([sys.executable] + code, capture_output=True, text=True, env=env, cwd="/")


def test_importtime_shows_no_torch():
    r = _run(["-X", "importtime", "-c", "import shmem"])
    assert r.returncode == 0, r.stderr
    modules = [line.split("|")[-1].strip() for line in r.stderr.splitlines() if line.startswith("import time:")]
    assert "shmem" in modules
    assert not [m for m in modules if m.split(".")[0] == "torch"]
    assert "numpy" not in modules and "shmem_torch" not in modules


def test_shmem_core_imports_no_torch_either():
    r = _run(["-c", "import sys, shmem.core, shmem.testing, shmem.run; "
                    "print(any(m.split('.')[0] == 'torch' for m in sys.modules))"])
    assert r.stdout.strip() == "False", r.stderr


def test_tensor_api_without_shmem_torch_says_what_to_install():
    r = _run(["-c", textwrap.dedent("""
        import sys; sys.modules['shmem_torch'] = None
        import shmem
        try:
            shmem.aclshmem_create_tensor
        except AttributeError as e:
            print('missing:', e)
        print(hasattr(shmem, 'aclshmem_free_tensor'))
    """)])
    assert "missing:" in r.stdout and "shmem-torch" in r.stdout and r.stdout.strip().endswith("False"), r.stderr


def test_tensor_api_comes_from_shmem_torch_lazily(tmp_path):
    fake = tmp_path / "shmem_torch"
    fake.mkdir()
    (fake / "__init__.py").write_text(
        "def aclshmem_create_tensor(shape, dtype=None, device_id=0): return ('tensor', shape)\n"
        "def aclshmem_free_tensor(tensor): return 'freed'\n")
    r = _run(["-c", "import sys, shmem; assert 'shmem_torch' not in sys.modules; "
                    "print(shmem.aclshmem_create_tensor((2, 3)), shmem.aclshmem_free_tensor(None))"],
             PYTHONPATH=os.pathsep.join([str(tmp_path), PKG_ROOT, os.environ.get("PYTHONPATH", "")]))
    assert r.stdout.strip() == "('tensor', (2, 3)) freed", r.stderr


SEED_CORE = """get_version get_unique_id init finalize buffer free get_peer_buffer put_signal put get signal_op
signal_wait quiet my_pe team_my_pe n_pes team_n_pes init_status calloc align barrier barrier_all sync sync_all
barrier_on_stream barrier_all_on_stream current_instance set_instance multi_instance set_mte_config
set_sdma_config set_rdma_config set_udma_config handle_wait get_prof show_prof UniqueId UniqueID InitStatus
SignalOp ComparisonType MemType Buffer InstanceContext Handle ProfData AclshmemError AclshmemInvalid
ACLSHMEM_TEAM_WORLD Stream synchronize""".split()

SEED_PYSHMEM = """aclshmem_init aclshmem_finalize aclshmemx_init_status set_conf_store_tls_key set_conf_store_tls
aclshmem_malloc aclshmem_calloc aclshmem_align aclshmem_free aclshmem_ptr aclshmemx_get_heap_base my_pe team_my_pe
pe_count team_n_pes team_split_strided team_split_2d aclshmem_team_get_config aclshmem_putmem aclshmem_getmem
aclshmem_info_get_version aclshmem_info_get_name team_translate_pe team_destroy get_ffts_config set_log_level
set_extern_logger aclshmem_putmem_nbi aclshmem_getmem_nbi aclshmemx_putmem_signal_nbi aclshmemx_putmem_signal
aclshmem_global_exit aclshmem_signal_wait_until aclshmemx_putmem_on_stream aclshmemx_getmem_on_stream
aclshmemx_signal_op_on_stream aclshmemx_signal_wait_until_on_stream aclshmemx_quiet_on_stream aclshmemx_finalize
aclshmemx_set_qp_num aclshmemx_set_attr_uniqueid_args aclshmemx_init_attr aclshmemx_instance_ctx_get
aclshmemx_instance_ctx_set aclshmemx_malloc aclshmemx_calloc aclshmemx_align aclshmemx_free
aclshmemx_set_mte_config aclshmemx_set_sdma_config aclshmemx_set_rdma_config aclshmemx_set_udma_config
aclshmem_barrier aclshmem_barrier_all aclshmem_sync aclshmem_sync_all aclshmemx_barrier_on_stream
aclshmemx_barrier_all_on_stream aclshmemx_handle_wait aclshmemx_get_prof aclshmemx_show_prof
OpEngineType MemType OptionalAttr InitAttr TeamConfig UniqueId InitStatus SignalOp CmpOp InstanceContext Handle
ProfData InitMode ACLSHMEM_TEAM_WORLD ACLSHMEM_TEAM_INVALID ACLSHMEM_MAX_TEAMS""".split()

SEED_P2P = ["wait_until", "wait", "wait_until_all", "wait_until_any", "wait_until_some", "wait_until_all_vector",
            "wait_until_any_vector", "wait_until_some_vector", "test", "test_any", "test_some", "test_all_vector",
            "test_any_vector", "test_some_vector"]

TOP_LEVEL = """aclshmem_init aclshmem_get_unique_id aclshmem_init_using_unique_id aclshmem_finalize aclshmemx_init_status
InitAttr InitStatus OpEngineType aclshmem_malloc aclshmem_free aclshmem_ptr aclshmemx_get_heap_base aclshmem_calloc
aclshmem_align my_pe pe_count team_my_pe team_n_pes team_split_strided team_split_2d team_translate_pe team_destroy
aclshmem_team_get_config set_conf_store_tls_key set_conf_store_tls aclshmem_putmem aclshmem_putmem_nbi
aclshmem_getmem aclshmem_getmem_nbi aclshmemx_putmem_signal aclshmemx_putmem_signal_nbi aclshmem_signal_wait_until
get_ffts_config aclshmem_global_exit aclshmem_info_get_version aclshmem_info_get_name set_log_level
set_extern_logger aclshmem_finialize""".split()


def test_every_seed_name_of_shmem_core():
    missing = [n for n in SEED_CORE if not hasattr(core, n)]
    assert not missing
    assert set(SEED_CORE) <= set(core.__all__)
    assert core.ComparisonType is _pyshmem.CmpOp and core.UniqueID is core.UniqueId
    assert core.direct.my_pe is core.my_pe


def test_every_seed_name_of_pyshmem_including_the_families():
    names = list(SEED_PYSHMEM)
    for tname, _ in _native.RMA_TYPES:
        names += [f"aclshmem_{tname}_iput", f"aclshmem_{tname}_iget", f"aclshmem_{tname}_put",
                  f"aclshmem_{tname}_put_signal"]
    for bits in _native.RMA_SIZES:
        names += [f"aclshmem_put{bits}", f"aclshmem_get{bits}", f"aclshmem_iput{bits}", f"aclshmem_iget{bits}",
                  f"aclshmem_put{bits}_nbi", f"aclshmem_get{bits}_nbi", f"aclshmem_put{bits}_signal",
                  f"aclshmem_put{bits}_signal_nbi"]
    for tname, _ in _native.P2P_SYNC_TYPES:
        names += [f"aclshmem_{tname}_{f}" for f in SEED_P2P]
    missing = [n for n in names if not hasattr(_pyshmem, n)]
    assert not missing
    assert len(_pyshmem.GENERATED) == len(_native.family_functions())


def test_top_level_names():
    missing = [n for n in TOP_LEVEL if not hasattr(shmem, n)]
    assert not missing
    assert set(TOP_LEVEL) <= set(shmem.__all__)
    assert shmem.set_conf_store_tls is _pyshmem.set_conf_store_tls


def test_generated_functions_have_real_signatures():
    import inspect

    sig = inspect.signature(_pyshmem.aclshmem_int32_wait_until_some)
    assert list(sig.parameters) == ["ivars_ptr", "nelems", "indices_ptr", "status_ptr", "cmp", "cmp_val",
                                    "res_out_ptr"]
    assert list(inspect.signature(_pyshmem.aclshmem_iput64).parameters) == ["dest", "source", "dst", "sst",
                                                                             "nelems", "pe"]
    assert "int32_t" in _pyshmem.aclshmem_int32_test.__doc__
