"""shmem.core's atomic memory operations on Buffers, on 4 PEs: fetch_add values unique
across PEs, a compare_swap lock around a read-modify-write, exact and correctly rounded
half/bfloat16 arithmetic, every operation and type, bad input.  The checks live in
jobs_amo.py; the _pyshmem bindings under them are checked in jobs_pyshmem.py."""

import pytest

import jobs_amo
from harness import assert_check, pytest_params
from shmem import testing


@pytest.fixture(scope="module")
def results():
    return testing.run_pes(jobs_amo.NPES, jobs_amo.main, timeout=120, mem_size=16 << 20)


@pytest.mark.parametrize("name", pytest_params(jobs_amo.checks))
def test_amo(results, name):
    assert_check(results, name)


def test_fetch_add_hands_out_every_value_once(results):
    per_pe = assert_check(results, "fetch_add_values_are_unique_across_pes")
    total = jobs_amo.NPES * jobs_amo.ROUNDS
    for dtype in per_pe[0]:
        values = sorted(v for seen in per_pe for v in seen[dtype])
        assert values == list(range(total)), dtype
