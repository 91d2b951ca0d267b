"""The baselines of ``shmem-perf``, measured in the same run as the library.

* ``memcpy_bandwidth``: one thread copying private memory into a shared anonymous mapping
  (the kind of memory a symmetric heap is) with ``ctypes.memmove``: one C ``memmove`` per
  Python call, as a put is one library call per Python call.
* ``pingpong``: two processes that share one anonymous mapping.  Each turn copies the
  payload into the shared memory and raises a flag; the other side waits for the flag and
  answers.  Round trip and one-way (half of it) latency.
* ``flag_barrier``: N processes, each with its own flag in shared memory: raise yours,
  wait until every flag is up.
* ``atomic_fetch_add``: a CPU atomic fetch_add on a word of a shared mapping that a second
  process also maps (and checks), called through cffi as the library is: libatomic's
  ``__atomic_fetch_add_8`` / ``_4``, the out-of-line form of the same instruction (``lock
  xadd`` on x86-64) that ``__atomic_fetch_add`` compiles to.

Waiting never burns a core for long (the machine may have fewer cores than processes):
a short spin, then ``sched_yield``, then short sleeps.  A side that waits more than
``WAIT_LIMIT`` seconds gives up (the other process died).
"""

import ctypes
import mmap
import os
import time
from statistics import median

from ._timing import pin, pinned, split, timed_loop

WAIT_LIMIT = 20.0
_SPIN = 200
_YIELD_FOR = 0.002
_SLEEP = 50e-6
_LINE = 64  # one flag per cache line


class BaselineError(RuntimeError):
    pass


class BaselineUnavailable(BaselineError):
    """A baseline that this machine cannot measure (a missing system library)."""


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


# libatomic's out-of-line atomics, by element type: (function, width in bytes).
_FETCH_ADD = {"int64": ("__atomic_fetch_add_8", 8), "int32": ("__atomic_fetch_add_4", 4)}
_LIBATOMIC_CDEF = """
uint32_t __atomic_fetch_add_4(void *ptr, uint32_t value, int memorder);
uint64_t __atomic_fetch_add_8(void *ptr, uint64_t value, int memorder);
"""
_SEQ_CST = 5  # __ATOMIC_SEQ_CST
_CHECK_ADDS = 8  # fetch_adds whose results and effect are checked before timing


def load_libatomic():
    """(ffi, lib) of libatomic through cffi; BaselineUnavailable when it cannot be loaded."""
    import ctypes.util

    import cffi

    ffi = cffi.FFI()
    ffi.cdef(_LIBATOMIC_CDEF)
    names = ["libatomic.so.1"]
    found = ctypes.util.find_library("atomic")
    if found and found not in names:
        names.append(found)
    errors = []
    for name in names:
        try:
            return ffi, ffi.dlopen(name)
        except OSError as exc:
            errors.append(f"{name}: {exc}")
    raise BaselineUnavailable("libatomic cannot be loaded (install libatomic1): " + "; ".join(errors))


def atomic_fetch_add(types, plan, on_point=None, pin_cpus=True):
    """{type: seconds per call} of a CPU atomic fetch_add of 1 on a word of a shared
    mapping, timed like the library's AMOs (timed_loop with the same plan).  A forked
    partner process maps the same page; before each type is timed, this process does
    ``_CHECK_ADDS`` fetch_adds (their old values must count up from 0) and the partner
    must then read that count in the word, so the baseline is known to act on memory
    that another process sees."""
    ffi, atomic = load_libatomic()
    unknown = [t for t in types if t not in _FETCH_ADD]
    if unknown:
        raise ValueError(f"no atomic baseline for {unknown}")
    # One cache line per word, then the flags: ready, check, ack (one line each), then
    # what the partner saw, one slot per type.
    nwords = len(types)
    shm = mmap.mmap(-1, (nwords + 3) * _LINE + 8 * nwords, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    anchor = ctypes.c_char.from_buffer(shm)
    mv = memoryview(shm)
    words = [mv[k * _LINE:k * _LINE + _FETCH_ADD[t][1]].cast("q" if _FETCH_ADD[t][1] == 8 else "i")
             for k, t in enumerate(types)]
    flags = mv[nwords * _LINE:].cast("q")
    stride = _LINE // 8
    ready, check, ack, seen = 0, stride, 2 * stride, 3 * stride

    def partner(_k):
        for w in words:
            w[0] = 0  # the partner touches the page first: it is its memory as much as ours
        flags[ready] = 1
        for k, w in enumerate(words):
            _wait_for(flags, check, k + 1)
            flags[seen + k] = w[0]
            flags[ack] = k + 1
        _wait_for(flags, ready, 2)  # until the timing is over: the page stays shared

    guard = pinned(0, pin_cpus)
    guard.__enter__()
    pids = _fork_workers(1, partner, pin_cpus)
    out = {}
    try:
        _wait_for(flags, ready, 1)
        base = ctypes.addressof(anchor)
        for k, t in enumerate(types):
            name, width = _FETCH_ADD[t]
            fetch_add = getattr(atomic, name)
            addr = ffi.cast("void *", base + k * _LINE)
            old = [fetch_add(addr, 1, _SEQ_CST) for _ in range(_CHECK_ADDS)]
            if old != list(range(_CHECK_ADDS)):
                raise BaselineError(f"atomic baseline: {name} returned {old}")
            flags[check] = k + 1
            _wait_for(flags, ack, k + 1)
            if flags[seen + k] != _CHECK_ADDS:
                raise BaselineError(f"atomic baseline: the partner process read {flags[seen + k]} "
                                    f"after {_CHECK_ADDS} fetch_adds")

            def one(fetch_add=fetch_add, addr=addr):
                fetch_add(addr, 1, _SEQ_CST)
            out[t] = timed_loop(one, width, plan)
            if on_point:
                on_point("atomic fetch_add", t)
    finally:
        flags[ready] = 2
        flags[check] = flags[ack] = 1 << 62  # releases a partner still waiting
        bad = _reap(pids)
        guard.__exit__(None, None, None)
        for view in words + [flags]:
            view.release()
        mv.release()
        del anchor
        shm.close()
    if bad:
        raise BaselineError("the atomic baseline's partner process failed")
    return out
