"""shmem_tools.prof and shmem-prof on a snapshot taken from a real 2-PE run."""

import json
import os
import subprocess
import sys

import pytest

from toolrun import HERE, clean_env, is_png, needs_matplotlib, run_tool

from shmem_tools import prof


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory):
    """Runs tests/prof_job.py on 2 PEs with PE 0 profiled; returns the snapshot path."""
    path = tmp_path_factory.mktemp("prof") / "profile.json"
    r = subprocess.run(
        [sys.executable, "-m", "shmem.run", "-n", "2", "--mem-size", "16M", "--timeout", "90",
         os.path.join(HERE, "prof_job.py"), str(path)],
        capture_output=True, text=True, timeout=120, env=clean_env(SHMEM_CYCLE_PROF_PE="0"))
    assert r.returncode == 0, r.stdout + r.stderr
    # Only the profiled PE saves (get_prof() is None on the others).
    assert r.stdout.count("profile saved") == 1 and "[PE 0]" in r.stdout
    return path


def test_snapshot_holds_the_full_tables(snapshot):
    data = json.loads(snapshot.read_text())
    assert data["format"] == "shmem-prof" and data["pe_id"] == 0
    assert len(data["ccount"]) == 64 and all(len(row) == 1024 for row in data["ccount"])
    assert len(data["cycles"]) == 64 and all(len(row) == 1024 for row in data["cycles"])
    snap = prof.load(snapshot)
    stats = {s.name: s for s in snap.frames()}
    for name in ("put", "get", "put_signal", "wait", "barrier", "alloc", "setup", "exchange", "kernel work"):
        assert name in stats, sorted(stats)
    # 50 host puts plus 5 + 10 + 15 + 20 from the 4 kernel blocks.
    assert stats["put"].calls == 100 and stats["put"].blocks == 4
    assert stats["kernel work"].calls == 4 and stats["kernel work"].blocks == 4
    assert stats["setup"].frame == 0 and stats["exchange"].calls == 1
    assert {b for b, _, _ in snap.blocks()} == {0, 1, 2, 3}
    cycles = [s.cycles for s in snap.frames()]
    assert cycles == sorted(cycles, reverse=True)


def test_shmem_prof_table(snapshot):
    r = run_tool("shmem-prof", str(snapshot), "--top", "5")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "profile of PE 0" in out and "cycles/call" in out
    table = [line for line in out.splitlines() if line.split()[:1] and line.split()[0].isdigit()]
    assert len(table) == 5
    assert "more frames" in out and "busiest blocks" in out


@needs_matplotlib
def test_shmem_prof_heatmap(snapshot, tmp_path):
    png = tmp_path / "heat.png"
    r = run_tool("shmem-prof", str(snapshot), "--heatmap", str(png), "--metric", "calls")
    assert r.returncode == 0, r.stderr
    assert "heatmap written" in r.stderr
    assert is_png(png) and os.path.getsize(png) > 5_000


def test_shmem_prof_json(snapshot):
    r = run_tool("shmem-prof", str(snapshot), "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    names = [f["name"] for f in d["frames"]]
    assert "put" in names and "barrier" in names and "kernel work" in names
    assert d["pe_id"] == 0 and [b["block"] for b in d["blocks"]]


def test_save_rejects_a_pe_that_is_not_profiled(tmp_path):
    with pytest.raises(ValueError, match="SHMEM_CYCLE_PROF_PE"):
        prof.save(None, str(tmp_path / "x.json"))
    with pytest.raises(ValueError, match="64 x 1024"):
        prof.save({"pe_id": 0, "ccount": [[0]], "cycles": [[0]]}, str(tmp_path / "x.json"))


def test_save_and_load_round_trip(tmp_path):
    ccount = [[0] * 1024 for _ in range(64)]
    cycles = [[0] * 1024 for _ in range(64)]
    ccount[0][1005], cycles[0][1005] = 3, 300
    ccount[7][12], cycles[7][12] = 1, 1000
    path = prof.save({"pe_id": 3, "ccount": ccount, "cycles": cycles}, str(tmp_path / "p.json"),
                     frame_names={12: "my loop"})
    snap = prof.load(path)
    assert snap.pe_id == 3
    assert [(s.frame, s.name, s.calls, s.cycles) for s in snap.frames()] == [(12, "my loop", 1, 1000),
                                                                          (1005, "barrier", 3, 300)]


def test_shmem_prof_rejects_other_files(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"hello": 1}')
    r = run_tool("shmem-prof", str(bad))
    assert r.returncode == 1 and "not a profile snapshot" in r.stderr
    r = run_tool("shmem-prof", str(tmp_path / "missing.json"))
    assert r.returncode == 1 and "cannot read" in r.stderr
