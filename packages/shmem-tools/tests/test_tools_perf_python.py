"""shmem-perf --python --quick: the Python hot path table and the import table (a smoke
run: nothing here asserts a time; the ratios are what the full run prints)."""

import json

from toolrun import run_tool

FUNCTIONS = ("aclshmem_putmem", "aclshmem_getmem", "aclshmem_int32_p", "aclshmem_int32_g",
             "aclshmemx_putmem_on_stream", "aclshmemx_getmem_on_stream")


def test_python_quick_run_prints_both_tables(tmp_path):
    out_json = tmp_path / "py.json"
    r = run_tool("shmem-perf", "--python", "--quick", "--json", str(out_json), timeout=240)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert "# Python hot path: ns per call" in out
    assert "# import shmem.core + first call" in out
    doc = json.loads(out_json.read_text())
    calls, start = doc["tables"]
    layers = {(row["function"], row["layer"]) for row in calls["rows"]}
    for fn in FUNCTIONS:
        assert (fn, "bare") in layers, fn
    assert {(fn, "_pyshmem") for fn in FUNCTIONS[:4]} <= layers
    assert ("aclshmemx_putmem_on_stream", "shmem.core.put") in layers
    assert ("aclshmemx_getmem_on_stream", "shmem.core.get") in layers
    for row in calls["rows"]:
        assert row["ns"] > 0 and row["bare_ns"] > 0 and row["wall_ns"] > 0, row
        assert (row["goal"] is None) == (row["layer"] == "bare"), row
    (imp,) = start["rows"]
    assert imp["runs"] == 3 and imp["total_ms"] > 0
    # The installed (or source-checkout) package must not parse C at import.
    assert imp["pycparser"] is False or not imp["precompiled"], imp
