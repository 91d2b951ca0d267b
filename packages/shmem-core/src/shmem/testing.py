"""Helpers for testing SHMEM programs: run a function on N PEs and collect the results.

    from shmem import core, testing

    def job(scale):                       # a module-level function (it is pickled)
        buf = core.buffer(8)
        ...
        return core.my_pe() * scale

    assert testing.run_pes(4, job, 10) == [0, 10, 20, 30]

``run_pes`` starts every PE as a fresh Python process (``sys.executable``) with the
same ``sys.path``, initialises the library in it (``core.init`` from the environment
the launcher would give, so ``init=False`` lets ``fn`` call ``core.init(mem_size=...)``
itself), runs ``fn(*args)``, finalises, and hands back the return values by rank.  When
a PE raises, the others are stopped after ``grace`` seconds and ``PEError`` is raised
with that PE's traceback; PEs still running after ``timeout`` seconds get their Python
stacks dumped (faulthandler) and are killed.

Inside a PE, ``testing.broadcast(obj, root=0)`` hands a picklable object from one PE to
the others (e.g. a unique ID for a second instance), and ``testing.pe()`` /
``testing.npes()`` tell the PE's rank and count without the library.
"""

import json
import os
import pickle
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from typing import Any, Callable, Dict, List, Mapping, NoReturn, Optional, Tuple, TypeVar

from . import _bootstrap

_R = TypeVar("_R")

__all__ = ["run_pes", "PEError", "broadcast", "pe", "npes", "exit_pe"]

ENV_DIR = "SHMEM_TESTING_DIR"
ENV_SYSPATH = "SHMEM_TESTING_SYSPATH"

_CHILD = (
    "import json, os, sys; "
    f"sys.path[:0] = json.loads(os.environ[{ENV_SYSPATH!r}]); "
    "from shmem.testing import _pe_main; _pe_main()"
)


class PEError(AssertionError):
    """A PE failed (raised, crashed or hung).  ``rank`` is the first PE that failed (-1 for
    a timeout), ``remote_traceback`` its traceback text and ``outputs`` every PE's
    (stdout, stderr)."""

    def __init__(self, message: str, rank: int = -1, remote_traceback: str = "",
                 outputs: Optional[Dict[int, Tuple[str, str]]] = None,
                 results: Optional[Dict[int, Tuple[str, Any]]] = None) -> None:
        super().__init__(message)
        self.rank = rank
        self.remote_traceback = remote_traceback
        self.outputs = outputs or {}
        self.results = results or {}


def _tail(text, lines=40):
    parts = text.rstrip("\n").splitlines()
    if len(parts) > lines:
        parts = ["..."] + parts[-lines:]
    return "\n".join(parts)


