"""shmem-perf --dist --quick: the torch.distributed backend "shmem" against gloo (a smoke
run: tiny sizes, one small model; nothing here is timed)."""

import re
import subprocess
import sys

import pytest
from toolrun import clean_env, run_tool


def _torch_backend_ready():
    try:
        import shmem_torch
        import torch  # noqa: F401
    except ImportError:
        return False
    return hasattr(shmem_torch, "backend")


@pytest.mark.skipif(not _torch_backend_ready(), reason="needs torch and shmem-torch with its backend")
def test_dist_quick_run_prints_both_tables():
    r = run_tool("shmem-perf", "--dist", "--quick", "--pes", "2", env=None, timeout=240)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert "# torch.distributed backend: dist.all_reduce" in out
    assert "# DDP training step" in out
    assert "# the floor: every rank at once copying" in out
    assert "WRONG" not in out  # the symmetric all-reduce and the floor's copy checked too
    rows = [line for line in out.splitlines() if line.strip().startswith("2 ") and "x" in line]
    assert len(rows) >= 5, out  # two all_reduce sizes, the same two against the floor, one model
    assert " NO" not in out  # DDP on "shmem" reached gloo's parameters
    # The ranks ran with torch's own thread count, what a fresh process gets here.
    fresh = subprocess.run([sys.executable, "-c", "import torch; print(torch.get_num_threads())"],
                           env=clean_env(), capture_output=True, text=True, timeout=120)
    assert fresh.returncode == 0, fresh.stderr
    note = re.search(r"default torch settings \((\d+) torch thread\(s\) per rank\)", out)
    assert note and note.group(1) == fresh.stdout.strip(), out


def test_floor_bytes_are_what_an_all_reduce_moves_per_rank():
    from shmem_tools._dist_bench import floor_bytes

    assert floor_bytes(4096, 2) == 4096  # half to add, half to fetch
    assert floor_bytes(4096, 4) == 6144  # 3 quarters of each
    assert floor_bytes(1 << 20, 8) == 7 * (1 << 20) // 4
    assert floor_bytes(1, 2) == 1  # never a copy of nothing
