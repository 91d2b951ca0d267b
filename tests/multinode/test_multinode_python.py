"""Python jobs on several nodes (issue #13): `python -m shmem.run --nnodes 2` once per node.

Each "node" is a network namespace of netns.py; its launcher runs there with `ip netns
exec`, 2 PEs per node, UCX over TCP on the namespaces' eth0 (as in test_multinode.py).

* test_core_job: jobs/core_job.py (shmem.core: node-major PE numbers, a put and a get of
  1 MiB + 13 bytes to a PE on the other node, atomics of every PE on one word,
  get_peer_buffer is a Buffer on this node and None on the other).
* test_torch_job: jobs/torch_job.py (shmem_torch all_reduce and all_gather, float32 and
  int64, up to more than 1 MiB); skipped only when torch is not importable.
* test_wrong_secret: node 1's launcher has another SHMEM_JOB_SECRET; both launchers fail
  with a clear message within --join-timeout.

The library and its plug-in: every PE loads libaclshmem.so of the build that
test_multinode.py runs (SHMEM_NATIVE_BUILD_DIR, ci/test.sh's build-ci) through
ACLSHMEM_LIBRARY, and that library loads libaclshmem_ucx.so from its own folder
(SHMEM_UCX_PLUGIN is removed from the environment), so the pair always comes from one
build, whatever shmem_native wheel is installed (the wheel carries a pair of its own).
"""

import os
import secrets
import sys
import time

import pytest

import netns
from test_multinode import find_build, plugin_note

JOBS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jobs")
NODES, PPN = 2, 2
SCALE = float(os.environ.get("CI_TIMEOUT_MULTIPLIER") or 1)
JOB_TIMEOUT = int(150 * SCALE)  # the launchers' --timeout; the test kills them 30 s later
JOIN_TIMEOUT = 60               # --join-timeout of the jobs that should run
MASTER_PORT = 29600             # fresh namespaces for each test: always free
TORCHRUN_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")


@pytest.fixture(scope="module")
def libdir():
    reason = netns.unavailable()
    if reason:
        pytest.skip(f"cannot make network namespaces: {reason}")
    return find_build()[1]


def launcher_env(libdir, secret):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHMEM_") and k not in TORCHRUN_VARS}
    env.update({
        "SHMEM_JOB_SECRET": secret,
        "ACLSHMEM_LIBRARY": os.path.join(libdir, "libaclshmem.so"),  # + libaclshmem_ucx.so beside it
        "UCX_TLS": os.environ.get("UCX_TLS", "tcp"),
        "UCX_NET_DEVICES": os.environ.get("UCX_NET_DEVICES", "eth0"),
    })
    return env


def run_nodes(libdir, tmp_path, args, node_secret=None, launcher_opts=()):
    """Runs `python -m shmem.run --nnodes 2 ... ARGS` on both nodes; node_secret: {node:
    secret} overrides the job's.  Returns ([(status, stdout, stderr)] per node, seconds)."""
    secret = secrets.token_hex(32)
    t0 = time.monotonic()
    with netns.Cluster(NODES) as cluster:
        procs, files = [], []
        for node in range(NODES):
            cmd = [sys.executable, "-m", "shmem.run", "--nnodes", str(NODES), "--node-rank", str(node),
                   "--master-addr", cluster.addrs[0], "--master-port", str(MASTER_PORT), "-n", str(PPN),
                   "--timeout", str(JOB_TIMEOUT), *launcher_opts, *args]
            env = launcher_env(libdir, (node_secret or {}).get(node, secret))
            files += [open(tmp_path / f"node{node}.{ext}", "w") for ext in ("out", "err")]
            procs.append(cluster.popen(node, cmd, env=env, stdout=files[-2], stderr=files[-1]))
        deadline = t0 + JOB_TIMEOUT + 30
        while any(p.poll() is None for p in procs) and time.monotonic() < deadline:
            time.sleep(0.1)
        hung = [p.poll() is None for p in procs]
        # Leaving the block kills whatever still runs in the namespaces.
    elapsed = time.monotonic() - t0
    for f in files:
        f.close()
    return [(f"hung, killed after {elapsed:.0f} s" if hung[n] else p.returncode,
             (tmp_path / f"node{n}.out").read_text(errors="replace"),
             (tmp_path / f"node{n}.err").read_text(errors="replace")) for n, p in enumerate(procs)], elapsed


