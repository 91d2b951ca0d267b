"""shmem._pyshmem.aclshmemx_describe before init: the library's own account of its
transports and of the UCX plug-in, with the plug-in beside the library, named by
SHMEM_UCX_PLUGIN, absent and disabled.  The library looks for the plug-in once per
process, so each case asks in a fresh interpreter with its own environment.  (After init:
jobs_pyshmem.describe_after_init.)"""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from shmem import _native, _pyshmem as P

ASK = textwrap.dedent("""
    import json, sys
    from shmem import _pyshmem as P
    print(json.dumps(P.aclshmemx_describe(load=sys.argv[1] == "load")))
""")


def describe_in_fresh_process(load=True, **env):
    """aclshmemx_describe's dict from a new interpreter whose environment has env
    (a value of None removes the variable)."""
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p) + os.pathsep + e.get("PYTHONPATH", "")
    for k, v in env.items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v
    r = subprocess.run([sys.executable, "-c", ASK, "load" if load else "no-load"], env=e, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_before_init_without_loading():
    d = describe_in_fresh_process(load=False, SHMEM_UCX_PLUGIN=None)
    assert d["initialized"] is False and d["my_pe"] == -1 and d["n_pes"] == -1
    assert d["transports_in_use"] == [] and d["transports_available"] == ["shm"]
    u = d["ucx_plugin"]
    assert u["status"] == "not_loaded_yet" and u["from_env"] is False
    assert os.path.dirname(u["path"]) == os.path.dirname(d["library_path"])
    assert os.path.basename(u["path"]) == "libaclshmem_ucx.so"
    assert u["name"] is None and u["abi"] is None and u["expected_abi"] >= 1
    assert d["version"] == P.aclshmem_info_get_name().split("v")[-1]


def test_before_init_loading_what_a_multi_node_job_would_use():
    d = describe_in_fresh_process(SHMEM_UCX_PLUGIN=None)
    u = d["ucx_plugin"]
    if not os.path.exists(u["path"]):
        assert u["status"] == "not_found" and d["transports_available"] == ["shm"], d
        pytest.skip("this build of libaclshmem has no UCX plug-in (built without UCX)")
    assert u["status"] == "loaded", u
    assert d["transports_available"] == ["shm", "ucx"] and d["transports_in_use"] == []
    assert u["version"] == d["version"] and u["abi"] == u["expected_abi"] and u["reason"] == ""
    assert u["name"].startswith("UCX ") and u["data_plane"].startswith(("am", "rma"))


def test_disabled_by_the_environment():
    d = describe_in_fresh_process(SHMEM_UCX_PLUGIN="none")
    u = d["ucx_plugin"]
    assert u["status"] == "disabled" and u["from_env"] is True and u["path"] == ""
    assert "SHMEM_UCX_PLUGIN=none" in u["reason"]
    assert d["transports_available"] == ["shm"]


def test_absent(tmp_path):
    missing = str(tmp_path / "nowhere" / "libaclshmem_ucx.so")
    u = describe_in_fresh_process(SHMEM_UCX_PLUGIN=missing)["ucx_plugin"]
    assert u["status"] == "not_found" and u["path"] == missing and missing in u["reason"]


def test_a_file_that_is_no_shared_object(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("not a shared object\n")
    u = describe_in_fresh_process(SHMEM_UCX_PLUGIN=str(text))["ucx_plugin"]
    assert u["status"] == "load_failed" and str(text) in u["reason"]


def test_the_library_refuses_a_too_small_structure_with_a_clear_error():
    ffi, lib = _native.load()
    d = ffi.new("aclshmemx_description_t *")
    d.size = 8
    assert lib.aclshmemx_describe(d, 0) == P.ACLSHMEM_INVALID_PARAM
    assert "set it to sizeof(aclshmemx_description_t)" in P.aclshmemx_get_last_error()
    assert lib.aclshmemx_describe(ffi.NULL, 0) == P.ACLSHMEM_INVALID_PARAM
    assert "desc is NULL" in P.aclshmemx_get_last_error()
