#!/usr/bin/env python3
"""shmem_torch collectives against torch.distributed (gloo), measured in the same run.

    python bench_collectives.py                 # 2 and 4 ranks, 4 KiB .. 64 MiB
    python bench_collectives.py --ranks 2 --sizes 1M,16M --ops all_reduce
    python bench_collectives.py --quick         # tiny sizes, a few seconds (smoke test)

For each rank count the script starts that many worker processes on this machine (a gloo
process group over loopback TCP, then ``shmem_torch.init`` from that group), and every
worker times each operation and size with both implementations, one after the other, on
the same data.  A time is the slowest rank's mean over the iterations of a round (after
warm-up); rounds alternate between the two implementations and each keeps its best round,
so that a machine shared with other work disturbs both alike.
``size`` is the bytes of each rank's result tensor: the tensor of all_reduce and broadcast,
the gathered output of all_gather (each rank contributes size / ranks).  The table shows
both times, the bandwidth (size / time) and ``ratio`` = gloo time / shmem time (above 1:
shmem is faster).  Results are checked against the expected values once per size.

Workers use one intra-op thread each (``--threads``), as torchrun does by default.
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

OPS = ("all_reduce", "all_gather", "broadcast")
FULL_SIZES = [4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20]
QUICK_SIZES = [4 << 10, 64 << 10]
TARGET = 3.0  # all_reduce goal: at least this ratio from 1 MiB to 64 MiB


def parse_size(text):
    t = text.strip().upper().rstrip("B").rstrip("I")
    mult = 1
    for suffix, m in (("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30)):
        if t.endswith(suffix):
            t, mult = t[:-1], m
            break
    return int(float(t) * mult)


def fmt_size(n):
    for unit, m in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= m and n % m == 0:
            return f"{n // m} {unit}"
    return f"{n} B"


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
    return 5, 2


def worker(opts):
    import torch
    import torch.distributed as dist

    torch.set_num_threads(opts["threads"])
    dist.init_process_group("gloo")
    rank, n = dist.get_rank(), dist.get_world_size()

    import shmem_torch as st

    sizes = opts["sizes"]
    st.init(mem_size=max(64 << 20, 3 * max(sizes) + (16 << 20)))
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

    for nbytes in sizes:
        numel = max(1, nbytes // 4)
        numel -= numel % n  # all_gather needs a multiple of the rank count
        numel = max(numel, n)
        iters, warm = _iters(nbytes, opts["quick"])
        for op in opts["ops"]:
            if op == "all_reduce":
                sym = st.empty(numel, dtype=torch.float32)
                ref = torch.empty(numel, dtype=torch.float32)

                def run_shmem():
                    st.all_reduce(sym)

                def run_gloo():
                    dist.all_reduce(ref)

                def check():
                    sym.fill_(rank + 1)
                    ref.fill_(rank + 1)
                    st.all_reduce(sym)
                    dist.all_reduce(ref)
                    want = n * (n + 1) / 2
                    return bool((sym == want).all()) and bool((ref == want).all())
            elif op == "broadcast":
                sym = st.empty(numel, dtype=torch.float32)
                ref = torch.empty(numel, dtype=torch.float32)

                def run_shmem():
                    st.broadcast(sym, root=0)

                def run_gloo():
                    dist.broadcast(ref, src=0)

                def check():
                    sym.fill_(rank + 7)
                    ref.fill_(rank + 7)
                    st.broadcast(sym, root=0)
                    dist.broadcast(ref, src=0)
                    return bool((sym == 7).all()) and bool((ref == 7).all())
            else:  # all_gather
                k = numel // n
                sym = st.empty(numel, dtype=torch.float32)
                inp = torch.empty(k, dtype=torch.float32)
                ref = torch.empty(numel, dtype=torch.float32)
                if hasattr(dist, "all_gather_single"):
                    def run_gloo():
                        dist.all_gather_single(ref, inp)
                elif hasattr(dist, "all_gather_into_tensor"):
                    def run_gloo():
                        dist.all_gather_into_tensor(ref, inp)
                else:
                    def run_gloo():
                        dist.all_gather(list(ref.chunk(n)), inp)

                def run_shmem():
                    st.all_gather(sym, inp)

                def check():
                    inp.fill_(rank)
                    st.all_gather(sym, inp)
                    run_gloo()
                    want = torch.arange(n, dtype=torch.float32).repeat_interleave(k)
                    return bool(torch.equal(sym, want)) and bool(torch.equal(ref, want))
            ok = check()
            okbox = torch.tensor([0 if ok else 1])
            dist.all_reduce(okbox)
            # Rounds alternate between the two implementations; each keeps its best round
            # (the machine may be shared: the minimum is the least disturbed measurement).
            t_shmem = t_gloo = float("inf")
            for r in range(opts["rounds"]):
                t_shmem = min(t_shmem, timed(run_shmem, iters, warm if r == 0 else 1))
                t_gloo = min(t_gloo, timed(run_gloo, iters, warm if r == 0 else 1))
            results.append({"op": op, "bytes": numel * 4, "shmem_s": t_shmem, "gloo_s": t_gloo,
                            "ok": int(okbox.item()) == 0})
            st.aclshmem_free_tensor(sym)
    st.finalize()
    dist.destroy_process_group()
    if rank == 0 and opts.get("out"):
        with open(opts["out"], "w") as f:
            json.dump(results, f)


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------


def run_ranks(n, opts, timeout):
    fd, out = tempfile.mkstemp(prefix="bench-collectives-", suffix=".json")
    os.close(fd)
    env = dict(os.environ)
    env.update({
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(free_port()),
        "WORLD_SIZE": str(n),
        "OMP_NUM_THREADS": str(opts["threads"]),
        "BENCH_COLLECTIVES_OPTS": json.dumps(dict(opts, out=out)),
    })
    procs = []
    try:
        for r in range(n):
            penv = dict(env, RANK=str(r), LOCAL_RANK=str(r), LOCAL_WORLD_SIZE=str(n))
            procs.append(subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker"], env=penv))
        deadline = time.monotonic() + timeout
        for p in procs:
            left = max(1.0, deadline - time.monotonic())
            try:
                p.wait(timeout=left)
            except subprocess.TimeoutExpired:
                raise SystemExit(f"bench_collectives: {n} ranks did not finish within {timeout:g} s")
        bad = [r for r, p in enumerate(procs) if p.returncode != 0]
        if bad:
            raise SystemExit(f"bench_collectives: rank(s) {bad} of {n} failed")
        with open(out) as f:
            return json.load(f)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        os.unlink(out)


def print_table(n, rows, file=sys.stdout):
    print(f"\n{n} ranks (size = bytes of each rank's result; ratio = gloo time / shmem time)", file=file)
    head = f"{'op':<11} {'size':>8} {'shmem':>11} {'gloo':>11} {'shmem GB/s':>10} {'gloo GB/s':>9} {'ratio':>7}"
    print(head, file=file)
    print("-" * len(head), file=file)
    for r in rows:
        b = r["bytes"]
        mark = "" if r["ok"] else "  WRONG RESULT"
        print(f"{r['op']:<11} {fmt_size(b):>8} {r['shmem_s'] * 1e3:>8.3f} ms {r['gloo_s'] * 1e3:>8.3f} ms "
              f"{b / r['shmem_s'] / 1e9:>10.2f} {b / r['gloo_s'] / 1e9:>9.2f} {r['gloo_s'] / r['shmem_s']:>6.2f}x"
              f"{mark}", file=file)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", default="2,4", help="comma-separated rank counts (default 2,4)")
    ap.add_argument("--sizes", default=None, help="comma-separated sizes, e.g. 4K,1M,64M (default 4 KiB .. 64 MiB)")
    ap.add_argument("--ops", default=",".join(OPS), help=f"comma-separated, from {','.join(OPS)}")
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads per rank (default 1)")
    ap.add_argument("--rounds", type=int, default=None,
                    help="measurement rounds per case, alternating shmem and gloo; the best round counts "
                         "(default 5, 1 with --quick)")
    ap.add_argument("--quick", action="store_true", help="tiny sizes and few iterations (a smoke test)")
    ap.add_argument("--json", default=None, help="also write every result to this file")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per rank count (default 900)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.worker:
        worker(json.loads(os.environ["BENCH_COLLECTIVES_OPTS"]))
        return 0

    ops = [o.strip() for o in args.ops.split(",") if o.strip()]
    for o in ops:
        if o not in OPS:
            ap.error(f"unknown op {o!r} (choose from {', '.join(OPS)})")
    if args.sizes:
        sizes = [parse_size(s) for s in args.sizes.split(",") if s.strip()]
    else:
        sizes = QUICK_SIZES if args.quick else FULL_SIZES
    ranks = [int(r) for r in args.ranks.split(",") if r.strip()]
    rounds = args.rounds if args.rounds is not None else (1 if args.quick else 5)
    if rounds < 1:
        ap.error("--rounds must be at least 1")
    opts = {"sizes": sizes, "ops": ops, "threads": args.threads, "quick": args.quick, "rounds": rounds}

    everything = {}
    failed = False
    for n in ranks:
        rows = run_ranks(n, opts, args.timeout)
        everything[n] = rows
        print_table(n, rows)
        sys.stdout.flush()
        failed |= not all(r["ok"] for r in rows)
    if "all_reduce" in ops and not args.quick:
        print(f"\nall_reduce target: at least {TARGET:g}x gloo from 1 MiB to 64 MiB")
        for n, rows in everything.items():
            sel = [r for r in rows if r["op"] == "all_reduce" and (1 << 20) <= r["bytes"] <= (64 << 20)]
            if sel:
                worst = min(r["gloo_s"] / r["shmem_s"] for r in sel)
                print(f"  {n} ranks: lowest ratio {worst:.2f}x -> {'met' if worst >= TARGET else 'MISSED'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({str(k): v for k, v in everything.items()}, f, indent=1)
    if failed:
        print("\nbench_collectives: some results were WRONG", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
