"""shmem.core on 4 PEs: every entry of the seed's shmem.core API, normal use and bad input.

The checks live in jobs_core.py; one run_pes job runs them all (spawning PEs is the
expensive part) and each check is reported as its own test."""

import pytest

import jobs_core
from harness import assert_check, pytest_params
from shmem import testing


@pytest.fixture(scope="module")
def results():
    return testing.run_pes(jobs_core.NPES, jobs_core.main, timeout=180, mem_size=64 << 20)


@pytest.mark.parametrize("name", pytest_params(jobs_core.checks))
def test_core(results, name):
    assert_check(results, name)
