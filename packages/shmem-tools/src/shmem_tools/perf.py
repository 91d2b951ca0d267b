"""``shmem-perf``: OSU-style benchmarks of SHMEM on N PEs, each against a baseline
measured in the same run.

    shmem-perf --pes 2                     every test, tables on stdout
    shmem-perf --pes 2 --plot perf.png     ... and a plot (pip install 'shmem-tools[plot]')
    shmem-perf --quick                     tiny sizes, few iterations (a smoke run)
    shmem-perf --csv out.csv --json out.json
    shmem-perf --tests put,barrier --max-size 1M
    sudo shmem-perf --nodes 2              across two nodes (network namespaces) against
                                           ucx_perftest: see shmem_tools._internode
    shmem-perf --scale [--plot scale.png]  init, finalize, barrier_all, put and all-reduce
                                           on 2..64 PEs against OSHMEM: see shmem_tools._scale
    shmem-perf --oshmem [TESTS]            one OpenSHMEM program against Open MPI's OSHMEM:
                                           see shmem_tools._oshmem

Tests (PE 0 talks to PE 1 in the point-to-point ones):

=============  =====================================  ==========================================
table          library                                baseline (same run)
=============  =====================================  ==========================================
put latency    blocking aclshmem_putmem, per call     shared-memory flag ping-pong, one way
get latency    blocking aclshmem_getmem, per call     the same ping-pong, one way
put bandwidth  putmem and putmem_nbi + quiet          single-thread memcpy (ctypes.memmove)
get bandwidth  getmem and getmem_nbi + quiet          the same memcpy
put_signal     putmem_signal + signal_wait_until      the ping-pong's round trip
               ping-pong, round trip
amo latency    aclshmem_{int64,int32}_atomic_         a CPU atomic fetch_add (libatomic, through
               fetch_add of a word of PE 1, per call  cffi) on a page shared by two processes
               (a round trip: it returns the old
               value)
barrier        aclshmem_barrier_all on all N PEs      N processes raising shared-memory flags
all_reduce     shmem_torch.all_reduce (float32)       torch.distributed all_reduce, gloo backend
buffer         shmem.core.Buffer(addr, length), per   a ctypes array over the same memory, its
               object made (PE-less, in this process)  class cached (what Buffer was before)
=============  =====================================  ==========================================

The "vs base" column is the speedup over the baseline: above 1.00x the library is
faster (more bandwidth, or less time).  The all_reduce table needs torch and
shmem-torch; without them it is skipped with a note.

``--dist`` is a mode of its own: the torch.distributed backend "shmem" against gloo in the
same processes (``dist.all_reduce`` 4 KiB to 64 MiB on ordinary tensors, and a DDP training
step), on 2 and 4 ranks (or ``--pes``), and the all-reduce of symmetric tensors against the
physical floor measured in the same run; see ``shmem_tools._dist_bench``.

``--dist --nodes 2`` (as root) runs the same comparison across two nodes: the ranks in the two
network namespaces of ``--nodes 2`` (1 and 2 per node), ``dist.all_reduce`` (ordinary and
symmetric tensors) and ``dist.broadcast`` at 64 KiB to 8 MiB, gloo over the same veth pair;
see ``shmem_tools._dist_nodes``.

``--python`` is a mode of its own: what the Python layers add to a call (``shmem._pyshmem``
and ``shmem.core.put``/``get`` against the bare cffi call of the same C function, one PE,
in one process) and the time of ``import shmem.core`` plus its first call, against issue
#17's goals; see ``shmem_tools._py_bench``.

``--scale [2,4,...]`` is a mode of its own: an OpenSHMEM program built against libaclshmem and,
when Open MPI is installed, against its OSHMEM, run as jobs of 2 to 64 PEs (or the counts
given), the two taking turns; a table per measure (PE 0's shmem_init and shmem_finalize,
barrier_all, an 8-byte put, a small all-reduce) gives both, their ratio and issue #26's
goals; see ``shmem_tools._scale``.

``--oshmem [TESTS]`` is a mode of its own: one OpenSHMEM program (``oshmem_bench.c``) built with
Open MPI's ``oshcc`` and against the libaclshmem this Python loads, run in alternating rounds
on ``--pes`` PEs (default 2): the latencies and bandwidths of put and get, the message rate and
the atomics of PEs in pairs, barrier and the collectives, both libraries side by side with
their ratio and the goals of issues #17 and #25, and the reduce against the physical floor;
see ``shmem_tools._oshmem``.

``--nodes 2`` is a mode of its own: as root, it joins two network namespaces by a veth
pair, puts one PE in each (so they talk through the UCX plug-in over TCP, as PEs on two
hosts do) and measures 8-byte put latency (ping-pong) and get latency (one blocking get),
put bandwidth (putmem_nbi) and get bandwidth (blocking getmem and getmem_nbi), 64 KiB to
8 MiB by default, with libaclshmem and with ``ucx_perftest`` (ucp_put_lat, ucp_put_bw,
ucp_get) in turn, and prints the ratio ours / ucx_perftest against the goals (bandwidth
>= 0.8x, latency <= 1.5x).
"""

