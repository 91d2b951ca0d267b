"""Running a module of this package as an N-PE job and reading what the PEs report.

The job is started with ``shmem.run.launch`` (shmem-core's launcher), so the PEs get the
unique ID, rank and PE count that ``shmem.core.init()`` reads.  A PE reports to the
parent by printing lines ``@shmem-tools <json>`` on stdout (``report()``); every other
line is passed through to the parent's stderr, prefixed ``[PE i]``, so that a failing
PE's traceback is seen.
"""

import importlib.util
import json
import os
import re
import sys
import threading

TAG = "@shmem-tools "
_PREFIX = re.compile(rb"^\[PE\s*(\d+)\] ")


def report(**record):
    """Inside a PE: hands ``record`` (JSON-able) to the parent."""
    sys.stdout.write(TAG + json.dumps(record, separators=(",", ":")) + "\n")
    sys.stdout.flush()


class _Sink:
    """The stdout of the job: tagged lines go to on_record(pe, dict), the rest to
    ``passthrough`` (or are kept in ``lines`` when it is None)."""

    def __init__(self, on_record, passthrough):
        self.on_record = on_record
        self.passthrough = passthrough
        self.lines = []
        self._lock = threading.Lock()

    def write(self, data):
        m = _PREFIX.match(data)
        pe = int(m.group(1)) if m else -1
        body = data[m.end():] if m else data
        text = body.decode("utf-8", "replace")
        if text.startswith(TAG):
            try:
                record = json.loads(text[len(TAG):])
            except ValueError:
                record = None
            if isinstance(record, dict):
                with self._lock:
                    self.on_record(pe, record)
                return len(data)
        with self._lock:
            self.lines.append(data.decode("utf-8", "replace"))
        if self.passthrough is not None:
            try:
                self.passthrough.write(data)
                self.passthrough.flush()
            except (OSError, ValueError):
                pass
        return len(data)

    def flush(self):
        pass


class JobResult:
    def __init__(self, status, records, output, error=None):
        self.status = status    # the launcher's exit status (124: timeout), or None if not started
        self.records = records  # [(pe, dict)] in arrival order
        self.output = output    # lines that were not records (stdout and stderr of the PEs)
        self.error = error      # why the job could not be started

    @property
    def ok(self):
        return self.status == 0


def _import_root(name):
    """The sys.path folder a top-level package is imported from, or None."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    return os.path.dirname(os.path.dirname(os.path.abspath(spec.origin)))


def run_module(npes, module, *, mem_size, timeout, env=None, on_record=None, echo=True, args=()):
    """Runs ``python -m module args...`` as ``npes`` PEs; returns a JobResult.

    ``on_record(pe, record)`` is called for each report as it arrives (from a reader
    thread).  With ``echo`` the PEs' other output is copied to our stderr."""
    records = []

    def collect(pe, record):
        records.append((pe, record))
        if on_record is not None:
            on_record(pe, record)

    passthrough = sys.stderr.buffer if echo and hasattr(sys.stderr, "buffer") else None
    out = _Sink(collect, passthrough)
    err = _Sink(collect, passthrough)
    full_env = dict(os.environ)
    # The PEs must import this package, shmem and their companions from where this
    # process found them (a source tree on sys.path works too).
    paths = []
    for name in ("shmem_tools", "shmem", "shmem_native", "shmem_torch"):
        folder = _import_root(name)
        if folder and folder not in paths:
            paths.append(folder)
    old = full_env.get("PYTHONPATH")
    full_env["PYTHONPATH"] = os.pathsep.join(paths + ([old] if old else []))
    full_env.setdefault("PYTHONUNBUFFERED", "1")
    full_env.update(env or {})
    try:
        from shmem.run import launch
    except Exception as exc:
        return JobResult(None, records, [], f"shmem-core's launcher (shmem.run) cannot be imported: {exc}")
    try:
        status = launch(npes, [sys.executable, "-m", module, *args], mem_size=mem_size, timeout=timeout,
                        kill_grace=2.0, prefix=True, env=full_env, stdout=out, stderr=err)
    except Exception as exc:
        return JobResult(None, records, out.lines + err.lines, f"{type(exc).__name__}: {exc}")
    return JobResult(status, records, out.lines + err.lines)
