"""The "three" checks of coll_checks.py, on 3 PEs (one job; one pytest item per check)."""

import pytest

pytest.importorskip("torch", reason="shmem-torch needs torch")

import coll_checks  # noqa: E402
import torch_checks  # noqa: E402
from conftest import assert_check, run_group  # noqa: E402


@pytest.fixture(scope="module")
def results():
    return run_group(3, "three", runner=coll_checks.run)


@pytest.mark.parametrize("name", torch_checks.names("three"))
def test_three(results, name):
    assert_check(results, name)
