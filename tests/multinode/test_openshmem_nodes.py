"""An OpenSHMEM program on several nodes, started as a user starts it: one
``aclshmemrun --nnodes N --node-rank R --master-addr ... -np PPN prog`` per node, each in a
network namespace of its own (netns.py), so the PEs of different nodes reach each other
only through the UCX plug-in.

The program, osh_nodes (packages/shmem-native/tests/openshmem/osh_nodes.c), checks what
differs from one node: SHMEM_TEAM_SHARED holds this node's PEs only, shmem_ptr reaches only
them, and contexts (of the world and of a team), AMOs, put with signal, a global variable as
a target, a distributed lock and collectives (team-based, and over active sets that span the
nodes) work between nodes, and that contexts have channels of their own (workers, quiet,
threads, no fds left behind): on the AM data plane, and once on the RMA plane (UCX's own
RMA with remote keys, unpacked per channel).  Every PE must print its PASS line and every
launcher exit 0.  Like test_multinode, it needs root and iproute2 (else it skips,
saying why), and finds the build through SHMEM_NATIVE_BUILD_DIR or the newest build*/.
"""

import os
import secrets
import subprocess
import time

import pytest

import netns
from test_multinode import SCALE, find_build, plugin_note

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# name: (nodes, PEs per node, UCX data plane)
LAYOUTS = {"2x2": (2, 2, "am"), "3x1": (3, 1, "am"), "2x2-rma": (2, 2, "rma")}
PORT = 47100
TIMEOUT = int(180 * SCALE)


@pytest.fixture(scope="module")
def programs():
    """(aclshmemrun, osh_nodes, the folder of libaclshmem.so) of the build."""
    _exe, libdir = find_build()
    native = os.path.dirname(libdir)  # <build>/packages/shmem-native or <build>
    launcher = os.path.join(native, "programs", "aclshmemrun")
    prog = os.path.join(native, "tests", "openshmem", "osh_nodes")
    for path in (launcher, prog):
        if not os.path.exists(path):
            pytest.fail(f"no {path}: rebuild the tests of this checkout", pytrace=False)
    return launcher, prog, libdir


@pytest.fixture(scope="module")
def namespaces():
    reason = netns.unavailable()
    if reason:
        pytest.skip(f"cannot make network namespaces: {reason}")


def node_env(libdir, tmp_path, ppn, secret, plane):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SHMEM_", "OSH_"))}
    core = os.path.join(REPO, "packages", "shmem-core", "src")
    env.update({
        "OSH_PPN": str(ppn),
        "SHMEM_UCX_DATA_PLANE": plane,
        "SHMEM_JOB_SECRET": secret,
        "SHMEM_LOG_PATH": str(tmp_path / "logs"),
        "SHMEM_UCX_PLUGIN": os.path.join(libdir, "libaclshmem_ucx.so"),
        "PYTHONPATH": os.pathsep.join([core] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]),
        # The nodes are namespaces of one kernel: TCP over their veth, as test_multinode.
        "UCX_TLS": os.environ.get("UCX_TLS", "tcp"),
        "UCX_NET_DEVICES": os.environ.get("UCX_NET_DEVICES", "eth0"),
    })
    return env


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_openshmem_program_across_nodes(programs, namespaces, tmp_path, layout):
    launcher, prog, libdir = programs
    nodes, ppn, plane = LAYOUTS[layout]
    env = node_env(libdir, tmp_path, ppn, secrets.token_hex(32), plane)
    with netns.Cluster(nodes) as cluster:
        procs = [cluster.popen(node, [launcher, "--nnodes", str(nodes), "--node-rank", str(node), "--master-addr",
                                      cluster.addrs[0], "--master-port", str(PORT), "-np", str(ppn), prog],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                 for node in range(nodes)]
        deadline = time.monotonic() + TIMEOUT
        outputs = []
        for p in procs:
            try:
                out, _ = p.communicate(timeout=max(1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                out, _ = p.communicate()
                out += "\n(killed after the timeout)"
            outputs.append(out)
    report = "\n".join(f"--- node {i} (exit status {p.returncode})\n{out}" for i, (p, out) in
                       enumerate(zip(procs, outputs)))
    passed = [pe for pe in range(nodes * ppn) if f"[PE {pe}] PASS PE {pe}" in "".join(outputs)]
    assert all(p.returncode == 0 for p in procs) and len(passed) == nodes * ppn, \
        f"{layout}: not every PE passed\n{report}\n{plugin_note(libdir)}"