def report(results, elapsed, note=""):
    lines = [f"after {elapsed:.1f} s" + (f"; {note}" if note else "")]
    for node, (rc, out, err) in enumerate(results):
        lines += [f"=== node {node}: launcher exit status {rc}", "--- stdout", out.rstrip(), "--- stderr",
                  err.rstrip()]
    return "\n".join(lines)


def check_job_passed(libdir, results, elapsed, tag):
    """Both launchers exit 0, and every PE printed its PASS line under its global number."""
    bad = []
    for node, (rc, out, _) in enumerate(results):
        pes = range(node * PPN, (node + 1) * PPN)
        if rc != 0 or any(f"[PE {pe}] PASS PE {pe} {tag}" not in out for pe in pes):
            bad.append(node)
        if any(f"[PE {pe}] PE {pe}/{NODES * PPN} on node {node}" not in out for pe in pes):
            bad.append(node)  # node-major: node R runs PEs R*PPN .. R*PPN+PPN-1
    if bad:
        pytest.fail(f"node(s) {sorted(set(bad))} failed: " + report(results, elapsed, plugin_note(libdir)),
                    pytrace=False)


def test_core_job(libdir, tmp_path):
    results, elapsed = run_nodes(libdir, tmp_path, [os.path.join(JOBS, "core_job.py"), str(PPN)],
                                 launcher_opts=["--join-timeout", str(JOIN_TIMEOUT)])
    check_job_passed(libdir, results, elapsed, "core")


def test_torch_job(libdir, tmp_path):
    try:
        import torch  # noqa: F401  (the PEs run this interpreter, so they can import it too)
    except ImportError as exc:
        pytest.skip(f"torch is not importable here ({exc}): shmem_torch cannot run")
    results, elapsed = run_nodes(libdir, tmp_path, [os.path.join(JOBS, "torch_job.py"), str(PPN)],
                                 launcher_opts=["--join-timeout", str(JOIN_TIMEOUT)])
    check_job_passed(libdir, results, elapsed, "torch")


def test_wrong_secret(libdir, tmp_path):
    """Node 1 does not hold the job's secret: node 0 refuses it, stops its PEs when node 1
    has not joined within --join-timeout, and neither launcher hangs."""
    join = 5
    results, elapsed = run_nodes(libdir, tmp_path, [os.path.join(JOBS, "core_job.py"), str(PPN)],
                                 node_secret={1: "not the job's secret"},
                                 launcher_opts=["--join-timeout", str(join), "--kill-grace", "1"])
    (rc0, _, err0), (rc1, out1, err1) = results
    checks = [
        (rc1 == 1, "node 1 exits with status 1"),
        ("rejected node 1's launcher's proof of SHMEM_JOB_SECRET" in err1, "node 1 says it was rejected"),
        ("different SHMEM_JOB_SECRET" in err1, "node 1 names the cause"),
        ("[PE" not in out1 + err1, "node 1 starts no PE"),
        (rc0 == 1, "node 0 exits with status 1"),
        ("refused a launcher at " in err0 and "that asked to join as node 1" in err0, "node 0 tells the refusal"),
        (f"node(s) 1 did not join within {join} s" in err0, "node 0 names the missing node"),
        (elapsed < join + 30 * SCALE, "neither node hangs"),
    ]
    failed = [what for ok, what in checks if not ok]
    if failed:
        pytest.fail("not so: " + "; ".join(failed) + "\n" + report(results, elapsed), pytrace=False)
