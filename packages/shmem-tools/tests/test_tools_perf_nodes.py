"""shmem-perf --nodes 2: its arguments, its refusal without root or ucx_perftest, a real
quick run (as root, with ucx_perftest and the UCX plug-in; skipped otherwise, saying why)
and the teardown of the namespaces on Ctrl-C.  No number is checked against a goal: the
numbers are for people (docs/guides/benchmarking.rst); but every row must carry both tools'
numbers, and the PE program fails the run when a put or a get brought the wrong bytes."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from toolrun import clean_env, command, run_tool


def test_only_two_nodes():
    r = run_tool("shmem-perf", "--nodes", "3")
    assert r.returncode == 2 and "only 2 is supported" in r.stderr


@pytest.mark.parametrize("args", [["--tests", "put"], ["--pes", "4"], ["--plot", "x.png"],
                                  ["--max-latency-size", "1K"], ["--time-per-point", "0.1"]])
def test_options_of_the_other_mode_are_refused(args):
    r = run_tool("shmem-perf", "--nodes", "2", *args)
    assert r.returncode == 2, r.stderr
    assert f"{args[0]} does not apply" in r.stderr


def test_node_options_need_nodes():
    for args in (["--rounds", "2"], ["--ucx-perftest", "/bin/true"]):
        r = run_tool("shmem-perf", *args)
        assert r.returncode == 2 and "goes with --nodes 2" in r.stderr, r.stderr


def test_bad_sizes_and_rounds():
    assert run_tool("shmem-perf", "--nodes", "2", "--min-size", "1M", "--max-size", "64K").returncode == 2
    assert run_tool("shmem-perf", "--nodes", "2", "--rounds", "0").returncode == 2


def test_refused_without_root_and_without_ucx_perftest(monkeypatch, capsys):
    """In this process, as uid 1000 (os.geteuid says so) and with a ucx_perftest that is not
    there: both reasons are given, and nothing is made."""
    from shmem_tools import _netns, perf

    made = []
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(_netns.VethPair, "__enter__", lambda self: made.append(self))
    status = perf.main(["--nodes", "2", "--ucx-perftest", "/nonexistent/ucx_perftest", "--no-progress"])
    err = capsys.readouterr().err
    assert status == 1 and not made
    assert "needs root" in err and "uid 1000" in err and "sudo shmem-perf --nodes 2" in err
    assert "/nonexistent/ucx_perftest is not an executable" in err and "ucx-utils" in err


def test_plan_has_gets_beside_puts():
    """Every kind of point is in the plan, in the table's order: the gets' latency at 8 bytes
    and their bandwidth (blocking and nbi) at the put bandwidth's sizes, each compared with
    ucx_perftest's ucp_get."""
    from shmem_tools import _internode

    sizes = [64 << 10, 1 << 20]
    plan = _internode.make_plan(sizes, quick=True)
    assert [(name, size) for name, size, _, _ in plan["points"]] == [
        ("put_lat", 8), ("put_bw", 64 << 10), ("put_bw", 1 << 20), ("get_lat", 8),
        ("get_bw", 64 << 10), ("get_bw", 1 << 20), ("get_nbi_bw", 64 << 10), ("get_nbi_bw", 1 << 20)]
    assert all(iters > warm >= 2 for _, _, iters, warm in plan["points"])
    gets = {name: kind for name, kind in _internode.KINDS.items() if kind.op == "get"}
    assert {(k.measure, k.mode) for k in gets.values()} == {("lat", "blocking"), ("bw", "blocking"), ("bw", "nbi")}
    assert all(k.perftest == "ucp_get" for k in gets.values())
    # the blocking ones against one get at a time, the nbi one against several in flight
    assert gets["get_lat"].windows == gets["get_bw"].windows == (("-O 1", ["-O", "1"]),)
    assert all(int(extra[1]) > 1 for _, extra in gets["get_nbi_bw"].windows)
    assert "get bandwidth (nbi): -t ucp_get" in _internode.baseline_text()