import argparse
import csv
import io
import json
import os
import platform
import sys
import time

from shmem._sizes import format_size

from . import __version__
from . import _baselines
from ._bench_common import Table, free_port, parse_size
from ._progress import Progress
from ._table import render
from ._table import write as _write

ALL_TESTS = ("put", "get", "put_signal", "amo", "barrier", "all_reduce", "buffer")
# Tests between PE 0 and PE 1: dropped when there is only one PE.
P2P_TESTS = ("put", "get", "put_signal", "amo")
# The element types of the AMO latency table (one fetch_add row each) and their widths.
AMO_TYPES = {"int64": 8, "int32": 4}


def powers_of_two(lo, hi):
    out = []
    s = 1
    while s < lo:
        s <<= 1
    while s <= hi:
        out.append(s)
        s <<= 1
    if not out:
        out = [lo]
    return out


def make_plan(ns):
    """What the PEs and the baselines measure."""
    tests = list(ns.tests)
    if ns.quick:
        plan = {
            "bw_sizes": [8, 1 << 10, 64 << 10],
            "lat_sizes": [8, 1 << 10],
            "ar_sizes": [4 << 10, 64 << 10],
            "seconds_per_point": 0.004,
            "min_ops": 2,
            "max_ops": 20000,
            "window": 16,
            "pingpong_iters": 40,
            "barrier_iters": 50,
            "ar_min_iters": 2,
            "ar_max_iters": 5,
            "ar_bytes_per_point": 1 << 20,
            "repetitions": 1,
        }
    else:
        plan = {
            "bw_sizes": powers_of_two(ns.min_size, ns.max_size),
            "lat_sizes": [s for s in powers_of_two(ns.min_size, ns.max_latency_size)],
            "ar_sizes": powers_of_two(max(ns.min_size, 4 << 10), ns.max_size),
            "seconds_per_point": 0.1,
            "min_ops": 3,
            "max_ops": 1 << 21,
            "window": 64,
            "pingpong_iters": 1000,
            "barrier_iters": 2000,
            "ar_min_iters": 3,
            "ar_max_iters": 50,
            "ar_bytes_per_point": 256 << 20,
            "repetitions": 5,
        }
    if ns.time_per_point is not None:
        plan["seconds_per_point"] = ns.time_per_point
    plan["tests"] = tests
    plan["amo_types"] = list(AMO_TYPES)
    plan["npes"] = ns.pes
    plan["pin"] = not ns.no_pin
    return plan


def _count_pe_steps(plan):
    tests = set(plan["tests"])
    p2p = len(set(plan["bw_sizes"]) | set(plan["lat_sizes"]))
    n = 0
    for op in ("put", "get"):
        if op in tests:
            n += p2p + len(plan["bw_sizes"])
    if "put_signal" in tests:
        n += len(plan["lat_sizes"])
    if "amo" in tests:
        n += len(plan["amo_types"])
    if "barrier" in tests:
        n += 1
    return n


# ---------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------


class Results:
    def __init__(self):
        self.library = []     # records of PE 0: test, variant, size, seconds[, baseline_seconds]
        self.memcpy = {}      # size -> seconds per copy
        self.pingpong = {}    # size -> seconds per round trip
        self.flag_barrier = None
        self.atomic = {}      # AMO type -> seconds per CPU atomic fetch_add (the AMO baseline)
        self.buffer_costs = {}  # "Buffer" / "baseline" -> seconds per object made
        self.notes = []
        self.meta = {}
        self.errors = []


def run_baselines(plan, res, progress):
    tests = set(plan["tests"])
    if tests & {"put", "get"}:
        res.memcpy = _baselines.memcpy_bandwidth(
            sorted(set(plan["bw_sizes"]) | set(plan["lat_sizes"])), plan,
            lambda what, size: progress.advance(f"baseline {what} {format_size(size)}"), plan["pin"])
    if tests & {"put", "get", "put_signal"}:
        res.pingpong = _baselines.pingpong(
            plan["lat_sizes"], plan["pingpong_iters"], plan["repetitions"],
            lambda what, size: progress.advance(f"baseline {what} {format_size(size)}"), plan["pin"])
    if "amo" in tests:
        try:
            res.atomic = _baselines.atomic_fetch_add(
                plan["amo_types"], plan, lambda what, t: progress.advance(f"baseline {what} {t}"), plan["pin"])
        except _baselines.BaselineUnavailable as exc:
            res.notes.append(f"amo latency has no baseline: {exc}")
            progress.advance("baseline atomic fetch_add", len(plan["amo_types"]))
    if "barrier" in tests:
        res.flag_barrier = _baselines.flag_barrier(plan["npes"], plan["barrier_iters"], plan["repetitions"],
                                                   plan["pin"])
        progress.advance("baseline flag barrier")


