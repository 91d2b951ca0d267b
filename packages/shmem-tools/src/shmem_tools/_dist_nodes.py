"""``shmem-perf --dist --nodes 2``: the torch.distributed backend "shmem" against gloo across
two nodes, in the same processes.

    sudo python -m shmem_tools._dist_nodes [--ppn 1,2] [--min-size 64K] [--max-size 8M]
                                           [--rounds 5] [--quick] [--json FILE]

The two nodes are the network namespaces of ``shmem-perf --nodes 2`` (shmem_tools._netns:
two namespaces joined by one veth pair, removed whatever happens).  For each ranks-per-node
count (``--ppn``: 1 and 2 by default, jobs of 2x1 and 2x2 ranks) every rank is a process
started in its node's namespace; rank r runs on node r // ppn.  Each rank makes the default
process group on "shmem" (env://, the store at node 0's veth address) and a second group
of the same ranks on gloo (``dist.new_group(backend="gloo")``), so both carry their traffic
over the veth pair: gloo through ``GLOO_SOCKET_IFNAME=eth0``, the library through its UCX
plug-in with ``UCX_TLS=tcp`` and ``UCX_NET_DEVICES=eth0`` (the multi-node tests' settings)
and its control plane at ``MASTER_ADDR``.  Torch's default thread count (nothing set).

Every rank times, at 64 KiB .. 8 MiB of float32:

* ``dist.all_reduce`` (sum) of an ordinary CPU tensor (the backend stages it through its
  symmetric pool);
* the same on a symmetric tensor (``shmem_torch.empty``: the engine works on it in place;
  gloo gets the same tensor);
* ``dist.broadcast`` from rank 0 of an ordinary tensor.

Before timing a size, each backend's results are checked once.  Rounds alternate the two
backends (which goes first alternates too); a round's time is the slowest rank's mean, and
the table gives the median over the rounds and the ratio gloo / shmem against the goal of
issue #25 (>= 1.0x: "shmem" at least as fast as gloo between the same namespaces).
"""

import argparse
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

from shmem._sizes import format_size

from ._bench_common import mean_time, parse_size
from ._internode import InternodeError, find_library, ucx_env
from ._netns import NetnsError, VethPair, unavailable
from ._table import render

SIZES = [64 << 10, 256 << 10, 1 << 20, 4 << 20, 8 << 20]
# 2 MiB: ordinary tensors then take the engine's node-by-node and piecewise ways across nodes
QUICK_SIZES = [64 << 10, 256 << 10, 2 << 20]
OPS = ("all_reduce", "all_reduce sym", "broadcast")
BACKENDS = ("shmem", "gloo")
TARGET = 1.0  # issue #25: gloo's time / shmem's time at least this
MASTER_PORT = 29500  # fresh namespaces: always free
ENV_PLAN = "SHMEM_DIST_NODES_PLAN"
TORCHRUN_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")


def iterations(nbytes, quick):
    """Calls per timed round of a size."""
    if quick:
        return 2
    if nbytes <= 256 << 10:
        return 40
    if nbytes <= 1 << 20:
        return 12
    return 4


# ---------------------------------------------------------------------------
# A rank (runs inside a namespace: python -m shmem_tools._dist_nodes --worker FILE)
# ---------------------------------------------------------------------------


def _checks(dist, torch, groups, tensors, rank, n):
    """{op: {backend: result exact}} of one call of each op on each group."""
    ok = {op: {} for op in OPS}
    expected = torch.tensor(n * (n + 1) / 2)
    pattern = torch.arange(tensors["broadcast"].numel(), dtype=torch.float32) % 1000
    for name, g in groups.items():
        for op, key in (("all_reduce", "plain"), ("all_reduce sym", "sym")):
            t = tensors[key]
            t.fill_(float(rank + 1))
            dist.all_reduce(t, group=g)
            ok[op][name] = bool(torch.all(t == expected))
            t.zero_()  # the timed calls start from zeros: no overflow, no denormals
        b = tensors["broadcast"]
        b.copy_(pattern if rank == 0 else torch.zeros_like(pattern))
        dist.broadcast(b, 0, group=g)
        ok["broadcast"][name] = bool(torch.equal(b, pattern))
    return ok


