"""The "amo" checks: atomic memory operations on symmetric tensors (see test_amo.py).

They register with torch_checks as one more group; ``run`` is what each PE runs (it
imports this module, so the group exists in the PE)."""

import os
import time

import torch

import torch_checks
from torch_checks import check, expect_raises, me, npes

ROUNDS = 25


def run():
    return torch_checks.run_group("amo")


def _neighbours():
    n = npes()
    return (me() + 1) % n, (me() - 1) % n


@check("amo")
def fetch_add_values_are_unique_across_pes():
    import shmem_torch as st

    n = npes()
    counters = st.zeros(4, dtype=torch.int64)
    seen = st.zeros(n, ROUNDS, dtype=torch.int64)
    st.barrier()
    got = [st.atomic_fetch_add(counters, 1, 0, index=2) for _ in range(ROUNDS)]
    assert all(type(v) is int for v in got) and got == sorted(got), got
    st.put(seen[me()], torch.tensor(got, dtype=torch.int64), 0)  # my row of PE 0's table
    st.barrier()
    if me() == 0:
        assert counters.tolist() == [0, 0, n * ROUNDS, 0]
        assert sorted(seen.flatten().tolist()) == list(range(n * ROUNDS))
    st.barrier()
    st.aclshmem_free_tensor(seen)
    st.aclshmem_free_tensor(counters)


@check("amo")
def every_dtype_and_operation_through_strided_indices():
    """Every PE works on element [1, 2] of its right neighbour's copy, named three ways:
    a tuple, a flat index, and a tuple into the transposed view."""
    import shmem_torch as st
    from shmem.core import atomic_dtypes

    right, _ = _neighbours()
    for dtype, tname in st.amo._TYPES.items():
        npname = str(dtype).replace("torch.", "")
        t = st.zeros(3, 4, dtype=dtype)
        st.barrier()
        st.atomic_set(t, 10, right, index=(1, 2))
        assert st.atomic_fetch(t, right, index=6) == 10, dtype
        assert st.atomic_fetch_add(t.t(), 5, right, index=(2, 1)) == 10, dtype
        st.atomic_add(t, 1, right, index=6)
        assert st.atomic_swap(t, 20, right, index=(1, 2)) == 16, dtype
        expected = 20
        if npname in atomic_dtypes("compare_swap"):
            assert st.atomic_compare_swap(t, 19, 30, right, index=(1, 2)) == 20, dtype
            assert st.atomic_compare_swap(t, 20, 30, right, index=(1, 2)) == 20, dtype
            expected = 30
        if npname in atomic_dtypes("inc"):
            st.atomic_inc(t, right, index=6)
            assert st.atomic_fetch_inc(t, right, index=6) == 31, dtype
            assert st.atomic_fetch_and(t, 0b110000, right, index=6) == 32, dtype
            st.atomic_or(t, 0b11, right, index=6)
            assert st.atomic_fetch_or(t, 0, right, index=6) == 35, dtype
            st.atomic_and(t, 0b111110, right, index=6)
            assert st.atomic_fetch_xor(t, 0b1, right, index=6) == 34, dtype
            st.atomic_xor(t, 0b1000, right, index=6)
            expected = 34 ^ 0b1 ^ 0b1000
        st.barrier()
        want = torch.zeros(3, 4, dtype=torch.float64)
        want[1, 2] = expected
        assert torch.equal(t.to(torch.float64), want), (dtype, t)
        st.barrier()
        st.aclshmem_free_tensor(t)


@check("amo")
def half_and_bfloat16_sums_are_exact():
    import shmem_torch as st

    n = npes()
    h = st.zeros(2, dtype=torch.float16)
    b = st.zeros(2, dtype=torch.bfloat16)
    st.barrier()
    for _ in range(ROUNDS):
        st.atomic_add(h, 0.5, 0, index=1)
        st.atomic_fetch_add(b, 0.25, 0, index=1)
    st.barrier()
    if me() == 0:
        assert h.tolist() == [0.0, n * ROUNDS * 0.5]
        assert b.tolist() == [0.0, n * ROUNDS * 0.25]
        assert isinstance(st.atomic_fetch(h, 0, index=1), float)
    st.barrier()
    st.aclshmem_free_tensor(b)
    st.aclshmem_free_tensor(h)


@check("amo")
def compare_swap_lock_guards_a_float_sum():
    """A compare_swap lock on PE 0 guards a plain read-modify-write of a float64 there."""
    import shmem_torch as st

    n = npes()
    lock = st.zeros(1, dtype=torch.int32)
    total = st.zeros(1, dtype=torch.float64)
    st.barrier()
    local = torch.zeros(1, dtype=torch.float64)
    for _ in range(ROUNDS):
        while st.atomic_compare_swap(lock, 0, me() + 1, 0) != 0:
            os.sched_yield()
            time.sleep(0.0002)
        st.get(local, total, 0)
        st.put(total, local + 1.5, 0)
        st.atomic_set(lock, 0, 0)  # ordered after the put
    st.barrier()
    if me() == 0:
        assert total.item() == n * ROUNDS * 1.5
    st.barrier()
    st.aclshmem_free_tensor(total)
    st.aclshmem_free_tensor(lock)


@check("amo")
def bad_input_is_refused():
    import shmem_torch as st
    from shmem.core import AclshmemInvalid as Invalid

    right, _ = _neighbours()
    t = st.zeros(2, 3, dtype=torch.int32)
    f = st.zeros(2, dtype=torch.float32)
    flags = st.zeros(2, dtype=torch.bool)
    st.barrier()
    expect_raises(Invalid, st.atomic_add, torch.zeros(4, dtype=torch.int32), 1, right, match="not a symmetric")
    expect_raises(Invalid, st.atomic_add, [1, 2], 1, right)
    expect_raises(Invalid, st.atomic_add, flags, 1, right, match="torch.bool")
    expect_raises(Invalid, st.atomic_and, f, 1, right, match="not defined for a tensor of torch.float32")
    expect_raises(Invalid, st.atomic_add, t, 1, right, index=6, match="past the end")
    expect_raises(Invalid, st.atomic_add, t, 1, right, index=-1)
    expect_raises(Invalid, st.atomic_add, t, 1, right, index=(1,), match="dimensions")
    expect_raises(Invalid, st.atomic_add, t, 1, right, index=(1, 3), match="dimension 1")
    expect_raises(Invalid, st.atomic_add, t, 1, right, index=1.0)
    expect_raises(Invalid, st.atomic_add, t, 1, npes(), match="pe")
    expect_raises(Invalid, st.atomic_add, t, 2 ** 31, right, match="range")
    expect_raises(Invalid, st.atomic_add, t, True, right, match="bool")
    expect_raises(Invalid, st.atomic_add, t, 0.5, right)
    expect_raises(Invalid, st.atomic_add, t[:, 1:], 1, right, index=(0, 2))
    st.atomic_add(t[:, 1:], 1, right, index=(1, 1))  # a view: element [1, 2] of the whole
    st.barrier()
    assert t.tolist() == [[0, 0, 0], [0, 0, 1]]
    st.barrier()
    st.aclshmem_free_tensor(flags)
    st.aclshmem_free_tensor(f)
    st.aclshmem_free_tensor(t)
    expect_raises(Invalid, st.atomic_fetch, t, right, match="freed")
