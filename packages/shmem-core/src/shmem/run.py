"""``python -m shmem.run -n N [options] prog.py [args...]``: run an N-PE job here.

The launcher makes the job's unique ID, then starts N copies of the program (each a
PE) with the environment that ``shmem.core.init(mem_size=...)`` reads (see
``shmem._bootstrap``), so the program needs no uid, rank or PE count.  ``-m module``
runs a module instead of a script, as ``python -m`` does.

``oshrun``, ``shmemrun`` and ``aclshmemrun`` (console scripts of shmem-core,
:func:`oshrun_main`) are this launcher for any program: ``oshrun -np N prog [args...]``
starts the executable ``prog`` itself (a C OpenSHMEM program, whose ``shmem_init()``
reads the same environment, or ``python3 script.py``), with the same options.  ``-np``
is accepted for ``-n`` by both.  The C library installs a C launcher of the same names
and options for machines without Python; on several nodes it hands the job to this one.

* Every line a PE prints is prefixed with ``[PE i]`` (``--no-prefix`` turns it off);
  stdout stays stdout and stderr stays stderr.
* ``--bind-to core`` binds PE i of the node to one CPU, the (i mod k)-th of the k CPUs the
  launcher may use (Open MPI's option of the same name); the default, ``none``, leaves the
  PEs free, which suits more PEs than CPUs and PEs with threads of their own (torch).
  Bound one to a CPU, the PEs' waits spin instead of yielding the CPU.
* SIGINT and SIGTERM are passed on to every PE.
* Unless RANK is set already, every PE also gets torchrun's variables (RANK, WORLD_SIZE,
  LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT: loopback and a free port; with
  ``--nnodes``, ``--master-addr`` and ``--master-port`` + 1), so
  ``torch.distributed.init_process_group("shmem")`` (or any backend) works as under torchrun.
* When a PE fails (non-zero exit), the others are stopped (SIGTERM, then SIGKILL
  after ``--kill-grace`` seconds) and the launcher exits with that PE's status.  A PE
  killed by signal S counts as status 128 + S.  ``--timeout`` stops the whole job.
* The exit status is that of the first PE that failed, or 0.
* When ``SHMEM_JOB_SECRET`` is not set, the PEs get a fresh random one, so a program that
  initialises in DEFAULT mode (``ip_port = "tcp://host:port"``) is authenticated too.

Several nodes: start one launcher on each node, with the same ``--nnodes``, ``-n`` (PEs
per node), ``--master-addr``, ``--master-port`` and ``SHMEM_JOB_SECRET``::

    SHMEM_JOB_SECRET=... python -m shmem.run --nnodes 2 --node-rank 0 \\
        --master-addr 10.0.0.1 --master-port 29500 -n 4 prog.py      # on 10.0.0.1
    SHMEM_JOB_SECRET=... python -m shmem.run --nnodes 2 --node-rank 1 \\
        --master-addr 10.0.0.1 --master-port 29500 -n 4 prog.py      # on another node

* PE numbers are node-major: node R runs PEs R*n .. R*n+n-1 of N*n.
* Node 0's launcher must run on the host of ``--master-addr``.  It makes the unique ID,
  with PE 0 listening on the master address (unless ``SHMEM_UID_SESSION_ID`` or
  ``SHMEM_UID_SOCK_IFNAME`` choose otherwise), and serves it on master-addr:master-port
  to the other nodes' launchers that prove they hold ``SHMEM_JOB_SECRET`` (the
  HMAC-SHA256 exchange of ``shmem._uid_exchange``, also used under torchrun without torch);
  the unique ID travels encrypted.  ``SHMEM_JOB_SECRET`` must be set, to the same
  private value on every node: without it the launcher refuses to start.
* The other launchers try to fetch it for ``--join-timeout`` seconds (default
  ``SHMEM_UID_EXCHANGE_TIMEOUT``, or 120); node 0 stops its PEs when a node has not
  joined by then.  Either way the launcher says what went wrong and exits with status 1.
* Each launcher supervises its own PEs as above; a failure on one node reaches the
  others through the library (their PEs lose PE 0 or their peers and fail).
"""