def measure_buffer_construction(plan, res):
    """Seconds per ``shmem.core.Buffer(addr, length)``, and per ctypes array over the
    same memory with its class made once (the baseline), in this process."""
    import ctypes
    import timeit

    from shmem import core

    memory = ctypes.create_string_buffer(4096)
    addr = ctypes.addressof(memory)
    array_type = ctypes.c_ubyte * 4096
    number = 2000 if plan.get("quick") else 200000
    best = {}
    for name, make in (("Buffer", lambda: core.Buffer(addr, 4096)),
                       ("baseline", lambda: array_type.from_address(addr))):
        best[name] = min(timeit.repeat(make, number=number, repeat=3 if plan.get("quick") else 5)) / number
    res.buffer_costs = best


def run_pes(plan, res, progress, timeout):
    from ._launch import run_module
    from ._perf_pe import ENV_PLAN

    def on_record(pe, r):
        kind = r.get("kind")
        if kind == "result":
            res.library.append(r)
            progress.advance(f"{r['test']} {r['variant']} {format_size(r['size'])}" if r["size"] else r["test"])
        elif kind == "start":
            res.meta["init_seconds"] = r.get("init_seconds")
            res.meta["library"] = r.get("library")
        elif kind == "torch":
            if r.get("usable"):
                progress.set_total(progress.total + len(plan["ar_sizes"]))
            else:
                res.notes.append(f"all_reduce skipped: {r.get('note')} "
                                 "(install torch and shmem-torch to run it)")
        elif kind == "error":
            res.errors.append(f"PE {pe}: {r.get('error')}")

    biggest = max(plan["bw_sizes"] + plan["lat_sizes"] + [plan["ar_sizes"][-1] if plan["ar_sizes"] else 0])
    # Heap: the largest message, the signal word and the allocator's own use, plus room
    # for symmetric tensors (all_reduce) when that test runs.
    mem = biggest + (8 << 20)
    if "all_reduce" in plan["tests"]:
        mem += 4 * max(plan["ar_sizes"] + [0]) + (16 << 20)
    plan = dict(plan, gloo_port=free_port())
    job = run_module(plan["npes"], "shmem_tools._perf_pe", mem_size=str(mem), timeout=timeout,
                     env={ENV_PLAN: json.dumps(plan)}, on_record=on_record, echo=True)
    if job.error:
        res.errors.append(job.error)
    elif job.status == 124:
        res.errors.append(f"the benchmark job did not finish within {timeout:g} s and was stopped")
    elif job.status != 0 and not res.errors:
        res.errors.append(f"the benchmark job failed (exit status {job.status})")
    return job


# ---------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------


def _ratio(x):
    return f"{x:.2f}x" if x is not None else "-"


def _us(seconds):
    return f"{seconds * 1e6:.2f}" if seconds is not None else "-"


def _mbs(size, seconds):
    return size / seconds / 1e6 if seconds else None


def _speedup_time(lib, base):
    return base / lib if lib and base else None


def _speedup_bw(lib, base):
    return lib / base if lib and base else None


