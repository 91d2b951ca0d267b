"""Timing loops shared by the PEs of shmem-perf and its baselines (so both are measured
the same way): the budget of a point is split into repetitions and the median wins,
which keeps one descheduling on a busy machine from deciding a number."""

import os
import time
from statistics import median


def batch_size(size, window):
    """Operations between two clock reads: a window of small operations, fewer of big ones."""
    return max(1, min(window, (4 << 20) // max(size, 1)))


def timed_loop(op, size, plan, finish=None):
    """Seconds per call of op(): the median of ``plan["repetitions"]`` runs, each lasting
    about ``seconds_per_point / repetitions`` (at least ``min_ops`` calls, at most
    ``max_ops``).  ``finish`` (e.g. quiet) ends every batch and is part of the time."""
    reps = max(1, plan.get("repetitions", 1))
    budget = plan["seconds_per_point"] / reps
    batch = batch_size(size, plan["window"])
    for _ in range(min(batch, 8)):  # warm-up: pages, caches, branch predictors
        op()
    if finish:
        finish()
    clock = time.perf_counter
    results = []
    for _ in range(reps):
        ops = 0
        start = clock()
        while True:
            for _ in range(batch):
                op()
            if finish:
                finish()
            ops += batch
            elapsed = clock() - start
            if (elapsed >= budget and ops >= plan["min_ops"]) or ops >= plan["max_ops"]:
                break
        results.append(elapsed / ops)
    return median(results)


def split(iters, reps):
    """``iters`` round trips as ``reps`` chunks (each at least 1)."""
    reps = max(1, min(reps, iters))
    base, extra = divmod(iters, reps)
    return [base + (1 if k < extra else 0) for k in range(reps)]


def _usable_cpus():
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return []


# The CPUs this process may use, read once before anything here pins it (a forked child
# inherits its parent's pinning, so it must not ask again).
_CPUS = _usable_cpus()


def pin(index):
    """Binds the calling thread (and the threads and processes it starts later) to one
    CPU of those the process could use (index modulo their count), as OSU-style
    benchmarks do, so that two partners do not share a core by chance.  Returns the CPU,
    or None where affinity cannot be set."""
    try:
        cpus = _CPUS or sorted(os.sched_getaffinity(0))
        cpu = cpus[index % len(cpus)]
        os.sched_setaffinity(0, {cpu})
        return cpu
    except (AttributeError, OSError, ValueError):
        return None


def unpin():
    """Lets the calling thread run on every CPU again (see pin)."""
    try:
        if _CPUS:
            os.sched_setaffinity(0, set(_CPUS))
    except (AttributeError, OSError):
        pass


class pinned:
    """Context manager: this process on CPU ``index`` (see pin), restored afterwards."""

    def __init__(self, index, enabled=True):
        self.index = index
        self.enabled = enabled
        self.saved = None

    def __enter__(self):
        if self.enabled:
            try:
                self.saved = os.sched_getaffinity(0)
            except (AttributeError, OSError):
                self.saved = None
            pin(self.index)
        return self

    def __exit__(self, *exc):
        if self.saved:
            try:
                os.sched_setaffinity(0, self.saved)
            except OSError:
                pass
