"""``shmem-perf --python``: what the Python layers add to a call of libaclshmem.

    python -m shmem_tools._py_bench [--quick] [--rounds N] [--json FILE]

One process, one PE (an instance of its own, 1 MiB heap), 8-byte operations on the
symmetric heap.  Every round times, one after the other:

* the bare cffi ABI call: the C function through a separate plain ``cffi.FFI()`` with the
  header's declaration and ``ffi.dlopen`` of the same library, its pointers made with
  ``ffi.cast`` once, before the loop (what a program written straight against cffi does);
* the same C function through ``shmem._pyshmem`` (integer addresses, as the API takes
  them);
* ``shmem.core.put`` / ``get`` (Buffers, validated, stream-ordered on the default stream).

for ``aclshmem_putmem``, ``aclshmem_getmem``, ``aclshmem_int32_p``, ``aclshmem_int32_g``
and the stream-ordered ``aclshmemx_putmem_on_stream`` / ``getmem_on_stream`` (after each
loop on a stream, bare or not, the stream is synchronised outside the time).
Each case keeps the median of its rounds (the rounds alternate, so that other work on the
machine disturbs every case alike); a time is per call, the loop included, as CPU time of
the calling thread (what the call costs the program, little disturbed by other processes
on a shared machine: the goals are judged on it) and as wall-clock time.  The ratios are
against the bare call of the same C function, with issue #17's goals: ``_pyshmem`` <= 1.5x,
``shmem.core`` <= 3x; ``shmem.core.put``/``get`` call ``aclshmemx_putmem_on_stream`` /
``getmem_on_stream``, and are also shown against the bare blocking ``aclshmem_putmem`` /
``getmem``.  Then ``import shmem.core`` plus its first call (``get_version()``, which loads the
library) is timed in fresh interpreters (median), against the goal of 60 ms, and whether
that imported pycparser (it must not: the declarations are parsed when the package is
built).
"""

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import time

from ._bench_common import Table

GOAL_PYSHMEM = 1.5
GOAL_CORE = 3.0
GOAL_IMPORT_MS = 60.0
NBYTES = 8

# The header's declarations of the four functions, for the bare baseline.
BARE_CDEF = """
void aclshmem_putmem(void *dst, const void *src, size_t elem_size, int32_t pe);
void aclshmem_getmem(void *dst, const void *src, size_t elem_size, int32_t pe);
void aclshmem_int32_p(int32_t *dst, const int32_t value, int pe);
int32_t aclshmem_int32_g(const int32_t *src, int32_t pe);
void aclshmemx_putmem_on_stream(void *dst, const void *src, size_t elem_size, int32_t pe, void *stream);
void aclshmemx_getmem_on_stream(void *dst, const void *src, size_t elem_size, int32_t pe, void *stream);
"""

IMPORT_PROBE = """
import json, sys, time
c0, t0 = time.thread_time(), time.perf_counter()
import shmem.core
t1 = time.perf_counter()
shmem.core.get_version()
c2, t2 = time.thread_time(), time.perf_counter()
from shmem import _native
print(json.dumps({"import": t1 - t0, "first_call": t2 - t1, "cpu": c2 - c0, "pycparser": "pycparser" in sys.modules,
                  "precompiled": getattr(_native, "precompiled", False)}))
"""


def _loop2(fn, a, b, repeat):
    for _ in repeat:
        fn(a, b)


def _loop3(fn, a, b, c, repeat):
    for _ in repeat:
        fn(a, b, c)


def _loop4(fn, a, b, c, d, repeat):
    for _ in repeat:
        fn(a, b, c, d)


def _loop5(fn, a, b, c, d, e, repeat):
    for _ in repeat:
        fn(a, b, c, d, e)


# One loop per argument count: fn(a, b, ...) as a program writes it (fn(*args) would
# cost a Python function more than a cffi function).
_LOOPS = {2: _loop2, 3: _loop3, 4: _loop4, 5: _loop5}


def _loop(fn, args, number):
    """(CPU seconds of this thread, wall seconds) per call of fn(*args), over ``number``
    calls."""
    loop, repeat = _LOOPS[len(args)], itertools.repeat(None, number)
    c0, w0 = time.thread_time(), time.perf_counter()
    loop(fn, *args, repeat)
    return (time.thread_time() - c0) / number, (time.perf_counter() - w0) / number


