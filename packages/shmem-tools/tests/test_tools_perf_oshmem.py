"""shmem-perf --oshmem (shmem_tools._oshmem): libaclshmem against Open MPI's OSHMEM.

On libaclshmem's side, with real PEs: oshmem_bench.c (shipped in the package) builds against
the libaclshmem this Python loads and the headers found for it, runs on PEs that the module
starts itself, checks its collectives' and pairs' results before timing them, and gives every
measure, reduce and its floor at the same sizes; the tables divide them.  Open MPI is not
installed by the test run: the whole comparison runs when it is there, and otherwise the
command says how to install it.  No number is checked: the numbers are for people
(docs/guides/benchmarking.rst)."""

import argparse
import subprocess

import pytest
from toolrun import run_tool

from shmem_tools import _oshmem


@pytest.fixture(scope="module")
def compare():
    return _oshmem


@pytest.fixture(scope="module")
def built(compare, tmp_path_factory):
    """oshmem_bench.c built against the libaclshmem shmem-core loads, as the module builds it."""
    from shmem_tools import _install
    from shmem_tools._internode import find_headers

    library, _ = _install.loaded_library()
    acl = compare._from_library(library, "the test", find_headers(library))
    binary = tmp_path_factory.mktemp("oshmem_compare") / "bench_aclshmem"
    cmd = ["cc", "-O2", "-std=c11", *acl.cflags, str(compare.SOURCE), "-o", str(binary), *acl.ldflags]
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


def test_shmem_perf_oshmem_compares_or_says_how_to_install_open_mpi(compare, tmp_path):
    out = tmp_path / "oshmem.json"
    r = run_tool("shmem-perf", "--oshmem", "barrier,amo_fetch", "--quick", "--json", str(out), timeout=600)
    if compare.find_openmpi() is None:
        assert r.returncode == 1, r.stdout + r.stderr
        assert "Open MPI's OSHMEM (oshcc, oshrun) is not installed" in r.stderr
        assert "apt-get install -y openmpi-bin libopenmpi-dev" in r.stderr
        assert not out.exists()
        return
    assert r.returncode == 0, r.stdout + r.stderr
    measures = [line.split()[0] for line in r.stdout.splitlines() if line and not line.startswith(("#", "-"))]
    assert measures == ["measure", "barrier", "amo_fetch"], r.stdout
    assert "# goals met:" in r.stdout and out.is_file()


@pytest.mark.parametrize("flags, words", [
    (["--oshmem", "--dist"], "--dist does not apply"),
    (["--oshmem", "--tests", "put"], "its tests go as its value"),
    (["--oshmem", "--json"], "--json FILE"),
])
def test_shmem_perf_oshmem_refuses_what_does_not_apply(flags, words):
    r = run_tool("shmem-perf", *flags)
    assert r.returncode == 2 and words in r.stderr, r.stderr


def test_a_bad_option_of_bench_is_refused_with_its_usage(built):
    _acl, binary = built
    done = subprocess.run([str(binary), "-m", "4"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "usage:" in done.stderr