import argparse
import os
import secrets
import signal
import subprocess
from typing import BinaryIO, List, Mapping, Optional, Sequence, Union
import sys
import threading
import time

from . import __version__, _bootstrap, _sizes, _uid_exchange

__all__ = ["main", "oshrun_main", "launch", "LaunchError"]


BIND_CHOICES = ("none", "core")


class LaunchError(RuntimeError):
    """The job could not be set up (nodes did not join, bad multi-node setup)."""


def _port(text):
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port {port} is not in 1..65535")
    return port


def _host(text):
    host = text.strip()
    if host.startswith("[") and host.endswith("]"):  # [ipv6]
        host = host[1:-1]
    if not host:
        raise argparse.ArgumentTypeError("the master address is empty")
    return host


def _parse_args(argv, prog="python -m shmem.run", any_program=False):
    """The parsed command line of ``prog``: ``python -m shmem.run`` (the program is a Python
    script) or, with ``any_program``, ``oshrun`` (the program is any executable)."""
    what = "any program: an executable such as a C OpenSHMEM program, or python3 script.py" if any_program \
        else "a Python script"
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Run N processing elements (PEs) of a SHMEM program on this machine, or N on each "
                    f"of several nodes (--nnodes, one launcher per node). The program is {what}.",
    )
    parser.add_argument("-n", "-np", "--npes", "--nproc", "--nproc-per-node", dest="npes", type=int, required=True,
                        help="number of PEs to start (on this node)")
    parser.add_argument("--mem-size", default=None,
                        help="default symmetric heap size of init() when the program passes none "
                             "(bytes, or with a K/M/G suffix)")
    parser.add_argument("--timeout", type=float, default=None,
                        help="stop the job after this many seconds (exit status 124)")
    parser.add_argument("--kill-grace", type=float, default=3.0,
                        help="seconds between SIGTERM and SIGKILL when stopping PEs (default 3)")
    parser.add_argument("--no-prefix", action="store_true", help="do not prefix output lines with [PE i]")
    parser.add_argument("--bind-to", choices=BIND_CHOICES, default="none",
                        help="core: PE i of this node on the (i mod k)-th of the k CPUs the launcher may use; "
                             "none: unbound (default)")
    parser.add_argument("-m", dest="module", default=None, help="run a module (like python -m)")
    parser.add_argument("--version", action="version", version=f"%(prog)s (shmem-core {__version__}, "
                        "the launcher of libaclshmem's jobs)")
    multi = parser.add_argument_group(
        "several nodes", "Start one launcher per node with the same --nnodes, -n, --master-addr, "
        "--master-port and SHMEM_JOB_SECRET (required, the same private value on every node). PEs are "
        "numbered node-major: node R runs PEs R*n .. R*n+n-1.")
    multi.add_argument("--nnodes", type=int, default=1, help="number of nodes (default 1)")
    multi.add_argument("--node-rank", "--node_rank", dest="node_rank", type=int, default=0,
                       help="this node's number, 0..nnodes-1 (default 0); node 0 runs on the master address")
    multi.add_argument("--master-addr", "--master_addr", dest="master_addr", type=_host, default=None,
                       help="node 0's address, reachable from every node: node 0's launcher serves the "
                            "job's unique ID there, and PE 0 listens there")
    multi.add_argument("--master-port", "--master_port", dest="master_port", type=_port, default=None,
                       help="the port on the master address where node 0's launcher serves the unique ID")
    multi.add_argument("--join-timeout", type=float, default=None,
                       help="seconds the nodes have to join (to fetch the unique ID from node 0) before "
                            "the launchers give up (default: SHMEM_UID_EXCHANGE_TIMEOUT, or 120)")
    parser.add_argument("program", nargs="?", help="the executable every PE runs" if any_program
                        else "the Python script every PE runs")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments of the program")
    ns = parser.parse_args(argv)
    if ns.npes < 1:
        parser.error("-n must be at least 1")
    if ns.nnodes < 1:
        parser.error("--nnodes must be at least 1")
    if not 0 <= ns.node_rank < ns.nnodes:
        parser.error(f"--node-rank must be in 0..{ns.nnodes - 1} (--nnodes {ns.nnodes}), not {ns.node_rank}")
    if ns.join_timeout is not None and not 0 < ns.join_timeout <= threading.TIMEOUT_MAX:
        parser.error(f"--join-timeout must be a positive number of seconds, at most {threading.TIMEOUT_MAX:g}")
    if ns.nnodes > 1:
        missing = [opt for opt, value in (("--master-addr", ns.master_addr), ("--master-port", ns.master_port))
                   if value is None]
        if missing:
            parser.error(f"--nnodes {ns.nnodes} needs {' and '.join(missing)}: where node 0's launcher "
                         "serves the job's unique ID to the other nodes")
        if not os.environ.get(_bootstrap.ENV_JOB_SECRET):
            parser.error(_NO_SECRET)
    if ns.module is None and ns.program is None:
        parser.error(f"name a program ({'prog' if any_program else 'prog.py'}) or a module (-m module)")
    if ns.module is not None and ns.program is not None:
        ns.args = [ns.program] + ns.args
        ns.program = None
    if ns.mem_size is not None:
        try:
            _sizes.parse_size(ns.mem_size)
        except ValueError as exc:
            parser.error(str(exc))
    return ns


