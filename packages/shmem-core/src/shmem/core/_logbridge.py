"""libaclshmem's log lines in Python's :mod:`logging`.

By default the library writes its log lines to a file (``SHMEM_LOG_PATH``) or to stdout
(``SHMEM_LOG_TO_STDOUT=1``).  A Python program that configured :mod:`logging` expects
them where its other records go, so :func:`shmem.core.init` routes them there when the
logger ``"shmem"`` is configured at that moment: it, or an ancestor (the root logger of
``logging.basicConfig``), has a handler, or it has a level of its own.  The route is the
library's extern logger (``aclshmemx_set_extern_logger``); each line becomes a record of
the ``"shmem"`` logger, at the Python level matching the library's (debug, info, warn,
error, fatal -> DEBUG, INFO, WARNING, ERROR, CRITICAL).

* The library's own threshold still decides which lines exist (``SHMEM_LOG_LEVEL``,
  ``shmem.set_log_level``; ERROR by default); the Python logger then filters as usual.
* Without configured logging nothing is installed: the library's output is unchanged.
* A logger the user installed with ``shmem.set_extern_logger`` is never replaced, and
  ``shmem.set_extern_logger(None)`` after init puts the library's own output back.
* Lines come from any thread (the caller's, a stream's worker, the control plane's);
  cffi takes the GIL for the callback, which never lets an exception reach C.  The route
  stays until the interpreter exits: an ``atexit`` handler removes it while Python still
  runs, so no line can call into a finalising interpreter.
"""

import atexit
import logging
import sys
import threading

from .. import _pyshmem, _state

__all__ = ["LOGGER_NAME", "python_logging_configured", "install_if_configured", "installed"]

LOGGER_NAME = "shmem"

# The library's levels 0..4 (debug, info, warn, error, fatal), in order.
_PY_LEVELS = (logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR, logging.CRITICAL)

_lock = threading.Lock()
_installed = False
_logger = logging.getLogger(LOGGER_NAME)  # loggers live for good; no lookup per line


def python_logging_configured() -> bool:
    """Whether the ``"shmem"`` logger is configured: a level of its own, or a handler on it
    or on an ancestor it propagates to (``logging.basicConfig`` configures the root)."""
    return _logger.level != logging.NOTSET or _logger.hasHandlers()


def installed() -> bool:
    """Whether init routed the library's log lines to the ``"shmem"`` logger (False again
    once the user installed a logger of their own with ``shmem.set_extern_logger``)."""
    return _installed and not _user_logger_set()


def _python_level(level: int) -> int:
    return _PY_LEVELS[min(max(level, 0), len(_PY_LEVELS) - 1)]


def _emit(level: int, text: str) -> None:
    """The extern logger: one library line -> one record of the "shmem" logger.  Runs on
    the thread that logged, holding the GIL; must never raise into C."""
    try:
        if sys.is_finalizing():
            return
        py_level = _python_level(level)
        if not _logger.isEnabledFor(py_level):
            return
        _logger.log(py_level, text)  # no args: a '%' in the line is not a format
    except Exception:
        pass  # a handler's own errors went to logging's handleError already


def _user_logger_set() -> bool:
    """Whether the user called shmem.set_extern_logger (their choice is kept)."""
    return _state.user_logger_set


def install_if_configured() -> bool:
    """Routes the library's lines to the "shmem" logger if Python logging is configured for
    it and the user installed no logger of their own; returns whether the route is in
    place.  Called by init, before the library starts (so init's own lines arrive)."""
    global _installed
    with _lock:
        if _installed or _user_logger_set() or not python_logging_configured():
            return _installed
        _pyshmem.aclshmemx_set_extern_logger(_emit)  # (its C callback lives for good)
        _installed = True
        return True


@atexit.register
def _remove_at_exit() -> None:
    # Registered at import, before the user's atexit handlers (a late finalize among
    # them): it runs after them, so their lines still arrive, and before Python goes.
    global _installed
    with _lock:
        if _installed:  # (installing it loaded the library)
            try:
                _pyshmem.aclshmemx_set_extern_logger(None)
            except Exception:
                pass
        _installed = False