def build_tables(plan, res):
    by = {}
    for r in res.library:
        by[(r["test"], r["variant"], r["size"])] = r
    tables = []
    n = plan["npes"]

    for op in ("put", "get"):
        if op not in plan["tests"]:
            continue
        t = Table(f"{op}_latency", f"{op} latency: blocking aclshmem_{op}mem, PE 0 -> PE 1 (us per call)",
                  "shared-memory flag ping-pong between two processes, one way (round trip / 2)",
                  ["size", f"{op} us", "base us", "vs base"])
        for size in plan["lat_sizes"]:
            r = by.get((op, "blocking", size))
            lib = r["seconds"] if r else None
            rtt = res.pingpong.get(size)
            base = rtt / 2 if rtt else None
            sp = _speedup_time(lib, base)
            t.add([format_size(size), _us(lib), _us(base), _ratio(sp)], table=t.name, size=size, variant="blocking",
                  library=lib * 1e6 if lib else None, baseline=base * 1e6 if base else None, ratio=sp, unit="us")
        tables.append(t)

    for op in ("put", "get"):
        if op not in plan["tests"]:
            continue
        t = Table(f"{op}_bandwidth", f"{op} bandwidth: aclshmem_{op}mem and aclshmem_{op}mem_nbi + quiet, "
                                     "PE 0 -> PE 1 (MB/s, 1 MB = 10^6 bytes)",
                  "single-thread memcpy (ctypes.memmove) into shared memory",
                  ["size", "blocking MB/s", "nbi MB/s", "memcpy MB/s", "blocking vs base", "nbi vs base"])
        for size in plan["bw_sizes"]:
            rb = by.get((op, "blocking", size))
            rn = by.get((op, "nbi", size))
            b = _mbs(size, rb["seconds"]) if rb else None
            nb = _mbs(size, rn["seconds"]) if rn else None
            base = _mbs(size, res.memcpy.get(size))
            sb, sn = _speedup_bw(b, base), _speedup_bw(nb, base)
            fmt = (lambda v: f"{v:.1f}" if v is not None else "-")
            t.add([format_size(size), fmt(b), fmt(nb), fmt(base), _ratio(sb), _ratio(sn)],
                  table=t.name, size=size, variant="blocking", library=b, baseline=base, ratio=sb, unit="MB/s")
            t.records.append(dict(table=t.name, size=size, variant="nbi", library=nb, baseline=base, ratio=sn,
                                  unit="MB/s"))
        tables.append(t)

    if "put_signal" in plan["tests"]:
        t = Table("put_signal_round_trip",
                  "put_signal round trip: aclshmemx_putmem_signal + aclshmem_signal_wait_until, PE 0 <-> PE 1 (us)",
                  "shared-memory flag ping-pong between two processes, round trip",
                  ["size", "round trip us", "base us", "vs base"])
        for size in plan["lat_sizes"]:
            r = by.get(("put_signal", "round trip", size))
            lib = r["seconds"] if r else None
            base = res.pingpong.get(size)
            sp = _speedup_time(lib, base)
            t.add([format_size(size), _us(lib), _us(base), _ratio(sp)], table=t.name, size=size,
                  variant="round trip", library=lib * 1e6 if lib else None, baseline=base * 1e6 if base else None,
                  ratio=sp, unit="us")
        tables.append(t)

    if "amo" in plan["tests"]:
        t = Table("amo_latency", "amo latency: aclshmem_<T>_atomic_fetch_add of a word of PE 1, "
                                 "a round trip per call (us)",
                  "a CPU atomic fetch_add (libatomic through cffi) on a page shared by two processes",
                  ["operation", "us", "base us", "vs base"])
        for amo_type in plan.get("amo_types", AMO_TYPES):
            variant = f"{amo_type} fetch_add"
            r = next((r for r in res.library if r["test"] == "amo" and r["variant"] == variant), None)
            lib = r["seconds"] if r else None
            base = res.atomic.get(amo_type)
            sp = _speedup_time(lib, base)
            t.add([variant, _us(lib), _us(base), _ratio(sp)], table=t.name, size=AMO_TYPES[amo_type],
                  variant=variant, library=lib * 1e6 if lib else None, baseline=base * 1e6 if base else None,
                  ratio=sp, unit="us")
        tables.append(t)

    if "barrier" in plan["tests"]:
        t = Table("barrier", f"barrier latency: aclshmem_barrier_all on {n} PEs (us)",
                  f"{n} processes, each raising its own shared-memory flag and waiting for all",
                  ["operation", "PEs", "us", "base us", "vs base"])
        r = by.get(("barrier", "barrier_all", 0))
        lib = r["seconds"] if r else None
        base = res.flag_barrier
        sp = _speedup_time(lib, base)
        t.add(["barrier_all", str(n), _us(lib), _us(base), _ratio(sp)], table=t.name, size=0,
              variant="barrier_all", library=lib * 1e6 if lib else None, baseline=base * 1e6 if base else None,
              ratio=sp, unit="us")
        tables.append(t)

    if res.buffer_costs:
        t = Table("python", "Python objects: shmem.core.Buffer(addr, length), per object made (us; goal < 1 us)",
                  "a ctypes array over the same memory, its class cached (what Buffer was before)",
                  ["operation", "us", "base us", "vs base"])
        lib, base = res.buffer_costs["Buffer"], res.buffer_costs["baseline"]
        sp = _speedup_time(lib, base)
        t.add(["Buffer(addr, length)", _us(lib), _us(base), _ratio(sp)], table=t.name, size=0,
              variant="construction", library=lib * 1e6, baseline=base * 1e6, ratio=sp, unit="us")
        tables.append(t)

    ar = [r for r in res.library if r["test"] == "all_reduce"]
    if ar:
        t = Table("all_reduce", f"all_reduce: shmem_torch.all_reduce, float32 sum, {n} PEs (us)",
                  "torch.distributed.all_reduce with the gloo backend, same processes",
                  ["size", "shmem_torch us", "gloo us", "vs base"])
        for r in sorted(ar, key=lambda r: r["size"]):
            lib, base = r["seconds"], r.get("baseline_seconds")
            sp = _speedup_time(lib, base)
            t.add([format_size(r["size"]), _us(lib), _us(base), _ratio(sp)], table=t.name, size=r["size"],
                  variant="float32 sum", library=lib * 1e6, baseline=base * 1e6 if base else None, ratio=sp,
                  unit="us")
        tables.append(t)
    return tables


