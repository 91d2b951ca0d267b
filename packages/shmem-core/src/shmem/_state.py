"""The runtime state of the binding that ``shmem._pyshmem`` and ``shmem.core`` both read,
in one module beneath them (the names here are for the package's own modules):

* the active instance as ``(id, number of PEs)``, cached for the checks of the hot paths:
  asked of the library once, then kept until a call of ``shmem._pyshmem`` that can change
  the active instance (init, finalize, switching) calls :func:`instance_changed`;
* the calling thread's last-error buffer of the library (:func:`last_error_flag`);
* whether the user installed a logger of their own (``shmem._pyshmem.set_extern_logger``),
  which shmem.core's route of the library's lines into :mod:`logging` never replaces.
"""

import itertools
import threading

from . import _native

__all__ = ["active_state", "active_instance", "instance_changed", "last_error_flag", "user_logger_set"]

#: ``(instance id, number of PEs)`` of the active instance once asked, or None: read it as
#: ``_state.active_state or _state.active_instance()`` (one attribute read on the hot path).
active_state = None

#: Whether the user installed a logger of their own with shmem.set_extern_logger.
user_logger_set = False

# The generation keeps a thread that asked the library before a change of the active
# instance from storing its outdated answer after it.
_generations = itertools.count()
_generation = next(_generations)


def instance_changed() -> None:
    """Drops the cached active instance (after init, finalize or a switch)."""
    global active_state, _generation
    _generation = next(_generations)
    active_state = None


def active_instance():
    """``(instance id, number of PEs)`` of the active, initialised instance, or None.

    Cached: only the calls of shmem._pyshmem that change the active instance refresh it (a
    program that switches instances through its own cffi binding must not rely on it).
    In a kernel or stream-worker thread the library acts on that stream's instance, which
    may differ; the library's own checks still apply there."""
    state = active_state
    if state is not None:
        return state
    return _refresh()


def _refresh():
    global active_state
    generation = _generation
    ffi, lib = _native.load()
    p = lib.aclshmemx_instance_ctx_get()
    if p == ffi.NULL or lib.aclshmemx_init_status() != lib.ACLSHMEM_STATUS_IS_INITIALIZED:
        return None
    state = (int(p.id), int(lib.aclshmem_n_pes()))
    if state[1] <= 0:
        return None
    if generation == _generation:
        active_state = state
    return state


_thread_state = threading.local()


def last_error_flag():
    """This thread's last-error buffer of libaclshmem as a ``uint8_t *``: its first byte is 0
    while there is no message.  Writing 0 there is what ``aclshmemx_clear_last_error`` does,
    and reading it tells whether a void call failed, without a call into the library: the
    success path of a checked call then costs one foreign call, not three (clear, call, get).
    (``aclshmemx_get_last_error`` returns the calling thread's own buffer, the same one for
    the thread's whole life: aclshmem/init.h.)"""
    try:
        return _thread_state.error_flag
    except AttributeError:
        ffi, lib = _native.load()
        flag = _thread_state.error_flag = ffi.cast("uint8_t *", lib.aclshmemx_get_last_error())
        return flag
