"""``shmem-perf --dist``: the torch.distributed backend "shmem" against gloo, same processes.

    python -m shmem_tools._dist_bench [--ranks 2,4] [--max-size 64M] [--quick] [--threads N]

For each rank count, that many processes start (torch.multiprocessing, spawn) with the
default process group on ``"shmem"`` and a second group of all ranks on gloo
(``dist.new_group(backend="gloo")``), in the configuration a user gets without tuning
anything: torch's default intra-op thread count, and neither ``OMP_NUM_THREADS`` nor
``torch.set_num_threads`` set by the benchmark (``--threads N`` calls
``torch.set_num_threads(N)`` in every rank, to compare).  The tables say how many
threads the ranks ran with.  Every process times:

* ``dist.all_reduce`` of a float32 tensor (an ordinary CPU tensor: the backend stages it
  through its symmetric pool), 4 KiB .. 64 MiB, on each group in turn;
* the physical floor of an all-reduce of that size, and the "shmem" group's all-reduce of
  symmetric data (a ``shmem_torch.empty`` tensor, which the engine reduces in place) against
  it: the floor is the time every rank takes, all at once, to copy with one ``memcpy``
  (``ctypes.memmove``) the bytes an all-reduce of n ranks must move and add per rank,
  2 (n - 1) / n x size (its share of the other ranks' data to add, then the other ranks'
  reduced shares to fetch), so that the ranks' sharing of the CPUs and of the memory
  bandwidth is in the floor as it is in the all-reduce;
* a DDP training step (forward, backward with the gradient all-reduces, SGD step) of
  two MLPs, one DistributedDataParallel per group, same seed and data.

Rounds alternate between the two backends and each keeps its best round, so that other
work on the machine disturbs both alike; a round's time is the slowest rank's mean.
The result of every all_reduce size is checked once per backend.
"""

import argparse
import ctypes
import json
import os
import sys
import tempfile

from shmem._sizes import format_size

from ._bench_common import free_port, mean_time, parse_size
from ._table import render

SIZES = [4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20]
QUICK_SIZES = [4 << 10, 256 << 10]
# (name, layer widths) of the DDP models: parameters ~ sum of w_i * w_{i+1}
MODELS = [("mlp-1M", [512, 1024, 512, 16]), ("mlp-17M", [2048, 4096, 2048, 16])]
QUICK_MODELS = [("mlp-1M", [512, 1024, 512, 16])]
TARGET = 3.0  # the goal for all_reduce: shmem at least this much faster than gloo
FLOOR_TARGET = 1.5  # ... and for the all-reduce of symmetric data: at most this much the floor's time