def to_csv(tables):
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["table", "size_bytes", "variant", "library", "baseline", "ratio", "unit"])
    for t in tables:
        for r in t.records:
            w.writerow([r["table"], r["size"], r["variant"],
                        "" if r["library"] is None else f"{r['library']:.6g}",
                        "" if r["baseline"] is None else f"{r['baseline']:.6g}",
                        "" if r["ratio"] is None else f"{r['ratio']:.4g}", r["unit"]])
    return buf.getvalue()


def to_json(plan, res, tables):
    return {
        "meta": dict(res.meta, pes=plan["npes"], quick=plan.get("quick", False), tools_version=__version__,
                     python=platform.python_version(), machine=platform.machine(), cpus=os.cpu_count(),
                     date=time.strftime("%Y-%m-%dT%H:%M:%S%z")),
        "ratio": "speedup over the baseline: above 1 the library is faster",
        "tables": [{"name": t.name, "title": t.title, "baseline": t.baseline, "rows": t.records} for t in tables],
        "notes": res.notes,
        "errors": res.errors,
    }


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------


def _tests(text):
    names = [t.strip() for t in text.split(",") if t.strip()]
    bad = [t for t in names if t not in ALL_TESTS]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"unknown test(s) {bad}; choose from {', '.join(ALL_TESTS)}")
    return names


def _parser():
    p = argparse.ArgumentParser(
        prog="shmem-perf",
        description="OSU-style SHMEM benchmarks on N PEs, each table against a baseline measured in the same "
                    "run. 'vs base' is the speedup over the baseline (above 1.00x the library is faster).",
    )
    p.add_argument("--pes", "-n", type=int, default=None, help="number of PEs to start (default 2)")
    p.add_argument("--tests", type=_tests, default=None,
                   help=f"comma-separated tests (default: all): {','.join(ALL_TESTS)}")
    p.add_argument("--quick", action="store_true", help="tiny sizes and few iterations (a smoke run)")
    p.add_argument("--min-size", type=parse_size, default=None,
                   help="smallest message (default 8; 64K with --nodes)")
    p.add_argument("--max-size", type=parse_size, default=None,
                   help="largest message (default 64M; 8M with --nodes)")
    p.add_argument("--max-latency-size", type=parse_size, default=None,
                   help="largest message of the latency tables (default 64K)")
    p.add_argument("--time-per-point", type=float, default=None,
                   help="seconds spent on each size (default 0.1; 0.004 with --quick)")
    p.add_argument("--csv", nargs="?", const="-", metavar="FILE",
                   help="write the results as CSV to FILE (or stdout instead of the tables)")
    p.add_argument("--json", nargs="?", const="-", metavar="FILE",
                   help="write the results as JSON to FILE (or stdout instead of the tables)")
    p.add_argument("--plot", metavar="FILE.png", help="draw bandwidth and latency against size (needs matplotlib)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.add_argument("--no-pin", action="store_true",
                   help="do not bind PE i (and baseline process i) to CPU i modulo the CPU count (with --nodes: "
                        "every process of node i, of both tools)")
    p.add_argument("--timeout", type=float, default=600.0,
                   help="stop the PEs after this many seconds (default 600; with --nodes: the limit of "
                        "each measurement)")
    n = p.add_argument_group("across nodes (--nodes 2)")
    n.add_argument("--nodes", type=int, default=None, metavar="2",
                   help="measure between two nodes instead: one PE in each of two network namespaces "
                        "joined by a veth pair (needs root and iproute2), UCX over TCP, against ucx_perftest "
                        "in the same run: 8-byte put and get latency, put and get (blocking and nbi) bandwidth, "
                        "ratio ours / ucx_perftest")
    n.add_argument("--rounds", type=int, default=None,
                   help="with --nodes or --scale: rounds of the two tools taking turns; --nodes keeps each one's "
                        "best, --scale and --dist --nodes 2 the median (default 3, 5 with --dist; 1 with --quick)")
    n.add_argument("--ucx-perftest", metavar="PATH", default=None,
                   help="with --nodes: the ucx_perftest to compare with (default: the one on PATH)")
    s = p.add_argument_group("PE counts (--scale)")
    s.add_argument("--scale", nargs="?", const="", default=None, metavar="PES",
                   help="measure how init, finalize, barrier_all, an 8-byte put and an 8-long all-reduce grow with "
                        "the PE count instead: a job of each of PES PEs (default 2,4,8,16,32,64), beside Open MPI's "
                        "OSHMEM when installed; see shmem_tools._scale")
    s.add_argument("--no-oshmem", action="store_true", help="with --scale: do not run Open MPI's OSHMEM beside it")
    s.add_argument("--no-tls", action="store_true",
                   help="with --scale: libaclshmem's control plane unencrypted (still authenticated), to show "
                        "what TLS costs init")
    p.add_argument("--dist", action="store_true",
                   help="measure the torch.distributed backend \"shmem\" against gloo instead: dist.all_reduce "
                        "4K-64M and a DDP step, on --pes ranks (default 2 and 4); see shmem_tools._dist_bench. "
                        "With --nodes 2 (as root): across two network namespaces, --pes ranks per node (default "
                        "1 and 2), all_reduce and broadcast 64K-8M; see shmem_tools._dist_nodes")
    p.add_argument("--oshmem", nargs="?", const="", default=None, metavar="TESTS",
                   help="compare with Open MPI's OSHMEM instead: one OpenSHMEM program built with each oshcc, "
                        "point to point, message rate, atomics and collectives (TESTS: some of them), on --pes PEs, "
                        "alternating --rounds; see shmem_tools._oshmem")
    p.add_argument("--python", action="store_true",
                   help="measure the Python hot path instead: _pyshmem and shmem.core put/get against the bare cffi "
                        "call, and import + first call time (1 PE, this process); --rounds, --quick, --json apply; "
                        "see shmem_tools._py_bench")
    p.add_argument("--version", action="version", version=f"shmem-perf (shmem-tools {__version__})")
    return p


