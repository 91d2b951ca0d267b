"""Attacks on a running 2-node job through its data plane (issue #23, items 1 and 2).

A job of two PEs, one per node (network namespaces, UCX over TCP on eth0, DEFAULT mode with
SHMEM_JOB_SECRET), runs mn_suite's case "victim": each PE fills a symmetric buffer (its
"target") with a pattern, publishes the target's address (as if the attacker had guessed
it), and keeps the job busy (puts, atomics, gets, barriers) while the attacker works,
checking every round that its target is unchanged and that its own RMA still delivers.

The attacker (ucx_attacker.py, writing UCX's TCP wire format from ucx_wire.py) runs one
phase per process, and after each phase this test reads every PE's target out of its memory
(/proc/PID/mem) and looks whether a PE died, so that a failure names the phase that did it:

* test_outsider: from a third namespace on the same bridge that is no node of the job and
  knows only the nodes' addresses.  It port-scans them (bounded), fingerprints UCX's ports
  (UCT answers a CONN_REQ with a CONN_ACK), adds the ports the victims listen on (a strong
  attacker that guessed right), and sends: UCT PUT_REQs at the targets (uct_put); UCP
  software-RMA PUT, ATOMIC_REQ, GET_REQ and CMPL active messages with guessed ep ids (ucp_*);
  UCP AM_SINGLE messages with am ids 0..15 and random payloads (am_single); malformed
  frames (garbage); thousands of connections to every port and to PE 0's control plane
  (storm).
* test_job_node_neighbour: from inside node 1's namespace (node 1's address, but no member
  of the job: no secret), only UCP-level forgeries (the ucp_* phases and am_single) at PE 0.
  UCT-level frames (PUT_REQ, broken CM packets) from a job node's own address are a
  documented limitation of UCX and not part of this test.

Both pass when no byte of any target changed, no PE died and every PE printed PASS.  A
connection that is refused or times out (a defence may drop SYNs) counts as blocked.
OUTSIDER_PHASES="uct_put,garbage" (say) runs only those phases of test_outsider, and
OUTSIDER_GARBAGE="PUT_REQ,CM" only the malformed inputs of the garbage phase whose names
(ucx_attacker.py, _garbage_cases) contain one of those words: to look at one kind of
attack; OUTSIDER_SEED=N repeats the random choices of a run (its failure names its seed);
pytest -s prints what every phase did.  Needs root and iproute2 (skips otherwise, saying
why) and a build with the UCX plug-in (SHMEM_NATIVE_BUILD_DIR, as test_multinode.py).
"""

import json
import os
import secrets
import signal
import subprocess
import sys
import time

import pytest

import netns
from test_multinode import Job, build, namespaces, pe_env, plugin_note  # noqa: F401

HERE = os.path.dirname(os.path.abspath(__file__))
ATTACKER = os.path.join(HERE, "ucx_attacker.py")
PORT = 47000
SCALE = float(os.environ.get("CI_TIMEOUT_MULTIPLIER") or 1)
PHASE_TIMEOUT = 60 * SCALE
SETTLE = 0.3  # after a phase, the victims' progress thread has handled what arrived

OUTSIDER_PHASES = ["uct_put", "ucp_put", "ucp_atomic", "ucp_get", "ucp_cmpl", "ucp_bad_ids",
                   "am_single", "garbage", "storm"]
NEIGHBOUR_PHASES = ["ucp_put", "ucp_atomic", "ucp_get", "ucp_cmpl", "ucp_bad_ids", "am_single"]


# --- the victims --------------------------------------------------------------------------------

def listening_ports(pid):
    """TCP ports on which process pid listens (from its namespace's /proc/PID/net/tcp*)."""
    inodes = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
            if link.startswith("socket:["):
                inodes.add(link[8:-1])
    except OSError:
        return []
    ports = set()
    for table in ("tcp", "tcp6"):
        try:
            with open(f"/proc/{pid}/net/{table}") as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            cols = row.split()
            if cols[3] == "0A" and cols[9] in inodes:  # LISTEN
                ports.add(int(cols[1].rsplit(":", 1)[1], 16))
    return sorted(ports)


