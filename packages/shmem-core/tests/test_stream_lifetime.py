"""On-stream RMA keeps its operands alive until the stream has run it (issue 11, defect
10), on 2 PEs.  The checks live in jobs_stream_lifetime.py."""

import pytest

import jobs_stream_lifetime
from harness import assert_check, pytest_params
from shmem import testing


@pytest.fixture(scope="module")
def results():
    return testing.run_pes(jobs_stream_lifetime.NPES, jobs_stream_lifetime.main, timeout=120, mem_size=8 << 20)


@pytest.mark.parametrize("name", pytest_params(jobs_stream_lifetime.checks))
def test_stream_lifetime(results, name):
    assert_check(results, name)
