"""Jobs whose PEs sit on several nodes (issue #13), on one machine.

Each "node" is a network namespace (netns.py): PEs of one namespace share memory, PEs of
different namespaces reach each other only through the inter-node transport (the UCX
plug-in, libaclshmem_ucx.so beside libaclshmem.so).  Every case of the C program mn_suite
(packages/shmem-native/tests/multinode/mn_*.c) runs on 2 nodes x 2 PEs and on 3 nodes x
1 PE, PE 0's control plane on node 0's veth address; a case passes when every PE prints
its PASS line and exits 0 ("killed": the last PE dies of SIGKILL and every other one
passes).  More:

* test_no_plugin_on_one_node: node 1 cannot load the plug-in; every PE of both nodes must
  fail at init with an error that names UCX.
* test_suite_selftest: every case with all PEs on one node (shared memory only), a
  self-test of mn_suite's own checks, which needs neither namespaces nor UCX.
* test_globals: mn_suite_data (mn_suite with the program's global and static data shared,
  issue #24) runs its case "globals" across nodes on both data planes, and on one node.

The build is found through SHMEM_NATIVE_BUILD_DIR (ci/test.sh sets it to build-ci), else
the newest build*/ of this checkout that holds mn_suite.  The namespace tests need root and
iproute2; without them (and only then) they skip, saying why.  Timeouts scale with
CI_TIMEOUT_MULTIPLIER.
"""

import glob
import os
import secrets
import signal
import socket
import subprocess
import time

import pytest

import netns

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The cases of mn_suite (test_case_list checks this against `mn_suite --list`).
CASES = ["init", "putmem", "typed", "strided", "nbi", "signal", "wait", "amo", "barrier",
         "teams", "killed", "victim", "coll", "get_nbi", "reduce_blocks", "coll_mix"]
# name: (nodes, PEs per node)
LAYOUTS = {"2x2": (2, 2), "3x1": (3, 1)}

SCALE = float(os.environ.get("CI_TIMEOUT_MULTIPLIER") or 1)
CASE_TIMEOUT = int(90 * SCALE)   # mn_suite's own watchdog (MN_TIMEOUT): a hung PE says so
JOB_TIMEOUT = CASE_TIMEOUT + 30  # then the job is killed from here
GRACE = 15                       # once a PE failed, how long the others get to finish
PORT = 47000                     # PE 0's port: each job has fresh namespaces, so it is free

# --- the build -------------------------------------------------------------------------


def _in_build(build, *names):
    """The first of <build>/packages/shmem-native/NAME (a build of the repository root) and
    <build>/NAME (a build of packages/shmem-native alone) that exists, or None."""
    for name in names:
        for path in (os.path.join(build, "packages", "shmem-native", name), os.path.join(build, name)):
            if os.path.exists(path):
                return path
    return None


def find_build():
    """(mn_suite, the folder of libaclshmem.so); fails the test with what to do if none."""
    env = os.environ.get("SHMEM_NATIVE_BUILD_DIR")
    if env:
        candidates = [env]
    else:
        found = [d for d in glob.glob(os.path.join(REPO, "build*")) +
                 glob.glob(os.path.join(REPO, "packages", "shmem-native", "build*"))
                 if os.path.isdir(d) and not d.endswith(("-asan", "-tsan"))]
        # build-ci first (what ci/test.sh built), then the most recently built suite.
        found.sort(key=lambda d: (os.path.basename(d) != "build-ci",
                                  -os.path.getmtime(_in_build(d, "tests/multinode/mn_suite") or d)))
        candidates = found
    for build in candidates:
        exe = _in_build(build, "tests/multinode/mn_suite")
        lib = _in_build(build, "src/libaclshmem.so")
        if exe and lib:
            return exe, os.path.dirname(lib)
    where = f"SHMEM_NATIVE_BUILD_DIR={env}" if env else f"any build*/ folder of {REPO}"
    pytest.fail(f"no mn_suite and libaclshmem.so in {where}: build them with\n"
                f"  meson setup build . -Dtests=true && ninja -C build\n"
                f"and run with SHMEM_NATIVE_BUILD_DIR=<that folder>", pytrace=False)


@pytest.fixture(scope="module")
def build():
    return find_build()


@pytest.fixture(scope="module")
def namespaces():
    """Skips (with the reason) when network namespaces cannot be made here; only then."""
    reason = netns.unavailable()
    if reason:
        pytest.skip(f"cannot make network namespaces: {reason}")


def plugin_note(libdir):
    plugin = os.path.join(libdir, "libaclshmem_ucx.so")
    if os.path.exists(plugin):
        return f"UCX plug-in: {plugin}"
    return (f"note: {libdir} has no libaclshmem_ucx.so (the UCX plug-in), so PEs on different "
            f"nodes cannot reach each other with this build")


