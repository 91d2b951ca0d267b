"""The "amo" checks of amo_checks.py (atomic memory operations on symmetric tensors), on 4
PEs (one job; one pytest item per check)."""

import pytest

pytest.importorskip("torch", reason="shmem-torch needs torch")

import amo_checks  # noqa: E402
import torch_checks  # noqa: E402
from conftest import PE_ENV, assert_check  # noqa: E402


@pytest.fixture(scope="module")
def results():
    from shmem import testing

    per_pe = testing.run_pes(4, amo_checks.run, mem_size=64 << 20, timeout=240.0, env=PE_ENV, echo=False)
    return {name: [r.get(name, ("missing", "not reached: an earlier check of this PE failed")) for r in per_pe]
            for name in torch_checks.names("amo")}


@pytest.mark.parametrize("name", torch_checks.names("amo"))
def test_amo(results, name):
    assert_check(results, name)