class Victims:
    """The PEs of a "victim" job, one per node, started in the cluster's namespaces."""

    def __init__(self, cluster, exe, libdir, tmp_path):
        self.n = cluster.n_nodes
        self.file = str(tmp_path / "victim")
        self.job = Job("victim", self.n, 1)
        self.procs, self.outs, self.published = [], [], {}
        secret = secrets.token_hex(32)
        for pe in range(self.n):
            env = pe_env(libdir, str(tmp_path / "logs"), pe, self.n, 1, cluster.addrs[0], PORT,
                         secret, {"MN_VICTIM_FILE": self.file, "MN_VICTIM_SECONDS": "120",
                                  "MN_TIMEOUT": str(int(150 * SCALE))})
            out = open(tmp_path / f"pe{pe}.out", "w+", encoding="utf-8", errors="replace")
            self.outs.append(out)
            self.procs.append(cluster.popen(pe, [exe, "victim"], env=env, stdout=out,
                                            stderr=subprocess.STDOUT))

    def wait_published(self, timeout=60 * SCALE):
        """{pe: (pid, target address, length)} once every PE wrote its file."""
        deadline = time.monotonic() + timeout
        while len(self.published) < self.n:
            for pe in range(self.n):
                try:
                    with open(f"{self.file}.pe{pe}") as f:
                        words = dict(line.split(" ", 1) for line in f.read().splitlines())
                    addr, length = words["target"].split()
                    self.published[pe] = (int(words["pid"]), int(addr, 16), int(length))
                except (OSError, KeyError, ValueError):
                    pass
            dead = [pe for pe, p in enumerate(self.procs) if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                self.finish(0)
                pytest.fail(self.job.report("the victims did not start (no attack yet)"),
                            pytrace=False)
            time.sleep(0.05)
        return self.published

    def snapshot(self):
        """{pe: the bytes of its target now, or None when they cannot be read (it died)}."""
        out = {}
        for pe, (pid, addr, length) in self.published.items():
            try:
                fd = os.open(f"/proc/{pid}/mem", os.O_RDONLY)
                try:
                    out[pe] = os.pread(fd, length, addr)
                finally:
                    os.close(fd)
            except OSError:
                out[pe] = None
        return out

    def dead(self):
        """{pe: exit status} of the PEs that ended."""
        return {pe: p.returncode for pe, p in enumerate(self.procs) if p.poll() is not None}

    def finish(self, timeout=30 * SCALE):
        """Ends the rounds (the done file), waits for the PEs, fills self.job."""
        open(f"{self.file}.done", "w").close()
        deadline = time.monotonic() + timeout
        while any(p.poll() is None for p in self.procs) and time.monotonic() < deadline:
            time.sleep(0.05)
        for pe, (p, out) in enumerate(zip(self.procs, self.outs)):
            if p.poll() is None:
                self.job.timed_out = True
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            self.job.rcs[pe] = p.returncode
            out.seek(0)
            self.job.outputs[pe] = out.read()
            out.close()


# --- the attack ---------------------------------------------------------------------------------

def run_phase(start, phase, plan, tmp_path):
    """Runs one phase of ucx_attacker.py with start(cmd, **popen_args); returns its report."""
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    proc = start([sys.executable, ATTACKER, phase, str(path)], stdout=subprocess.PIPE,
                 stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=PHASE_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"the attacker's phase {phase} did not end in {PHASE_TIMEOUT:.0f} s "
                    f"(a bug of the attacker: every socket operation is bounded)\n{err}",
                    pytrace=False)
    if proc.returncode != 0 or not out.strip():
        pytest.fail(f"the attacker's phase {phase} failed (exit status {proc.returncode}):\n"
                    f"{err}", pytrace=False)
    return json.loads(out.strip().splitlines()[-1])


def exit_text(rc):
    if rc is not None and rc < 0:
        return f"killed by {signal.Signals(-rc).name}"
    return f"exit status {rc}"


def attack(victims, start, plan, phases, tmp_path):
    """Runs the phases one after the other; returns [(phase, report, effects)], effects a
    list of what the phase did to the job (bytes changed, PEs that died)."""
    before, dead_before, log = victims.snapshot(), {}, []
    for phase in phases:
        report = run_phase(start, phase, plan, tmp_path)
        time.sleep(SETTLE)
        after, dead = victims.snapshot(), victims.dead()
        effects = []
        for pe in sorted(after):
            if pe in dead and pe not in dead_before:  # killed, or ended: the job broke
                verb = "died" if dead[pe] is not None and dead[pe] < 0 else "ended"
                effects.append(f"PE {pe} {verb} ({exit_text(dead[pe])})")
            elif before.get(pe) is not None and after[pe] is not None and after[pe] != before[pe]:
                changed = sum(a != b for a, b in zip(after[pe], before[pe]))
                effects.append(f"PE {pe}: {changed} bytes of its target changed")
        log.append((phase, report, effects))
        before, dead_before = after, dead
    return log


def describe(log):
    """One paragraph per phase: what was sent, what came back, what it did."""
    lines = []
    for phase, r, effects in log:
        if phase == "scan":
            lines.append(f"scan ({r['seconds']} s): " + "; ".join(
                f"{h}: {v['scanned']} of {v['of']} ports scanned, open {v['open']}, UCX "
                f"(answered CONN_ACK) {v['ucx']}, outcomes {v['outcomes']}"
                for h, v in r["hosts"].items()))
            continue
        if phase == "storm":
            sent = f"storm ({r['seconds']} s): {r['storms']}"
        else:
            sent = (f"{phase} ({r['seconds']} s): connections {r['connections']}, "
                    f"{r['frames']} frames ({r['bytes']} bytes) sent, {r['conn_acks']} CONN_ACK "
                    f"and {r['put_acks']} PUT_ACK received, "
                    f"closed by the PE {r['closed_by_peer']}x")
        lines.append(sent + " -> " + ("; ".join(effects) if effects else "no effect seen"))
    return "\n".join(lines)


def check(victims, log, libdir, who):
    """Fails with the whole story when an attack had an effect or the job did not pass."""
    print(f"{who}:\n{describe(log)}")  # what the attack did, seen with pytest -s
    hit = [(phase, effects) for phase, _, effects in log if effects]
    job = victims.job
    bad = [pe for pe in range(job.n_pes)
           if job.rcs[pe] != 0 or f"PASS PE {pe} [victim]" not in job.outputs[pe]]
    if hit or bad or job.timed_out:
        title = (f"{who}: " + ", ".join(f"{phase} -> {'; '.join(e)}" for phase, e in hit)
                 if hit else f"{who}: PE(s) {bad} did not pass")
        pytest.fail(job.report(title, describe(log) + "\n" + plugin_note(libdir)), pytrace=False)


def hosts_plan(cluster, victims, ports_of):
    """The plan's "hosts": each node's address, ports (ports_of(node)) and PE targets."""
    return [{"host": cluster.addrs[pe], "ports": ports_of(pe), "ucx_ports": [],
             "targets": [[pe, addr, length]]}
            for pe, (_, addr, length) in sorted(victims.published.items())]


# --- the tests ------------------------------------------------------------------------------------

def seed():
    """Every random choice of the attacker derives from it: OUTSIDER_SEED repeats a run."""
    return int(os.environ.get("OUTSIDER_SEED") or secrets.randbits(32))


def test_outsider(build, namespaces, tmp_path):
    """A host of the job's network that is no node of the job cannot change a byte of any
    PE, nor end one, through any port the job opens."""
    exe, libdir = build
    only = os.environ.get("OUTSIDER_PHASES")
    phases = only.split(",") if only else OUTSIDER_PHASES
    with netns.Cluster(2, outsiders=1) as cluster:
        victims = Victims(cluster, exe, libdir, tmp_path)
        published = victims.wait_published()

        def start(cmd, **kw):
            return cluster.popen_outsider(0, cmd, **kw)

        plan = {"me": cluster.outsider_addrs[0], "seed": seed(),
                "control": [cluster.addrs[0], PORT], "scan_seconds": 12 * SCALE,
                "storm_connects": 2000,
                "hosts": hosts_plan(cluster, victims, lambda pe: [])}
        if os.environ.get("OUTSIDER_GARBAGE"):
            plan["garbage_only"] = os.environ["OUTSIDER_GARBAGE"].split(",")
        log = attack(victims, start, plan, ["scan"], tmp_path)
        scanned = log[0][1]["hosts"]
        for h in plan["hosts"]:
            pe = h["targets"][0][0]
            found = scanned[h["host"]]
            h["ports"] = sorted(set(found["open"]) | set(listening_ports(published[pe][0])))
            h["ucx_ports"] = found["ucx"]
        log += attack(victims, start, plan, phases, tmp_path)
        victims.finish()
    check(victims, log, libdir, f"attacker outside the job (seed {plan['seed']})")


def test_job_node_neighbour(build, namespaces, tmp_path):
    """A process in node 1's namespace (node 1's address) that is no member of the job
    cannot change a byte of PE 0 nor end it with UCP-level messages.  (UCT-level frames from
    a job node's own address are a documented UCX limitation: not tried here.)"""
    exe, libdir = build
    with netns.Cluster(2) as cluster:
        victims = Victims(cluster, exe, libdir, tmp_path)
        published = victims.wait_published()

        def start(cmd, **kw):
            return cluster.popen(1, cmd, **kw)

        def pe0_ucx_ports(pe):  # the control plane's port is no UCX port
            return [p for p in listening_ports(published[pe][0]) if p != PORT]

        plan = {"me": cluster.addrs[1], "seed": seed(),
                "hosts": hosts_plan(cluster, victims, pe0_ucx_ports)[:1]}
        log = attack(victims, start, plan, NEIGHBOUR_PHASES, tmp_path)
        victims.finish()
    check(victims, log, libdir, f"process in node 1's namespace (seed {plan['seed']})")