_NO_SECRET = (
    f"a job on several nodes needs {_bootstrap.ENV_JOB_SECRET}, the same private value on every node: "
    "node 0's launcher hands the job's unique ID only to launchers that prove they hold it. "
    f"Set it, e.g. export {_bootstrap.ENV_JOB_SECRET}=$(openssl rand -hex 32), and pass it to every node "
    "by a private channel")


def _context(nnodes, npes, master_port):
    """The public name of a multi-node job's unique-ID exchange (launchers of another job
    shape, or of another job on the port, are not served)."""
    return f"shmem.run|nodes={nnodes}|pes-per-node={npes}|port={master_port}"


def _roles(node_rank, nnodes, npes, master_port):
    return _uid_exchange.Roles(
        f"node {node_rank}'s launcher", "node 0's launcher", "the nodes",
        f"Is node 0's launcher running on the host of --master-addr, reachable from here, with the same "
        f"--nnodes {nnodes}, -n {npes} and --master-port {master_port}?",
        "Choose a free --master-port (the same on every node)")


def _address_text(host, port):
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class _Output:
    """Copies a PE's pipe to our stream, line by line, with a prefix."""

    def __init__(self, pipe, sink, prefix, lock):
        self.thread = threading.Thread(target=self._pump, args=(pipe, sink, prefix, lock), daemon=True)
        self.thread.start()

    @staticmethod
    def _pump(pipe, sink, prefix, lock):
        try:
            for line in iter(pipe.readline, b""):
                if not line.endswith(b"\n"):
                    line += b"\n"
                with lock:
                    try:
                        sink.write(prefix + line)
                        sink.flush()
                    except (OSError, ValueError):
                        pass
        finally:
            pipe.close()


def _status(returncode):
    return 128 - returncode if returncode < 0 else returncode


def _signal_group(proc, sig):
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _note(err, lock, text, name="shmem.run"):
    with lock:
        try:
            err.write(f"{name}: {text}\n".encode())
            err.flush()
        except (OSError, ValueError):
            pass


