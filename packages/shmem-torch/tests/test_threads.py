"""The collectives' thread policy (thread_checks.py), on 2 PEs: the caller's torch thread
setting and grad mode are unchanged after every collective (also after a failure), the
collectives' own torch work uses min(user's threads, cores / PEs of the node) threads unless
``COMPUTE_THREADS`` says otherwise, and results do not depend on the thread count."""

import pytest

pytest.importorskip("torch", reason="shmem-torch needs torch")

import thread_checks  # noqa: E402
import torch_checks  # noqa: E402
from conftest import assert_check  # noqa: E402


@pytest.fixture(scope="module")
def results():
    from shmem import testing

    # No OMP_NUM_THREADS for these PEs: the checks set the thread number themselves,
    # including torch's default of one per core.
    per_pe = testing.run_pes(2, thread_checks.run, mem_size=128 << 20, timeout=240.0, echo=False)
    merged = {}
    for name in torch_checks.names(thread_checks.GROUP):
        merged[name] = [r.get(name, ("missing", "not reached: an earlier check of this PE failed"))
                        for r in per_pe]
    return merged


@pytest.mark.parametrize("name", torch_checks.names(thread_checks.GROUP))
def test_threads(results, name):
    assert_check(results, name)
