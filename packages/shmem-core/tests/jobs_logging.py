"""PE jobs of test_logging.py: libaclshmem's log lines in Python's ``logging``.

Each job runs with ``init=False`` so that it can configure logging (or not) before
``core.init``, which is where the route is decided.  ``SHMEM_LOG_PATH`` points at a
folder of the test, so the library's default output (a file per process) can be read."""

import logging
import os
import threading

from shmem import _native, _pyshmem, core, testing
from shmem.core import _logbridge

MEM = 1 << 20


class ListHandler(logging.Handler):
    """Keeps every record it is given."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []

    def emit(self, record):
        self.records.append(record)


def _log_file_text():
    """What the library wrote to its default log file of this process."""
    path = os.path.join(os.environ["SHMEM_LOG_PATH"], f"shmem_{os.getpid()}.log")
    if not os.path.exists(path):
        return ""
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def _provoke_error():
    """A failing shmem.core call: the library logs its error at level ERROR."""
    try:
        core.set_instance(201)
    except core.AclshmemError as exc:
        return str(exc)
    raise AssertionError("set_instance(201) of an instance that does not exist did not fail")


def _error_on_a_stream_worker():
    """Runs a kernel whose library call fails, on a stream's worker thread (a thread the
    library made, not Python); returns that thread's id as the kernel saw it."""
    ffi, lib = _native.load()
    seen = []

    def kernel(block_idx, block_dim, arg):
        seen.append(threading.get_ident())
        lib.aclshmemx_set_log_level(99)  # fails: the library logs an ERROR from this thread

    fn = ffi.callback("aclshmemx_kernel_fn", kernel)
    with core.Stream() as stream:
        assert lib.aclshmemx_kernel_launch(ffi.cast("aclrtStream", stream.handle), fn, 1, ffi.NULL) == 0
        try:
            stream.synchronize()
        except core.AclshmemError as exc:  # the kernel's failure is the stream's error
            assert "level 99" in str(exc)
        else:
            raise AssertionError("the kernel's failing call was not reported")
    assert len(seen) == 1
    return seen[0]


def configured_by_basic_config():
    """logging.basicConfig (a handler on the root), as most programs configure logging:
    init's INFO lines, a failing call's ERROR and a worker thread's ERROR become records of
    the "shmem" logger; nothing goes to the library's log file."""
    handler = ListHandler()
    logging.basicConfig(level=logging.DEBUG, handlers=[handler])
    core.init(mem_size=MEM)
    assert _logbridge.installed()
    me, n = core.my_pe(), core.n_pes()
    message = _provoke_error()
    worker = _error_on_a_stream_worker()
    core.barrier_all()

    records = [r for r in handler.records if r.name == "shmem"]
    texts = [(r.levelno, r.getMessage()) for r in records]
    assert (logging.INFO, f"PE {me} of {n} initialized instance 0") in texts, texts
    errors = [r for r in records if r.levelno == logging.ERROR]
    assert any(r.getMessage() in message and "instance 201" in r.getMessage() for r in errors), texts
    on_worker = [r for r in errors if r.getMessage().startswith("aclshmemx_set_log_level: level 99")]
    assert len(on_worker) == 1 and on_worker[0].thread == worker != threading.get_ident(), texts
    assert all(r.levelname in ("DEBUG", "INFO", "WARNING", "ERROR") for r in records)
    assert _log_file_text() == "", "the library still wrote to its log file"
    return len(records)


def configured_on_the_shmem_logger():
    """A handler on the "shmem" logger only (the root stays unconfigured); the library's
    threshold (SHMEM_LOG_LEVEL, ERROR by default) still decides which lines exist, and the
    Python logger's level filters on top of it."""
    handler = ListHandler()
    log = logging.getLogger("shmem")
    log.addHandler(handler)
    log.setLevel(logging.ERROR)
    core.init(mem_size=MEM)
    assert _logbridge.installed()
    _provoke_error()
    # A WARN line of the library: initialising a live instance (other than 0) again.  The
    # default threshold (ERROR) drops it in the library, before Python sees it.
    uid = testing.broadcast(core.get_unique_id() if core.my_pe() == 0 else None)
    again = dict(uid=uid, rank=core.my_pe(), nranks=core.n_pes(), mem_size=MEM, instance_id=1)
    core.init(**again)                     # instance 1 (collective)
    core.init(**again)                     # its WARN is below the library's threshold
    assert _pyshmem.set_log_level(2) == 0  # now WARN lines exist ...
    core.init(**again)                     # ... but the "shmem" logger's level is ERROR
    log.setLevel(logging.WARNING)
    core.init(**again)                     # ... and now one reaches the handler
    assert _pyshmem.set_log_level(3) == 0
    core.barrier_all()

    texts = [(r.levelno, r.getMessage()) for r in handler.records]
    assert [lv for lv, _ in texts] == [logging.ERROR, logging.WARNING], texts
    assert "instance 201" in texts[0][1] and texts[1][1] == "instance 1 is already initialized", texts
    assert not logging.getLogger().handlers, "the root logger was configured"
    assert _log_file_text() == ""
    return texts


def not_configured():
    """No logging configuration: nothing is installed and the library's own output (its
    log file) is what it was; a handler added after init sees nothing of the library."""
    assert not logging.getLogger().handlers and not logging.getLogger("shmem").handlers
    core.init(mem_size=MEM)
    assert not _logbridge.installed()
    late = ListHandler()
    logging.getLogger().addHandler(late)
    message = _provoke_error()
    core.barrier_all()
    text = _log_file_text()
    assert "ACLSHMEM ERROR" in text and "instance 201" in text and "instance 201" in message, text
    assert late.records == []
    return True


def user_logger_kept():
    """A logger the user installed with shmem.set_extern_logger before init is not replaced
    by the route, even with logging configured."""
    lines = []
    assert _pyshmem.set_extern_logger(lambda level, msg: lines.append((level, msg))) == 0
    handler = ListHandler()
    logging.basicConfig(level=logging.DEBUG, handlers=[handler])
    core.init(mem_size=MEM)
    assert not _logbridge.installed()
    _provoke_error()
    core.barrier_all()
    assert any(level == 3 and "instance 201" in msg for level, msg in lines), lines
    assert [r for r in handler.records if r.name == "shmem"] == []
    return True


def handed_back_with_set_extern_logger_none():
    """After init routed the lines to Python, shmem.set_extern_logger(None) gives the
    library its own output back."""
    handler = ListHandler()
    logging.getLogger("shmem").addHandler(handler)
    core.init(mem_size=MEM)
    assert _logbridge.installed()
    assert _pyshmem.set_extern_logger(None) == 0
    _provoke_error()
    core.barrier_all()
    assert handler.records == []
    assert "instance 201" in _log_file_text()
    return True

