"""Checks of the AMO calls of shmem.core on Buffers, run as one job (see test_amo.py).

Several checks return what this PE fetched, so that the test can look at all PEs' values
together (unique across PEs, nothing lost)."""

import os
import time

import numpy as np

from harness import Checks, raises, ring
from shmem import _pyshmem as P, core

NPES = 4
ROUNDS = 25  # fetch_adds per PE per type, and lock-guarded increments per PE
checks = Checks()

# (dtype as the user may name it, NumPy dtype) of the counters of the uniqueness check.
COUNTER_TYPES = (("int64", np.int64), (np.int32, np.int32), ("uint16", np.uint16), (np.dtype("uint64"), np.uint64),
                 ("float64", np.float64), ("float32", np.float32))


def main():
    return checks.run()


def pause():
    """What a waiting PE does between attempts: 8 PEs share 2 cores in CI."""
    os.sched_yield()
    time.sleep(0.0002)


@checks
def fetch_add_values_are_unique_across_pes():
    """Every PE adds 1 ROUNDS times to one counter per type on PE 0; each returns the old
    values it saw (the test checks that together they are 0 .. n*ROUNDS-1, each once)."""
    me, n, _, _ = ring()
    counters = core.calloc(len(COUNTER_TYPES), 8)
    core.barrier_all()
    seen = {}
    for k, (dtype, npt) in enumerate(COUNTER_TYPES):
        got = [core.atomic_fetch_add(counters, 1, 0, dtype=dtype, index=k * 8 // np.dtype(npt).itemsize)
               for _ in range(ROUNDS)]
        want_type = float if np.dtype(npt).kind == "f" else int
        assert all(type(v) is want_type for v in got), (dtype, got[:3])
        assert got == sorted(got) and len(set(got)) == ROUNDS, (dtype, got)  # one PE's values increase
        seen[str(np.dtype(npt))] = got
    core.barrier_all()
    if me == 0:
        for k, (dtype, npt) in enumerate(COUNTER_TYPES):
            size = np.dtype(npt).itemsize
            assert counters.numpy(npt)[k * 8 // size] == n * ROUNDS, dtype
    core.barrier_all()
    core.free(counters)
    return seen


@checks
def compare_swap_lock_guards_a_read_modify_write():
    """A lock word on PE 0 taken with compare_swap and released with set guards a plain
    get + put increment of a counter on PE 0: no increment is lost."""
    me, n, _, _ = ring()
    lock = core.calloc(1, 4)
    counter = core.calloc(1, 8)
    core.barrier_all()
    holders = []
    for _ in range(ROUNDS):
        while True:
            old = core.atomic_compare_swap(lock, 0, me + 1, 0, dtype="int32")
            if old == 0:
                break
            assert 1 <= old <= n, old
            pause()
        value = P.aclshmem_int64_g(counter.addr, 0)  # plain (non-atomic) read ...
        holders.append(core.atomic_fetch(lock, 0, dtype="int32"))
        P.aclshmem_int64_p(counter.addr, value + 1, 0)  # ... and write, under the lock
        assert core.atomic_swap(lock, 0, 0, dtype="int32") == me + 1  # release (after the put)
    assert holders == [me + 1] * ROUNDS
    core.barrier_all()
    if me == 0:
        assert counter.numpy("int64")[0] == n * ROUNDS
    core.barrier_all()
    core.free(counter)
    core.free(lock)


@checks
def half_and_bfloat16_sums_are_exact_and_rounded_to_even():
    me, n, right, _ = ring()
    acc = core.calloc(4, 2)  # [half sum, bfloat16 sum, half rounding, bfloat16 rounding]
    core.barrier_all()
    for _ in range(ROUNDS):
        core.atomic_add(acc, 0.5, 0, dtype="float16", index=0)
        core.atomic_add(acc, 0.25, 0, dtype="bfloat16", index=1)
    # Rounding, on my right neighbour's elements 2 and 3 (nobody else touches them).
    core.atomic_set(acc, 2048.0, right, dtype="half", index=2)
    assert core.atomic_fetch_add(acc, 1.0, right, dtype="half", index=2) == 2048.0
    assert core.atomic_fetch(acc, right, dtype="half", index=2) == 2048.0  # 2049 ties to even
    core.atomic_add(acc, 3.0, right, dtype="half", index=2)
    assert core.atomic_fetch(acc, right, dtype="half", index=2) == 2052.0  # 2051 ties to even
    core.atomic_set(acc, 256.0, right, dtype="bfloat16", index=3)
    core.atomic_add(acc, 1.0, right, dtype="bfloat16", index=3)
    assert core.atomic_swap(acc, 0.1, right, dtype="bfloat16", index=3) == 256.0
    assert core.atomic_fetch(acc, right, dtype="bfloat16", index=3) == 0.10009765625  # 0.1 rounded
    core.barrier_all()
    if me == 0:
        assert core.atomic_fetch(acc, 0, dtype="half") == n * ROUNDS * 0.5
        assert core.atomic_fetch(acc, 0, dtype="bfloat16", index=1) == n * ROUNDS * 0.25
        assert acc.numpy("float16")[0] == n * ROUNDS * 0.5
    core.barrier_all()
    core.free(acc)


@checks
def every_operation_on_buffers():
    """Each operation on the right neighbour's element of every type that takes it."""
    me, n, right, left = ring()
    buf = core.calloc(8, 8)
    core.barrier_all()
    for npname in core.AMO_DTYPES:
        kinds = {op: npname in core.atomic_dtypes(op) for op in ("compare_swap", "inc", "and")}
        core.atomic_set(buf, 10, right, dtype=npname, index=1)
        assert core.atomic_fetch_add(buf, 5, right, dtype=npname, index=1) == 10
        core.atomic_add(buf, 1, right, dtype=npname, index=1)
        assert core.atomic_swap(buf, 20, right, dtype=npname, index=1) == 16
        if kinds["compare_swap"]:
            assert core.atomic_compare_swap(buf, 21, 30, right, dtype=npname, index=1) == 20
            assert core.atomic_compare_swap(buf, 20, 30, right, dtype=npname, index=1) == 20
            assert core.atomic_fetch(buf, right, dtype=npname, index=1) == 30
        if kinds["inc"]:
            core.atomic_inc(buf, right, dtype=npname, index=1)
            assert core.atomic_fetch_inc(buf, right, dtype=npname, index=1) == 31
            assert core.atomic_fetch_and(buf, 0b111100, right, dtype=npname, index=1) == 32
            core.atomic_and(buf, 0b100000, right, dtype=npname, index=1)
            assert core.atomic_fetch_or(buf, 1, right, dtype=npname, index=1) == 32
            core.atomic_or(buf, 2, right, dtype=npname, index=1)
            assert core.atomic_fetch_xor(buf, 0b11, right, dtype=npname, index=1) == 35
            core.atomic_xor(buf, 0b1000, right, dtype=npname, index=1)
            assert core.atomic_fetch(buf, right, dtype=npname, index=1) == 40
        core.barrier_all()
    core.free(buf)


@checks
def bad_input_is_refused():
    me, n, right, _ = ring()
    buf = core.calloc(2, 8)
    core.barrier_all()
    Invalid = core.AclshmemInvalid
    raises(Invalid, core.atomic_add, buf, 1, right, dtype="float", match="ambiguous")
    raises(Invalid, core.atomic_add, buf, 1, right, dtype="complex64", match="not an AMO element type")
    raises(Invalid, core.atomic_add, buf, 1, right, dtype=None)
    raises(TypeError, core.atomic_add, buf, 1, right)  # dtype is required
    raises(Invalid, core.atomic_and, buf, 1, right, dtype="float32", match="not defined for float32")
    raises(Invalid, core.atomic_compare_swap, buf, 0, 1, right, dtype="bfloat16", match="not defined")
    raises(Invalid, core.atomic_inc, buf, right, dtype="float64", match="int8")
    raises(Invalid, core.atomic_fetch, buf, right, dtype="int64", index=2, match="past the end")
    raises(Invalid, core.atomic_fetch, buf, right, dtype="int32", index=-1)
    raises(Invalid, core.atomic_fetch, buf, right, dtype="int32", index=True)
    raises(Invalid, core.atomic_fetch, buf[1:9], right, dtype="int64", match="aligned")
    raises(Invalid, core.atomic_fetch, buf, n, dtype="int64", match="pe")
    raises(Invalid, core.atomic_fetch, buf, -1, dtype="int64")
    raises(Invalid, core.atomic_add, buf, True, right, dtype="int64", match="bool")
    raises(Invalid, core.atomic_add, buf, 1.5, right, dtype="int64")
    raises(Invalid, core.atomic_add, buf, "1", right, dtype="float64")
    raises(Invalid, core.atomic_add, buf, 2 ** 63, right, dtype="int64", match="range")
    raises(Invalid, core.atomic_add, buf, -1, right, dtype="uint8", match="range")
    raises(Invalid, core.atomic_set, buf, 70000.0, right, dtype="float16", match="range")
    raises(Invalid, core.atomic_set, buf, 1e39, right, dtype="float32", match="range")
    raises(Invalid, core.atomic_add, b"12345678", 1, right, dtype="int64", match="Buffer")
    raises(Invalid, core.atomic_dtypes, "nand")
    assert core.atomic_dtypes("atomic_compare_swap")[-2:] == ["float32", "float64"]
    # NumPy numbers are numbers.
    core.atomic_set(buf, np.int64(7), right, dtype=np.int64)
    assert core.atomic_fetch_add(buf, np.float32(0.5), right, dtype=np.float64, index=1) == 0.0
    # Memory outside the symmetric heap: the library refuses it and says why.
    local = np.zeros(2, np.int64)
    outside = core.Buffer(local.ctypes.data, 16)
    err = raises(core.AclshmemError, core.atomic_fetch_add, outside, 1, right, dtype="int64")
    assert "atomic_fetch_add failed" in str(err) and len(str(err)) > len("atomic_fetch_add failed: ")
    assert not local.any()
    core.barrier_all()
    assert core.atomic_fetch(buf, me, dtype="int64") == 7
    core.barrier_all()
    core.free(buf)
    raises(Invalid, core.atomic_fetch, buf, right, dtype="int64", match="freed")