def _measure_size(dist, torch, shmem_torch, groups, plan, nbytes, rank, n):
    numel = nbytes // 4
    sym = shmem_torch.empty(numel, dtype=torch.float32)
    tensors = {"plain": torch.zeros(numel), "sym": sym, "broadcast": torch.zeros(numel)}
    calls = {"all_reduce": lambda g: dist.all_reduce(tensors["plain"], group=g),
             "all_reduce sym": lambda g: dist.all_reduce(sym, group=g),
             "broadcast": lambda g: dist.broadcast(tensors["broadcast"], 0, group=g)}
    res = {"ok": _checks(dist, torch, groups, tensors, rank, n), "times": {op: {b: [] for b in BACKENDS} for op in OPS}}
    iters = iterations(nbytes, plan["quick"])
    barrier = lambda: dist.barrier(group=groups["gloo"])  # noqa: E731
    for op in OPS:
        for name in BACKENDS:
            calls[op](groups[name])  # warm-up
    for rnd in range(plan["rounds"]):
        order = BACKENDS if rnd % 2 == 0 else BACKENDS[::-1]
        for op in OPS:
            for name in order:
                g = groups[name]
                res["times"][op][name].append(mean_time(lambda: calls[op](g), iters, barrier))
    dist.barrier(group=groups["gloo"])
    shmem_torch.aclshmem_free_tensor(sym)
    return res


def worker(out_path):
    plan = json.loads(os.environ[ENV_PLAN])
    import torch
    import torch.distributed as dist

    import shmem_torch

    dist.init_process_group("shmem")
    rank, n = dist.get_rank(), dist.get_world_size()
    groups = {"shmem": None, "gloo": dist.new_group(backend="gloo")}
    out = {"rank": rank, "threads": torch.get_num_threads(), "sizes": {}}
    for nbytes in plan["sizes"]:
        out["sizes"][str(nbytes)] = _measure_size(dist, torch, shmem_torch, groups, plan, nbytes, rank, n)
    dist.barrier(group=groups["gloo"])
    with open(out_path, "w") as f:
        json.dump(out, f)
    dist.destroy_process_group()


# ---------------------------------------------------------------------------
# The run: both nodes, every ranks-per-node count
# ---------------------------------------------------------------------------


def _rank_env(pair, rank, ppn, plan, secret):
    env = {k: v for k, v in ucx_env().items()
           if k not in TORCHRUN_VARS and k not in ("SHMEM_RUN_UID", "SHMEM_RUN_PE", "SHMEM_RUN_NPES")}
    env.update(RANK=str(rank), WORLD_SIZE=str(2 * ppn), LOCAL_RANK=str(rank % ppn), LOCAL_WORLD_SIZE=str(ppn),
               MASTER_ADDR=pair.addrs[0], MASTER_PORT=str(MASTER_PORT), GLOO_SOCKET_IFNAME="eth0",
               SHMEM_JOB_SECRET=secret)
    env[ENV_PLAN] = json.dumps(plan)
    return env


def run_job(pair, ppn, plan, workdir, timeout):
    """Runs the 2 x ppn ranks in the two namespaces; returns every rank's results."""
    secret = secrets.token_hex(32)
    procs, logs = [], []
    for rank in range(2 * ppn):
        out = os.path.join(workdir, f"{ppn}-rank{rank}.json")
        log = open(os.path.join(workdir, f"{ppn}-rank{rank}.log"), "w+")
        logs.append(log)
        procs.append(pair.popen(rank // ppn, [sys.executable, "-m", "shmem_tools._dist_nodes", "--worker", out],
                                env=_rank_env(pair, rank, ppn, plan, secret), stdout=log, stderr=subprocess.STDOUT))
    deadline = time.monotonic() + timeout
    try:
        while any(p.poll() is None for p in procs):
            if time.monotonic() > deadline or any(p.poll() not in (None, 0) for p in procs):
                break
            time.sleep(0.2)
        failed = [(r, p.poll()) for r, p in enumerate(procs) if p.poll() != 0]
        if failed:
            raise InternodeError(_failure(failed, logs, timeout))
        results = []
        for rank in range(2 * ppn):
            with open(os.path.join(workdir, f"{ppn}-rank{rank}.json")) as f:
                results.append(json.load(f))
        return results
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        for log in logs:
            log.close()


