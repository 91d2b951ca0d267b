"""Several "nodes" on one machine, made of network namespaces.

A node of libaclshmem is a host *and* a network namespace (src/mem/heap.c: PEs share
memory only when both the boot id and the network namespace match), so PEs started in
different namespaces of one machine are on different nodes, and talk as PEs on different
hosts would.

    with Cluster(3) as cluster:                # needs root and iproute2's `ip`
        proc = cluster.popen(1, ["hostname"], env={...})

    with Cluster(2, outsiders=1) as cluster:   # plus a host that is no node of the job
        proc = cluster.popen_outsider(0, [...])

Cluster(n) makes, with names unique to this process ("shmn<pid>-..."):

  * a "switch" namespace holding a bridge br0;
  * n node namespaces, each with `lo` up and an interface eth0, one end of a veth pair
    whose other end is a port of the bridge, addressed 10.<a>.<b>.<i+1>/24 (a, b from the
    pid); every node reaches every other one through the bridge, and the addresses exist
    only inside the namespaces;
  * with outsiders=k, k more namespaces built the same way on the same bridge, addressed
    10.<a>.<b>.<201+j>: hosts of the same network that run no PE (an attacker's position).

Leaving the `with` block (normally, on an exception or on KeyboardInterrupt) kills the
processes still running in the namespaces and deletes the namespaces, which deletes the
veth pairs and the bridge with them.  Namespaces left behind by a run that was killed
(SIGKILL) are deleted by the next run (cleanup_stale).

unavailable() says why namespaces cannot be made here (not root, no `ip`, no permission),
or returns None: tests skip on that reason and only on that one.
"""

import os
import shutil
import signal
import subprocess
import sys
import time

PREFIX = "shmn"


def _ip(*args, check=True):
    """Runs `ip ARGS`; raises RuntimeError with ip's message when it fails and check."""
    proc = subprocess.run(["ip", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=30)
    if check and proc.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {proc.stderr.strip() or proc.stdout.strip()}"
                           f" (exit status {proc.returncode})")
    return proc


def unavailable():
    """Why network namespaces cannot be created here (a text), or None when they can."""
    if shutil.which("ip") is None:
        return "iproute2's `ip` is not installed"
    if os.geteuid() != 0:
        return "network namespaces need root (euid is %d)" % os.geteuid()
    name = f"{PREFIX}{os.getpid()}-probe"
    proc = _ip("netns", "add", name, check=False)
    if proc.returncode != 0:
        return f"`ip netns add` failed: {proc.stderr.strip()}"
    _ip("netns", "del", name, check=False)
    return None


def _namespaces():
    proc = _ip("-o", "netns", "list", check=False)
    return [line.split()[0] for line in proc.stdout.splitlines() if line.strip()]


def _pids_in(ns):
    proc = _ip("netns", "pids", ns, check=False)
    return [int(p) for p in proc.stdout.split() if p.isdigit()]


def _kill_pids_in(ns):
    """SIGKILLs the processes inside ns (only this harness's namespaces are passed here)."""
    for pid in _pids_in(ns):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def cleanup_stale():
    """Deletes the namespaces of earlier runs of this harness whose process is gone."""
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

    def __init__(self, n_nodes, tag="", outsiders=0):
        if not 1 <= n_nodes <= 200:
            raise ValueError("n_nodes must be 1..200")
        if not 0 <= outsiders <= 50:
            raise ValueError("outsiders must be 0..50")
        self.n_nodes = n_nodes
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

    # --- building and tearing down -----------------------------------------------------
    def __enter__(self):
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _add_ns(self, name):
        _ip("netns", "add", name)
        self._made.append(name)
        _ip("-n", name, "link", "set", "lo", "up")

    def _build(self):
        cleanup_stale()
        self._add_ns(self.switch)
        _ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
        _ip("-n", self.switch, "link", "set", "br0", "up")
        for i, ns in enumerate(self.nodes):
            self._add_host(ns, f"p{i}", self.addrs[i])
        for j, ns in enumerate(self.outsiders):
            self._add_host(ns, f"q{j}", self.outsider_addrs[j])
        self._wait_reachable()

    def _add_host(self, ns, port, addr):
        """Namespace ns with eth0 at addr, plugged into the bridge's port `port`."""
        self._add_ns(ns)
        # Both ends are made inside the namespaces: nothing appears in the root one.
        _ip("-n", ns, "link", "add", "eth0", "type", "veth", "peer", "name", port,
            "netns", self.switch)
        _ip("-n", self.switch, "link", "set", port, "master", "br0")
        _ip("-n", self.switch, "link", "set", port, "up")
        _ip("-n", ns, "addr", "add", f"{addr}/24", "dev", "eth0")
        _ip("-n", ns, "link", "set", "eth0", "up")

    def _wait_reachable(self, timeout=10.0):
        """Waits until node 0 reaches every other node and every outsider: a TCP connection
        to a closed port is refused (an answer from that host), not left without one."""
        probe = ("import errno, socket, sys\n"
                 "s = socket.socket(); s.settimeout(1)\n"
                 "rc = s.connect_ex((sys.argv[1], 9))\n"
                 "sys.exit(0 if rc in (0, errno.ECONNREFUSED) else 1)\n")
        deadline = time.monotonic() + timeout
        for addr in self.addrs[1:] + self.outsider_addrs:
            while subprocess.run(["ip", "netns", "exec", self.nodes[0], sys.executable, "-c", probe,
                                  addr], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL).returncode != 0:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"node 0 cannot reach {addr} after {timeout:.0f} s")
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
        for ns in reversed(self._made):
            _kill_pids_in(ns)
            _ip("netns", "del", ns, check=False)
        self._made = []

    # --- running -------------------------------------------------------------------------
    def popen(self, node, cmd, env=None, **kwargs):
        """Starts cmd (a list) inside node `node` with exactly the environment env (None:
        this process's), in a process group of its own; returns the Popen.  Keyword
        arguments go to subprocess.Popen (stdout=..., text=...)."""
        return self._popen_in(self.nodes[node], cmd, env, kwargs)

    def popen_outsider(self, j, cmd, env=None, **kwargs):
        """As popen, inside outsider namespace j (a host on the bridge that is no node)."""
        return self._popen_in(self.outsiders[j], cmd, env, kwargs)

    def _popen_in(self, ns, cmd, env, kwargs):
        proc = subprocess.Popen(["ip", "netns", "exec", ns, *cmd], env=env,
                                start_new_session=True, **kwargs)
        self._procs.append(proc)
        return proc

    def run(self, node, cmd, env=None, timeout=60):
        """Runs cmd in node and returns the CompletedProcess (text, output captured)."""
        proc = self.popen(node, cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
        out, _ = proc.communicate(timeout=timeout)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, None)
