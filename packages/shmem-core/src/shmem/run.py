"""``python -m shmem.run -n N [options] prog.py [args...]``: run an N-PE job here.

The launcher makes the job's unique ID, then starts N copies of the program (each a
PE) with the environment that ``shmem.core.init(mem_size=...)`` reads (see
``shmem._bootstrap``), so the program needs no uid, rank or PE count.  ``-m module``
runs a module instead of a script, as ``python -m`` does.

* Every line a PE prints is prefixed with ``[PE i]`` (``--no-prefix`` turns it off);
  stdout stays stdout and stderr stays stderr.
* SIGINT and SIGTERM are passed on to every PE.
* When a PE fails (non-zero exit), the others are stopped (SIGTERM, then SIGKILL
  after ``--kill-grace`` seconds) and the launcher exits with that PE's status.  A PE
  killed by signal S counts as status 128 + S.  ``--timeout`` stops the whole job.
* The exit status is that of the first PE that failed, or 0.
* When ``SHMEM_JOB_SECRET`` is not set, the PEs get a fresh random one, so a program that
  initialises in DEFAULT mode (``ip_port = "tcp://host:port"``) is authenticated too.
"""

import argparse
import os
import secrets
import signal
import subprocess
import sys
import threading
import time

from . import _bootstrap

__all__ = ["main", "launch"]


def _parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="python -m shmem.run",
        description="Run N processing elements (PEs) of a SHMEM program on this machine.",
    )
    parser.add_argument("-n", "--npes", "--nproc", dest="npes", type=int, required=True,
                        help="number of PEs to start")
    parser.add_argument("--mem-size", default=None,
                        help="default symmetric heap size of init() when the program passes none "
                             "(bytes, or with a K/M/G suffix)")
    parser.add_argument("--timeout", type=float, default=None,
                        help="stop the job after this many seconds (exit status 124)")
    parser.add_argument("--kill-grace", type=float, default=3.0,
                        help="seconds between SIGTERM and SIGKILL when stopping PEs (default 3)")
    parser.add_argument("--no-prefix", action="store_true", help="do not prefix output lines with [PE i]")
    parser.add_argument("-m", dest="module", default=None, help="run a module (like python -m)")
    parser.add_argument("program", nargs="?", help="the Python script every PE runs")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments of the program")
    ns = parser.parse_args(argv)
    if ns.npes < 1:
        parser.error("-n must be at least 1")
    if ns.module is None and ns.program is None:
        parser.error("name a program (prog.py) or a module (-m module)")
    if ns.module is not None and ns.program is not None:
        ns.args = [ns.program] + ns.args
        ns.program = None
    if ns.mem_size is not None:
        try:
            _bootstrap.parse_size(ns.mem_size)
        except ValueError as exc:
            parser.error(str(exc))
    return ns


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


def launch(npes, command, *, mem_size=None, timeout=None, kill_grace=3.0, prefix=True,
           env=None, stdout=None, stderr=None):
    """Runs ``command`` (a list) as ``npes`` PEs; returns the job's exit status."""
    from . import _pyshmem

    uid = _pyshmem.aclshmem_get_unique_id()
    base_env = dict(os.environ if env is None else env)
    base_env.setdefault("PYTHONUNBUFFERED", "1")
    base_env[_bootstrap.ENV_UID] = uid.hex()
    base_env[_bootstrap.ENV_NPES] = str(npes)
    if not base_env.get("SHMEM_JOB_SECRET"):  # DEFAULT-mode (tcp://) init needs one
        base_env["SHMEM_JOB_SECRET"] = secrets.token_hex(32)
    if mem_size is not None:
        base_env[_bootstrap.ENV_MEM_SIZE] = str(_bootstrap.parse_size(mem_size))
    out = stdout if stdout is not None else sys.stdout.buffer
    err = stderr if stderr is not None else sys.stderr.buffer
    lock = threading.Lock()

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
        for rank in range(npes):
            penv = dict(base_env)
            penv[_bootstrap.ENV_PE] = str(rank)
            width = len(str(npes - 1))
            tag = f"[PE {rank:>{width}}] ".encode() if prefix else b""
            proc = subprocess.Popen(
                command, env=penv, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
            )
            procs.append(proc)
            pumps.append(_Output(proc.stdout, out, tag, lock))
            pumps.append(_Output(proc.stderr, err, tag, lock))

        deadline = None if timeout is None else time.monotonic() + timeout
        first_failure = None
        stopping_since = None
        while True:
            running = [p for p in procs if p.poll() is None]
            if first_failure is None:
                for rank, p in enumerate(procs):
                    if p.returncode not in (None, 0):
                        first_failure = (rank, _status(p.returncode))
                        break
            if not running:
                break
            now = time.monotonic()
            if stopping_since is None and (first_failure is not None or received
                                           or (deadline is not None and now > deadline)):
                if first_failure is None and not received:
                    with lock:
                        err.write(f"shmem.run: timeout after {timeout:g} s, stopping the job\n".encode())
                        err.flush()
                    first_failure = (-1, 124)
                elif first_failure is not None and first_failure[0] >= 0 and not received:
                    with lock:
                        err.write(f"shmem.run: PE {first_failure[0]} exited with status "
                                  f"{first_failure[1]}; stopping the other PEs\n".encode())
                        err.flush()
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


def main(argv=None):
    ns = _parse_args(sys.argv[1:] if argv is None else argv)
    if ns.module is not None:
        command = [sys.executable, "-m", ns.module] + ns.args
    else:
        command = [sys.executable, ns.program] + ns.args
    try:
        return launch(ns.npes, command, mem_size=ns.mem_size, timeout=ns.timeout,
                      kill_grace=ns.kill_grace, prefix=not ns.no_prefix)
    except (OSError, RuntimeError) as exc:
        sys.stderr.write(f"shmem.run: {exc}\n")
        return 1


if __name__ == "__main__":
    sys.exit(main())