# --- running a job ---------------------------------------------------------------------


def pe_env(libdir, logdir, rank, n_pes, ppn, addr, port, secret, extra=None):
    """The environment of one PE: this one without SHMEM_* / MN_* settings, plus the job's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SHMEM_", "MN_"))}
    env.update({
        "MN_RANK": str(rank), "MN_N_PES": str(n_pes), "MN_PPN": str(ppn), "MN_ADDR": addr,
        "MN_PORT": str(port), "MN_TIMEOUT": str(CASE_TIMEOUT),
        "SHMEM_JOB_SECRET": secret,  # DEFAULT mode (tcp://) needs it; TLS stays on, keyed by it
        "SHMEM_LOG_PATH": logdir,
        "LD_LIBRARY_PATH": os.pathsep.join(
            [libdir] + [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep) if p]),
        # The "nodes" are namespaces of one kernel.  Left alone, UCX would see that and pick
        # its own shared-memory transports (posix, sysv, cma) between them, and could take a
        # namespace's lo for a way to reach the others (they have the same boot id).  Only
        # TCP over the veth interfaces (eth0 in every node) is the path that a real
        # cluster's Ethernet takes, so that is what these tests use, unless UCX_TLS or
        # UCX_NET_DEVICES are set by whoever runs them.
        "UCX_TLS": os.environ.get("UCX_TLS", "tcp"),
        "UCX_NET_DEVICES": os.environ.get("UCX_NET_DEVICES", "eth0"),
    })
    env.update(extra or {})
    return env


class Job:
    """The PEs of one run of mn_suite: their nodes, exit statuses and outputs."""

    def __init__(self, case, n_pes, ppn):
        self.case, self.n_pes, self.ppn = case, n_pes, ppn
        self.rcs, self.outputs, self.timed_out = [None] * n_pes, [""] * n_pes, False

    def report(self, title, note=""):
        lines = [f"{title}: case {self.case!r}, {self.n_pes // self.ppn} node(s) x {self.ppn} PE(s)"
                 + (" -- killed after the job timeout" if self.timed_out else "")]
        for pe in range(self.n_pes):
            lines.append(f"  PE {pe} (node {pe // self.ppn}): exit status {self.rcs[pe]}")
        if note:
            lines.append(note)
        for pe in range(self.n_pes):
            out = self.outputs[pe].rstrip().splitlines()
            if len(out) > 80:
                out = out[:20] + [f"... ({len(out) - 70} lines) ..."] + out[-50:]
            lines.append(f"--- PE {pe} (node {pe // self.ppn})")
            lines.extend(out or ["(no output)"])
        return "\n".join(lines)


def run_job(start, case, n_pes, ppn, tmp_path, expected_rc):
    """Starts every PE with start(pe, cmd, env, out) -> Popen and waits for all of them (at
    most JOB_TIMEOUT; once one ends with a status other than expected_rc(pe), the others get
    GRACE seconds).  Returns the Job."""
    job = Job(case, n_pes, ppn)
    procs, files = [], []
    try:
        for pe in range(n_pes):
            f = open(tmp_path / f"pe{pe}.out", "w+", encoding="utf-8", errors="replace")
            files.append(f)
            procs.append(start(pe, f))
        deadline = time.monotonic() + JOB_TIMEOUT
        while any(p.poll() is None for p in procs):
            now = time.monotonic()
            if now > deadline:
                job.timed_out = True
                break
            if any(p.returncode is not None and p.returncode != expected_rc(pe)
                   for pe, p in enumerate(procs)):
                deadline = min(deadline, now + GRACE)
            time.sleep(0.05)
    finally:
        for p in procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            p.wait()
        for pe, (p, f) in enumerate(zip(procs, files)):
            job.rcs[pe] = p.returncode
            f.seek(0)
            job.outputs[pe] = f.read()
            f.close()
    return job


def run_on_nodes(exe, libdir, case, nodes, ppn, tmp_path, node_env=None):
    """Runs case on `nodes` namespaces x ppn PEs; node_env: {node: extra environment}."""
    n_pes = nodes * ppn
    secret = secrets.token_hex(32)
    logdir = str(tmp_path / "logs")
    dead = n_pes - 1 if case == "killed" else None

    def expected_rc(pe):
        return -signal.SIGKILL if pe == dead else 0

    with netns.Cluster(nodes) as cluster:
        def start(pe, out):
            node = pe // ppn
            env = pe_env(libdir, logdir, pe, n_pes, ppn, cluster.addrs[0], PORT, secret,
                         (node_env or {}).get(node))
            return cluster.popen(node, [exe, case], env=env, stdout=out, stderr=subprocess.STDOUT)
        job = run_job(start, case, n_pes, ppn, tmp_path, expected_rc)
    return job, expected_rc


def check_passed(job, expected_rc, note=""):
    bad = [pe for pe in range(job.n_pes)
           if job.rcs[pe] != expected_rc(pe) or
           (expected_rc(pe) == 0 and f"PASS PE {pe} [{job.case}]" not in job.outputs[pe])]
    if bad or job.timed_out:
        pytest.fail(job.report(f"PE(s) {bad} failed", note), pytrace=False)


# --- the tests -------------------------------------------------------------------------


def test_case_list(build):
    """The cases run here are exactly the cases mn_suite has."""
    exe, _ = build
    proc = subprocess.run([exe, "--list"], stdout=subprocess.PIPE, text=True, timeout=30)
    assert proc.returncode == 0
    assert proc.stdout.split() == CASES


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("case", CASES)
def test_multinode(build, namespaces, tmp_path, case, layout):
    exe, libdir = build
    nodes, ppn = LAYOUTS[layout]
    job, expected_rc = run_on_nodes(exe, libdir, case, nodes, ppn, tmp_path)
    check_passed(job, expected_rc, plugin_note(libdir))


@pytest.mark.parametrize("case", ["barrier", "teams", "coll", "killed", "coll_mix"])
def test_two_level_barrier(build, namespaces, tmp_path, case):
    """2 nodes x 3 PEs: a barrier of a team with several members on a node meets at each
    node's leader, and only the leaders cross the network (sync/barrier.c).  Three members
    per node give each leader two members to gather, and the teams case puts a leader
    that is not its node's first world PE ("all but PE 0") and a node with one member
    ("even PEs") beside such nodes.  "killed": the members a leader releases after its
    part failed fail too (they returned success before)."""
    exe, libdir = build
    job, expected_rc = run_on_nodes(exe, libdir, case, 2, 3, tmp_path)
    check_passed(job, expected_rc, plugin_note(libdir))


@pytest.mark.parametrize("plugin, reason", [
    ("/nonexistent/libaclshmem_ucx.so", "/nonexistent/libaclshmem_ucx.so"),
    ("none", "disabled by SHMEM_UCX_PLUGIN=none"),
])
def test_no_plugin_on_one_node(build, namespaces, tmp_path, plugin, reason):
    """Node 1 is pointed at a plug-in that does not exist, or disables it: no PE may start a
    job that half of it cannot reach; each one fails init with an error that says UCX is
    the problem, and node 1's PEs (2 and 3) say why."""
    exe, libdir = build
    job, _ = run_on_nodes(exe, libdir, "init", 2, 2, tmp_path, node_env={1: {"SHMEM_UCX_PLUGIN": plugin}})
    bad = []
    for pe in range(job.n_pes):
        init_fail = [line for line in job.outputs[pe].splitlines()
                     if line.startswith(f"FAIL PE {pe} [init]: init")]
        if job.rcs[pe] != 3 or not init_fail or "ucx" not in init_fail[0].lower():
            bad.append(pe)
        elif pe >= 2 and reason not in init_fail[0]:
            bad.append(pe)
    if bad or job.timed_out:
        pytest.fail(job.report(f"PE(s) {bad} did not fail init with an error naming UCX "
                               "(mn_suite exits 3 when init fails)", plugin_note(libdir)),
                    pytrace=False)