def main_dist(ns):
    """``shmem-perf --dist``: see shmem_tools._dist_bench."""
    from . import _dist_bench

    argv = ["--ranks", str(ns.pes) if ns.pes else "2,4"]
    if ns.quick:
        argv.append("--quick")
    if ns.max_size:
        argv += ["--max-size", str(ns.max_size)]
    if ns.min_size:
        argv += ["--min-size", str(ns.min_size)]
    if ns.json and ns.json != "-":
        argv += ["--json", ns.json]
    return _dist_bench.main(argv)


def main_dist_nodes(ns, parser):
    """``shmem-perf --dist --nodes 2``: see shmem_tools._dist_nodes."""
    from . import _dist_nodes

    if ns.nodes != 2:
        parser.error("--nodes: only 2 is supported (the ranks of two nodes)")
    argv = ["--ppn", str(ns.pes)] if ns.pes else []
    if ns.quick:
        argv.append("--quick")
    for flag, value in (("--min-size", ns.min_size), ("--max-size", ns.max_size), ("--rounds", ns.rounds),
                        ("--json", ns.json)):
        if value is not None:
            argv += [flag, str(value)]
    return _dist_nodes.main(argv + ["--timeout", str(ns.timeout)])


def main_python(ns):
    """``shmem-perf --python``: see shmem_tools._py_bench."""
    from . import _py_bench

    argv = ["--quick"] if ns.quick else []
    if ns.rounds:
        argv += ["--rounds", str(ns.rounds)]
    if ns.json and ns.json != "-":
        argv += ["--json", ns.json]
    return _py_bench.main(argv)


