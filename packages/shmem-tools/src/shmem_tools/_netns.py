"""Several "nodes" on one machine, made of network namespaces: the one namespace helper of
the project (``shmem-perf --nodes 2`` and the tests of tests/multinode both use it).

A node of libaclshmem is a host *and* a network namespace (src/mem/heap.c: PEs share
memory only when both the boot id and the network namespace match), so PEs started in
different namespaces of one machine are on different nodes, and talk through the
inter-node transport (the UCX plug-in), as PEs on different hosts would.

    with Cluster(3) as cluster:                # needs root and iproute2's `ip`
        proc = cluster.popen(1, ["hostname"], env={...})

    with Cluster(2, outsiders=1) as cluster:   # plus a host that is no node of the job
        proc = cluster.popen_outsider(0, [...])

    with VethPair() as pair:                   # two nodes, one veth pair, no bridge
        proc = pair.popen(0, ["ucx_perftest", "-p", "13337"])

Cluster(n) makes, with names unique to this process ("shmn<pid>-..."):

  * a "switch" namespace holding a bridge br0 (VethPair: none, its two nodes are the two
    ends of one veth pair, the shortest path between two namespaces, for measurements);
  * n node namespaces, each with `lo` up and an interface eth0, one end of a veth pair
    whose other end is a port of the bridge, addressed 10.<a>.<b>.<i+1>/24 (a, b from the
    pid); the addresses exist only inside the namespaces, so they never clash with the
    machine's;
  * with outsiders=k, k more namespaces built the same way on the same bridge, addressed
    10.<a>.<b>.<201+j>: hosts of the same network that run no PE (an attacker's position).

Leaving the `with` block (normally, on an exception, on Ctrl-C, SIGTERM or SIGHUP) kills the
processes still running in the namespaces and deletes the namespaces, which deletes the veth
pairs and the bridge with them.  Namespaces left behind by a run that was killed outright
(SIGKILL) are deleted by the next run (cleanup_stale).

unavailable() says why namespaces cannot be made here (not root, no `ip`, no permission),
or returns None: the tests skip on that reason and only on that one.
"""

import os
import shutil
import signal
import subprocess
import sys
import time

PREFIX = "shmn"
DEVICE = "eth0"


class NetnsError(RuntimeError):
    pass


class _Terminated(BaseException):
    """SIGTERM or SIGHUP while the namespaces exist: unwinds like Ctrl-C."""


