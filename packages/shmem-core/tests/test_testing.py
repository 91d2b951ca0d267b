"""shmem.testing.run_pes: results by rank, tracebacks, crashes, hung PEs, broadcast."""

import time

import pytest

import jobs_testing
from shmem import testing


def test_results_by_rank_and_output(capsys):
    assert testing.run_pes(3, jobs_testing.rank_times, 10) == [0, 10, 20]
    out = capsys.readouterr().out
    assert "[PE 2] hello from 2" in out


def test_a_failing_pe_raises_with_its_traceback():
    t0 = time.monotonic()
    with pytest.raises(testing.PEError) as info:
        testing.run_pes(3, jobs_testing.fails_on_one, timeout=60, grace=1)
    assert time.monotonic() - t0 < 30
    err = info.value
    assert err.rank == 1 and "PE 1 does not like this" in err.remote_traceback
    assert "ValueError" in str(err)


def test_a_hung_pe_is_killed_after_the_timeout():
    with pytest.raises(testing.PEError) as info:
        testing.run_pes(2, jobs_testing.hangs, timeout=3)
    text = str(info.value)
    assert "did not finish within 3 s" in text
    assert "hangs" in text  # the stack dump of the hung PE names the function


def test_a_crashing_pe():
    with pytest.raises(testing.PEError) as info:
        testing.run_pes(2, jobs_testing.crashes, timeout=60, grace=1)
    assert info.value.rank == 0 and "exit status 9" in str(info.value)


def test_without_init_and_broadcast():
    assert testing.run_pes(2, jobs_testing.not_initialised, init=False) == [(0, 2, {"from": 1}), (1, 2, {"from": 1})]


def test_exit_pe():
    assert testing.run_pes(2, jobs_testing.ends_early, True, timeout=60) == ["bye 0", "bye 1"]


def test_a_pe_that_leaves_early_is_reported_to_the_others():
    # A PE that leaves early is reported to the others by the library, not waited for.
    with pytest.raises(testing.PEError) as info:
        testing.run_pes(2, jobs_testing.ends_early, False, timeout=60)
    assert info.value.rank == 0 and "PE 1" in str(info.value) and "finalize" in str(info.value)


def test_bad_arguments():
    with pytest.raises(TypeError, match="picklable"):
        testing.run_pes(2, lambda: 1)
    with pytest.raises(ValueError):
        testing.run_pes(0, jobs_testing.rank_times, 1)
    with pytest.raises(testing.PEError, match="cannot be pickled"):
        testing.run_pes(1, jobs_testing.unpicklable_result)