def _read(path):
    try:
        with open(path, "r", encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def _kill_group(proc, sig):
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def run_pes(n: int, fn: Callable[..., _R], *args: Any, timeout: float = 60.0, mem_size: int = 32 << 20,
            init: bool = True, env: Optional[Mapping[str, str]] = None, grace: float = 3.0,
            echo: bool = True) -> List[_R]:
    """Runs ``fn(*args)`` on ``n`` PEs and returns the list of return values by rank.

    ``mem_size`` is the symmetric heap of each PE when ``init`` is true.  ``env`` adds
    environment variables for the PEs.  With ``echo`` each PE's output is copied to this
    process's stdout/stderr, prefixed ``[PE i]``.  The PEs share a fresh random
    ``SHMEM_JOB_SECRET`` unless one is set.  Raises PEError when a PE fails."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"n must be a positive int, not {n!r}")
    try:
        payload = pickle.dumps((fn, args, {"init": bool(init), "mem_size": mem_size}))
    except Exception as exc:
        raise TypeError(f"run_pes: fn and its arguments must be picklable (a module-level function): {exc}") from None

    from . import _pyshmem

    uid = _pyshmem.aclshmem_get_unique_id()
    workdir = tempfile.mkdtemp(prefix="shmem-run-pes-")
    try:
        with open(os.path.join(workdir, "payload.pkl"), "wb") as f:
            f.write(payload)
        base = dict(os.environ)
        base.update(env or {})
        base[_bootstrap.ENV_UID] = uid.hex()
        base[_bootstrap.ENV_NPES] = str(n)
        if not base.get("SHMEM_JOB_SECRET"):  # DEFAULT-mode (tcp://) init needs one
            base["SHMEM_JOB_SECRET"] = secrets.token_hex(32)
        base[_bootstrap.ENV_MEM_SIZE] = str(mem_size)
        base[ENV_DIR] = workdir
        base[ENV_SYSPATH] = json.dumps([p for p in sys.path if isinstance(p, str)])
        base["PYTHONUNBUFFERED"] = "1"
        base["PYTHONFAULTHANDLER"] = "1"

        procs = []
        files = []
        for rank in range(n):
            penv = dict(base)
            penv[_bootstrap.ENV_PE] = str(rank)
            out = open(os.path.join(workdir, f"out-{rank}.txt"), "wb")
            err = open(os.path.join(workdir, f"err-{rank}.txt"), "wb")
            files += [out, err]
            procs.append(subprocess.Popen(
                [sys.executable, "-c", _CHILD], env=penv, stdin=subprocess.DEVNULL,
                stdout=out, stderr=err, start_new_session=True,
            ))
        for f in files:
            f.close()

        deadline = time.monotonic() + timeout
        results = {}
        failed = []  # ranks, in the order their failure was seen
        stop_at = None
        timed_out = []
        while True:
            for rank, p in enumerate(procs):
                if rank in results or p.poll() is None:
                    continue
                results[rank] = _load_result(workdir, rank, p.returncode)
                if results[rank][0] != "ok":
                    failed.append(rank)
                    if stop_at is None:
                        stop_at = time.monotonic() + grace
            running = [r for r, p in enumerate(procs) if r not in results]
            if not running:
                break
            now = time.monotonic()
            if stop_at is not None and now > stop_at:
                for r in running:
                    _kill_group(procs[r], signal.SIGKILL)
                for r in running:
                    procs[r].wait()
                    results[r] = ("killed", f"stopped after PE {failed[0]} failed")
                break
            if now > deadline:
                timed_out = running
                for r in running:  # ask for a stack dump first
                    _kill_group(procs[r], signal.SIGUSR1)
                time.sleep(1.0)
                for r in running:
                    _kill_group(procs[r], signal.SIGKILL)
                for r in running:
                    procs[r].wait()
                    results[r] = ("timeout", f"still running after {timeout:g} s; killed")
                break
            time.sleep(0.01)

        outputs = {r: (_read(os.path.join(workdir, f"out-{r}.txt")), _read(os.path.join(workdir, f"err-{r}.txt")))
                   for r in range(n)}
        if echo:
            _echo(outputs)
        if failed or timed_out:
            raise _failure(n, results, failed, timed_out, outputs, timeout)
        return [results[r][1] for r in range(n)]
    finally:
        for p in locals().get("procs", []):
            if p.poll() is None:
                _kill_group(p, signal.SIGKILL)
                p.wait()
        shutil.rmtree(workdir, ignore_errors=True)


def _load_result(workdir, rank, returncode):
    path = os.path.join(workdir, f"result-{rank}.pkl")
    try:
        with open(path, "rb") as f:
            status, value = pickle.load(f)
    except FileNotFoundError:
        how = f"killed by signal {-returncode}" if returncode < 0 else f"exit status {returncode}"
        return ("crashed", f"PE {rank} ended ({how}) without reporting a result")
    except Exception as exc:
        return ("error", f"PE {rank}'s result cannot be read: {exc}")
    if status == "ok" and returncode != 0:
        return ("crashed", f"PE {rank} returned a result but exited with status {returncode}")
    return (status, value)


def _echo(outputs):
    width = len(str(len(outputs) - 1))
    for r, (out, err) in sorted(outputs.items()):
        tag = f"[PE {r:>{width}}] "
        if out:
            sys.stdout.write("".join(tag + line + "\n" for line in out.rstrip("\n").split("\n")))
        if err:
            sys.stderr.write("".join(tag + line + "\n" for line in err.rstrip("\n").split("\n")))


def _failure(n, results, failed, timed_out, outputs, timeout):
    lines = []
    if failed:
        first = failed[0]
        status, text = results[first]
        lines.append(f"PE {first} of {n} failed ({status}):")
        lines.append(str(text).rstrip())
        first_tb = str(text)
    else:
        first = -1
        first_tb = ""
        lines.append(f"PE(s) {timed_out} of {n} did not finish within {timeout:g} s and were killed")
    for r in range(n):
        status = results.get(r, ("?", ""))[0]
        if r == first or status == "ok":
            continue
        lines.append(f"--- PE {r}: {status}")
        if status in ("error", "crashed", "timeout"):
            lines.append(_tail(str(results[r][1]), 15))
    for r in ([first] if first >= 0 else []) + list(timed_out):
        err = outputs.get(r, ("", ""))[1]
        if err.strip():
            lines.append(f"--- stderr of PE {r} (last lines):")
            lines.append(_tail(err))
    return PEError("\n".join(lines), first, first_tb, outputs, results)


# ---------------------------------------------------------------------------
# Inside a PE
# ---------------------------------------------------------------------------


def _write_result(rank, status, value):
    workdir = os.environ[ENV_DIR]
    try:
        data = pickle.dumps((status, value))
    except Exception as exc:
        data = pickle.dumps(("error", f"the return value of PE {rank} cannot be pickled: {exc!r}"))
    tmp = os.path.join(workdir, f"result-{rank}.pkl.tmp")
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, os.path.join(workdir, f"result-{rank}.pkl"))


def _pe_main():
    import faulthandler

    faulthandler.register(signal.SIGUSR1, all_threads=True)
    rank = pe()
    status, value = "ok", None
    try:
        with open(os.path.join(os.environ[ENV_DIR], "payload.pkl"), "rb") as f:
            fn, args, opts = pickle.load(f)
        if opts["init"]:
            from . import core

            core.init(mem_size=opts["mem_size"])
        value = fn(*args)
        if opts["init"]:
            from . import _pyshmem, core

            for _ in range(_pyshmem.ACLSHMEM_MAX_INSTANCES):  # whatever fn left initialised
                if _pyshmem.aclshmemx_init_status() != _pyshmem.InitStatus.INITIALIZED:
                    break
                core.finalize()
    except BaseException:
        status, value = "error", traceback.format_exc()
    try:
        _write_result(rank, status, value)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        # No interpreter teardown: a failed PE must not wait for anything, and a good one
        # has finalised already.
        os._exit(0 if status == "ok" else 1)


def exit_pe(value: object = None) -> NoReturn:
    """Inside run_pes: ends this PE at once, with ``value`` as its result, without
    finalising.  The other PEs see it die (the library reports the dead PE in their
    collectives), so a job whose PEs got out of step ends quickly instead of hanging."""
    _write_result(pe(), "ok", value)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def pe() -> int:
    """This PE's rank (from the environment run_pes / shmem.run set)."""
    return int(os.environ[_bootstrap.ENV_PE])


def npes() -> int:
    """The number of PEs of the job (from the environment)."""
    return int(os.environ[_bootstrap.ENV_NPES])


_broadcast_seq = [0]


def broadcast(obj: Any = None, root: int = 0, timeout: float = 60.0) -> Any:
    """Inside run_pes: returns ``obj`` of PE ``root`` on every PE (through files)."""
    workdir = os.environ.get(ENV_DIR)
    if not workdir:
        raise RuntimeError("testing.broadcast works only inside PEs started by testing.run_pes")
    seq = _broadcast_seq[0]
    _broadcast_seq[0] += 1
    path = os.path.join(workdir, f"bcast-{seq}.pkl")
    if pe() == root:
        tmp = f"{path}.tmp"
        with open(tmp, "wb") as f:
            pickle.dump(obj, f)
        os.replace(tmp, path)
        return obj
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise TimeoutError(f"broadcast #{seq}: nothing from PE {root} within {timeout:g} s")
        time.sleep(0.005)
    with open(path, "rb") as f:
        return pickle.load(f)