def main(argv=None):
    parser = _parser()
    ns = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if ns.nodes is not None and ns.scale is not None:
        parser.error("--nodes and --scale are modes of their own: choose one")
    if ns.oshmem is not None:
        from ._oshmem import main_perf

        return main_perf(ns, parser)
    if ns.dist and ns.nodes is not None:
        return main_dist_nodes(ns, parser)
    if ns.nodes is not None:
        return main_nodes(ns, parser)
    if ns.scale is not None:
        from ._scale import main_scale

        return main_scale(ns, parser, __version__)
    for flag, value in (("--no-oshmem", ns.no_oshmem), ("--no-tls", ns.no_tls)):
        if value:
            parser.error(f"{flag} goes with --scale")
    if ns.dist:
        return main_dist(ns)
    if ns.python:
        return main_python(ns)
    for flag, value in (("--rounds", ns.rounds), ("--ucx-perftest", ns.ucx_perftest)):
        if value is not None:
            parser.error(f"{flag} goes with --nodes 2 (--rounds also with --scale)")
    ns.pes = 2 if ns.pes is None else ns.pes
    ns.tests = list(ALL_TESTS) if ns.tests is None else ns.tests
    ns.min_size = 8 if ns.min_size is None else ns.min_size
    ns.max_size = (64 << 20) if ns.max_size is None else ns.max_size
    ns.max_latency_size = (64 << 10) if ns.max_latency_size is None else ns.max_latency_size
    if ns.pes < 1:
        parser.error("--pes must be at least 1")
    if ns.min_size > ns.max_size:
        parser.error("--min-size is larger than --max-size")
    if ns.csv == "-" and ns.json == "-":
        parser.error("--csv and --json cannot both go to stdout")
    if ns.pes < 2:
        dropped = [t for t in ns.tests if t in P2P_TESTS]
        ns.tests = [t for t in ns.tests if t not in dropped]
        if not ns.tests:
            parser.error("the point-to-point tests need --pes 2 or more")
    if ns.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            parser.error("--plot needs matplotlib: pip install 'shmem-tools[plot]' (or pip install matplotlib)")

    plan = make_plan(ns)
    plan["quick"] = ns.quick
    res = Results()
    if ns.pes < 2:
        res.notes.append("point-to-point tests skipped: they need --pes 2 or more")
    base_steps = 0
    if set(plan["tests"]) & {"put", "get"}:
        base_steps += len(set(plan["bw_sizes"]) | set(plan["lat_sizes"]))
    if set(plan["tests"]) & {"put", "get", "put_signal"}:
        base_steps += len(plan["lat_sizes"])
    if "amo" in plan["tests"]:
        base_steps += len(plan["amo_types"])
    if "barrier" in plan["tests"]:
        base_steps += 1
    progress = Progress(base_steps + _count_pe_steps(plan), enabled=not ns.no_progress)
    started = time.monotonic()
    try:
        run_baselines(plan, res, progress)
    except _baselines.BaselineError as exc:
        res.errors.append(str(exc))
    if "buffer" in plan["tests"]:
        measure_buffer_construction(plan, res)
    run_pes(plan, res, progress, ns.timeout)
    progress.close()
    res.meta["seconds"] = round(time.monotonic() - started, 2)

    tables = build_tables(plan, res)
    if ns.csv:
        _write(ns.csv, to_csv(tables))
    if ns.json:
        _write(ns.json, json.dumps(to_json(plan, res, tables), indent=2) + "\n")
    if "-" not in (ns.csv, ns.json):
        out = sys.stdout
        lib = res.meta.get("library", "libaclshmem")
        out.write(f"shmem-perf: {lib}, {plan['npes']} PEs, {os.cpu_count()} CPUs"
                  f"{', quick run' if ns.quick else ''}; 'vs base' = speedup over the baseline "
                  "(above 1.00x the library is faster)\n\n")
        for t in tables:
            out.write(t.render() + "\n\n")
        for note in res.notes:
            out.write(f"note: {note}\n")
        out.write(f"total time {res.meta['seconds']:.1f} s\n")
        out.flush()
    else:
        for note in res.notes:
            sys.stderr.write(f"shmem-perf: note: {note}\n")
    status = 0
    if ns.plot:
        from ._plot import plot_perf

        try:
            plot_perf(tables, ns.plot, plan, res)
            sys.stderr.write(f"shmem-perf: plot written to {ns.plot}\n")
        except Exception as exc:
            sys.stderr.write(f"shmem-perf: cannot draw the plot: {exc}\n")
            status = 1
    for e in res.errors:
        sys.stderr.write(f"shmem-perf: error: {e}\n")
    if res.errors:
        status = 1
    return status


# ---------------------------------------------------------------------------
# Across nodes: --nodes 2
# ---------------------------------------------------------------------------


def _fmt_value(value, unit):
    if value is None:
        return "-"
    return f"{value:.2f} us" if unit == "us" else f"{value:.1f} MB/s"


