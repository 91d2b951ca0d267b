#!/usr/bin/env python3
"""shmem_torch collectives against torch.distributed (gloo), measured in the same run.

    python bench_collectives.py                 # 2 and 4 ranks, 4 KiB .. 64 MiB
    python bench_collectives.py --ranks 2 --sizes 1M,16M --ops all_reduce
    python bench_collectives.py --quick         # tiny sizes, a few seconds (smoke test)
    python bench_collectives.py --launcher shmem.run   # or torchrun

It needs shmem-torch, torch and tabulate (``pip install 'shmem-torch[bench]'``; shmem-tools
brings tabulate too), and reads sizes with shmem's one size parser (4K, 1M, 64MiB).

The ranks run as users start them: by default with ``torch.multiprocessing`` (spawn), in
torch's default thread configuration.  The benchmark sets neither ``OMP_NUM_THREADS`` nor
``torch.set_num_threads`` (``--threads N`` does, to compare), so what it measures is what
a user gets without tuning anything.  ``--launcher shmem.run`` starts the ranks with
``python -m shmem.run`` and ``--launcher torchrun`` with ``torch.distributed.run`` (which
itself sets ``OMP_NUM_THREADS=1`` when it starts several processes per node).

Every rank makes a gloo process group over loopback TCP and SHMEM (``shmem_torch.init``),
then times each operation and size with both implementations on the same data.  A round
times one implementation: warm-up, then the mean over some iterations, and the slowest
rank's mean counts.  Rounds alternate between the two implementations (shmem, gloo,
shmem, gloo, ...) so that a machine shared with other work disturbs both alike, and the
table shows each one's median round.  ``size`` is the bytes of each rank's result
tensor: the tensor of all_reduce and broadcast, the gathered output of all_gather (each
rank contributes size / ranks), the input (and output) of all_to_all, the input of
reduce_scatter.  ``ratio`` = gloo time / shmem time (above 1: shmem is faster).  Results
are checked against the expected values once per size.
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from shmem._sizes import format_size, parse_size
from tabulate import tabulate

OPS = ("all_reduce", "reduce_scatter", "all_gather", "broadcast", "all_to_all")
DEFAULT_OPS = ("all_reduce", "all_gather", "broadcast")
LAUNCHERS = ("mp", "shmem.run", "torchrun")
FULL_SIZES = [4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20]
QUICK_SIZES = [4 << 10, 64 << 10]
TARGET = 3.0  # the goal: at least this ratio at every size
ENV_OPTS = "BENCH_COLLECTIVES_OPTS"


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------------------
# Worker
# ---------------------------------------------------------------------------


def _iters(nbytes, quick):
    if quick:
        return 3, 1
    if nbytes <= 256 << 10:
        return 50, 5
    if nbytes <= 4 << 20:
        return 20, 3
    if nbytes <= 16 << 20:
        return 8, 2
    return 4, 1


def _case(op, numel, rank, n, st, torch, dist):
    """(run_shmem, run_gloo, check, tensors to free) for one operation and size."""
    f32 = torch.float32
    if op == "all_reduce":
        sym = st.empty(numel, dtype=f32)
        ref = torch.empty(numel, dtype=f32)

        def check():
            sym.fill_(rank + 1)
            ref.fill_(rank + 1)
            st.all_reduce(sym)
            dist.all_reduce(ref)
            want = n * (n + 1) / 2
            return bool((sym == want).all()) and bool((ref == want).all())

        return (lambda: st.all_reduce(sym)), (lambda: dist.all_reduce(ref)), check, [sym]
    if op == "broadcast":
        sym = st.empty(numel, dtype=f32)
        ref = torch.empty(numel, dtype=f32)

        def check():
            sym.fill_(rank + 7)
            ref.fill_(rank + 7)
            st.broadcast(sym, root=0)
            dist.broadcast(ref, src=0)
            return bool((sym == 7).all()) and bool((ref == 7).all())

        return (lambda: st.broadcast(sym, root=0)), (lambda: dist.broadcast(ref, src=0)), check, [sym]
    if op == "all_gather":
        k = numel // n
        sym = st.empty(numel, dtype=f32)
        inp = torch.empty(k, dtype=f32)
        ref = torch.empty(numel, dtype=f32)
        if hasattr(dist, "all_gather_single"):
            def run_gloo():
                dist.all_gather_single(ref, inp)
        elif hasattr(dist, "all_gather_into_tensor"):
            def run_gloo():
                dist.all_gather_into_tensor(ref, inp)
        else:
            def run_gloo():
                dist.all_gather(list(ref.chunk(n)), inp)

        def check():
            inp.fill_(rank)
            st.all_gather(sym, inp)
            run_gloo()
            want = torch.arange(n, dtype=f32).repeat_interleave(k)
            return bool(torch.equal(sym, want)) and bool(torch.equal(ref, want))

        return (lambda: st.all_gather(sym, inp)), run_gloo, check, [sym]
    if op == "reduce_scatter":
        k = numel // n
        sym = st.empty(numel, dtype=f32)
        out = torch.empty(k, dtype=f32)
        ref_in = torch.empty(numel, dtype=f32)
        ref_out = torch.empty(k, dtype=f32)

        def run_gloo():
            # gloo has no reduce_scatter: its all_reduce then this rank's chunk (what
            # torch users on CPU do).
            dist.all_reduce(ref_in)
            ref_out.copy_(ref_in[rank * k:(rank + 1) * k])

        def check():
            # small integers: every sum is exact in float32, whatever the order
            sym.copy_(torch.arange(numel, dtype=f32) % 1000 + rank)
            ref_in.copy_(sym)
            st.reduce_scatter(out, sym)
            run_gloo()
            want = n * (torch.arange(rank * k, (rank + 1) * k, dtype=f32) % 1000) + n * (n - 1) / 2
            return bool(torch.equal(out, want)) and bool(torch.equal(ref_out, want))

        return (lambda: st.reduce_scatter(out, sym)), run_gloo, check, [sym]
    if op == "all_to_all":
        k = numel // n
        sym = st.empty(numel, dtype=f32)
        out = torch.empty(numel, dtype=f32)
        ref_in = torch.empty(numel, dtype=f32)
        ref_out = torch.empty(numel, dtype=f32)

        def check():
            sym.copy_(torch.arange(numel, dtype=f32) % 100000 + 1000000 * rank)
            ref_in.copy_(sym)
            st.all_to_all(out, sym)
            dist.all_to_all_single(ref_out, ref_in)
            want = torch.cat([torch.arange(rank * k, (rank + 1) * k, dtype=f32) % 100000 + 1000000 * j
                              for j in range(n)])
            return bool(torch.equal(out, want)) and bool(torch.equal(ref_out, want))

        return (lambda: st.all_to_all(out, sym)), (lambda: dist.all_to_all_single(ref_out, ref_in)), check, [sym]
    raise ValueError(op)


def worker(opts, rank=None, n=None):
    """One rank.  ``rank`` and ``n`` are given under torch.multiprocessing; otherwise they
    come from the launcher (shmem.run: SHMEM's environment; torchrun: torch's)."""
    import torch
    import torch.distributed as dist

    if opts.get("threads"):
        torch.set_num_threads(opts["threads"])
    import shmem_torch as st

    sizes = opts["sizes"]
    mem = max(64 << 20, 4 * max(sizes) + (16 << 20))
    launcher = opts["launcher"]
    if launcher == "shmem.run":
        st.init(mem_size=mem)  # from shmem.run's environment
        from shmem import core

        rank, n = core.my_pe(), core.n_pes()
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{opts['port']}", rank=rank, world_size=n)
    else:
        if launcher == "mp":
            dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{opts['port']}", rank=rank,
                                    world_size=n)
        else:  # torchrun's environment
            dist.init_process_group("gloo")
        rank, n = dist.get_rank(), dist.get_world_size()
        st.init(mem_size=mem)  # from the process group
    results = []

    def timed(fn, iters, warm):
        for _ in range(warm):
            fn()
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        dt = (time.perf_counter() - t0) / iters
        box = torch.tensor([dt], dtype=torch.float64)
        dist.all_reduce(box, op=dist.ReduceOp.MAX)
        return float(box.item())

    threads_seen = torch.get_num_threads()
    for nbytes in sizes:
        numel = max(1, nbytes // 4)
        numel -= numel % n  # the chunked collectives need a multiple of the rank count
        numel = max(numel, n)
        iters, warm = _iters(nbytes, opts["quick"])
        for op in opts["ops"]:
            run_shmem, run_gloo, check, syms = _case(op, numel, rank, n, st, torch, dist)
            ok = check()
            okbox = torch.tensor([0 if ok else 1])
            dist.all_reduce(okbox)
            shmem_rounds, gloo_rounds = [], []
            for r in range(opts["rounds"]):
                shmem_rounds.append(timed(run_shmem, iters, warm if r == 0 else 1))
                gloo_rounds.append(timed(run_gloo, iters, warm if r == 0 else 1))
            results.append({"op": op, "bytes": numel * 4, "shmem_s": statistics.median(shmem_rounds),
                            "gloo_s": statistics.median(gloo_rounds), "shmem_rounds": shmem_rounds,
                            "gloo_rounds": gloo_rounds, "ok": int(okbox.item()) == 0})
            for t in syms:
                st.aclshmem_free_tensor(t)
    if torch.get_num_threads() != threads_seen:
        raise SystemExit(f"rank {rank}: torch.get_num_threads() changed from {threads_seen} to "
                         f"{torch.get_num_threads()} during the collectives")
    st.finalize()
    dist.destroy_process_group()
    if rank == 0 and opts.get("out"):
        with open(opts["out"], "w") as f:
            json.dump({"threads": threads_seen, "results": results}, f)


def _mp_entry(rank, n, opts):
    worker(opts, rank, n)


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------


def run_ranks(n, opts, timeout):
    fd, out = tempfile.mkstemp(prefix="bench-collectives-", suffix=".json")
    os.close(fd)
    opts = dict(opts, out=out, port=free_port())
    try:
        if opts["launcher"] == "mp":
            import torch.multiprocessing as mp

            ctx = mp.start_processes(_mp_entry, args=(n, opts), nprocs=n, join=False, start_method="spawn")
            deadline = time.monotonic() + timeout
            while not ctx.join(timeout=1.0):
                if time.monotonic() > deadline:
                    for p in ctx.processes:
                        if p.is_alive():
                            p.kill()
                    raise SystemExit(f"bench_collectives: {n} ranks did not finish within {timeout:g} s")
        else:
            script = os.path.abspath(__file__)
            if opts["launcher"] == "shmem.run":
                cmd = [sys.executable, "-m", "shmem.run", "-n", str(n), "--timeout", str(timeout), script,
                       "--worker"]
            else:
                cmd = [sys.executable, "-m", "torch.distributed.run", f"--nproc-per-node={n}", "--master-port",
                       str(free_port()), script, "--worker"]
            env = dict(os.environ, **{ENV_OPTS: json.dumps(opts)})
            p = subprocess.run(cmd, env=env, timeout=timeout + 30)
            if p.returncode != 0:
                raise SystemExit(f"bench_collectives: {opts['launcher']} with {n} ranks failed ({p.returncode})")
        with open(out) as f:
            return json.load(f)
    finally:
        os.unlink(out)


def print_table(n, run, launcher, file=sys.stdout):
    rows = run["results"]
    print(f"\n{n} ranks, {launcher}, {run['threads']} torch thread(s) per rank (size = bytes of each rank's "
          f"result; times: median round; ratio = gloo time / shmem time)", file=file)
    header = ["op", "size", "shmem", "gloo", "shmem GB/s", "gloo GB/s", "ratio"]
    cells = []
    for r in rows:
        b = r["bytes"]
        cells.append([r["op"], format_size(b), f"{r['shmem_s'] * 1e3:.3f} ms", f"{r['gloo_s'] * 1e3:.3f} ms",
                      f"{b / r['shmem_s'] / 1e9:.2f}", f"{b / r['gloo_s'] / 1e9:.2f}",
                      f"{r['gloo_s'] / r['shmem_s']:.2f}x", "" if r["ok"] else "WRONG RESULT"])
    if any(c[-1] for c in cells):
        header.append("")  # an untitled column names the wrong results
    # The look of shmem-perf's tables (shmem_tools._table): tabulate's "simple" format,
    # cells as written, op names and the wrong-result column on the left.
    print(tabulate([c[:len(header)] for c in cells], headers=header, tablefmt="simple", disable_numparse=True,
                   colalign=["left"] + ["right"] * 6 + ["left"]), file=file)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", default="2,4", help="comma-separated rank counts (default 2,4)")
    ap.add_argument("--sizes", default=None, help="comma-separated sizes, e.g. 4K,1M,64M (default 4 KiB .. 64 MiB)")
    ap.add_argument("--ops", default=",".join(DEFAULT_OPS), help=f"comma-separated, from {','.join(OPS)}, "
                    f"or 'all' (default {','.join(DEFAULT_OPS)})")
    ap.add_argument("--launcher", default="mp", choices=LAUNCHERS,
                    help="how the ranks start: torch.multiprocessing (default), python -m shmem.run, torchrun")
    ap.add_argument("--threads", type=int, default=None,
                    help="call torch.set_num_threads(N) in every rank first (default: leave torch's default)")
    ap.add_argument("--rounds", type=int, default=None,
                    help="measurement rounds per case, alternating shmem and gloo; the median round counts "
                         "(default 5, 1 with --quick)")
    ap.add_argument("--quick", action="store_true", help="tiny sizes and few iterations (a smoke test)")
    ap.add_argument("--json", default=None, help="also write every result to this file")
    ap.add_argument("--timeout", type=float, default=1200.0, help="seconds per rank count (default 1200)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.worker:
        worker(json.loads(os.environ[ENV_OPTS]))
        return 0

    ops = list(OPS) if args.ops.strip() == "all" else [o.strip() for o in args.ops.split(",") if o.strip()]
    for o in ops:
        if o not in OPS:
            ap.error(f"unknown op {o!r} (choose from {', '.join(OPS)})")
    if args.sizes:
        try:
            sizes = [parse_size(s) for s in args.sizes.split(",") if s.strip()]
        except ValueError as exc:
            ap.error(f"--sizes: {exc}")
    else:
        sizes = QUICK_SIZES if args.quick else FULL_SIZES
    ranks = [int(r) for r in args.ranks.split(",") if r.strip()]
    rounds = args.rounds if args.rounds is not None else (1 if args.quick else 5)
    if rounds < 1:
        ap.error("--rounds must be at least 1")
    if args.threads is not None and args.threads < 1:
        ap.error("--threads must be at least 1")
    opts = {"sizes": sizes, "ops": ops, "threads": args.threads, "quick": args.quick, "rounds": rounds,
            "launcher": args.launcher}

    everything = {}
    failed = False
    for n in ranks:
        run = run_ranks(n, opts, args.timeout)
        everything[n] = run
        print_table(n, run, args.launcher)
        sys.stdout.flush()
        failed |= not all(r["ok"] for r in run["results"])
    if not args.quick:
        print(f"\ntarget: at least {TARGET:g}x gloo at every size")
        for n, run in everything.items():
            for op in ops:
                sel = [r for r in run["results"] if r["op"] == op]
                if sel:
                    worst = min(sel, key=lambda r: r["gloo_s"] / r["shmem_s"])
                    ratio = worst["gloo_s"] / worst["shmem_s"]
                    print(f"  {n} ranks {op:<14}: lowest ratio {ratio:.2f}x at {format_size(worst['bytes'])} -> "
                          f"{'met' if ratio >= TARGET else 'MISSED'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({str(k): v for k, v in everything.items()}, f, indent=1)
    if failed:
        print("\nbench_collectives: some results were WRONG", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