# --- the data planes (issue #23; docs/security.rst, "The data plane across nodes") ---------

RMA_PLANE_CASES = ["putmem", "nbi", "signal", "amo", "barrier", "get_nbi", "reduce_blocks", "coll_mix"]


@pytest.mark.parametrize("case", RMA_PLANE_CASES)
def test_rma_plane(build, namespaces, tmp_path, case):
    """SHMEM_UCX_DATA_PLANE=rma (UCX's own RMA with remote keys, meant for RDMA fabrics)
    still carries the suite over TCP; the default runs above use the AM plane."""
    exe, libdir = build
    rma = {"SHMEM_UCX_DATA_PLANE": "rma"}
    job, expected_rc = run_on_nodes(exe, libdir, case, 2, 1, tmp_path, node_env={0: rma, 1: rma})
    check_passed(job, expected_rc, plugin_note(libdir))


def test_filter_off(build, namespaces, tmp_path):
    """SHMEM_UCX_FILTER=0 (nodes behind NAT) leaves UCX's sockets open and the job works."""
    exe, libdir = build
    off = {"SHMEM_UCX_FILTER": "0"}
    job, expected_rc = run_on_nodes(exe, libdir, "putmem", 2, 1, tmp_path, node_env={0: off, 1: off})
    check_passed(job, expected_rc, plugin_note(libdir))