def nodes_table(plan, result):
    from . import _internode

    t = Table("internode", "across nodes: libaclshmem (one PE per node) and ucx_perftest, same UCX, same link; "
                           "ratio = ours / ucx_perftest",
              f"ucx_perftest at the same size, {_internode.baseline_text()}; "
              f"goals: bandwidth >= {_internode.GOAL_BW:.1f}x from 64 KiB, 8-byte latency <= "
              f"{_internode.GOAL_LAT:.1f}x",
              ["test", "size", "libaclshmem", "ucx_perftest", "ours/ucx", "goal", "met", "ucx window"])
    for label, size, unit, ours, theirs, ratio, goal, met, window in _internode.ratio_rows(plan, result):
        t.add([label, format_size(size), _fmt_value(ours, unit), _fmt_value(theirs, unit),
               f"{ratio:.2f}x" if ratio is not None else "-", goal, "-" if met is None else ("yes" if met else "NO"),
               window or "-"],
              table=t.name, size=size, variant=label, library=ours, baseline=theirs, ratio=ratio, unit=unit,
              goal=goal, met=met, ucx_window=window)
    return t


def main_nodes(ns, parser):
    """``shmem-perf --nodes 2``: see shmem_tools._internode."""
    from . import _internode, _netns

    if ns.nodes != 2:
        parser.error("--nodes: only 2 is supported (one PE on each of two nodes)")
    given = [flag for flag, value in (("--pes", ns.pes), ("--tests", ns.tests), ("--plot", ns.plot),
                                      ("--max-latency-size", ns.max_latency_size),
                                      ("--time-per-point", ns.time_per_point)) if value is not None]
    if given:
        parser.error(f"--nodes 2 measures 8-byte put and get latency and put and get bandwidth, one PE per node: "
                     f"{', '.join(given)} do{'es' if len(given) == 1 else ''} not apply")
    min_size = (64 << 10) if ns.min_size is None else ns.min_size
    max_size = (8 << 20) if ns.max_size is None else ns.max_size
    if min_size > max_size:
        parser.error("--min-size is larger than --max-size")
    if ns.rounds is not None and ns.rounds < 1:
        parser.error("--rounds must be at least 1")
    if ns.csv == "-" and ns.json == "-":
        parser.error("--csv and --json cannot both go to stdout")
    problems = []
    why = _netns.unavailable("shmem-perf --nodes 2")
    if why:
        problems.append(why)
    try:
        perftest = _internode.find_ucx_perftest(ns.ucx_perftest)
    except _internode.InternodeError as exc:
        problems.append(str(exc))
    if problems:
        for p in problems:
            sys.stderr.write(f"shmem-perf: --nodes 2 cannot run: {p}\n")
        return 1

    plan = _internode.make_plan(powers_of_two(min_size, max_size), quick=ns.quick, rounds=ns.rounds)
    progress = Progress(_internode.steps(plan), enabled=not ns.no_progress)
    started = time.monotonic()
    try:
        result = _internode.run(plan, perftest, ns.timeout, progress, pin=not ns.no_pin)
    except (_internode.InternodeError, _netns.NetnsError) as exc:
        progress.close()
        sys.stderr.write(f"shmem-perf: error: {exc}\n")
        return 1
    except (KeyboardInterrupt, _netns._Terminated):
        progress.close()
        sys.stderr.write("shmem-perf: interrupted; the network namespaces are removed\n")
        return 130
    progress.close()
    seconds = round(time.monotonic() - started, 2)
    table = nodes_table(plan, result)
    if ns.csv:
        _write(ns.csv, to_csv([table]))
    if ns.json:
        meta = {"library": result["library"], "library_file": result["library_file"], "plugin": result["plugin"],
                "ucx": result["ucx"], "env": result["env"], "pinned_cpus": result["cpus"], "rounds": plan["rounds"], "quick": ns.quick,
                "tools_version": __version__, "cpus": os.cpu_count(), "machine": platform.machine(),
                "seconds": seconds, "date": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        doc = {"meta": meta, "ratio": "ours / ucx_perftest: above 1 is more bandwidth or more time",
               "tables": [{"name": table.name, "title": table.title, "baseline": table.baseline,
                           "rows": table.records}],
               "measurements": result["measurements"]}
        _write(ns.json, json.dumps(doc, indent=2) + "\n")
    if "-" not in (ns.csv, ns.json):
        out = sys.stdout
        env = " ".join(f"{k}={v}" for k, v in result["env"].items())
        cpus = result["cpus"]
        pinned = (f"node 0 on CPU {cpus[0]}, node 1 on CPU {cpus[1]} (taskset)" if cpus else "not pinned")
        out.write(f"shmem-perf --nodes 2: {result['library']} with its UCX {result['ucx']} plug-in against "
                  f"ucx_perftest, one PE in each of 2 network namespaces joined by a veth pair, {env}; "
                  f"{os.cpu_count()} CPUs, {pinned}; best of {plan['rounds']} alternating round(s)"
                  f"{', quick run' if ns.quick else ''}\n\n")
        out.write(table.render() + "\n\n")
        out.write(f"total time {seconds:.1f} s\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
