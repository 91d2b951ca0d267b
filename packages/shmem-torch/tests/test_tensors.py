"""The "tensors" checks of torch_checks.py, on 2 PEs (one job; one pytest item per check)."""

import pytest

pytest.importorskip("torch", reason="shmem-torch needs torch")

import torch_checks  # noqa: E402
from conftest import assert_check, run_group  # noqa: E402


@pytest.fixture(scope="module")
def results():
    return run_group(2, "tensors")


@pytest.mark.parametrize("name", torch_checks.names("tensors"))
def test_tensors(results, name):
    assert_check(results, name)
