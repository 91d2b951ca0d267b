"""shmem-perf --dist --nodes 2: the torch.distributed backend "shmem" against gloo across two
network namespaces.  Its arguments, and a real quick run (as root, with `ip netns`, torch,
shmem-torch and the UCX plug-in; skipped otherwise, saying why) whose table must have every
row, whose "shmem" results must be exact and whose namespaces must be gone afterwards.  No
time is checked: the numbers are for people (docs/guides/benchmarking.rst)."""

import json
import os
import subprocess

import pytest

from toolrun import clean_env, command, run_tool


def test_only_two_nodes():
    r = run_tool("shmem-perf", "--dist", "--nodes", "3")
    assert r.returncode == 2 and "only 2 is supported" in r.stderr, r.stderr


def test_bad_rounds_and_sizes():
    r = run_tool("shmem-perf", "--dist", "--nodes", "2", "--rounds", "0")
    assert r.returncode == 2 and "--rounds must be at least 1" in r.stderr, r.stderr
    r = run_tool("shmem-perf", "--dist", "--nodes", "2", "--min-size", "1M", "--max-size", "64K")
    assert r.returncode == 2 and "--min-size is larger" in r.stderr, r.stderr


def _unavailable():
    import importlib.util

    from shmem_tools import _install, _netns

    why = _netns.unavailable()
    if why:
        return why
    for name in ("torch", "shmem_torch"):
        if importlib.util.find_spec(name) is None:
            return f"{name} is not installed"
    rt = _install.runtime_library()
    plugin = _install.ucx_plugin(rt) if rt["ok"] else {"loaded": False, "error": rt["error"]}
    if not plugin["loaded"]:
        return f"the library in use has no usable UCX plug-in ({plugin['error']})"
    return None


@pytest.mark.skipif(_unavailable() is not None, reason=f"cannot run --dist --nodes 2 here: {_unavailable()}")
def test_quick_run_has_every_row_exact_and_removes_the_namespaces():
    from shmem_tools import _dist_nodes, _netns

    proc = subprocess.Popen(command("shmem-perf") + ["--dist", "--nodes", "2", "--quick", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env())
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, out + err
    d = json.loads(out)
    rows = d["rows"]
    assert [(r["ppn"], r["bytes"], r["op"]) for r in rows] == [
        (ppn, size, op) for ppn in (1, 2) for size in _dist_nodes.QUICK_SIZES for op in _dist_nodes.OPS]
    wrong = [(r["ppn"], r["op"], r["bytes"]) for r in rows if not (r["shmem_ok"] and r["gloo_ok"])]
    assert not wrong, f"wrong results: {wrong}"
    for r in rows:
        assert r["shmem"] > 0 and r["gloo"] > 0 and r["ratio"] == pytest.approx(r["gloo"] / r["shmem"])
    assert d["meta"]["env"]["UCX_TLS"] == "tcp" and d["meta"]["rounds"] == 1
    table = _dist_nodes.format_table(d)
    rows_shown = [ln for ln in table.splitlines() if ln.lstrip().startswith("2x")]
    assert "WRONG" not in table and len(rows_shown) == 2 * len(_dist_nodes.QUICK_SIZES) * len(_dist_nodes.OPS)
    left = subprocess.run(["ip", "-o", "netns", "list"], capture_output=True, text=True).stdout
    assert not [ln for ln in left.splitlines() if ln.startswith(f"{_netns.PREFIX}{proc.pid}-")]