def _cases(core, P, ffi, lib, dst, src):
    """(C function, layer, timed function, arguments, cleanup or None)."""
    dp, sp = ffi.cast("void *", dst.addr), ffi.cast("void *", src.addr)
    ip = ffi.cast("int32_t *", dst.addr)
    default = ffi.NULL  # the default stream
    return [
        ("aclshmem_putmem", "bare", lib.aclshmem_putmem, (dp, sp, NBYTES, 0), None),
        ("aclshmem_putmem", "_pyshmem", P.aclshmem_putmem, (dst.addr, src.addr, NBYTES, 0), None),
        ("aclshmem_getmem", "bare", lib.aclshmem_getmem, (sp, dp, NBYTES, 0), None),
        ("aclshmem_getmem", "_pyshmem", P.aclshmem_getmem, (src.addr, dst.addr, NBYTES, 0), None),
        ("aclshmem_int32_p", "bare", lib.aclshmem_int32_p, (ip, 5, 0), None),
        ("aclshmem_int32_p", "_pyshmem", P.aclshmem_int32_p, (dst.addr, 5, 0), None),
        ("aclshmem_int32_g", "bare", lib.aclshmem_int32_g, (ip, 0), None),
        ("aclshmem_int32_g", "_pyshmem", P.aclshmem_int32_g, (dst.addr, 0), None),
        ("aclshmemx_putmem_on_stream", "bare", lib.aclshmemx_putmem_on_stream, (dp, sp, NBYTES, 0, default),
         core.synchronize),
        ("aclshmemx_putmem_on_stream", "shmem.core.put", core.put, (dst, src, 0), core.synchronize),
        ("aclshmemx_getmem_on_stream", "bare", lib.aclshmemx_getmem_on_stream, (sp, dp, NBYTES, 0, default),
         core.synchronize),
        ("aclshmemx_getmem_on_stream", "shmem.core.get", core.get, (src, dst, 0), core.synchronize),
    ]


def measure_calls(rounds, number):
    """{(C function, layer): [(CPU s, wall s) per call, one per round]} in this process, 1 PE."""
    import cffi

    import shmem.core as core
    from shmem import _native
    from shmem import _pyshmem as P

    core.init(uid=core.get_unique_id(), rank=0, nranks=1, mem_size=1 << 20)
    try:
        ffi = cffi.FFI()
        ffi.cdef(BARE_CDEF)
        lib = ffi.dlopen(_native.library_path())
        dst, src = core.buffer(64), core.buffer(64)
        cases = _cases(core, P, ffi, lib, dst, src)
        times = {(op, layer): [] for op, layer, *_ in cases}
        for _ in range(rounds):
            for op, layer, fn, args, cleanup in cases:
                times[(op, layer)].append(_loop(fn, args, number))
                if cleanup:
                    cleanup()
        core.free(dst)
        core.free(src)
    finally:
        core.finalize()
    return times


def measure_import(repeats):
    """[{"import": s, "first_call": s, "pycparser": bool, "precompiled": bool}] of fresh
    interpreters.  A first run, not counted, may write the bytecode caches (as the first
    start of an installed program does; pip writes them at install)."""
    warm_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out = []
    for i in range(repeats + 1):
        proc = subprocess.run([sys.executable, "-c", IMPORT_PROBE], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, timeout=120, env=warm_env if i == 0 else None)
        if proc.returncode != 0:
            raise RuntimeError(f"import shmem.core failed in a fresh interpreter:\n{proc.stderr}")
        if i:
            out.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    return out


def _goal_of(layer):
    return GOAL_PYSHMEM if layer == "_pyshmem" else GOAL_CORE


#: The blocking call whose bare time shmem.core's stream-ordered call is also shown against.
BLOCKING = {"aclshmemx_putmem_on_stream": "aclshmem_putmem", "aclshmemx_getmem_on_stream": "aclshmem_getmem"}


def _median_ns(samples, which):
    return statistics.median(sample[which] for sample in samples) * 1e9


def call_rows(times):
    """Per case: C function, layer, CPU ns per call, bare CPU ns, ratio, goal or None, met
    or None, wall ns, wall ratio, wall ratio to the bare blocking call or None."""
    rows = []
    for (fn, layer), samples in times.items():
        cpu, wall = _median_ns(samples, 0), _median_ns(samples, 1)
        bare_cpu, bare_wall = _median_ns(times[(fn, "bare")], 0), _median_ns(times[(fn, "bare")], 1)
        if layer == "bare":
            rows.append(dict(function=fn, layer=layer, ns=cpu, bare_ns=bare_cpu, ratio=1.0, goal=None, met=None,
                             wall_ns=wall, wall_ratio=1.0, wall_vs_bare_blocking=None))
            continue
        goal = _goal_of(layer)
        blocking = BLOCKING.get(fn)
        vs_blocking = wall / _median_ns(times[(blocking, "bare")], 1) if blocking else None
        rows.append(dict(function=fn, layer=layer, ns=cpu, bare_ns=bare_cpu, ratio=cpu / bare_cpu, goal=goal,
                         met=cpu / bare_cpu <= goal, wall_ns=wall, wall_ratio=wall / bare_wall,
                         wall_vs_bare_blocking=vs_blocking))
    return rows


