"""shmem-perf --scale: a real quick run on 2 and 3 PEs without OSHMEM (its tables, CSV,
JSON and plot), its refusals of bad arguments, and how it reads a job's output and judges
the goals (in this process).  No number is checked: the numbers are for people
(docs/guides/benchmarking.rst)."""

import csv
import json
import os

import pytest
from toolrun import have_matplotlib, is_png, run_tool

TITLES = ("# init: PE 0's time in shmem_init", "# finalize: PE 0's time in shmem_finalize", "# barrier_all",
          "# put: shmem_putmem of 8 bytes")


def test_quick_run_on_two_and_three_pes(tmp_path):
    json_path, csv_path, png = tmp_path / "scale.json", tmp_path / "scale.csv", tmp_path / "scale.png"
    plot = ["--plot", str(png)] if have_matplotlib() else []
    r = run_tool("shmem-perf", "--scale", "3,2", "--quick", "--no-oshmem", "--no-progress", "--json", str(json_path),
                 "--csv", str(csv_path), *plot, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    for title in TITLES:
        assert title in r.stdout, title
    assert "alone" in r.stdout.splitlines()[0] and "with TLS" in r.stdout.splitlines()[0]

    doc = json.loads(json_path.read_text())
    assert doc["meta"]["pes"] == [2, 3] and doc["meta"]["oshmem"] is None and doc["meta"]["rounds"] == 1
    assert doc["meta"]["tls"] is True
    rows = {(row["table"], row["pes"]): row for row in doc["tables"]}
    for measure in ("init", "finalize", "barrier", "put"):
        for n in (2, 3):
            row = rows[(measure, n)]
            assert row["library"] is not None and row["library"] > 0, row
            assert row["oshmem"] is None and row["ratio"] is None
    # A goal against OSHMEM has no verdict without it.
    assert rows[("barrier", 2)]["goal"] and rows[("barrier", 2)]["met"] is None
    assert set(doc["jobs"]["libaclshmem"]) == {"2", "3"} and doc["jobs"]["OSHMEM"] == {}

    with open(csv_path, newline="") as f:
        records = list(csv.DictReader(f))
    assert {(rec["table"], rec["pes"]) for rec in records if rec["libaclshmem"]} >= {("init", "2"), ("barrier", "3")}
    if plot:
        assert is_png(png) and os.path.getsize(png) > 10_000


def test_no_tls_runs_libaclshmem_unencrypted(tmp_path):
    json_path = tmp_path / "scale.json"
    r = run_tool("shmem-perf", "--scale", "2", "--quick", "--no-oshmem", "--no-tls", "--no-progress",
                 "--json", str(json_path), timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(json_path.read_text())
    assert doc["meta"]["tls"] is False
    assert doc["jobs"]["libaclshmem"]["2"][0]["init"] > 0


@pytest.mark.parametrize("pes,message", [("1,2", "at least 2"), ("2,x", "separated by commas"),
                                         ("0", "at least 2")])
def test_bad_pe_counts(pes, message):
    r = run_tool("shmem-perf", "--scale", pes)
    assert r.returncode == 2 and message in r.stderr, r.stderr


@pytest.mark.parametrize("args", [["--pes", "4"], ["--tests", "put"], ["--max-size", "1M"]])
def test_options_of_other_modes_are_refused(args):
    r = run_tool("shmem-perf", "--scale", "2", *args)
    assert r.returncode == 2 and f"{args[0]} does not apply" in r.stderr, r.stderr


def test_scale_is_a_mode_of_its_own():
    r = run_tool("shmem-perf", "--scale", "2", "--nodes", "2")
    assert r.returncode == 2 and "choose one" in r.stderr, r.stderr
    for flag in ("--no-oshmem", "--no-tls"):
        r = run_tool("shmem-perf", flag)
        assert r.returncode == 2 and f"{flag} goes with --scale" in r.stderr, r.stderr
    r = run_tool("shmem-perf", "--scale", "2", "--rounds", "0")
    assert r.returncode == 2 and "--rounds must be at least 1" in r.stderr, r.stderr


# ---- in this process ---------------------------------------------------------------------


def test_parse_takes_what_pe_0_printed_before_a_crash():
    from shmem_tools import _scale

    text = ("[PE 0] @scale init 0.25\n[PE 0] @scale barrier 0.000012\nnoise\n@scale put 0.000004\n"
            "@scale end\nSegmentation fault\n")
    values, ended = _scale.parse(text)
    assert ended and values == {"init": 0.25, "barrier": 0.000012, "put": 0.000004}
    assert _scale.parse("@scale init 0.1\n")[1] is False  # died before the end: not counted
    with pytest.raises(_scale.ScaleError, match="all-reduce gave"):
        _scale.parse("@scale error PE 1: the all-reduce gave 3, not 6\n")


def test_medians_ratios_and_goals():
    from shmem_tools import _scale

    jobs = {"libaclshmem": {8: [{"init": 0.010, "barrier": 2e-6}, {"init": 0.030, "barrier": 4e-6},
                                {"init": 0.012, "barrier": 3e-6}],
                            64: [{"init": 0.250, "finalize": 0.015}]},
            "OSHMEM": {8: [{"init": 0.400, "barrier": 6e-6}]}}
    result = {"pes": [8, 64], "jobs": jobs, "rounds": 3}
    init = {n: row for n, *row in _scale.rows(result, "init")}
    assert init[8][0] == pytest.approx(12.0) and init[8][1] == pytest.approx(400.0)
    assert init[8][2] == pytest.approx(0.03) and init[8][3] == "<= 15 ms" and init[8][4] is True
    assert init[64][0] == pytest.approx(250.0) and init[64][1] is None and init[64][4] is False
    barrier = {n: row for n, *row in _scale.rows(result, "barrier")}
    assert barrier[8][0] == pytest.approx(3.0) and barrier[8][4] is True  # 3 us against OSHMEM's 6 us
    finalize = {n: row for n, *row in _scale.rows(result, "finalize")}
    assert finalize[8][0] is None and finalize[64][4] is True
    text = _scale.render_tables(result)
    assert "# init: PE 0's time in shmem_init (ms, median of 3 round(s))" in text and "0.03x" in text
    assert "# put" not in text  # nothing measured, no table