def _serve_uid(npes, nnodes, master_addr, master_port, secret, join_timeout, err, lock, name):
    """Node 0: makes the unique ID (PE 0 on the master address) and serves it to the other
    nodes' launchers.  Returns (uid bytes, server)."""
    from . import _pyshmem

    if not _bootstrap.master_is_local(master_addr):
        raise LaunchError(
            f"--master-addr {master_addr} is not an address of this host (or network namespace), but node "
            "0's launcher serves the unique ID there: run node 0 on the host of the master address, or give "
            "that host's address the other nodes reach it at")
    session, note = _bootstrap.uid_address(master_addr, multi_node=True, what="--master-addr")
    if note:
        _note(err, lock, "note: " + note, name)
    uid = _bootstrap.make_uid_at(_pyshmem.aclshmem_get_unique_id, session)
    try:
        server = _uid_exchange.SecretUidServer(
            uid, nnodes, master_addr, master_port, _context(nnodes, npes, master_port), secret,
            join_timeout, roles=_roles(0, nnodes, npes, master_port))
    except _bootstrap.BootstrapError as exc:
        raise LaunchError(str(exc)) from None
    return uid, server


def _fetch_uid(npes, nnodes, node_rank, master_addr, master_port, secret, join_timeout):
    """Node R > 0: the unique ID from node 0's launcher."""
    try:
        return _uid_exchange.fetch_uid(node_rank, master_addr, master_port, _context(nnodes, npes, master_port),
                                       secret, join_timeout, roles=_roles(node_rank, nnodes, npes, master_port))
    except _bootstrap.BootstrapError as exc:
        raise LaunchError(str(exc)) from None


def _free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(npes: int, command: Sequence[str], *, mem_size: Union[int, str, None] = None,
           timeout: Optional[float] = None, kill_grace: float = 3.0, prefix: bool = True,
           env: Optional[Mapping[str, str]] = None, stdout: Optional[BinaryIO] = None,
           stderr: Optional[BinaryIO] = None, nnodes: int = 1, node_rank: int = 0,
           master_addr: Optional[str] = None, master_port: Optional[int] = None,
           join_timeout: Optional[float] = None, name: str = "shmem.run", bind_to: str = "none") -> int:
    """Runs ``command`` (a list) as ``npes`` PEs; returns the job's exit status.
    ``name`` starts the launcher's own lines on standard error.

    With ``nnodes`` > 1 this is node ``node_rank`` of the job: it runs global PEs
    node_rank*npes .. node_rank*npes+npes-1 of nnodes*npes, and gets the unique ID from
    node 0's launcher on ``master_addr:master_port`` (node 0 makes and serves it).
    ``SHMEM_JOB_SECRET`` must be set in ``env`` (or the environment).  ``bind_to``
    "core" binds each PE to one CPU (see ``--bind-to``).  Raises LaunchError when the
    nodes cannot form the job, ValueError for a ``bind_to`` other than "none" or "core"."""
    if bind_to not in BIND_CHOICES:
        raise ValueError(f"bind_to must be one of {', '.join(BIND_CHOICES)}, not {bind_to!r}")
    base_env = dict(os.environ if env is None else env)
    out = stdout if stdout is not None else sys.stdout.buffer
    err = stderr if stderr is not None else sys.stderr.buffer
    lock = threading.Lock()
    if not 0 <= node_rank < nnodes:
        raise LaunchError(f"node_rank must be in 0..{nnodes - 1}, not {node_rank}")
    server = None
    join_deadline = None
    if nnodes > 1:
        secret = base_env.get(_bootstrap.ENV_JOB_SECRET)
        if not secret:
            raise LaunchError(_NO_SECRET)
        if master_addr is None or master_port is None:
            raise LaunchError("a job on several nodes needs master_addr and master_port")
        if join_timeout is None:
            try:
                join_timeout = _bootstrap.exchange_timeout()
            except _bootstrap.BootstrapError as exc:
                raise LaunchError(str(exc)) from None
        if node_rank == 0:
            uid, server = _serve_uid(npes, nnodes, master_addr, master_port, secret, join_timeout, err, lock,
                                     name)
            join_deadline = time.monotonic() + join_timeout
        else:
            uid = _fetch_uid(npes, nnodes, node_rank, master_addr, master_port, secret, join_timeout)
    else:
        from . import _pyshmem

        uid = _pyshmem.aclshmem_get_unique_id()
    if "RANK" not in base_env:  # torch.distributed's env:// rendezvous, as torchrun sets it
        base_env.setdefault("MASTER_ADDR", master_addr if nnodes > 1 else "127.0.0.1")
        base_env.setdefault("MASTER_PORT", str(master_port + 1 if nnodes > 1 else _free_port()))
    try:
        return _run_pes(npes, command, uid, base_env, node_rank * npes, nnodes * npes, mem_size, timeout,
                        kill_grace, prefix, out, err, lock, server, join_deadline, join_timeout,
                        None if server is None else _address_text(master_addr, master_port), name,
                        _cpus_to_bind(bind_to))
    finally:
        if server is not None:
            server.close()


