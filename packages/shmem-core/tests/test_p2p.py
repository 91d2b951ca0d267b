"""The point-to-point wait/test families of shmem._pyshmem (every family, every type) on
2 PEs.  The checks live in jobs_p2p.py."""

import pytest

import jobs_p2p
from harness import assert_check, pytest_params
from shmem import testing


@pytest.fixture(scope="module")
def results():
    return testing.run_pes(jobs_p2p.NPES, jobs_p2p.main, timeout=120, mem_size=16 << 20)


@pytest.mark.parametrize("name", pytest_params(jobs_p2p.checks))
def test_p2p(results, name):
    assert_check(results, name)
