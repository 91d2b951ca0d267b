"""shmem-config --check: passes here, explains a broken library, --json."""

import json
import re

from toolrun import clean_env, run_tool

LINE = re.compile(r"^(?P<name>\S.*?)\s{2,}(?P<status>PASS|WARN|FAIL)\s{2,}(?P<reason>\S.*)$")
EXPECTED = {"native library", "ABI (library vs shmem-core)", "package versions", "single libaclshmem",
            "memfd + shared mapping", "open files (RLIMIT_NOFILE)", "locked memory (RLIMIT_MEMLOCK)",
            "loopback TCP", "port range", "OpenSSL (TLS)", "UCX plug-in (multi-node)", "2-PE self-test"}


def parse_table(text):
    rows = {}
    fixes = {}
    last = None
    for line in text.splitlines():
        m = LINE.match(line)
        if m and m.group("name") != "CHECK":
            last = m.group("name")
            rows[last] = (m.group("status"), m.group("reason"))
        elif last and line.strip().startswith("fix: "):
            fixes[last] = line.strip()[5:]
    return rows, fixes


def test_check_passes_and_prints_the_table():
    r = run_tool("shmem-config", "--check", timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "CHECK" in r.stdout and "STATUS" in r.stdout and "REASON" in r.stdout
    rows, fixes = parse_table(r.stdout)
    assert EXPECTED <= set(rows), r.stdout
    assert all(status in ("PASS", "WARN") for status, _ in rows.values()), r.stdout
    for name in ("native library", "ABI (library vs shmem-core)", "memfd + shared mapping", "loopback TCP",
                 "OpenSSL (TLS)", "2-PE self-test"):
        assert rows[name][0] == "PASS", (name, rows[name])
    assert all(name in fixes for name, (status, _) in rows.items() if status == "WARN")
    assert re.search(r"\d+ passed, \d+ warnings, 0 failed: OK", r.stdout)


def test_check_fails_on_a_missing_library(tmp_path):
    missing = str(tmp_path / "nowhere" / "libaclshmem.so.1")
    r = run_tool("shmem-config", "--check", env=clean_env(ACLSHMEM_LIBRARY=missing), timeout=180)
    assert r.returncode == 1, r.stdout + r.stderr
    rows, fixes = parse_table(r.stdout)
    status, reason = rows["native library"]
    assert status == "FAIL"
    assert f"ACLSHMEM_LIBRARY={missing} does not load" in reason
    assert "No such file" in reason
    assert "ACLSHMEM_LIBRARY" in fixes["native library"]
    assert rows["2-PE self-test"][0] == "FAIL"
    assert re.search(r"[1-9]\d* failed: FAILED", r.stdout)


def test_check_json_and_port_range_env():
    # Below Linux's range of ports for outgoing connections (32768-60999 by default), so
    # nothing else on the machine is likely to hold them.
    r = run_tool("shmem-config", "--check", "--json", "--no-selftest",
                 env=clean_env(SHMEM_INSTANCE_PORT_RANGE="21000:21015"))
    assert r.returncode == 0, r.stdout + r.stderr
    d = json.loads(r.stdout)
    assert d["ok"] is True
    names = {c["name"]: c for c in d["checks"]}
    assert "2-PE self-test" not in names
    assert names["port range"]["status"] == "PASS"
    assert "21000:21015" in names["port range"]["reason"]
    for c in d["checks"]:
        assert c["status"] in ("PASS", "WARN", "FAIL") and c["reason"]
        assert bool(c["fix"]) == (c["status"] != "PASS")
    assert d["summary"]["FAIL"] == 0


def test_check_rejects_a_bad_port_range():
    r = run_tool("shmem-config", "--check", "--no-selftest", env=clean_env(SHMEM_INSTANCE_PORT_RANGE="80-90"))
    assert r.returncode == 1
    rows, fixes = parse_table(r.stdout)
    assert rows["port range"][0] == "FAIL" and "SHMEM_INSTANCE_PORT_RANGE" in fixes["port range"]