def _cpus_to_bind(bind_to):
    """The CPUs PE i of the node is bound to in turn (i mod their count), or None: unbound."""
    if bind_to == "none":
        return None
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError) as exc:
        raise LaunchError(f"--bind-to {bind_to}: cannot read the CPUs this launcher may use ({exc})") from None


def _start_pe(command, env, cpu):
    """Popen of one PE; bound to cpu (unless None) by binding this thread while it forks
    (a child inherits its parent thread's CPUs), which leaves the launcher's other threads,
    the output pumps, as they are."""
    saved = None
    if cpu is not None:
        saved = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {cpu})
    try:
        return subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
    finally:
        if saved is not None:
            os.sched_setaffinity(0, saved)


def _run_pes(npes, command, uid, base_env, first_pe, total, mem_size, timeout, kill_grace, prefix, out, err,
             lock, server, join_deadline, join_timeout, join_where, name, cpus):
    base_env.setdefault("PYTHONUNBUFFERED", "1")
    base_env[_bootstrap.ENV_UID] = uid.hex()
    base_env[_bootstrap.ENV_NPES] = str(total)
    if not base_env.get("SHMEM_JOB_SECRET"):  # DEFAULT-mode (tcp://) init needs one
        base_env["SHMEM_JOB_SECRET"] = secrets.token_hex(32)
    if mem_size is not None:
        base_env[_bootstrap.ENV_MEM_SIZE] = str(_sizes.parse_size(mem_size))

    procs = []
    pumps = []
    received = []  # signals to pass on

    def on_signal(signum, _frame):
        received.append(signum)
        for p in procs:
            if p.poll() is None:
                _signal_group(p, signum)

    old_handlers = {}
    if threading.current_thread() is threading.main_thread():
        for s in (signal.SIGINT, signal.SIGTERM):
            old_handlers[s] = signal.signal(s, on_signal)
    try:
        for rank in range(first_pe, first_pe + npes):
            penv = dict(base_env)
            penv[_bootstrap.ENV_PE] = str(rank)
            if "RANK" not in base_env:
                penv.update(RANK=str(rank), WORLD_SIZE=str(total), LOCAL_RANK=str(rank - first_pe),
                            LOCAL_WORLD_SIZE=str(npes))
            width = len(str(total - 1))
            tag = f"[PE {rank:>{width}}] ".encode() if prefix else b""
            local = rank - first_pe
            proc = _start_pe(command, penv, None if cpus is None else cpus[local % len(cpus)])
            procs.append(proc)
            pumps.append(_Output(proc.stdout, out, tag, lock))
            pumps.append(_Output(proc.stderr, err, tag, lock))

        deadline = None if timeout is None else time.monotonic() + timeout
        first_failure = None
        stopping_since = None
        refusals_told = 0
        while True:
            running = [p for p in procs if p.poll() is None]
            if first_failure is None:
                for index, p in enumerate(procs):
                    if p.returncode not in (None, 0):
                        first_failure = (first_pe + index, _status(p.returncode))
                        break
            if not running:
                break
            now = time.monotonic()
            if server is not None:
                refused = list(server.refused)
                for where, node in refused[refusals_told:3]:
                    _note(err, lock, f"refused a launcher at {where} that asked to join as node {node}: it "
                                     f"does not hold this job's {_bootstrap.ENV_JOB_SECRET}", name)
                refusals_told = max(refusals_told, min(len(refused), 3))
                if server.all_served.is_set():
                    server.close()  # every node has the unique ID: free the master port
                    server = None
                elif first_failure is None and stopping_since is None and now > join_deadline:
                    missing = [str(r) for r in range(1, server.world_size) if r not in server.served]
                    why = ""
                    if refused:
                        why = (f" ({len(refused)} attempt(s) without this job's {_bootstrap.ENV_JOB_SECRET} "
                               "were refused)")
                    if server.displaced or server.turned_away:
                        why += (f" ({server.displaced + server.turned_away} connection(s) that sent nothing were "
                                "closed to make room: is the port flooded?)")
                    _note(err, lock, f"node(s) {', '.join(missing)} did not join within {join_timeout:g} s: "
                                     f"they fetch the unique ID from this launcher on "
                                     f"{join_where}{why}; stopping the job", name)
                    first_failure = (-1, 1)
            if stopping_since is None and (first_failure is not None or received
                                           or (deadline is not None and now > deadline)):
                if first_failure is None and not received:
                    _note(err, lock, f"timeout after {timeout:g} s, stopping the job", name)
                    first_failure = (-1, 124)
                elif first_failure is not None and first_failure[0] >= 0 and not received:
                    _note(err, lock, f"PE {first_failure[0]} exited with status {first_failure[1]}; stopping "
                                     "the other PEs", name)
                stopping_since = now
                if not received:  # (a received signal was passed on already)
                    for p in running:
                        _signal_group(p, signal.SIGTERM)
            if stopping_since is not None and now - stopping_since > kill_grace:
                for p in running:
                    _signal_group(p, signal.SIGKILL)
            time.sleep(0.02)
        for pump in pumps:
            pump.thread.join(timeout=5)
        if first_failure is not None:
            return first_failure[1]
        if received:
            return 128 + received[0]
        return 0
    finally:
        for p in procs:
            if p.poll() is None:
                _signal_group(p, signal.SIGKILL)
                p.wait()
        for s, h in old_handlers.items():
            signal.signal(s, h)


