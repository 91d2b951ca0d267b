"""The baselines of ``shmem-perf``, measured in the same run as the library.

* ``memcpy_bandwidth``: one thread copying private memory into a shared anonymous mapping
  (the kind of memory a symmetric heap is) with ``ctypes.memmove``: one C ``memmove`` per
  Python call, as a put is one library call per Python call.
* ``pingpong``: two processes that share one anonymous mapping.  Each turn copies the
  payload into the shared memory and raises a flag; the other side waits for the flag and
  answers.  Round trip and one-way (half of it) latency.
* ``flag_barrier``: N processes, each with its own flag in shared memory: raise yours,
  wait until every flag is up.

Waiting never burns a core for long (the machine may have fewer cores than processes):
a short spin, then ``sched_yield``, then short sleeps.  A side that waits more than
``WAIT_LIMIT`` seconds gives up (the other process died).
"""

import ctypes
import mmap
import os
import time

from ._timing import median, pin, pinned, split, timed_loop

WAIT_LIMIT = 20.0
_SPIN = 200
_YIELD_FOR = 0.002
_SLEEP = 50e-6
_LINE = 64  # one flag per cache line


class BaselineError(RuntimeError):
    pass


def _wait_for(flags, index, value):
    """Waits until flags[index] >= value."""
    for _ in range(_SPIN):
        if flags[index] >= value:
            return
    start = time.perf_counter()
    while flags[index] < value:
        waited = time.perf_counter() - start
        if waited < _YIELD_FOR:
            os.sched_yield()
        elif waited < WAIT_LIMIT:
            time.sleep(_SLEEP)
        else:
            raise BaselineError(f"baseline: no answer for {WAIT_LIMIT:g} s (the other process died?)")


def memcpy_bandwidth(sizes, plan, on_point=None, pin_cpus=True):
    """{size: seconds per copy} of ``ctypes.memmove`` into a shared mapping, timed like
    the library's puts (shmem_tools._timing.timed_loop with the same plan)."""
    biggest = max(sizes)
    dst_map = mmap.mmap(-1, biggest, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    anchor = ctypes.c_char.from_buffer(dst_map)  # keeps the address valid; released below
    src = ctypes.create_string_buffer(biggest)
    guard = pinned(0, pin_cpus)
    guard.__enter__()
    try:
        ctypes.memset(src, 0x5A, biggest)
        dst = ctypes.addressof(anchor)
        ctypes.memset(dst, 0, biggest)  # fault the pages in, as the PEs' heaps are after warm-up
        s = ctypes.addressof(src)
        memmove = ctypes.memmove
        out = {}
        for size in sizes:
            def one(size=size):
                memmove(dst, s, size)
            out[size] = timed_loop(one, size, plan)
            if on_point:
                on_point("memcpy", size)
        return out
    finally:
        guard.__exit__(None, None, None)
        del anchor
        dst_map.close()


def _fork_workers(count, body, pin_cpus=False):
    """Forks ``count`` children running body(k) for k = 1..count (child k on CPU k when
    ``pin_cpus``); returns their pids."""
    pids = []
    for k in range(1, count + 1):
        pid = os.fork()
        if pid == 0:  # the child: never returns into the caller's code
            status = 0
            try:
                if pin_cpus:
                    pin(k)
                body(k)
            except BaseException:
                status = 1
            finally:
                os._exit(status)
        pids.append(pid)
    return pids


def _reap(pids, deadline=5.0):
    end = time.monotonic() + deadline
    bad = []
    for pid in pids:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                if os.waitstatus_to_exitcode(status) != 0:
                    bad.append(pid)
                break
            if time.monotonic() > end:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                bad.append(pid)
                break
            time.sleep(0.005)
    return bad


def pingpong(sizes, iters, repetitions=1, on_point=None, pin_cpus=True):
    """{size: seconds per round trip} of a shared-memory flag ping-pong between this
    process and a forked child; the payload of each turn is ``size`` bytes.  ``iters``
    round trips per size, in ``repetitions`` chunks whose median counts."""
    biggest = max(sizes)
    area = 2 * _LINE + 2 * biggest
    shm = mmap.mmap(-1, area, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    mv = memoryview(shm)
    flags = mv[:2 * _LINE].cast("q")  # flags[0]: ping (parent -> child), flags[8]: pong
    ping, pong = 0, _LINE // 8
    box_a = mv[2 * _LINE:2 * _LINE + biggest]
    box_b = mv[2 * _LINE + biggest:area]
    payload = bytearray(b"\x5a" * biggest)
    src = memoryview(payload)
    warm = max(2, iters // 10)
    chunks = [warm] + split(iters, repetitions)
    total = sum(chunks)

    def child(_k):
        seq = 0
        for size in sizes:
            for _ in range(total):
                seq += 1
                _wait_for(flags, ping, seq)
                box_b[:size] = src[:size]
                flags[pong] = seq

    guard = pinned(0, pin_cpus)
    guard.__enter__()
    pids = _fork_workers(1, child, pin_cpus)
    out = {}
    try:
        seq = 0
        for size in sizes:
            times = []
            for k, count in enumerate(chunks):
                t0 = time.perf_counter()
                for _ in range(count):
                    seq += 1
                    box_a[:size] = src[:size]
                    flags[ping] = seq
                    _wait_for(flags, pong, seq)
                if k:
                    times.append((time.perf_counter() - t0) / count)
            out[size] = median(times)
            if on_point:
                on_point("ping-pong", size)
    finally:
        flags[ping] = 1 << 62  # releases a child still waiting
        bad = _reap(pids)
        guard.__exit__(None, None, None)
        for view in (flags, box_a, box_b):
            view.release()
        mv.release()
        shm.close()
    if bad:
        raise BaselineError("the ping-pong partner process failed")
    return out


def flag_barrier(nprocs, iters, repetitions=1, pin_cpus=True):
    """Seconds per barrier of ``nprocs`` processes (this one and nprocs - 1 forked ones);
    None for a single process."""
    if nprocs < 2:
        return None  # nothing to wait for: no baseline
    shm = mmap.mmap(-1, nprocs * _LINE, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    mv = memoryview(shm)
    flags = mv.cast("q")
    stride = _LINE // 8
    warm = max(5, iters // 10)

    def barrier(me, epoch):
        flags[me * stride] = epoch
        for k in range(nprocs):
            if k != me:
                _wait_for(flags, k * stride, epoch)

    def child(k):
        for epoch in range(1, warm + iters + 1):
            barrier(k, epoch)

    guard = pinned(0, pin_cpus)
    guard.__enter__()
    pids = _fork_workers(nprocs - 1, child, pin_cpus)
    try:
        epoch = 0
        times = []
        for k, count in enumerate([warm] + split(iters, repetitions)):
            t0 = time.perf_counter()
            for _ in range(count):
                epoch += 1
                barrier(0, epoch)
            if k:
                times.append((time.perf_counter() - t0) / count)
        result = median(times)
    finally:
        flags[0] = 1 << 62
        bad = _reap(pids)
        guard.__exit__(None, None, None)
        flags.release()
        mv.release()
        shm.close()
    if bad:
        raise BaselineError("a flag-barrier partner process failed")
    return result