def _failure(failed, logs, timeout):
    lines = []
    for rank, status in failed:
        what = f"did not finish within {timeout:g} s" if status is None else f"exited with status {status}"
        logs[rank].seek(0)
        tail = logs[rank].read().splitlines()[-15:]
        lines.append(f"rank {rank} {what}; its output:\n" + "\n".join("  " + ln for ln in tail))
    return "the 2-node torch job failed:\n" + "\n".join(lines)


def summarise(ppn, plan, per_rank):
    """The table's records of one job: per op and size, each backend's median over the
    rounds of the slowest rank's mean."""
    rows = []
    for nbytes in plan["sizes"]:
        key = str(nbytes)
        for op in OPS:
            row = {"nodes": 2, "ppn": ppn, "op": op, "bytes": nbytes}
            for name in BACKENDS:
                rounds = [max(ts) for ts in zip(*[r["sizes"][key]["times"][op][name] for r in per_rank])]
                row[name] = statistics.median(rounds)
                row[name + "_rounds"] = rounds
                row[name + "_ok"] = all(r["sizes"][key]["ok"][op][name] for r in per_rank)
            row["ratio"] = row["gloo"] / row["shmem"]
            row["met"] = row["ratio"] >= TARGET
            rows.append(row)
    return rows


def run(ppns, sizes, rounds, quick=False, timeout=900, progress=print):
    """Measures every ranks-per-node count in ppns; returns {"rows": [...], "meta": {...}}."""
    lib, runtime, plugin = find_library()
    plan = {"sizes": sizes, "rounds": rounds, "quick": quick}
    rows, threads = [], None
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="shmem-dist-nodes-") as workdir:
        with VethPair() as pair:
            for ppn in ppns:
                progress(f"2 nodes x {ppn} rank(s): {len(sizes)} sizes, {rounds} round(s)")
                per_rank = run_job(pair, ppn, plan, workdir, timeout)
                threads = per_rank[0]["threads"]
                rows += summarise(ppn, plan, per_rank)
    env = ucx_env()
    meta = {"library": runtime.get("name"), "library_file": lib, "plugin": plugin["path"],
            "ucx": (plugin.get("name") or "UCX").replace("UCX ", ""), "threads": threads, "rounds": rounds,
            "quick": quick, "cpus": os.cpu_count(), "load_before": load_before, "load_after": os.getloadavg(),
            "env": {k: env[k] for k in ("UCX_TLS", "UCX_NET_DEVICES")}, "gloo_ifname": "eth0",
            "date": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    return {"rows": rows, "meta": meta}


def format_table(result):
    meta = result["meta"]
    load = lambda la: "/".join(f"{x:.2f}" for x in la)  # noqa: E731
    lines = [f"# torch.distributed across 2 nodes (network namespaces joined by a veth pair): \"shmem\" "
             f"({meta['library']}, UCX {meta['ucx']} plug-in, UCX_TLS={meta['env']['UCX_TLS']}) vs gloo "
             f"(GLOO_SOCKET_IFNAME={meta['gloo_ifname']}), same processes, float32",
             f"# {meta['threads']} torch thread(s) per rank (torch's default), {meta['cpus']} CPUs, load average "
             f"{load(meta['load_before'])} before, {load(meta['load_after'])} after",
             f"# time = median over {meta['rounds']} alternating round(s) of the slowest rank's mean; "
             f"vs gloo = gloo time / shmem time; goal >= {TARGET:.1f}x",
             "# all_reduce: ordinary CPU tensors (staged); all_reduce sym: shmem_torch.empty tensors (in place); "
             "broadcast: ordinary tensors, root 0"]
    header = ["ranks", "op", "size", "shmem us", "gloo us", "vs gloo", "goal"]
    rows = []
    for r in result["rows"]:
        wrong = "" if r["shmem_ok"] and r["gloo_ok"] else "WRONG RESULT"
        rows.append([f"2x{r['ppn']}", r["op"], format_size(r["bytes"]), f"{r['shmem'] * 1e6:.0f}",
                     f"{r['gloo'] * 1e6:.0f}", f"{r['ratio']:.2f}x", "ok" if r["met"] else "miss", wrong])
    if any(row[-1] for row in rows):
        header.append("")
    lines.append(render(header, [row[:len(header)] for row in rows], left={1, 7}))
    return "\n".join(lines)


def _ppns(text):
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of numbers: {text!r}") from None
    if not values or any(v < 1 or v > 8 for v in values):
        raise argparse.ArgumentTypeError("ranks per node must be 1..8")
    return values


def parser():
    p = argparse.ArgumentParser(prog="python -m shmem_tools._dist_nodes", description=__doc__.splitlines()[0])
    p.add_argument("--ppn", type=_ppns, default=[1, 2], help="ranks per node, comma-separated (default 1,2)")
    p.add_argument("--min-size", type=parse_size, default=64 << 10)
    p.add_argument("--max-size", type=parse_size, default=8 << 20)
    p.add_argument("--rounds", type=int, default=None, help="alternating rounds (default 5; 1 with --quick)")
    p.add_argument("--quick", action="store_true", help="64K, 256K and 2M, one round, few calls (a smoke run)")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds each job may take (default 900)")
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON (- : instead of the table)")
    p.add_argument("--worker", metavar="OUT", help=argparse.SUPPRESS)
    return p


def main(argv=None):
    p = parser()
    ns = p.parse_args(argv)
    if ns.worker:
        try:
            worker(ns.worker)
        except BaseException:
            # The other ranks wait in a collective: exiting normally would wait with them
            # (finalize is collective), so this rank leaves at once and the run stops.
            traceback.print_exc()
            sys.stderr.flush()
            os._exit(1)
        return 0
    if ns.rounds is not None and ns.rounds < 1:
        p.error("--rounds must be at least 1")
    if ns.min_size > ns.max_size:
        p.error("--min-size is larger than --max-size")
    sizes = QUICK_SIZES if ns.quick else [s for s in SIZES if ns.min_size <= s <= ns.max_size] or [ns.min_size]
    sizes = [max(4, s // 4 * 4) for s in sizes]
    rounds = ns.rounds or (1 if ns.quick else 5)
    why = unavailable("shmem-perf --dist --nodes 2")
    if why is None:
        why = _torch_missing()
    if why:
        sys.stderr.write(f"shmem-perf: --dist --nodes 2 cannot run: {why}\n")
        return 1
    say = lambda text: sys.stderr.write(f"shmem-perf: {text}\n")  # noqa: E731
    try:
        result = run(ns.ppn, sizes, rounds, quick=ns.quick, timeout=ns.timeout, progress=say)
    except (InternodeError, NetnsError) as exc:
        sys.stderr.write(f"shmem-perf: error: {exc}\n")
        return 1
    if ns.json:
        text = json.dumps(result, indent=1) + "\n"
        if ns.json == "-":
            sys.stdout.write(text)
            return 0
        with open(ns.json, "w") as f:
            f.write(text)
    print(format_table(result))
    return 0


def _torch_missing():
    """Why the ranks cannot run the torch backend here, or None."""
    import importlib.util

    for name in ("torch", "shmem_torch"):
        if importlib.util.find_spec(name) is None:
            return f"{name} is not installed (pip install shmem-tools[torch])"
    return None


if __name__ == "__main__":
    sys.exit(main())
