"""Importing shmem: no torch, no native library needed, every name of the seed present
(read from the seed itself by seed_api.py, or from its shipped extraction)."""

import inspect
import os
import subprocess
import sys
import textwrap

import pytest

import seed_api
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


TOP_LEVEL = """aclshmem_init aclshmem_get_unique_id aclshmem_init_using_unique_id aclshmem_finalize aclshmemx_init_status
InitAttr InitStatus OpEngineType aclshmem_malloc aclshmem_free aclshmem_ptr aclshmemx_get_heap_base aclshmem_calloc
aclshmem_align my_pe pe_count team_my_pe team_n_pes team_split_strided team_split_2d team_translate_pe team_destroy
aclshmem_team_get_config set_conf_store_tls_key set_conf_store_tls aclshmem_putmem aclshmem_putmem_nbi
aclshmem_getmem aclshmem_getmem_nbi aclshmemx_putmem_signal aclshmemx_putmem_signal_nbi aclshmem_signal_wait_until
get_ffts_config aclshmem_global_exit aclshmem_info_get_version aclshmem_info_get_name set_log_level
set_extern_logger aclshmem_finialize""".split()


def _promises(module):
    promises, _source = seed_api.load()
    return [seed_api.parse(p)[1:] for p in promises if seed_api.parse(p)[0] == module]


def _members_of(cls):
    """What an instance of cls has: class attributes, and those its constructor sets when
    it can be made without arguments (OptionalAttr, InitAttr, ...)."""
    names = set(dir(cls))
    try:
        names |= set(vars(cls()))
    except Exception:
        pass
    return names


def _signature_agrees(fn, params):
    """The seed's call ``fn(p1, p2, ...)`` names fn's parameters in order; fn's other
    parameters have defaults."""
    ours = [p for p in inspect.signature(fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    names = [p.name for p in ours]
    if names[:len(params)] != params:
        return False
    return all(p.default is not p.empty for p in ours[len(params):])


def _check_module(module, promises):
    missing, differ = [], []
    for name, params in promises:
        owner, _, member = name.partition(".")
        if not hasattr(module, owner):
            missing.append(name)
        elif member and member not in _members_of(getattr(module, owner)):
            missing.append(name)
        elif params is not None and not _signature_agrees(getattr(module, name), params):
            differ.append(f"{name}: seed ({', '.join(params)}), ours {inspect.signature(getattr(module, name))}")
    assert not missing, f"names the seed promises in {module.__name__} that it lacks: {missing}"
    assert not differ, f"signatures of {module.__name__} that differ from the seed's:\n" + "\n".join(differ)


def test_the_seed_is_read_or_its_shipped_extraction():
    promises, source = seed_api.load()
    assert len(promises) > 350, source
    # Spot checks that the extraction understood the seed's layout.
    assert "shmem._pyshmem aclshmemx_put64_signal_nbi(dst, src, elem_size, sig, signal, sig_op, pe)" in promises
    assert "shmem._pyshmem aclshmem_uint16_test_some_vector(ivars_ptr, nelems, indices_ptr, status_ptr, cmp, " \
           "cmp_values_ptr, res_out_ptr)" in promises
    assert "shmem.core SignalOp.SIGNAL_ADD" in promises and "shmem.core AclshmemInvalid" in promises
    assert "shmem aclshmem_create_tensor(shape, dtype, device_id)" in promises


def test_the_shipped_extraction_equals_the_seed():
    seed = seed_api.find_seed()
    if seed is None:
        pytest.skip("the seed (../shared/seeds/000_*.txt) is not beside this checkout; the shipped list is used")
    with open(seed, encoding="utf-8") as f:
        extracted = seed_api.extract(f.read())
    with open(seed_api.SHIPPED, encoding="utf-8") as f:
        shipped = [line for line in f.read().splitlines() if line and not line.startswith("#")]
    assert shipped == extracted, ("tests/seed_names.txt is not the seed's extraction any more; regenerate it "
                                  "with `python tests/seed_api.py > tests/seed_names.txt`")


def test_without_the_seed_the_shipped_extraction_is_used(monkeypatch):
    monkeypatch.setattr(seed_api, "find_seed", lambda repo=seed_api.REPO: None)
    promises, source = seed_api.load()
    assert source == seed_api.SHIPPED and "shmem.core put_signal(dst, src, signal_var, signal_val, " \
        "signal_operation, remote_pe, stream)" in promises


def test_the_extraction_fails_on_a_name_the_package_lacks():
    promises = _promises("shmem._pyshmem") + [("aclshmemx_put256_signal", ["dst"])]
    with pytest.raises(AssertionError, match="aclshmemx_put256_signal"):
        _check_module(_pyshmem, promises)
    with pytest.raises(AssertionError, match="signatures"):
        _check_module(_pyshmem, [("aclshmemx_put64_signal", ["dst", "src", "nelems"])])


def test_every_seed_name_of_shmem_core():
    promises = _promises("shmem.core")
    _check_module(core, promises)
    assert {name for name, _ in promises if "." not in name} <= set(core.__all__)
    assert core.ComparisonType is _pyshmem.CmpOp and core.UniqueID is core.UniqueId
    assert core.direct.my_pe is core.my_pe


def test_every_seed_name_of_pyshmem_including_the_families():
    _check_module(_pyshmem, _promises("shmem._pyshmem"))
    # Every C function of the generated families is bound under its C name, and so are the
    # C functions of issue 12 outside them.
    assert len(_pyshmem.GENERATED) == len(_native.family_functions())
    assert all(hasattr(_pyshmem, f[0]) for f in _native.family_functions())
    for name in ("aclshmemx_signal_op", "aclshmemx_barrier_vec", "aclshmemx_barrier_all_vec"):
        assert callable(getattr(_pyshmem, name)), name


def test_the_seed_tensor_names_at_top_level():
    """shmem loads them from shmem_torch when first used (so importing shmem needs no torch)."""
    promises = _promises("shmem")
    assert promises and {name for name, _ in promises} <= set(shmem._TENSOR_API)
    pytest.importorskip("torch")
    _check_module(shmem, promises)


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