def _unavailable():
    from shmem_tools import _install, _netns

    why = _netns.unavailable()
    if why:
        return why
    if not shutil.which("ucx_perftest"):
        return "ucx_perftest is not installed (apt-get install ucx-utils)"
    if not (os.environ.get("CC") or shutil.which("cc")):
        return "no C compiler"
    rt = _install.runtime_library()
    plugin = _install.ucx_plugin(rt) if rt["ok"] else {"loaded": False, "error": rt["error"]}
    if not plugin["loaded"]:
        return f"the library in use has no usable UCX plug-in ({plugin['error']})"
    return None


needs_nodes = pytest.mark.skipif(_unavailable() is not None, reason=f"cannot run --nodes 2 here: {_unavailable()}")


def _namespaces_of(pid):
    from shmem_tools import _netns

    out = subprocess.run(["ip", "-o", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith(f"{_netns.PREFIX}{pid}-")]


@needs_nodes
def test_quick_run_prints_every_row_and_removes_the_namespaces():
    proc = subprocess.Popen(command("shmem-perf") + ["--nodes", "2", "--quick", "--max-size", "128K", "--json",
                                                     "--no-progress"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env())
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, out + err
    d = json.loads(out)
    rows = d["tables"][0]["rows"]
    assert [(r["variant"], r["size"]) for r in rows] == [
        ("put latency (mean)", 8), ("put latency (median)", 8), ("put bandwidth", 64 << 10),
        ("put bandwidth", 128 << 10), ("get latency (mean)", 8), ("get latency (median)", 8),
        ("get bandwidth (blocking)", 64 << 10), ("get bandwidth (blocking)", 128 << 10),
        ("get bandwidth (nbi)", 64 << 10), ("get bandwidth (nbi)", 128 << 10)]
    for r in rows:
        assert r["library"] > 0 and r["baseline"] > 0 and r["ratio"] > 0 and r["met"] in (True, False)
        assert abs(r["ratio"] - r["library"] / r["baseline"]) < 1e-9 * r["ratio"], r
        assert r["unit"] == ("us" if "latency" in r["variant"] else "MB/s"), r
    # a blocking get is ucx_perftest's ucp_get with one get outstanding; the nbi one had a window
    windows = {(r["variant"], r["ucx_window"]) for r in rows if r["variant"].startswith("get bandwidth")}
    assert {w for v, w in windows if v.endswith("(blocking)")} == {"-O 1"}
    assert {w for v, w in windows if v.endswith("(nbi)")} <= {"-O 4", "-O 32"}
    assert d["meta"]["env"]["UCX_TLS"] == "tcp" and d["meta"]["rounds"] == 1
    # the CPUs the two nodes were pinned to, and the machine's CPU count, both kept
    assert d["meta"]["cpus"] == os.cpu_count()
    assert d["meta"]["pinned_cpus"] is None or len(d["meta"]["pinned_cpus"]) == 2
    tools = {(m["tool"], m["kind"]) for m in d["measurements"]}
    kinds = ("put_lat", "put_bw", "get_lat", "get_bw", "get_nbi_bw")
    assert tools == {(tool, kind) for tool in ("ucx_perftest", "libaclshmem") for kind in kinds}
    assert _namespaces_of(proc.pid) == []


@needs_nodes
def test_ctrl_c_removes_the_namespaces():
    proc = subprocess.Popen(command("shmem-perf") + ["--nodes", "2", "--no-progress"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=clean_env())
    try:
        deadline = time.monotonic() + 120
        while len(_namespaces_of(proc.pid)) < 2 and proc.poll() is None:
            assert time.monotonic() < deadline, "the namespaces never appeared"
            time.sleep(0.05)
        time.sleep(1.0)  # inside the measurements
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, out + err
    assert "interrupted" in err
    assert _namespaces_of(proc.pid) == []
