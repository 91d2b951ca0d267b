"""The PE side of ``shmem-perf``: every PE of the job runs this module.

The plan (which tests, which sizes, how long per point) comes as JSON in the variable
``SHMEM_TOOLS_PERF_PLAN``; every PE walks it in the same order, so the collective
steps (barriers, put_signal ping-pong, all_reduce) line up.  Point-to-point tests run
between PE 0 and PE 1 (PE 0 measures; the other PEs wait in the barrier that starts the
next step).  PE 0 reports each result as a record (see shmem_tools._launch).

The library is called through shmem-core's cffi binding (``shmem._native.load()``)
with every pointer converted once, so a measurement costs one cffi call per operation
on top of the library itself.
"""

import ctypes
import json
import os
import sys
import time
import traceback
from statistics import median

from ._launch import report
from ._timing import pin, split, timed_loop, unpin

ENV_PLAN = "SHMEM_TOOLS_PERF_PLAN"
PEER = 1
SIGNAL_SET = 0
CMP_EQ = 0


def run(plan):
    from shmem import _native, core

    t_start = time.monotonic()
    core.init()
    me, n = core.my_pe(), core.n_pes()
    # Pins only this (the calling) thread: the library's own threads, started by init,
    # keep every CPU, as they would in a program.
    cpu = pin(me) if plan.get("pin", True) else None
    ffi, lib = _native.load()
    tests = set(plan["tests"])
    p2p_sizes = sorted(set(plan["bw_sizes"]) | set(plan["lat_sizes"]))
    max_size = max(p2p_sizes + [8])
    need_p2p = n >= 2 and bool(tests & {"put", "get", "put_signal"})

    dst = core.buffer(max_size) if need_p2p else None
    sig = core.calloc(1, 64)
    local = ctypes.create_string_buffer(max_size) if need_p2p else None
    if local is not None:
        ctypes.memset(local, 0x5A, max_size)  # touch every page before timing
    if me == 0:
        report(kind="start", pe=me, npes=n, init_seconds=time.monotonic() - t_start,
               library=core.get_version(), cpu=cpu)

    def step(record):
        if me == 0:
            report(kind="result", **record)

    def barrier():
        lib.aclshmem_barrier_all()

    c_dst = ffi.cast("void *", dst.addr) if dst is not None else None
    c_src = ffi.cast("void *", ctypes.addressof(local)) if local is not None else None
    c_sig = ffi.cast("int32_t *", sig.addr)

    # --- put / get: blocking and nbi --------------------------------------------
    for op in ("put", "get"):
        if op not in tests or n < 2:
            continue
        blocking = lib.aclshmem_putmem if op == "put" else lib.aclshmem_getmem
        nbi = lib.aclshmem_putmem_nbi if op == "put" else lib.aclshmem_getmem_nbi
        quiet = lib.aclshmem_quiet
        for variant, fn, sizes in (("blocking", blocking, p2p_sizes), ("nbi", nbi, plan["bw_sizes"])):
            for size in sizes:
                barrier()
                if me == 0:
                    if op == "put":
                        def one(fn=fn, size=size):
                            fn(c_dst, c_src, size, PEER)
                    else:
                        def one(fn=fn, size=size):
                            fn(c_src, c_dst, size, PEER)
                    per_op = timed_loop(one, size, plan, quiet)
                    step({"test": op, "variant": variant, "size": size, "seconds": per_op})
        if op == "put":
            # The puts must have landed: PE 1's buffer holds PE 0's bytes.
            barrier()
            if me == PEER and bytes(dst.view()[:max_size]) != b"\x5a" * max_size:
                raise AssertionError("put benchmark: PE 0's data did not arrive in PE 1's buffer")
    # --- put_signal round trip ---------------------------------------------------
    seq = 0
    if "put_signal" in tests and n >= 2:
        put_signal = lib.aclshmemx_putmem_signal
        wait = lib.aclshmem_signal_wait_until
        chunks = split(plan["pingpong_iters"], plan.get("repetitions", 1))
        warm = max(2, plan["pingpong_iters"] // 10)
        for size in plan["lat_sizes"]:
            barrier()
            if me not in (0, PEER):
                continue
            other = PEER if me == 0 else 0
            times = []
            for k, count in enumerate([warm] + chunks):
                t0 = time.perf_counter()
                for _ in range(count):
                    seq += 1
                    if me == 0:
                        put_signal(c_dst, c_src, size, c_sig, seq, SIGNAL_SET, other)
                        wait(c_sig, CMP_EQ, seq)
                    else:
                        wait(c_sig, CMP_EQ, seq)
                        put_signal(c_dst, c_src, size, c_sig, seq, SIGNAL_SET, other)
                if k:
                    times.append((time.perf_counter() - t0) / count)
            step({"test": "put_signal", "variant": "round trip", "size": size, "seconds": median(times)})
    # --- AMO: fetch_add round trip ------------------------------------------------
    if "amo" in tests and n >= 2:
        run_amo(plan, me, ffi, lib, step, barrier)
    # --- barrier -----------------------------------------------------------------
    if "barrier" in tests:
        iters = plan["barrier_iters"]
        for _ in range(max(5, iters // 10)):
            barrier()
        times = []
        for count in split(iters, plan.get("repetitions", 1)):
            t0 = time.perf_counter()
            for _ in range(count):
                barrier()
            times.append((time.perf_counter() - t0) / count)
        step({"test": "barrier", "variant": "barrier_all", "size": 0, "seconds": median(times), "npes": n})
    # --- all_reduce (shmem_torch) and its gloo baseline --------------------------
    if "all_reduce" in tests:
        run_all_reduce(plan, me, n, step, barrier)
    barrier()
    for b in (sig, dst):
        if b is not None:
            core.free(b)
    core.finalize()
    if me == 0:
        report(kind="done", seconds=time.monotonic() - t_start)


def run_amo(plan, me, ffi, lib, step, barrier):
    """PE 0 times aclshmem_<T>_atomic_fetch_add of 1 on a word of PE 1 (each call is a
    round trip: it returns the old value).  First, for each type, PE 0 does a few
    fetch_adds whose old values must count up from 0, and PE 1 must find that count in
    its word."""
    from shmem import core

    check_adds = 8
    types = plan["amo_types"]
    words = core.calloc(len(types), 64)  # one cache line per word
    for k, t in enumerate(types):
        word = ffi.cast(f"{t}_t *", words.addr + 64 * k)
        width = ffi.sizeof(f"{t}_t")
        fetch_add = getattr(lib, f"aclshmem_{t}_atomic_fetch_add")
        barrier()
        if me == 0:
            old = [fetch_add(word, 1, PEER) for _ in range(check_adds)]
            if old != list(range(check_adds)):
                raise AssertionError(f"aclshmem_{t}_atomic_fetch_add returned {old}")
        barrier()
        if me == PEER and word[0] != check_adds:
            raise AssertionError(f"amo benchmark: PE 1's {t} word is {word[0]} after {check_adds} fetch_adds")
        barrier()  # PE 1 has read its word before the timed fetch_adds change it
        if me == 0:
            def one(fetch_add=fetch_add, word=word):
                fetch_add(word, 1, PEER)
            step({"test": "amo", "variant": f"{t} fetch_add", "size": width,
                  "seconds": timed_loop(one, width, plan)})
    barrier()
    core.free(words)


def torch_status():
    """(usable, note): whether torch and shmem_torch's all_reduce can be used."""
    try:
        import torch  # noqa: F401
        import torch.distributed as dist
    except Exception as exc:
        return False, f"torch is not installed ({type(exc).__name__}: {exc})"
    if not dist.is_available() or not dist.is_gloo_available():
        return False, "torch.distributed with the gloo backend is not available in this torch build"
    try:
        import shmem_torch
    except Exception as exc:
        return False, f"shmem_torch is not installed ({type(exc).__name__}: {exc})"
    if not callable(getattr(shmem_torch, "all_reduce", None)):
        return False, f"shmem_torch {getattr(shmem_torch, '__version__', '?')} has no all_reduce yet"
    create = getattr(shmem_torch, "aclshmem_create_tensor", None)
    free = getattr(shmem_torch, "aclshmem_free_tensor", None)
    if not (callable(create) and callable(free)):
        return False, (f"shmem_torch {getattr(shmem_torch, '__version__', '?')} has no "
                       "aclshmem_create_tensor / aclshmem_free_tensor yet")
    return True, ""


def run_all_reduce(plan, me, n, step, barrier):
    usable, note = torch_status()
    if me == 0:
        report(kind="torch", usable=usable, note=note)
    if not usable:
        return
    import torch
    import torch.distributed as dist
    import shmem_torch

    # Collectives run as torchrun runs them: unpinned (threads started from here on,
    # gloo's and shmem_torch's, inherit this thread's CPUs).
    unpin()
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{plan['gloo_port']}", rank=me, world_size=n)
    try:
        for size in plan["ar_sizes"]:
            numel = max(1, size // 4)
            iters = max(plan["ar_min_iters"], min(plan["ar_max_iters"], plan["ar_bytes_per_point"] // size))
            sym = shmem_torch.aclshmem_create_tensor((numel,), dtype=torch.float32)
            plain = torch.empty(numel, dtype=torch.float32)
            try:
                # Correctness first: every PE contributes its rank + 1.
                sym.fill_(me + 1)
                barrier()
                shmem_torch.all_reduce(sym)
                expect = n * (n + 1) / 2
                if float(sym[0]) != expect or float(sym[-1]) != expect:
                    raise AssertionError(f"shmem_torch.all_reduce gave {float(sym[0])}, expected {expect}")
                timings = {}
                for name, fn, t in (("shmem_torch", shmem_torch.all_reduce, sym),
                                    ("gloo", dist.all_reduce, plain)):
                    t.fill_(1.0)
                    fn(t)  # warm-up
                    dist.barrier()
                    barrier()
                    t0 = time.perf_counter()
                    for _ in range(iters):
                        fn(t)
                    timings[name] = (time.perf_counter() - t0) / iters
                step({"test": "all_reduce", "variant": "float32 sum", "size": numel * 4,
                      "seconds": timings["shmem_torch"], "baseline_seconds": timings["gloo"]})
            finally:
                shmem_torch.aclshmem_free_tensor(sym)
    finally:
        dist.destroy_process_group()


def main():
    try:
        plan = json.loads(os.environ[ENV_PLAN])
    except (KeyError, ValueError) as exc:
        sys.stderr.write(f"shmem_tools._perf_pe: no valid plan in {ENV_PLAN}: {exc}\n")
        return 2
    try:
        run(plan)
    except BaseException as exc:
        report(kind="error", error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc())
        traceback.print_exc()
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
