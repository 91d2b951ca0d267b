"""The OSHMEM comparison (packages/shmem-native/benchmarks/oshmem_compare) on libaclshmem's
side: bench.c builds against libaclshmem's shmem.h the way run.py builds it, runs on PEs
that run.py starts itself, checks its collectives' results before timing them, and gives
reduce and its floor at the same sizes; run.py's floor table divides the one by the other.
Open MPI is not needed (nor installed by the test run): its side is the same source built
with Open MPI's oshcc."""

import argparse
import importlib.util
import os
import subprocess

import pytest

from integration_helpers import PACKAGES

HERE = os.path.join(PACKAGES, "shmem-native", "benchmarks", "oshmem_compare")


def _load_run_py():
    spec = importlib.util.spec_from_file_location("oshmem_compare_run", os.path.join(HERE, "run.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def compare():
    return _load_run_py()


@pytest.fixture(scope="module")
def built(compare, tmp_path_factory):
    """bench.c built against the libaclshmem shmem-core loads, as run.py builds its copy."""
    from shmem import _native

    _native.load()
    acl = compare._from_library(_native.library_path(), "the test")
    binary = tmp_path_factory.mktemp("oshmem_compare") / "bench_aclshmem"
    cmd = ["cc", "-O2", "-std=c11", *acl.cflags, os.path.join(HERE, "bench.c"), "-o", str(binary), *acl.ldflags]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, f"{cmd} failed:\n{done.stdout}{done.stderr}"
    return acl, binary


def _run(compare, built, npes, max_size, tests):
    acl, binary = built
    args = argparse.Namespace(npes=npes, bind="none", timeout=120, max_size=max_size, reps=1, ms=1.0, tests=tests)
    return compare.run_aclshmem(binary, acl, compare.bench_args(args), args)


@pytest.mark.parametrize("npes", [2, 3])
def test_reduce_and_its_floor_at_the_same_sizes(compare, built, npes):
    values = _run(compare, built, npes, 65536, "reduce")  # run.py adds floor to reduce
    sizes = [8, 64, 512, 4096, 32768]  # x8 up to the largest message: reduce's dest holds one block
    assert sorted(s for m, s in values if m == "reduce") == sizes
    assert sorted(s for m, s in values if m == "floor") == sizes
    assert all(v > 0 for v in values.values())
    rows = compare.floor_rows([values], [values])
    assert [r[0] for r in rows] == ["8 B", "64 B", "512 B", "4 KiB", "32 KiB"]
    for (size_text, floor, acl, ratio, goal, met, osh_ratio), size in zip(rows, sizes):
        assert floor == values[("floor", size)] and acl == values[("reduce", size)]
        assert ratio == pytest.approx(acl / floor) and met == (ratio <= compare.FLOOR_GOAL)
        assert osh_ratio == pytest.approx(ratio)  # the same rounds on both sides here
    assert "long_sum_to_all" in compare.render_floor(rows)


@pytest.mark.parametrize("npes", [3, 4])
def test_the_pairs_message_rate_and_atomics(compare, built, npes):
    """The PEs in pairs (with 3 PEs the last one only waits); bench checked the pairs'
    atomics, put and sum first, and every measure came out."""
    amos = [m for m in compare.LATENCIES if m.startswith("amo_")]
    values = _run(compare, built, npes, 4096, ",".join(["put_mr"] + amos))
    assert sorted(s for m, s in values if m == "put_mr") == [1, 8, 64, 512, 4096]
    assert sorted(m for m, s in values if m.startswith("amo_")) == sorted(amos)
    assert all(v > 0 for v in values.values())
    rows = {(r[0], r[1]): r for r in compare.comparison_rows([values], [values])}
    mr = rows[("put_mr", "1 B")]
    assert mr[4] == "Mmsg/s" and mr[7] == ">= 1.00" and mr[8]  # higher is better: equal meets it
    assert rows[("amo_swap", "8 B")][7] == "<= 1.00"


def test_the_floor_is_not_a_compared_measure(compare, built):
    values = _run(compare, built, 2, 4096, "barrier,reduce")
    rows = compare.comparison_rows([values], [values])
    assert {r[0] for r in rows} == {"barrier", "reduce"}


def test_bench_args_bring_the_floor_with_reduce_only(compare):
    def tests_of(tests):
        args = argparse.Namespace(reps=1, ms=1.0, max_size=64, tests=tests)
        out = compare.bench_args(args)
        return out[out.index("-T") + 1] if "-T" in out else None

    assert tests_of("bcast,reduce") == "bcast,reduce,floor"
    assert tests_of("reduce,floor") == "reduce,floor"
    assert tests_of("bcast") == "bcast"
    assert tests_of(None) is None  # every test, the floor among them


def test_a_bad_option_of_bench_is_refused_with_its_usage(built):
    _acl, binary = built
    done = subprocess.run([str(binary), "-m", "4"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "usage:" in done.stderr
