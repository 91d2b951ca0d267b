"""shmem-perf --quick: a smoke run (tiny sizes, few iterations); nothing here is timed."""

import csv
import io
import json
import os
import re

import pytest
from toolrun import have_matplotlib, is_png, needs_matplotlib, run_tool

TITLES = ("put latency", "get latency", "put bandwidth", "get bandwidth", "put_signal round trip",
          "amo latency", "barrier latency")


def torch_ready():
    try:
        import shmem_torch
        import torch  # noqa: F401
    except ImportError:
        return False
    return callable(getattr(shmem_torch, "all_reduce", None))


def test_quick_run_prints_tables_with_ratios_and_writes_files(tmp_path):
    png, csv_path, json_path = tmp_path / "perf.png", tmp_path / "perf.csv", tmp_path / "perf.json"
    plot = ["--plot", str(png)] if have_matplotlib() else []
    r = run_tool("shmem-perf", "--pes", "2", "--quick", *plot, "--csv", str(csv_path),
                 "--json", str(json_path), timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    for title in TITLES:
        assert f"# {title}" in out, title
    assert out.count("# baseline: ") >= len(TITLES)
    assert "vs base" in out
    # Every data row ends with a ratio such as 0.87x.
    rows = [line for line in out.splitlines() if line.strip().endswith("x") and line[:1] != "#"]
    assert len(rows) >= 3 + 3 + 2 + 2 + 2 + 2 + 1
    # The progress bar went to stderr: not a terminal, so a line per tenth of the work,
    # the last one of all the steps.
    steps = re.findall(r"^shmem-perf +(\d+)%\|[# 0-9]*\| (\d+)/(\d+) ", r.stderr, re.M)
    assert 5 <= len(steps) <= 11, r.stderr
    assert steps[-1][0] == "100" and steps[-1][1] == steps[-1][2], r.stderr
    if torch_ready():
        assert "# all_reduce" in out
    else:
        assert "note: all_reduce skipped:" in out

    if plot:
        assert is_png(png) and os.path.getsize(png) > 10_000
        assert f"plot written to {png}" in r.stderr

    with open(csv_path, newline="") as f:
        records = list(csv.DictReader(f))
    tables = {rec["table"] for rec in records}
    assert {"put_latency", "get_latency", "put_bandwidth", "get_bandwidth", "put_signal_round_trip",
            "amo_latency", "barrier"} <= tables
    assert all(rec["ratio"] and float(rec["ratio"]) > 0 for rec in records)
    assert {rec["variant"] for rec in records if rec["table"] == "put_bandwidth"} == {"blocking", "nbi"}

    d = json.loads(json_path.read_text())
    assert d["meta"]["pes"] == 2 and d["errors"] == []
    assert {t["name"] for t in d["tables"]} == tables
    for t in d["tables"]:
        assert t["baseline"] and t["rows"]


def test_quick_json_to_stdout_for_one_test():
    r = run_tool("shmem-perf", "--quick", "--pes", "2", "--tests", "barrier", "--json", "--no-progress",
                 timeout=120)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    [table] = d["tables"]
    assert table["name"] == "barrier"
    [row] = table["rows"]
    assert row["library"] > 0 and row["baseline"] > 0 and row["ratio"] > 0
    assert r.stderr.strip() == "" or "shmem-perf" in r.stderr


def test_quick_amo_table_against_a_cpu_atomic():
    """The AMO table: a fetch_add round trip to PE 1 per type, next to a CPU atomic on a
    page shared by two processes (both checked for effect before they are timed)."""
    r = run_tool("shmem-perf", "--quick", "--pes", "2", "--tests", "amo", "--json", "--no-progress",
                 timeout=120)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["errors"] == [] and d["notes"] == []
    [table] = d["tables"]
    assert table["name"] == "amo_latency" and "fetch_add" in table["title"]
    assert "shared by two processes" in table["baseline"]
    rows = {row["variant"]: row for row in table["rows"]}
    assert set(rows) == {"int64 fetch_add", "int32 fetch_add"}
    assert rows["int64 fetch_add"]["size"] == 8 and rows["int32 fetch_add"]["size"] == 4
    for row in rows.values():
        assert row["unit"] == "us"
        assert row["library"] > 0 and row["baseline"] > 0 and row["ratio"] > 0


def test_amo_baseline_acts_on_memory_the_partner_process_reads():
    """The baseline alone: it checks the partner process's view of the word itself, so a
    finished run is the proof; its times are positive."""
    from shmem_tools import _baselines

    plan = {"seconds_per_point": 0.002, "min_ops": 2, "max_ops": 1000, "window": 16, "repetitions": 1}
    points = []
    out = _baselines.atomic_fetch_add(["int64", "int32"], plan, lambda what, t: points.append(t))
    assert set(out) == {"int64", "int32"} and all(v > 0 for v in out.values())
    assert points == ["int64", "int32"]
    with pytest.raises(ValueError, match="int8"):
        _baselines.atomic_fetch_add(["int8"], plan)


def test_amo_table_without_a_baseline_shows_dashes():
    """No libatomic: the library's numbers stay, the baseline cells are '-'."""
    from shmem_tools import perf

    plan = {"tests": ["amo"], "npes": 2, "amo_types": list(perf.AMO_TYPES)}
    res = perf.Results()
    res.library.append({"test": "amo", "variant": "int64 fetch_add", "size": 8, "seconds": 1e-6})
    [table] = perf.build_tables(plan, res)
    assert table.rows[0] == ["int64 fetch_add", "1.00", "-", "-"]
    assert table.rows[1] == ["int32 fetch_add", "-", "-", "-"]
    assert [r["size"] for r in table.records] == [8, 4]


def test_one_pe_drops_the_amo_table():
    r = run_tool("shmem-perf", "--quick", "--pes", "1", "--tests", "amo", timeout=60)
    assert r.returncode == 2 and "need --pes 2" in r.stderr


def test_bad_arguments_are_usage_errors():
    assert run_tool("shmem-perf", "--tests", "nope").returncode == 2
    assert run_tool("shmem-perf", "--min-size", "1M", "--max-size", "1K").returncode == 2


@pytest.mark.parametrize("value, message", [("lots", "not a size: 'lots'"), ("-4K", "not a size: '-4K'"),
                                            ("0", "size must be positive: '0'"),
                                            ("1.5", "not a whole number of bytes: '1.5'")])
def test_a_bad_size_is_named_in_the_usage_error(value, message):
    r = run_tool("shmem-perf", f"--max-size={value}")
    assert r.returncode == 2 and f"--max-size: {message}" in r.stderr, r.stderr


def test_sizes_take_binary_units_in_any_spelling():
    from shmem_tools import perf

    assert [perf.parse_size(t) for t in ("64K", "64KiB", "64 kb", "65536")] == [64 << 10] * 4


def test_progress_in_a_log_is_a_line_per_tenth():
    from shmem_tools._progress import Progress

    log = io.StringIO()  # not a terminal
    progress = Progress(20, stream=log)
    for step in range(20):
        progress.advance(f"step {step}")
        if step == 4:
            progress.set_total(40)   # more work announced on the way
    progress.advance("last", 20)
    progress.close()
    lines = log.getvalue().splitlines()
    assert [int(re.match(r"shmem-perf +(\d+)%", line).group(1)) for line in lines] == [
        5, 10, 20, 30, 40, 50, 100]
    assert lines[-1].endswith(", last]") and "| 40/40 [" in lines[-1]


def test_no_progress_draws_nothing():
    from shmem_tools._progress import Progress

    log = io.StringIO()
    progress = Progress(3, stream=log, enabled=False)
    for _ in range(3):
        progress.advance("x")
    progress.close()
    assert log.getvalue() == ""


@needs_matplotlib
def test_plot_has_labelled_log_axes(tmp_path):
    """The picture a person reads: bandwidth and latency panels, sizes on a log2 axis."""
    from shmem_tools import _plot, perf

    plan = {"tests": list(perf.ALL_TESTS), "npes": 2, "bw_sizes": [8, 1024], "lat_sizes": [8, 1024]}
    res = perf.Results()
    res.memcpy = {8: 1e-6, 1024: 2e-6}
    res.pingpong = {8: 2e-6, 1024: 3e-6}
    res.flag_barrier = 1e-6
    for op in ("put", "get"):
        for variant in ("blocking", "nbi"):
            for size in (8, 1024):
                res.library.append({"test": op, "variant": variant, "size": size, "seconds": 1.5e-6})
    for size in (8, 1024):
        res.library.append({"test": "put_signal", "variant": "round trip", "size": size, "seconds": 4e-6})
    res.library.append({"test": "barrier", "variant": "barrier_all", "size": 0, "seconds": 2e-6})
    panels = _plot.plot_perf(perf.build_tables(plan, res), str(tmp_path / "p.png"), plan, res)
    assert len(panels) == 2
    for p in panels:
        assert "message size" in p["xlabel"] and p["xscale"] == "log" and p["yscale"] == "log"
    assert "MB/s" in panels[0]["ylabel"] and "latency" in panels[1]["ylabel"]
    assert "barrier_all" in panels[1]["title"]
    assert is_png(tmp_path / "p.png")