def import_row(probes):
    total_ms = statistics.median(p["import"] + p["first_call"] for p in probes) * 1e3
    return {
        "import_ms": statistics.median(p["import"] for p in probes) * 1e3,
        "first_call_ms": statistics.median(p["first_call"] for p in probes) * 1e3,
        "total_ms": total_ms,
        "total_cpu_ms": statistics.median(p["cpu"] for p in probes) * 1e3,
        "goal_ms": GOAL_IMPORT_MS,
        "met": total_ms <= GOAL_IMPORT_MS,
        "pycparser": any(p["pycparser"] for p in probes),
        "precompiled": all(p["precompiled"] for p in probes),
        "runs": len(probes),
    }


def tables(rows, imp, rounds, number):

    calls = Table("python_calls", f"Python hot path: ns per call, 1 PE, {NBYTES}-byte operations "
                                  f"(median of {rounds} alternating rounds of {number} calls)",
                  "the bare cffi ABI call of the same C function (plain FFI + dlopen, pointers cast once); "
                  f"goals: _pyshmem <= {GOAL_PYSHMEM:.1f}x, shmem.core <= {GOAL_CORE:.1f}x, on the calling "
                  "thread's CPU time (ns, ratio; wall-clock beside it); last column: shmem.core's "
                  "stream-ordered call against the bare blocking putmem/getmem (wall)",
                  ["C function", "layer", "ns", "bare ns", "ratio", "goal", "met", "wall ns", "wall ratio",
                   "vs blocking"])

    def ratio(x):
        return "-" if x is None else f"{x:.2f}x"

    for r in rows:
        calls.add([r["function"], r["layer"], f"{r['ns']:.0f}", f"{r['bare_ns']:.0f}", ratio(r["ratio"]),
                   "-" if r["goal"] is None else f"<= {r['goal']:.1f}x",
                   "-" if r["met"] is None else ("yes" if r["met"] else "NO"),
                   f"{r['wall_ns']:.0f}", ratio(r["wall_ratio"]), ratio(r["wall_vs_bare_blocking"])],
                  table=calls.name, **r)
    start = Table("python_import", f"import shmem.core + first call (get_version), fresh interpreter, median of "
                                   f"{imp['runs']}",
                  f"goal: <= {GOAL_IMPORT_MS:.0f} ms; no C parsed at run time (pycparser not imported)",
                  ["import ms", "first call ms", "total ms", "goal", "met", "total CPU ms", "pycparser imported",
                   "precompiled ffi"])
    start.add([f"{imp['import_ms']:.1f}", f"{imp['first_call_ms']:.1f}", f"{imp['total_ms']:.1f}",
               f"<= {GOAL_IMPORT_MS:.0f} ms", "yes" if imp["met"] else "NO", f"{imp['total_cpu_ms']:.1f}",
               "yes" if imp["pycparser"] else "no",
               "yes" if imp["precompiled"] else "no"], table=start.name, **imp)
    return [calls, start]


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m shmem_tools._py_bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="few rounds and calls (a smoke run)")
    p.add_argument("--rounds", type=int, default=None, help="alternating rounds (default 9; 2 with --quick)")
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON to FILE")
    ns = p.parse_args(sys.argv[1:] if argv is None else argv)
    rounds = ns.rounds or (2 if ns.quick else 9)
    number = 2000 if ns.quick else 50000
    started = time.monotonic()
    rows = call_rows(measure_calls(rounds, number))
    imp = import_row(measure_import(3 if ns.quick else 11))
    out = tables(rows, imp, rounds, number)
    from shmem import _native

    sys.stdout.write(f"shmem-perf --python: {_native.library_path()}, Python {sys.version.split()[0]}, "
                     f"{os.cpu_count()} CPUs{', quick run' if ns.quick else ''}\n\n")
    for t in out:
        sys.stdout.write(t.render() + "\n\n")
    seconds = time.monotonic() - started
    sys.stdout.write(f"total time {seconds:.1f} s\n")
    if ns.json:
        doc = {"meta": {"library": _native.library_path(), "python": sys.version.split()[0], "cpus": os.cpu_count(),
                        "rounds": rounds, "calls_per_round": number, "quick": ns.quick, "seconds": round(seconds, 2)},
               "tables": [{"name": t.name, "title": t.title, "baseline": t.baseline, "rows": t.records} for t in out]}
        with open(ns.json, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
