"""torch.distributed interop, the example, the benchmark's smoke run, and the API's
behaviour before SHMEM is initialised."""

import os
import socket
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch", reason="shmem-torch needs torch")

import torch_checks  # noqa: E402
from conftest import PACKAGE, PE_ENV, REPO  # noqa: E402


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _child_env():
    """The environment for scripts run as subprocesses: this interpreter's sys.path (so a
    source checkout works uninstalled) and one intra-op thread per process."""
    env = dict(os.environ)
    env.update(PE_ENV)
    paths = [p for p in sys.path if p and os.path.isdir(p)]
    env["PYTHONPATH"] = os.pathsep.join(paths + [env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def test_init_from_process_group():
    from shmem import testing

    port = _free_port()
    results = testing.run_pes(2, torch_checks.init_from_process_group, port, init=False, env=PE_ENV,
                              timeout=120, echo=False)
    assert results == [[1, 1, 1], [1, 1, 1]]


def test_example_under_torchrun():
    script = os.path.join(REPO, "examples", "torch", "allreduce.py")
    assert os.path.isfile(script), script
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node=2", "--master-port",
           str(_free_port()), script]
    p = subprocess.run(cmd, env=_child_env(), capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, f"torchrun failed ({p.returncode}):\n{p.stdout}\n{p.stderr}"
    assert "rank 0/2: all_reduce sum = 3" in p.stdout, p.stdout
    assert "rank 1/2: all_reduce sum = 3" in p.stdout, p.stdout


def test_benchmark_quick_smoke():
    script = os.path.join(PACKAGE, "benchmarks", "bench_collectives.py")
    p = subprocess.run([sys.executable, script, "--quick"], env=_child_env(), capture_output=True, text=True,
                       timeout=240)
    assert p.returncode == 0, f"bench_collectives --quick failed ({p.returncode}):\n{p.stdout}\n{p.stderr}"
    for n in (2, 4):
        assert f"{n} ranks" in p.stdout, p.stdout
    for op in ("all_reduce", "all_gather", "broadcast"):
        assert op in p.stdout
    assert "WRONG" not in p.stdout and "ratio" in p.stdout


def test_api_before_init():
    import shmem
    import shmem_torch as st
    from shmem.core import AclshmemError, AclshmemInvalid

    assert shmem.aclshmem_create_tensor is st.aclshmem_create_tensor
    assert shmem.aclshmem_free_tensor is st.aclshmem_free_tensor
    with pytest.raises(AclshmemError, match="not initialised"):
        st.aclshmem_create_tensor((2, 2))
    with pytest.raises(AclshmemError, match="not initialised"):
        st.barrier()
    # argument checks come first
    with pytest.raises(AclshmemInvalid, match="dtype"):
        st.aclshmem_create_tensor((2,), dtype="float32")
    with pytest.raises(AclshmemInvalid, match="shape"):
        st.empty(-3)
    # a plain tensor is not symmetric, and free refuses it
    assert not st.is_symmetric(torch.zeros(3))
    with pytest.raises(AclshmemInvalid):
        st.aclshmem_free_tensor(torch.zeros(3))
    # init with a process group when torch.distributed is not initialised
    import torch.distributed as dist

    if dist.is_available() and not dist.is_initialized():
        with pytest.raises(AclshmemInvalid, match="not initialised"):
            st.init(group=object(), mem_size=1 << 20)
    with pytest.raises(AclshmemInvalid, match="mem_size"):
        st.init(mem_size=0)
    # AclshmemInvalid is a ValueError, AclshmemError a RuntimeError
    assert issubclass(AclshmemInvalid, ValueError) and issubclass(AclshmemError, RuntimeError)


def test_supported_dtypes():
    import shmem_torch as st

    for dt in torch_checks.ALL_DTYPES:
        assert dt in st.SUPPORTED_DTYPES
    assert torch.qint8 not in st.SUPPORTED_DTYPES