def _ip(*args, check=True):
    """Runs `ip ARGS`; raises NetnsError with ip's message when it fails and check."""
    proc = subprocess.run(["ip", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
    if check and proc.returncode != 0:
        raise NetnsError(f"ip {' '.join(args)}: {proc.stderr.strip() or proc.stdout.strip()} "
                         f"(exit status {proc.returncode})")
    return proc


def unavailable(run_as=None):
    """Why network namespaces cannot be made here (a text), or None when they can.
    run_as: the command to suggest running as root (``shmem-perf --nodes 2``)."""
    if os.geteuid() != 0:
        hint = f": run it as root, e.g. sudo {run_as}" if run_as else ""
        return f"it creates network namespaces (ip netns), which needs root (this is uid {os.geteuid()}){hint}"
    if shutil.which("ip") is None:
        return "iproute2's `ip` is not installed (apt-get install iproute2)"
    name = f"{PREFIX}{os.getpid()}-probe"
    proc = _ip("netns", "add", name, check=False)
    if proc.returncode != 0:
        return f"`ip netns add` failed: {proc.stderr.strip()}"
    _ip("netns", "del", name, check=False)
    return None


def _namespaces():
    proc = _ip("-o", "netns", "list", check=False)
    return [line.split()[0] for line in proc.stdout.splitlines() if line.strip()]


def _kill_pids_in(ns):
    """SIGKILLs the processes inside ns (only this module's namespaces are passed here)."""
    for pid in _ip("netns", "pids", ns, check=False).stdout.split():
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (ValueError, ProcessLookupError):
            pass


def cleanup_stale():
    """Deletes the namespaces of earlier runs whose process is gone."""
    for ns in _namespaces():
        if not ns.startswith(PREFIX) or "-" not in ns:
            continue
        pid = ns[len(PREFIX):].split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
            continue  # that run is still going
        except ProcessLookupError:
            pass
        except PermissionError:
            continue
        _kill_pids_in(ns)
        _ip("netns", "del", ns, check=False)


class Cluster:
    """n nodes (network namespaces) on one bridge; a context manager."""

    def __init__(self, n_nodes, tag="", outsiders=0, bridge=True):
        if not 1 <= n_nodes <= 200:
            raise ValueError("n_nodes must be 1..200")
        if not 0 <= outsiders <= 50:
            raise ValueError("outsiders must be 0..50")
        if not bridge and (n_nodes != 2 or outsiders):
            raise ValueError("without a bridge there are exactly two nodes and no outsider")
        self.n_nodes = n_nodes
        self.bridge = bridge
        pid = os.getpid()
        base = f"{PREFIX}{pid}-{tag}" if tag else f"{PREFIX}{pid}-"
        self.switch = base + "sw"
        self.nodes = [f"{base}n{i}" for i in range(n_nodes)]
        self.subnet = f"10.{(pid >> 8) & 0xFF}.{pid & 0xFF}"
        self.addrs = [f"{self.subnet}.{i + 1}" for i in range(n_nodes)]
        self.outsiders = [f"{base}x{j}" for j in range(outsiders)]
        self.outsider_addrs = [f"{self.subnet}.{201 + j}" for j in range(outsiders)]
        self._procs = []
        self._made = []
        self._saved = {}

    # --- building and tearing down -----------------------------------------------------
    def __enter__(self):
        for sig in (signal.SIGTERM, signal.SIGHUP):
            try:
                self._saved[sig] = signal.signal(sig, self._on_signal)
            except (ValueError, OSError):  # not the main thread
                pass
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    @staticmethod
    def _on_signal(signum, frame):
        raise _Terminated(f"signal {signum}")

    def _add_ns(self, name):
        _ip("netns", "add", name)
        self._made.append(name)
        _ip("-n", name, "link", "set", "lo", "up")

    def _build(self):
        cleanup_stale()
        if self.bridge:
            self._add_ns(self.switch)
            _ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
            _ip("-n", self.switch, "link", "set", "br0", "up")
            for i, ns in enumerate(self.nodes):
                self._add_host(ns, f"p{i}", self.addrs[i])
            for j, ns in enumerate(self.outsiders):
                self._add_host(ns, f"q{j}", self.outsider_addrs[j])
        else:
            for ns in self.nodes:
                self._add_ns(ns)
            # Both ends are made inside the namespaces: nothing appears in the root one.
            _ip("-n", self.nodes[0], "link", "add", DEVICE, "type", "veth", "peer", "name", DEVICE,
                "netns", self.nodes[1])
            for ns, addr in zip(self.nodes, self.addrs):
                self._address(ns, addr)
        self._wait_reachable()

    def _add_host(self, ns, port, addr):
        """Namespace ns with eth0 at addr, plugged into the bridge's port `port`."""
        self._add_ns(ns)
        _ip("-n", ns, "link", "add", DEVICE, "type", "veth", "peer", "name", port, "netns", self.switch)
        _ip("-n", self.switch, "link", "set", port, "master", "br0")
        _ip("-n", self.switch, "link", "set", port, "up")
        self._address(ns, addr)

    @staticmethod
    def _address(ns, addr):
        _ip("-n", ns, "addr", "add", f"{addr}/24", "dev", DEVICE)
        _ip("-n", ns, "link", "set", DEVICE, "up")

    def _wait_reachable(self, timeout=10.0):
        """Waits until every eth0 is up (the carrier reaches a veth end a moment after `link
        set up`, and UCX skips a device that is not up yet) and node 0 reaches every other
        node and outsider: a TCP connection to a closed port is refused (an answer from that
        host), not left without one."""
        deadline = time.monotonic() + timeout
        for ns in self.nodes + self.outsiders:
            while "state UP" not in _ip("-n", ns, "-o", "link", "show", "dev", DEVICE).stdout:
                if time.monotonic() > deadline:
                    raise NetnsError(f"{DEVICE} of {ns} is not up after {timeout:.0f} s")
                time.sleep(0.05)
        probe = ("import errno, socket, sys\n"
                 "s = socket.socket(); s.settimeout(1)\n"
                 "sys.exit(0 if s.connect_ex((sys.argv[1], 9)) in (0, errno.ECONNREFUSED) else 1)\n")
        for addr in self.addrs[1:] + self.outsider_addrs:
            while subprocess.run(["ip", "netns", "exec", self.nodes[0], sys.executable, "-c", probe, addr],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
                if time.monotonic() > deadline:
                    raise NetnsError(f"node 0 cannot reach {addr} after {timeout:.0f} s")
                time.sleep(0.1)

    def close(self):
        """Kills what runs in the nodes and deletes every namespace made (idempotent)."""
        for proc in self._procs:
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        for proc in self._procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        self._procs = []
        for ns in reversed(self._made):
            _kill_pids_in(ns)
            _ip("netns", "del", ns, check=False)
        self._made = []
        for sig, handler in self._saved.items():
            try:
                signal.signal(sig, handler)
            except (ValueError, OSError):
                pass
        self._saved = {}

    # --- running -------------------------------------------------------------------------
    def popen(self, node, cmd, env=None, **kwargs):
        """Starts cmd (a list) inside node `node` with exactly the environment env (None:
        this process's), in a session of its own (so a Ctrl-C reaches only this process,
        which then tears everything down); returns the Popen.  Keyword arguments go to
        subprocess.Popen (stdout=..., text=...)."""
        return self._popen_in(self.nodes[node], cmd, env, kwargs)

    def popen_outsider(self, j, cmd, env=None, **kwargs):
        """As popen, inside outsider namespace j (a host on the bridge that is no node)."""
        return self._popen_in(self.outsiders[j], cmd, env, kwargs)

    def _popen_in(self, ns, cmd, env, kwargs):
        proc = subprocess.Popen(["ip", "netns", "exec", ns, *cmd], env=env, start_new_session=True, **kwargs)
        self._procs.append(proc)
        return proc

    def run(self, node, cmd, env=None, timeout=60):
        """Runs cmd in node and returns the CompletedProcess (text, output captured)."""
        proc = self.popen(node, cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        out, _ = proc.communicate(timeout=timeout)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, None)


class VethPair(Cluster):
    """Two nodes joined by one veth pair, no bridge between them (``shmem-perf --nodes 2``)."""

    def __init__(self):
        super().__init__(2, bridge=False)
