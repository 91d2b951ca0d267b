"""The torch.distributed backend "shmem", through the public torch.distributed API only:
every collective on 2 and 4 ranks (dtypes, ops, chunking through a small pool, async
Work, zero-copy symmetric tensors, sub-groups, send/recv, bad input), DDP against gloo,
torch.compile of the shmem_torch collectives, and the launchers (torch.multiprocessing,
torchrun, python -m shmem.run).

Few jobs, each checking many things (a PE returns the list of what went wrong)."""

import os
import socket
import subprocess
import sys
import tempfile

import pytest

torch = pytest.importorskip("torch", reason="shmem-torch needs torch")

import dist_checks  # noqa: E402
from conftest import HERE, PE_ENV  # noqa: E402

# A small pool, so that tensors of a few MB take several chunks and rounds.
SMALL_POOL = {"SHMEM_TORCH_POOL_SIZE": "4M", "SHMEM_TORCH_CHUNK_SIZE": "256K"}


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(**extra):
    env = dict(os.environ)
    env.update(PE_ENV)
    env.update(extra)
    paths = [p for p in sys.path if p and os.path.isdir(p)]
    env["PYTHONPATH"] = os.pathsep.join([HERE] + paths + [env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def _run(n, fn, *args, env=None, timeout=240):
    from shmem import testing

    return testing.run_pes(n, fn, *args, init=False, env={**PE_ENV, **(env or {})}, timeout=timeout, echo=False)


def _assert_clean(per_rank):
    problems = [p for rank_problems in per_rank for p in rank_problems]
    assert not problems, "\n".join(problems[:40])


@pytest.mark.parametrize("n", [2, 4])
def test_collectives(n):
    _assert_clean(_run(n, dist_checks.collectives, _free_port(), env=SMALL_POOL))


def test_staged_all_reduce_unchecked():
    _assert_clean(_run(4, dist_checks.staged_unchecked, _free_port(), env={**SMALL_POOL, "SHMEM_TORCH_CHECK": "0"}))


def test_ddp_matches_gloo():
    results = _run(2, dist_checks.ddp, _free_port(), 1234, 5)
    for rank, res in enumerate(results):
        assert len(res["shmem"]) == len(res["gloo"]) > 0
        for a, b in zip(res["shmem"], res["gloo"]):
            torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
    # every rank ends with the same parameters
    for a, b in zip(results[0]["shmem"], results[1]["shmem"]):
        assert torch.equal(a, b)


def test_torch_compile():
    _assert_clean(_run(2, dist_checks.compiled, _free_port(), timeout=300))


def test_launchers():
    """torch.multiprocessing (env:// rendezvous), torchrun and python -m shmem.run."""
    import torch.multiprocessing as mp

    expect = ["rank 0/2: backend shmem sum 3 gather [0.0, 1.0]", "rank 1/2: backend shmem sum 3 gather [0.0, 1.0]"]
    old = os.environ.get("OMP_NUM_THREADS")
    os.environ["OMP_NUM_THREADS"] = "1"
    try:
        with tempfile.TemporaryDirectory() as d:
            mp.start_processes(dist_checks.spawned, args=(2, _free_port(), d), nprocs=2, start_method="spawn")
            assert [open(os.path.join(d, f"{r}.txt")).read() for r in range(2)] == expect
    finally:
        if old is None:
            os.environ.pop("OMP_NUM_THREADS", None)
        else:
            os.environ["OMP_NUM_THREADS"] = old
    script = os.path.join(HERE, "dist_script.py")
    for cmd in ([sys.executable, "-m", "torch.distributed.run", "--nproc-per-node=2", "--master-port",
                 str(_free_port()), script],
                [sys.executable, "-m", "shmem.run", "-n", "2", script]):
        p = subprocess.run(cmd, env=_env(), capture_output=True, text=True, timeout=180)
        assert p.returncode == 0, f"{cmd[2]} failed ({p.returncode}):\n{p.stdout}\n{p.stderr[-3000:]}"
        for line in expect:
            assert line in p.stdout, p.stdout


def test_registered_without_init():
    import torch.distributed as dist

    import shmem_torch  # noqa: F401

    assert "shmem" in dist.Backend.backend_list
    assert dist.Backend.SHMEM == "shmem"


def test_pool_size_variables_take_shmem_sizes(monkeypatch):
    """SHMEM_TORCH_POOL_SIZE / SHMEM_TORCH_CHUNK_SIZE (and the staging area's size) go
    through shmem's one size parser; a bad value is an AclshmemInvalid naming the variable."""
    from shmem.core import AclshmemInvalid
    from shmem_torch import staging

    for text in ("64M", "64 MiB", "67108864"):
        monkeypatch.setenv("SHMEM_TORCH_POOL_SIZE", text)
        assert staging.size_env("SHMEM_TORCH_POOL_SIZE", 1) == 64 << 20
    monkeypatch.setenv("SHMEM_TORCH_POOL_SIZE", "")
    assert staging.size_env("SHMEM_TORCH_POOL_SIZE", 123) == 123
    for text, message in (("lots", "not a size"), ("1.5", "not a whole number of bytes"),
                          ("0", "must be a positive size"), ("1" * 40, "too large"),
                          ("64G", "more than the largest symmetric heap")):
        monkeypatch.setenv("SHMEM_TORCH_CHUNK_SIZE", text)
        with pytest.raises(AclshmemInvalid, match=f"SHMEM_TORCH_CHUNK_SIZE.*{message}"):
            staging.size_env("SHMEM_TORCH_CHUNK_SIZE", 1)
