"""shmem_torch's on-stream put, put_signal and get keep their tensors alive until the
stream has run them (issue 11, defect 10), on 2 PEs.  The checks live in
stream_lifetime_checks.py."""

import pytest

pytest.importorskip("torch", reason="shmem-torch needs torch")

import stream_lifetime_checks  # noqa: E402
from conftest import PE_ENV  # noqa: E402


@pytest.fixture(scope="module")
def results():
    from shmem import testing

    per_pe = testing.run_pes(2, stream_lifetime_checks.run, mem_size=16 << 20, timeout=120, env=PE_ENV,
                             echo=False)
    return {name: [r.get(name, ("missing", "not reached: an earlier check of this PE failed")) for r in per_pe]
            for name in stream_lifetime_checks.names()}


@pytest.mark.parametrize("name", stream_lifetime_checks.names())
def test_stream_lifetime(results, name):
    bad = [(pe, status, text) for pe, (status, text) in enumerate(results[name]) if status != "ok"]
    if bad:
        pytest.fail("\n".join(f"check {name} failed on PE {pe} ({status}):\n{text}" for pe, status, text in bad),
                    pytrace=False)