def init_failures(job, words):
    """The PEs whose init did not fail (mn_suite exits 3) with a line holding all of words."""
    bad = []
    for pe in range(job.n_pes):
        lines = [line for line in job.outputs[pe].splitlines() if line.startswith(f"FAIL PE {pe} [init]: init")]
        if job.rcs[pe] != 3 or not any(all(w in line for w in words) for line in lines):
            bad.append(pe)
    return bad


def test_planes_must_agree(build, namespaces, tmp_path):
    """Node 0 asks for the AM plane, node 1 for the RMA plane: every PE fails init naming
    both (a PE that some peers reach one way and others another way would lose data)."""
    exe, libdir = build
    job, _ = run_on_nodes(exe, libdir, "init", 2, 1, tmp_path,
                          node_env={0: {"SHMEM_UCX_DATA_PLANE": "am"}, 1: {"SHMEM_UCX_DATA_PLANE": "rma"}})
    bad = init_failures(job, ["uses the UCX data plane", '"am"', '"rma"', "every PE of a job must use the same"])
    if bad or job.timed_out:
        pytest.fail(job.report(f"PE(s) {bad} did not fail init naming the data planes", plugin_note(libdir)),
                    pytrace=False)


def test_bad_plane_value(build, namespaces, tmp_path):
    exe, libdir = build
    bogus = {"SHMEM_UCX_DATA_PLANE": "fast"}
    job, _ = run_on_nodes(exe, libdir, "init", 2, 1, tmp_path, node_env={0: bogus, 1: bogus})
    bad = init_failures(job, ["SHMEM_UCX_DATA_PLANE=fast", "expected am, rma or auto"])
    if bad or job.timed_out:
        pytest.fail(job.report(f"PE(s) {bad} did not fail init naming SHMEM_UCX_DATA_PLANE",
                               plugin_note(libdir)), pytrace=False)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_on_one_node(exe, libdir, case, tmp_path):
    """Runs case on 4 PEs of this node, told 2 PEs per node (MN_ONE_NODE=1)."""
    n_pes, ppn, port = 4, 2, _free_port()
    secret = secrets.token_hex(32)
    dead = n_pes - 1 if case == "killed" else None

    def expected_rc(pe):
        return -signal.SIGKILL if pe == dead else 0

    def start(pe, out):
        env = pe_env(libdir, str(tmp_path / "logs"), pe, n_pes, ppn, "127.0.0.1", port, secret,
                     {"MN_ONE_NODE": "1"})
        return subprocess.Popen([exe, case], env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)

    job = run_job(start, case, n_pes, ppn, tmp_path, expected_rc)
    check_passed(job, expected_rc)


@pytest.mark.parametrize("case", CASES)
def test_suite_selftest(build, tmp_path, case):
    """mn_suite's checks on 4 PEs of one node (it is told 2 PEs per node, so its traffic
    pattern is the 2x2 one, but everything goes through shared memory): the suite itself is
    right, whatever the inter-node transport does."""
    exe, libdir = build
    run_on_one_node(exe, libdir, case, tmp_path)


# --- the program's globals as symmetric data (issue #24, src/mem/data_segment.c) ----------


@pytest.fixture(scope="module")
def data_suite(build):
    """(mn_suite_data, the folder of libaclshmem.so and its plug-in)."""
    exe, libdir = build
    data_exe = os.path.join(os.path.dirname(exe), "mn_suite_data")
    if not os.path.exists(data_exe):
        pytest.fail(f"no {data_exe}: rebuild ({exe} is from before issue #24)", pytrace=False)
    return data_exe, libdir


@pytest.mark.parametrize("plane", ["am", "rma"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_globals(data_suite, namespaces, tmp_path, layout, plane):
    """The program's global and static variables as put, get, p/g, AMO, signal and wait
    targets of PEs on other nodes, on both data planes: the AM plane's receiver checks them
    as one more segment, the RMA plane registers them with UCX.  mn_suite_data carries the
    library's objects, so the plug-in is named (it is looked for beside libaclshmem)."""
    exe, libdir = data_suite
    nodes, ppn = LAYOUTS[layout]
    env = {"SHMEM_UCX_DATA_PLANE": plane, "SHMEM_UCX_PLUGIN": os.path.join(libdir, "libaclshmem_ucx.so")}
    job, expected_rc = run_on_nodes(exe, libdir, "globals", nodes, ppn, tmp_path,
                                    node_env={node: env for node in range(nodes)})
    check_passed(job, expected_rc, plugin_note(libdir))


@pytest.mark.parametrize("case", ["globals", "putmem", "amo"])
def test_globals_one_node(data_suite, tmp_path, case):
    """mn_suite_data on one node: globals through shared memory, and sharing them leaves the
    other cases working."""
    exe, libdir = data_suite
    run_on_one_node(exe, libdir, case, tmp_path)
