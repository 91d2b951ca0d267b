"""shmem.core's collectives and the _pyshmem functions beneath them, on 2, 3 and 4 PEs (3:
a team size that is not a power of two).  The checks live in jobs_coll.py; the engine
itself is tested in C (packages/shmem-native/tests/coll)."""

import pytest

import jobs_coll
from harness import assert_check, pytest_params
from shmem import testing


@pytest.fixture(scope="module", params=[2, 3, 4], ids=lambda n: f"{n}pe")
def results(request):
    return testing.run_pes(request.param, jobs_coll.main, timeout=180, mem_size=16 << 20)


@pytest.mark.parametrize("name", pytest_params(jobs_coll.checks))
def test_coll(results, name):
    assert_check(results, name)
