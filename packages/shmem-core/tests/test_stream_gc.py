"""A Stream collected while open closes itself with a ResourceWarning; closed ones give
none; finalize closes an instance's streams.  The 2-PE checks live in jobs_stream_gc.py."""

import gc
import sys
import warnings

import pytest

import jobs_stream_gc
from harness import assert_check, pytest_params
from shmem import core, testing


@pytest.fixture(scope="module")
def results():
    return testing.run_pes(jobs_stream_gc.NPES, jobs_stream_gc.main, timeout=120, mem_size=8 << 20)


@pytest.mark.parametrize("name", pytest_params(jobs_stream_gc.checks))
def test_stream_gc(results, name):
    assert_check(results, name)


def test_a_stream_that_was_never_made_leaves_nothing_to_collect(lib, monkeypatch):
    """Without an instance Stream() fails; collecting the half-made object neither warns
    nor reports an error from its destructor."""
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(core.AclshmemError, match="Stream"):
            core.Stream()
        gc.collect()
    assert [w for w in caught if issubclass(w.category, ResourceWarning)] == []
    assert reported == []
