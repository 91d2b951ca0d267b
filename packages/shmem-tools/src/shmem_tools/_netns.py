"""Two "nodes" on one machine for ``shmem-perf --nodes 2``: two network namespaces joined
by a veth pair.

libaclshmem counts PEs as on one node when they share the boot id *and* the network
namespace, so a PE in each namespace talks to the other through the inter-node transport
(the UCX plug-in), over TCP on the veth pair, as PEs on two hosts would over Ethernet.

    with VethPair() as pair:                 # root and iproute2's `ip` needed
        proc = pair.popen(0, ["ucx_perftest", "-p", "13337"])
        pair.addrs[0]                        # 10.97.0.1 (node 1: 10.97.0.2)

The namespaces are named ``shpf<pid>-0`` and ``shpf<pid>-1``; each has ``lo`` up and
``eth0``, one end of the veth pair.  The addresses exist only inside the two namespaces,
so they never clash with the machine's.  Leaving the block (normally, on an exception or
Ctrl-C) kills what still runs in the namespaces and deletes them, which deletes the veth
pair; namespaces of an earlier run that was killed outright are deleted by the next run.
"""

import os
import shutil
import signal
import subprocess
import sys
import time

PREFIX = "shpf"
SUBNET = "10.97.0"
DEVICE = "eth0"


class NetnsError(RuntimeError):
    pass


def _ip(*args, check=True):
    proc = subprocess.run(["ip", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
    if check and proc.returncode != 0:
        raise NetnsError(f"ip {' '.join(args)}: {proc.stderr.strip() or proc.stdout.strip()} "
                         f"(exit status {proc.returncode})")
    return proc


def unavailable():
    """Why two namespaces cannot be made here (a text), or None."""
    if os.geteuid() != 0:
        return (f"it creates network namespaces (ip netns), which needs root (this is uid {os.geteuid()}): "
                "run it as root, e.g. sudo shmem-perf --nodes 2")
    if shutil.which("ip") is None:
        return "iproute2's `ip` is not installed (apt-get install iproute2)"
    return None


def _namespaces():
    proc = _ip("-o", "netns", "list", check=False)
    return [line.split()[0] for line in proc.stdout.splitlines() if line.strip()]


def _kill_pids_in(ns):
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


class _Terminated(BaseException):
    """SIGTERM or SIGHUP while the namespaces exist: unwinds like Ctrl-C."""


class VethPair:
    """Two namespaces and the veth pair between them; a context manager."""

    def __init__(self):
        pid = os.getpid()
        self.names = [f"{PREFIX}{pid}-0", f"{PREFIX}{pid}-1"]
        self.addrs = [f"{SUBNET}.1", f"{SUBNET}.2"]
        self.device = DEVICE
        self._made = []
        self._procs = []
        self._saved = {}

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

    def _build(self):
        cleanup_stale()
        for ns in self.names:
            _ip("netns", "add", ns)
            self._made.append(ns)
            _ip("-n", ns, "link", "set", "lo", "up")
        # Both ends are made inside the namespaces: nothing appears in the root namespace.
        _ip("-n", self.names[0], "link", "add", DEVICE, "type", "veth", "peer", "name", DEVICE,
            "netns", self.names[1])
        for ns, addr in zip(self.names, self.addrs):
            _ip("-n", ns, "addr", "add", f"{addr}/24", "dev", DEVICE)
            _ip("-n", ns, "link", "set", DEVICE, "up")
        self._wait_reachable()

    def _wait_reachable(self, timeout=10.0):
        """Until both ends are up (the carrier reaches a veth end a moment after `link set
        up`, and UCX skips a device that is not up yet) and node 0 reaches node 1: a
        connection to a closed port is refused (an answer)."""
        deadline = time.monotonic() + timeout
        for ns in self.names:
            while "state UP" not in _ip("-n", ns, "-o", "link", "show", "dev", DEVICE).stdout:
                if time.monotonic() > deadline:
                    raise NetnsError(f"{DEVICE} of {ns} is not up after {timeout:.0f} s")
                time.sleep(0.05)
        probe = ("import errno, socket, sys\n"
                 "s = socket.socket(); s.settimeout(1)\n"
                 "sys.exit(0 if s.connect_ex((sys.argv[1], 9)) in (0, errno.ECONNREFUSED) else 1)\n")
        while subprocess.run(["ip", "netns", "exec", self.names[0], sys.executable, "-c", probe, self.addrs[1]],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
            if time.monotonic() > deadline:
                raise NetnsError(f"{self.names[0]} cannot reach {self.addrs[1]} after {timeout:.0f} s")
            time.sleep(0.1)

    def popen(self, node, cmd, env=None, **kwargs):
        """Starts cmd (a list) in namespace `node` (0 or 1), in a session of its own (so a
        Ctrl-C reaches only this process, which then tears everything down)."""
        proc = subprocess.Popen(["ip", "netns", "exec", self.names[node], *cmd], env=env,
                                start_new_session=True, **kwargs)
        self._procs.append(proc)
        return proc

    def close(self):
        """Kills what runs in the namespaces and deletes them (idempotent)."""
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
