"""shmem._pyshmem on 4 PEs: every entry of the seed's low-level API (and every member of
the generated families), normal use and bad input.  The checks live in jobs_pyshmem.py."""

import pytest

import jobs_pyshmem
from harness import assert_check, pytest_params
from shmem import testing


@pytest.fixture(scope="module")
def results():
    return testing.run_pes(jobs_pyshmem.NPES, jobs_pyshmem.main, timeout=180, mem_size=64 << 20)


@pytest.mark.parametrize("name", pytest_params(jobs_pyshmem.checks))
def test_pyshmem(results, name):
    assert_check(results, name)