def floor_bytes(nbytes, n):
    """The bytes an all-reduce of nbytes on n ranks must move and add per rank (see above);
    at least one, so that the floor is a real copy."""
    return max(1, 2 * (n - 1) * nbytes // n)


def _iters(nbytes, quick):
    if quick:
        return 3, 2
    if nbytes <= 64 << 10:
        return 100, 5
    if nbytes <= 1 << 20:
        return 30, 5
    if nbytes <= 16 << 20:
        return 8, 3
    return 3, 3


def _worker(rank, n, port, sizes, models, quick, outdir, threads=None):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    import torch
    import torch.distributed as dist

    import shmem_torch  # registers "shmem"

    if threads:
        torch.set_num_threads(threads)
    dist.init_process_group("shmem", rank=rank, world_size=n)
    gloo = dist.new_group(backend="gloo")
    groups = {"shmem": None, "gloo": gloo}
    out = {"all_reduce": {}, "ddp": {}, "threads": torch.get_num_threads()}
    for nbytes in sizes:
        numel = nbytes // 4
        iters, rounds = _iters(nbytes, quick)
        # The ordinary tensors on each group, and a symmetric one on "shmem" (the engine
        # reduces it in place; not a key of groups, so the default group): each checked
        # once, then zeroed, so that the timed calls start from zeros (no overflow, no
        # denormals).
        tensors = {name: torch.zeros(numel) for name in groups}
        tensors["sym"] = sym = shmem_torch.empty(numel, dtype=torch.float32)
        calls = {name: (lambda t=t, g=groups.get(name): dist.all_reduce(t, group=g)) for name, t in tensors.items()}
        res = {}
        for name, t in tensors.items():
            t.fill_(float(rank + 1))
            calls[name]()
            res[name] = {"ok": bool(torch.all(t == n * (n + 1) / 2)), "times": []}
            t.zero_()
        copied = floor_bytes(nbytes, n)
        src, dst = torch.ones(copied, dtype=torch.uint8), torch.zeros(copied, dtype=torch.uint8)
        calls["floor"] = lambda: ctypes.memmove(dst.data_ptr(), src.data_ptr(), copied)
        res["floor"] = {"ok": True, "times": []}
        for _ in range(rounds):
            for name, call in calls.items():
                res[name]["times"].append(mean_time(call, iters, lambda: dist.barrier(group=gloo)))
        res["floor"]["ok"] = bool(torch.equal(src, dst))
        dist.barrier(group=gloo)  # nobody's all-reduce still reads this rank's tensor
        shmem_torch.aclshmem_free_tensor(sym)
        out["all_reduce"][str(nbytes)] = res
    for mname, widths in models:
        from torch.nn.parallel import DistributedDataParallel as DDP

        res = {}
        ddps = {}
        for name, g in groups.items():
            torch.manual_seed(0)
            layers = []
            for a, b in zip(widths[:-1], widths[1:]):
                layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
            model = torch.nn.Sequential(*layers[:-1])
            ddps[name] = (DDP(model, process_group=g), torch.optim.SGD(model.parameters(), lr=0.01))
            res[name] = {"times": [], "params": sum(p.numel() for p in model.parameters())}
        torch.manual_seed(1 + rank)
        data = torch.randn(32, widths[0])
        target = torch.randn(32, widths[-1])

        def step(name):
            m, opt = ddps[name]
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(m(data), target)
            loss.backward()
            opt.step()

        iters, rounds = (2, 2) if quick else (10, 4)
        for name in groups:
            step(name)
        for _ in range(rounds):
            for name in groups:
                res[name]["times"].append(mean_time(lambda: step(name), iters, lambda: dist.barrier(group=gloo)))
        same = all(torch.allclose(a, b, rtol=1e-4, atol=1e-5)
                   for a, b in zip(ddps["shmem"][0].parameters(), ddps["gloo"][0].parameters()))
        res["same_params"] = same
        out["ddp"][mname] = res
    dist.barrier(group=gloo)
    with open(os.path.join(outdir, f"rank{rank}.json"), "w") as f:
        json.dump(out, f)
    dist.destroy_process_group()


def run(n, sizes, models, quick=False, threads=None):
    """Runs the benchmark on n ranks; returns {"all_reduce": [...rows], "ddp": [...rows],
    "threads": torch threads of rank 0}.  ``threads``: torch.set_num_threads in every rank
    (None: torch's default)."""
    import torch.multiprocessing as mp

    with tempfile.TemporaryDirectory(prefix="shmem-dist-bench-") as outdir:
        mp.start_processes(_worker, args=(n, free_port(), sizes, models, quick, outdir, threads), nprocs=n,
                           start_method="spawn")
        per_rank = []
        for r in range(n):
            with open(os.path.join(outdir, f"rank{r}.json")) as f:
                per_rank.append(json.load(f))
    rows = []
    for nbytes in sizes:
        key = str(nbytes)
        row = {"ranks": n, "bytes": nbytes}
        for name in ("shmem", "gloo", "sym", "floor"):
            rounds = zip(*[pr["all_reduce"][key][name]["times"] for pr in per_rank])
            row[name] = min(max(ts) for ts in rounds)
            row[name + "_ok"] = all(pr["all_reduce"][key][name]["ok"] for pr in per_rank)
        row["ratio"] = row["gloo"] / row["shmem"]
        row["sym_vs_floor"] = row["sym"] / row["floor"]
        rows.append(row)
    ddp = []
    for mname, _ in models:
        row = {"ranks": n, "model": mname, "params": per_rank[0]["ddp"][mname]["shmem"]["params"]}
        for name in ("shmem", "gloo"):
            rounds = zip(*[pr["ddp"][mname][name]["times"] for pr in per_rank])
            row[name] = min(max(ts) for ts in rounds)
        row["ratio"] = row["gloo"] / row["shmem"]
        row["same_params"] = all(pr["ddp"][mname]["same_params"] for pr in per_rank)
        ddp.append(row)
    return {"all_reduce": rows, "ddp": ddp, "threads": per_rank[0]["threads"]}


def format_tables(results):
    lines = ["# torch.distributed backend: dist.all_reduce (float32 sum, ordinary CPU tensors), \"shmem\" vs gloo,",
             f"# same processes, {_threads_note(results)}; time = slowest rank's mean, best of alternating rounds"]
    header = ["ranks", "size", "shmem us", "gloo us", "vs gloo", "goal"]
    rows = []
    for r in results["all_reduce"]:
        goal = "ok" if r["ratio"] >= TARGET else "miss"
        rows.append([str(r["ranks"]), format_size(r["bytes"]), f"{r['shmem'] * 1e6:.1f}", f"{r['gloo'] * 1e6:.1f}",
                     f"{r['ratio']:.2f}x", goal, "" if r["shmem_ok"] and r["gloo_ok"] else "WRONG RESULT"])
    if any(row[-1] for row in rows):
        header.append("")  # an untitled column names the wrong results
    lines.append(render(header, [row[:len(header)] for row in rows], left={6}))
    lines.append("")
    lines += _floor_table(results["all_reduce"])
    lines.append("")
    lines.append("# DDP training step (forward, backward with gradient all-reduce, SGD), batch 32")
    rows = [[str(r["ranks"]), r["model"], str(r["params"]), f"{r['shmem'] * 1e3:.2f}", f"{r['gloo'] * 1e3:.2f}",
             f"{r['ratio']:.2f}x", "yes" if r["same_params"] else "NO"] for r in results["ddp"]]
    lines.append(render(["ranks", "model", "params", "shmem ms", "gloo ms", "vs gloo", "same params"], rows))
    return "\n".join(lines)


def _floor_table(all_reduce):
    """The all-reduces against the floor (time / floor's time); the goal is the symmetric one's."""
    lines = ["# the floor: every rank at once copying 2 (n - 1) / n x size bytes with one memcpy (what an all-reduce",
             "# must move and add per rank); sym: dist.all_reduce of a shmem_torch.empty tensor on \"shmem\";",
             "# shmem, gloo: the ordinary tensors above"]
    header = ["ranks", "size", "floor us", "sym us", "sym/floor", "goal", "shmem/floor", "gloo/floor"]
    rows = []
    for r in all_reduce:
        goal = "ok" if r["sym_vs_floor"] <= FLOOR_TARGET else "miss"
        rows.append([str(r["ranks"]), format_size(r["bytes"]), f"{r['floor'] * 1e6:.1f}", f"{r['sym'] * 1e6:.1f}",
                     f"{r['sym_vs_floor']:.2f}x", goal, f"{r['shmem'] / r['floor']:.2f}x",
                     f"{r['gloo'] / r['floor']:.2f}x", "" if r["sym_ok"] and r["floor_ok"] else "WRONG RESULT"])
    if any(row[-1] for row in rows):
        header.append("")
    lines.append(render(header, [row[:len(header)] for row in rows], left={8}))
    return lines


def _threads_note(results):
    threads = results.get("threads")
    if threads is None:
        return "default torch settings"
    if results.get("threads_set"):
        return f"{threads} torch thread(s) per rank (--threads)"
    return f"default torch settings ({threads} torch thread(s) per rank)"


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m shmem_tools._dist_bench", description=__doc__.splitlines()[0])
    p.add_argument("--ranks", default="2,4", help="rank counts, comma-separated (default 2,4)")
    p.add_argument("--max-size", type=parse_size, default=64 << 20)
    p.add_argument("--min-size", type=parse_size, default=4 << 10)
    p.add_argument("--quick", action="store_true", help="two sizes, one small model, few iterations")
    p.add_argument("--threads", type=int, default=None,
                   help="call torch.set_num_threads(N) in every rank (default: leave torch's default)")
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    ns = p.parse_args(argv)
    if ns.threads is not None and ns.threads < 1:
        p.error("--threads must be at least 1")
    sizes = QUICK_SIZES if ns.quick else [s for s in SIZES if ns.min_size <= s <= ns.max_size]
    models = QUICK_MODELS if ns.quick else MODELS
    results = {"all_reduce": [], "ddp": [], "threads_set": ns.threads is not None}
    for n in (int(x) for x in ns.ranks.split(",") if x.strip()):
        r = run(n, sizes, models, quick=ns.quick, threads=ns.threads)
        results["all_reduce"] += r["all_reduce"]
        results["ddp"] += r["ddp"]
        results["threads"] = r["threads"]
    print(format_tables(results))
    if ns.json:
        with open(ns.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