def _launch_parsed(ns, command, name):
    try:
        return launch(ns.npes, command, mem_size=ns.mem_size, timeout=ns.timeout,
                      kill_grace=ns.kill_grace, prefix=not ns.no_prefix, nnodes=ns.nnodes,
                      node_rank=ns.node_rank, master_addr=ns.master_addr, master_port=ns.master_port,
                      join_timeout=ns.join_timeout, name=name, bind_to=ns.bind_to)
    except (OSError, RuntimeError, ValueError) as exc:
        sys.stderr.write(f"{name}: {exc}\n")
        return 1
    except KeyboardInterrupt:  # while waiting for node 0, before any PE started
        sys.stderr.write(f"{name}: interrupted\n")
        return 128 + signal.SIGINT


def main(argv: Optional[List[str]] = None) -> int:
    """``python -m shmem.run``: every PE runs a Python script (or ``-m module``) with this Python."""
    ns = _parse_args(sys.argv[1:] if argv is None else argv)
    if ns.module is not None:
        command = [sys.executable, "-m", ns.module] + ns.args
    else:
        command = [sys.executable, ns.program] + ns.args
    return _launch_parsed(ns, command, "shmem.run")


def oshrun_main(argv: Optional[List[str]] = None, prog: Optional[str] = None) -> int:
    """``oshrun -np N prog [args...]`` (also ``shmemrun`` and ``aclshmemrun``): every PE runs
    the executable ``prog`` as it is (``-m module`` still runs a module with this Python).
    ``prog`` names the launcher in its messages (default: how it was called)."""
    name = prog or os.path.basename(sys.argv[0]) or "oshrun"
    ns = _parse_args(sys.argv[1:] if argv is None else argv, prog=name, any_program=True)
    if ns.module is not None:
        command = [sys.executable, "-m", ns.module] + ns.args
    else:
        command = [ns.program] + ns.args
    return _launch_parsed(ns, command, name)


if __name__ == "__main__":
    sys.exit(main())
