"""``shmem._pyshmem``: the low-level API, one Python function per C function.

Pointers and streams are plain integers (0 is NULL, and stream 0 is the active
instance's default stream).  Functions return what the C function returns (result
codes are ints); the few exceptions to that rule are the ones the API reference
names: ``aclshmem_malloc``/``calloc``/``align`` raise ``RuntimeError`` when they
return NULL, the team splits and ``aclshmem_team_get_config`` raise ``RuntimeError``
on an error code (for the team splits it is ``shmem.core.AclshmemError``, a
``RuntimeError`` that carries the library's message and the code), and calls that
take a team raise ``ValueError`` for a team that is not alive.  The last error message of the calling thread is available from
``aclshmemx_get_last_error()``.

Every call goes through cffi, which releases the GIL for the duration of the C
call, so blocking calls (barriers, waits) do not stall other Python threads.

The typed and sized families (``aclshmem_int32_iput``, ``aclshmem_put64_nbi``,
``aclshmem_float_wait_until_any``, ``aclshmem_int64_atomic_fetch_add``, ...), put, get, the
signal calls and every other C function not written here by hand are generated from the
declarations of the public headers (``shmem._abi_build`` and ``shmem._ffi_build``, into the
committed modules ``_pyshmem_families`` and ``_pyshmem_coll_families``).  Their fast path is one
cffi call with the arguments as given (addresses as plain ints: see
``shmem._native.address_function``); only an argument that is not an int, or that cffi
refuses, goes through the checks that raise the errors described here.  Values of the 16-bit
floating-point types ``half`` and ``bfloat16`` are their bit patterns (ints 0..65535),
as in C (``aclshmem_half_t`` is a ``uint16_t``); ``shmem.core.atomic_fetch_add`` and
the other AMO calls of ``shmem.core`` take and return numbers instead.
"""

from __future__ import annotations

import atexit
import threading
import typing as _typing

from . import _native, _state
from ._errors import AclshmemError as _AclshmemError
from ._pyshmem_args import _SIZE_MAX, _as_int, _c_text, _enum, _enum_names, _int, _ptr, _size, _stream, _text
from ._pyshmem_types import *  # noqa: F401,F403  (the constants, enumerations and classes: re-exported)
from ._pyshmem_types import _check_team, _error_text, _instance_id, _mem_type
from ._pyshmem_types import _unique_id_from_bytes  # (named by pickles of a UniqueId)
from . import _pyshmem_types

if _typing.TYPE_CHECKING:  # (names for the annotations, which are not evaluated at run time)
    from typing import Callable, Dict, List, Optional, SupportsIndex, Tuple, Union

    # What the hand-written functions take: an address (None is NULL), a heap, a text, a unique ID.
    _Address = Optional[SupportsIndex]
    _MemTypeLike = Union[MemType, int]
    _Text = Union[str, bytes, bytearray, None]
    _UidLike = Union[UniqueId, bytes, bytearray, memoryview]
    from ._pyshmem_types import _Description

del annotations  # (the name the __future__ import binds: not a name of this API)

for _name in _pyshmem_types.__all__:  # documented, and shown in help(), as this module's
    if isinstance(globals()[_name], type) or callable(globals()[_name]):
        globals()[_name].__module__ = __name__
_unique_id_from_bytes.__module__ = __name__

# ---------------------------------------------------------------------------
# Init, finalize, unique IDs
# ---------------------------------------------------------------------------


def aclshmemx_init_status() -> InitStatus:
    """The active instance's InitStatus."""
    _, lib = _native.load()
    v = lib.aclshmemx_init_status()
    try:
        return InitStatus(v)
    except ValueError:
        return InitStatus.INVALID


def aclshmemx_get_uniqueid(uid: UniqueId) -> int:
    """Fills ``uid`` (a UniqueId) with a new unique ID; returns the result code."""
    if not isinstance(uid, UniqueId):
        raise TypeError("uid must be a UniqueId")
    ffi, lib = _native.load()
    c = ffi.new("aclshmemx_uniqueid_t *")
    rc = lib.aclshmemx_get_uniqueid(c)
    if rc == ACLSHMEM_SUCCESS:
        uid.from_bytes(ffi.buffer(c, ACLSHMEM_UNIQUE_ID_SIZE)[:])
    return rc


def aclshmem_get_unique_id() -> bytes:
    """A new unique ID as 136 bytes; raises RuntimeError on failure."""
    uid = UniqueId()
    rc = aclshmemx_get_uniqueid(uid)
    if rc != ACLSHMEM_SUCCESS:
        raise RuntimeError(f"aclshmemx_get_uniqueid failed: {_error_text(rc)}")
    return uid.to_bytes()


def _as_unique_id(uid):
    if isinstance(uid, UniqueId):
        return uid
    if isinstance(uid, (bytes, bytearray, memoryview)):
        return UniqueId.from_bytes(uid)
    raise TypeError(f"uid must be a UniqueId or its {ACLSHMEM_UNIQUE_ID_SIZE} bytes, not {type(uid).__name__}")


def aclshmemx_set_attr_uniqueid_args(my_pe: SupportsIndex, n_pes: SupportsIndex, local_mem_size: SupportsIndex,
                                     uid: _UidLike, attr: InitAttr) -> int:
    """Fills ``attr`` (an InitAttr) for unique-ID initialisation; returns the result code."""
    if not isinstance(attr, InitAttr):
        raise TypeError("attr must be an InitAttr")
    uid = _as_unique_id(uid)
    owned = uid._to_c()  # the attr keeps this copy, so the caller's uid may go away
    c = attr._to_c()
    rc = _native.lib.aclshmemx_set_attr_uniqueid_args(
        _int(my_pe, "my_pe"), _int(n_pes, "n_pes"), _int(local_mem_size, "local_mem_size"), owned, c
    )
    if rc == ACLSHMEM_SUCCESS:
        attr._load(c)
        attr._uid = owned
    return rc


def aclshmemx_init_attr(bootstrap_flags: Union[InitMode, int], attributes: InitAttr) -> int:
    """Collective: initialises an instance from ``attributes``; returns the result code."""
    flags = _enum(bootstrap_flags, InitMode, "bootstrap_flags")
    if not isinstance(attributes, InitAttr):
        raise TypeError("attributes must be an InitAttr")
    c = attributes._to_c()
    try:
        return _native.lib.aclshmemx_init_attr(flags, c)
    finally:
        _state.instance_changed()


def aclshmem_init(attributes: InitAttr) -> int:
    """Collective: initialises with ``InitMode.DEFAULT`` (``ip_port`` = "tcp://host:port")."""
    return aclshmemx_init_attr(InitMode.DEFAULT, attributes)


def aclshmem_init_using_unique_id(rank: SupportsIndex, world: SupportsIndex, mem_size: SupportsIndex,
                                  uid: _UidLike) -> int:
    """Collective: unique-ID initialisation in one call; returns the result code."""
    attr = InitAttr()
    rc = aclshmemx_set_attr_uniqueid_args(rank, world, mem_size, uid, attr)
    if rc != ACLSHMEM_SUCCESS:
        return rc
    return aclshmemx_init_attr(InitMode.UNIQUEID, attr)


def aclshmem_finalize() -> int:
    """Collective: finalises the active instance; returns the result code."""
    try:
        return _native.lib.aclshmem_finalize()
    finally:
        _state.instance_changed()


aclshmem_finialize = aclshmem_finalize  # the original's misspelt, deprecated alias


def aclshmemx_finalize(instance_id: int) -> int:
    """Collective: finalises instance ``instance_id`` (0..254); returns the result code."""
    try:
        return _native.lib.aclshmemx_finalize(_instance_id(instance_id))
    finally:
        _state.instance_changed()


def aclshmemx_set_qp_num(engine: Union[OpEngineType, int], qp_num: SupportsIndex) -> int:
    """Queue pairs per peer connection for an engine; before init only."""
    return _native.lib.aclshmemx_set_qp_num(
        _enum(engine, OpEngineType, "engine"), _int(qp_num, "qp_num")
    )


def aclshmemx_instance_ctx_get() -> Optional[InstanceContext]:
    """An InstanceContext snapshot of the active instance, or None."""
    ffi, lib = _native.load()
    p = lib.aclshmemx_instance_ctx_get()
    if p == ffi.NULL:
        return None
    return InstanceContext(p.id)


def aclshmemx_instance_ctx_set(instance_id: int) -> int:
    """Makes ``instance_id`` the active instance; returns the result code."""
    try:
        return _native.lib.aclshmemx_instance_ctx_set(_instance_id(instance_id))
    finally:
        _state.instance_changed()


def aclshmem_info_get_version() -> Tuple[int, int]:
    """(major, minor) of the library's API."""
    ffi, lib = _native.load()
    major = ffi.new("int *")
    minor = ffi.new("int *")
    lib.aclshmem_info_get_version(major, minor)
    return (major[0], minor[0])


def aclshmem_info_get_name() -> str:
    """The vendor-defined name string."""
    ffi, lib = _native.load()
    buf = ffi.new("char[]", ACLSHMEM_MAX_NAME_LEN)
    lib.aclshmem_info_get_name(buf)
    return ffi.string(buf).decode("utf-8", "replace")


def aclshmemx_describe(load: bool = True) -> _Description:
    """The library's account of itself (``aclshmemx_describe``), as a dict: ``version``,
    ``library_path``, ``initialized``, ``my_pe`` and ``n_pes`` (-1 before init),
    ``transports_available`` and ``transports_in_use`` (lists of "shm", "ucx") and
    ``ucx_plugin``: ``status`` ("loaded", "not_loaded_yet", "disabled", "not_found",
    "load_failed", "not_a_plugin", "mismatch"), ``from_env``, ``path``, ``name``,
    ``version``, ``abi``, ``expected_abi``, ``reason``, ``data_plane`` and
    ``data_plane_error``.  ``load=False`` leaves a plug-in that no job has needed unloaded.
    Raises AclshmemError when the library refuses the call."""
    ffi, lib = _native.load()
    d = ffi.new("aclshmemx_description_t *")
    d.size = ffi.sizeof("aclshmemx_description_t")
    rc = lib.aclshmemx_describe(d, 0 if load else lib.ACLSHMEMX_DESCRIBE_NO_LOAD)
    if rc != ACLSHMEM_SUCCESS:
        raise _AclshmemError(f"aclshmemx_describe failed: {_error_text(rc)}", rc)
    kinds = _enum_names(ffi, "aclshmemx_transport_kind_t", "ACLSHMEMX_TRANSPORT_")
    u = d.ucx
    return {
        "version": _c_text(ffi, d.version),
        "library_path": _c_text(ffi, d.library_path),
        "initialized": bool(d.initialized),
        "my_pe": d.my_pe,
        "n_pes": d.n_pes,
        "transports_available": [n for bit, n in sorted(kinds.items()) if d.transports_available & bit],
        "transports_in_use": [n for bit, n in sorted(kinds.items()) if d.transports_in_use & bit],
        "ucx_plugin": {
            "status": _enum_names(ffi, "aclshmemx_plugin_status_t", "ACLSHMEMX_PLUGIN_")[u.status],
            "from_env": bool(u.from_env),
            "path": _c_text(ffi, u.path),
            "name": _c_text(ffi, u.name),
            "version": _c_text(ffi, u.version),
            "abi": u.abi or None,
            "expected_abi": u.expected_abi,
            "reason": _c_text(ffi, u.reason),
            "data_plane": ffi.string(u.data_plane).decode("utf-8", "replace"),
            "data_plane_error": bool(u.data_plane_error),
        },
    }


def aclshmem_global_exit(status: SupportsIndex) -> None:
    """Ends every PE of the job with exit status ``status``."""
    _native.lib.aclshmem_global_exit(_int(status, "status"))


# ---------------------------------------------------------------------------
# TLS and logging (callbacks are kept alive here)
# ---------------------------------------------------------------------------

_keepalive_lock = threading.Lock()
_callbacks: List[object] = []  # every callback ever handed to C: C may call an old one concurrently


def set_conf_store_tls(enable: bool, tls_info: _Text) -> int:
    """Turns TLS of the control plane on or off; ``tls_info`` may be empty.  Takes effect
    at the next init.  Returns the result code."""
    info, n = _text(tls_info, "tls_info")
    return _native.lib.aclshmemx_set_conf_store_tls(bool(enable), info, n)


def set_conf_store_tls_key(tls_pk: _Text, tls_pk_pw: _Text,
                           py_decrypt_func: Optional[Callable[[str], Union[str, bytes]]]) -> int:
    """Sets the TLS private key and its password, and registers ``py_decrypt_func(cipher:
    str) -> str`` which decrypts the password.  Returns the result code."""
    ffi, lib = _native.load()
    pk, pk_len = _text(tls_pk, "tls_pk")
    pw, pw_len = _text(tls_pk_pw, "tls_pk_pw")
    if py_decrypt_func is None:
        handler = ffi.NULL
    else:
        if not callable(py_decrypt_func):
            raise TypeError("py_decrypt_func must be callable (cipher_text: str) -> str")

        def decrypt(cipher, cipher_len, plain, plain_len):
            text = ffi.unpack(cipher, cipher_len).decode("utf-8", "replace")
            result = py_decrypt_func(text)
            data = result.encode() if isinstance(result, str) else bytes(result)
            capacity = plain_len[0]  # bytes available, not counting the terminating NUL
            if len(data) > capacity:
                return -1
            ffi.memmove(plain, data, len(data))
            plain[len(data)] = b"\0"
            plain_len[0] = len(data)
            return 0

        handler = ffi.callback("aclshmem_decrypt_handler", decrypt, error=-1)
        with _keepalive_lock:
            _callbacks.append(handler)
    return lib.aclshmemx_set_config_store_tls_key(pk, pk_len, pw, pw_len, handler)


def set_log_level(level: SupportsIndex) -> int:
    """Log level of every module: 0 debug, 1 info, 2 warn, 3 error, 4 fatal."""
    return _native.lib.aclshmemx_set_log_level(_int(level, "level"))


def _reset_logger_at_exit() -> None:
    # Log lines may come from library threads; none must reach Python while it shuts down.
    if _native.is_loaded():
        try:
            _native.lib.aclshmemx_set_extern_logger(_native.get_ffi().NULL)
        except Exception:
            pass


def aclshmemx_set_extern_logger(func: Optional[Callable[[int, str], object]]) -> int:
    """Routes the library's log lines to ``func(level: int, msg: str)``, on whichever thread
    logs; None restores the default output.  Returns the result code.  The callback stays
    alive for the life of the process (a thread of the library may still call an old one).
    :func:`set_extern_logger` is the same for a program's own logger (shmem.core's route of
    the lines into :mod:`logging` leaves that one alone)."""
    ffi, lib = _native.load()
    if func is None:
        return int(lib.aclshmemx_set_extern_logger(ffi.NULL))
    if not callable(func):
        raise TypeError("func must be callable as func(level: int, msg: str)")

    def log(level, msg):
        func(int(level), ffi.string(msg).decode("utf-8", "replace") if msg != ffi.NULL else "")

    cb = ffi.callback("void(int, const char *)", log)
    with _keepalive_lock:
        _callbacks.append(cb)
    return int(lib.aclshmemx_set_extern_logger(cb))


def set_extern_logger(func: Optional[Callable[[int, str], object]]) -> int:
    """Routes the library's log lines to ``func(level: int, msg: str)``; None restores the
    default output.  Returns the result code."""
    if func is not None and callable(func):
        with _keepalive_lock:
            if not _state.user_logger_set:
                atexit.register(_reset_logger_at_exit)
            _state.user_logger_set = True
    return aclshmemx_set_extern_logger(func)


def get_ffts_config() -> str:
    """The FFTS configuration word, as a string (always "0" on the cpu platform)."""
    return str(int(_native.lib.util_get_ffts_config()))


# ---------------------------------------------------------------------------
# Memory
# ---------------------------------------------------------------------------


def _alloc_or_raise(api, p):
    ffi = _native.get_ffi()
    if p == ffi.NULL:
        raise RuntimeError(f"{api} failed: {_error_text()}")
    return int(ffi.cast("uintptr_t", p))


def aclshmem_malloc(size: SupportsIndex) -> int:
    """Collective: ``size`` bytes of the device-side heap; raises RuntimeError when the
    library returns NULL (size 0 included)."""
    return _alloc_or_raise(f"aclshmem_malloc({size})", _native.lib.aclshmem_malloc(_size(size, "size")))


def aclshmem_calloc(nmemb: SupportsIndex, size: SupportsIndex) -> int:
    """Collective: zeroed ``nmemb * size`` bytes; raises RuntimeError on NULL."""
    return _alloc_or_raise(
        f"aclshmem_calloc({nmemb}, {size})",
        _native.lib.aclshmem_calloc(_size(nmemb, "nmemb"), _size(size, "size")),
    )


def aclshmem_align(alignment: SupportsIndex, size: SupportsIndex) -> int:
    """Collective: ``size`` bytes aligned to ``alignment`` (a power of 2); raises
    RuntimeError on NULL."""
    return _alloc_or_raise(
        f"aclshmem_align({alignment}, {size})",
        _native.lib.aclshmem_align(_size(alignment, "alignment"), _size(size, "size")),
    )


def aclshmem_free(ptr: _Address) -> None:
    """Collective: frees memory of aclshmem_malloc/calloc/align (0 does nothing)."""
    _native.lib.aclshmem_free(_ptr("void *", ptr, "ptr"))


def aclshmemx_malloc(size: SupportsIndex, mem_type: _MemTypeLike = MemType.DEVICE_SIDE) -> int:
    """Collective: ``size`` bytes of the heap ``mem_type``; 0 on failure."""
    return _as_int(_native.lib.aclshmemx_malloc(_size(size, "size"), _mem_type(mem_type)))


def aclshmemx_calloc(count: SupportsIndex, size: SupportsIndex, mem_type: _MemTypeLike = MemType.DEVICE_SIDE) -> int:
    """Collective: zeroed ``count * size`` bytes of the heap ``mem_type``; 0 on failure."""
    return _as_int(
        _native.lib.aclshmemx_calloc(_size(count, "count"), _size(size, "size"), _mem_type(mem_type))
    )


def aclshmemx_align(alignment: SupportsIndex, size: SupportsIndex, mem_type: _MemTypeLike = MemType.DEVICE_SIDE) -> int:
    """Collective: aligned ``size`` bytes of the heap ``mem_type``; 0 on failure."""
    return _as_int(
        _native.lib.aclshmemx_align(_size(alignment, "alignment"), _size(size, "size"), _mem_type(mem_type))
    )


def aclshmemx_free(ptr: _Address, mem_type: _MemTypeLike = MemType.DEVICE_SIDE) -> None:
    """Collective: frees memory of the heap ``mem_type``."""
    _native.lib.aclshmemx_free(_ptr("void *", ptr, "ptr"), _mem_type(mem_type))


def aclshmemx_get_heap_base(mem_type: Optional[_MemTypeLike] = None) -> int:
    """Start of this PE's heap (DEVICE_SIDE when mem_type is None); 0 if not initialised."""
    return _as_int(_native.lib.aclshmemx_get_heap_base(_mem_type(mem_type)))


def aclshmem_ptr(ptr: _Address, peer: SupportsIndex) -> int:
    """The address of ``ptr``'s symmetric twin on PE ``peer``, usable by this process;
    0 for a bad address or PE, or a PE on another node."""
    return _as_int(_native.lib.aclshmem_ptr(_ptr("void *", ptr, "ptr"), _int(peer, "peer")))


# ---------------------------------------------------------------------------
# PEs and teams
# ---------------------------------------------------------------------------

_INT_MIN, _INT_MAX = -(2 ** 31), 2 ** 31 - 1


def _team_arg(team):
    """A team argument for functions that answer -1 for a bad team."""
    if isinstance(team, bool):
        raise TypeError("team must be an integer team ID, not bool")
    t = _int(team, "team")
    return t if _INT_MIN <= t <= _INT_MAX else None


def my_pe(team: Optional[SupportsIndex] = None) -> int:
    """This PE's number in the world team, or in ``team`` (-1 if it is invalid)."""
    if team is None:
        return _native.lib.aclshmem_my_pe()
    return team_my_pe(team)


def pe_count(team: Optional[SupportsIndex] = None) -> int:
    """The number of PEs of the world team, or of ``team`` (-1 if it is invalid)."""
    if team is None:
        return _native.lib.aclshmem_n_pes()
    return team_n_pes(team)


def team_my_pe(team_id: SupportsIndex) -> int:
    """This PE's number in ``team_id``; -1 on error."""
    t = _team_arg(team_id)
    return -1 if t is None else _native.lib.aclshmem_team_my_pe(t)


def team_n_pes(team_id: SupportsIndex) -> int:
    """The number of PEs in ``team_id``; -1 on error."""
    t = _team_arg(team_id)
    return -1 if t is None else _native.lib.aclshmem_team_n_pes(t)


def team_split_strided(parent: SupportsIndex, start: SupportsIndex, stride: SupportsIndex,
                       size: SupportsIndex) -> int:
    """Collective over ``parent``: PEs start, start+stride, ... (size of them).  Returns the
    new team ID, or ACLSHMEM_TEAM_INVALID on a PE that is not a member.  Every PE of
    ``parent`` must ask for the same split; when one asked for something else (or its own
    arguments are invalid) the split fails on every PE and no team is created.  Raises
    ``shmem.core.AclshmemError`` (a RuntimeError) with the library's message when the
    library returns an error code."""
    ffi, lib = _native.load()
    out = ffi.new("aclshmem_team_t *", ACLSHMEM_TEAM_INVALID)
    rc = lib.aclshmem_team_split_strided(
        _int(parent, "parent"), _int(start, "start"), _int(stride, "stride"), _int(size, "size"), out
    )
    if rc != ACLSHMEM_SUCCESS:
        raise _AclshmemError(f"aclshmem_team_split_strided failed: {_error_text(rc)}", rc)
    return int(out[0])


def team_split_2d(parent: SupportsIndex, x_range: SupportsIndex) -> Tuple[int, int]:
    """Collective over ``parent``: rows of ``x_range`` PEs and columns.  Returns
    ``(x_team_id, y_team_id)``.  Every PE of ``parent`` must pass the same ``x_range``;
    raises ``shmem.core.AclshmemError`` (a RuntimeError) with the library's message on
    failure, on every PE."""
    ffi, lib = _native.load()
    x = ffi.new("aclshmem_team_t *", ACLSHMEM_TEAM_INVALID)
    y = ffi.new("aclshmem_team_t *", ACLSHMEM_TEAM_INVALID)
    rc = lib.aclshmem_team_split_2d(_int(parent, "parent"), _int(x_range, "x_range"), x, y)
    if rc != ACLSHMEM_SUCCESS:
        raise _AclshmemError(f"aclshmem_team_split_2d failed: {_error_text(rc)}", rc)
    return (int(x[0]), int(y[0]))


def team_translate_pe(src_team: SupportsIndex, src_pe: SupportsIndex, dest_team: SupportsIndex) -> int:
    """``src_pe`` of ``src_team`` numbered in ``dest_team``; -1 on error."""
    a = _team_arg(src_team)
    b = _team_arg(dest_team)
    if a is None or b is None:
        return -1
    return _native.lib.aclshmem_team_translate_pe(a, _int(src_pe, "src_pe"), b)


def team_destroy(team: SupportsIndex) -> None:
    """Destroys ``team`` (collective over its members)."""
    t = _team_arg(team)
    if t is not None:
        _native.lib.aclshmem_team_destroy(t)


def aclshmem_team_get_config(team: SupportsIndex) -> TeamConfig:
    """The TeamConfig of ``team``; raises RuntimeError on failure."""
    ffi, lib = _native.load()
    c = ffi.new("aclshmem_team_config_t *")
    t = _team_arg(team)
    rc = ACLSHMEM_INVALID_PARAM if t is None else lib.aclshmem_team_get_config(t, c)
    if rc != ACLSHMEM_SUCCESS:
        raise RuntimeError(f"aclshmem_team_get_config({team}) failed: {_error_text(rc)}")
    cfg = TeamConfig(int(c.num_contexts))
    cfg.version = int(c.version)
    cfg.uniqueid = int(c.uniqueid)
    return cfg


# ---------------------------------------------------------------------------
# RMA and signals (put, get and the signal calls are templated: see the end of the module)
# ---------------------------------------------------------------------------


def team_exchange(team: SupportsIndex, record: bytes) -> List[bytes]:
    """Collective over ``team``: every PE contributes ``record`` (the same size on every PE,
    at most 128 bytes); returns every member's, in team order (``aclshmemx_team_exchange``).
    What PEs agree on before they act: a vote, the sizes of a collective.  Raises
    ``shmem.core.AclshmemError`` with the library's message on failure (on every PE)."""
    if not isinstance(record, (bytes, bytearray, memoryview)):
        raise TypeError(f"record must be bytes, not {type(record).__name__}")
    ffi, lib = _native.load()
    data = bytes(record)
    n = max(team_n_pes(team), 1)
    everyone = ffi.new("char[]", len(data) * n)
    rc = lib.aclshmemx_team_exchange(_int(team, "team"), ffi.from_buffer(data), len(data), everyone)
    if rc != ACLSHMEM_SUCCESS:
        raise _AclshmemError(f"aclshmemx_team_exchange failed: {_error_text(rc)}", rc)
    raw = ffi.buffer(everyone)[:]
    return [raw[i * len(data):(i + 1) * len(data)] for i in range(n)]


def aclshmem_quiet() -> None:
    """Completes every RMA and signal this PE issued."""
    _native.lib.aclshmem_quiet()


def aclshmem_fence() -> None:
    """Orders earlier RMA to each PE before later RMA to that PE."""
    _native.lib.aclshmem_fence()


def _set_engine_config(engine: str, offset: SupportsIndex, ub_size: SupportsIndex, sync_id: SupportsIndex) -> int:
    fn = getattr(_native.lib, f"aclshmemx_set_{engine}_config")
    return int(fn(_int(offset, "offset"), _int(ub_size, "ub_size"), _int(sync_id, "sync_id")))


def aclshmemx_set_mte_config(offset: SupportsIndex, ub_size: SupportsIndex, sync_id: SupportsIndex) -> int:
    """Sets the MTE workspace (offset, ub_size >= 0, sync_id) of the active instance; returns
    ACLSHMEM_SUCCESS or a native error code."""
    return _set_engine_config("mte", offset, ub_size, sync_id)


def aclshmemx_set_sdma_config(offset: SupportsIndex, ub_size: SupportsIndex, sync_id: SupportsIndex) -> int:
    """Sets the SDMA workspace (offset, ub_size >= 0, sync_id) of the active instance; returns
    ACLSHMEM_SUCCESS or a native error code."""
    return _set_engine_config("sdma", offset, ub_size, sync_id)


def aclshmemx_set_rdma_config(offset: SupportsIndex, ub_size: SupportsIndex, sync_id: SupportsIndex) -> int:
    """Sets the RDMA workspace (offset, ub_size >= 128, sync_id) of the active instance;
    returns ACLSHMEM_SUCCESS or a native error code."""
    return _set_engine_config("rdma", offset, ub_size, sync_id)


def aclshmemx_set_udma_config(offset: SupportsIndex, ub_size: SupportsIndex, sync_id: SupportsIndex) -> int:
    """Sets the UDMA workspace (offset, ub_size >= 128, sync_id) of the active instance;
    returns ACLSHMEM_SUCCESS or a native error code."""
    return _set_engine_config("udma", offset, ub_size, sync_id)


def aclshmemx_get_engine_config(engine: Union[OpEngineType, int]) -> Tuple[int, int, int]:
    """The active instance's workspace setting of ``engine`` (OpEngineType; ROCE is the
    rdma setting) as ``(offset, ub_size, sync_id)``; raises RuntimeError on failure."""
    ffi, lib = _native.load()
    c = ffi.new("aclshmem_ub_config_t *")
    rc = lib.aclshmemx_get_engine_config(_enum(engine, OpEngineType, "engine"), c)
    if rc != ACLSHMEM_SUCCESS:
        raise RuntimeError(f"aclshmemx_get_engine_config failed: {_error_text(rc)}")
    return (int(c.aclshmem_ub) & _SIZE_MAX, int(c.ub_size), int(c.sync_id))


# ---------------------------------------------------------------------------
# Streams and stream-ordered operations
# ---------------------------------------------------------------------------


def aclshmemx_stream_create() -> int:
    """A new stream; returns its handle (an int).  Raises RuntimeError on failure."""
    ffi, lib = _native.load()
    out = ffi.new("aclrtStream *")
    rc = lib.aclshmemx_stream_create(out)
    if rc != ACLSHMEM_SUCCESS:
        raise RuntimeError(f"aclshmemx_stream_create failed: {_error_text(rc)}")
    return _as_int(out[0])


def aclshmemx_stream_synchronize(stream: SupportsIndex) -> int:
    """Waits for everything enqueued on ``stream``; returns the first error that happened
    on it (0 = default stream)."""
    return _native.lib.aclshmemx_stream_synchronize(_stream(stream))


def aclshmemx_stream_destroy(stream: SupportsIndex) -> int:
    """Destroys a stream made by aclshmemx_stream_create; returns the result code."""
    return _native.lib.aclshmemx_stream_destroy(_stream(stream))


_kernels: Dict[Callable[[int, int, int], object], object] = {}  # fn -> its C callback, for good


def aclshmemx_kernel_launch(stream: SupportsIndex, fn: Callable[[int, int, int], object], block_dim: SupportsIndex,
                            arg: _Address) -> int:
    """Enqueues ``fn(block_idx, block_dim, arg)`` on ``block_dim`` threads (blocks) after the
    stream's earlier work; returns the result code at once.  ``arg`` is an integer (an
    address: 0 or None is NULL) handed to every block.  The C callback made for ``fn`` is
    kept for the life of the process (the stream may call it after this returns), one per
    function: launch the same function many times rather than new ones."""
    if not callable(fn):
        raise TypeError("fn must be callable as fn(block_idx: int, block_dim: int, arg: int)")
    ffi, lib = _native.load()
    with _keepalive_lock:
        cb = _kernels.get(fn)
        if cb is None:
            def body(block_idx, dim, raw_arg):
                fn(int(block_idx), int(dim), int(ffi.cast("uintptr_t", raw_arg)))

            cb = _kernels[fn] = ffi.callback("aclshmemx_kernel_fn", body)
    return int(lib.aclshmemx_kernel_launch(_stream(stream), cb, _int(block_dim, "block_dim"),
                                           _ptr("void *", arg, "arg")))


def aclshmemx_block_idx() -> int:
    """Inside a kernel: this block's index (0 outside one)."""
    return _native.lib.aclshmemx_block_idx()


def aclshmemx_block_num() -> int:
    """Inside a kernel: the number of blocks (1 outside one)."""
    return _native.lib.aclshmemx_block_num()


# ---------------------------------------------------------------------------
# Barriers and handles
# ---------------------------------------------------------------------------


def aclshmem_barrier(team: int) -> None:
    """Collective: blocks until every PE of ``team`` arrives; ValueError for a team that
    is not alive."""
    _native.lib.aclshmem_barrier(_check_team(team, "aclshmem_barrier"))


def aclshmem_barrier_all() -> None:
    """Collective over the world team."""
    _native.lib.aclshmem_barrier_all()


def aclshmem_sync(team: int) -> None:
    """Collective: synchronises ``team``; ValueError for a team that is not alive."""
    _native.lib.aclshmem_sync(_check_team(team, "aclshmem_sync"))


def aclshmem_sync_all() -> None:
    """Collective: synchronises the world team."""
    _native.lib.aclshmem_sync_all()


def aclshmemx_barrier_vec(team: int) -> None:
    """The original's vector-core barrier: on the cpu platform every kernel block is a
    vector core, so it is ``aclshmem_barrier`` (inside a kernel every block of the calling
    kernel takes part); ValueError for a team that is not alive."""
    _native.lib.aclshmemx_barrier_vec(_check_team(team, "aclshmemx_barrier_vec"))


def aclshmemx_barrier_all_vec() -> None:
    """``aclshmemx_barrier_vec`` over the world team."""
    _native.lib.aclshmemx_barrier_all_vec()


def aclshmemx_barrier_on_stream(team: int, stream: SupportsIndex) -> None:
    """Enqueues a barrier of ``team`` on ``stream``; ValueError for a team that is not alive."""
    t = _check_team(team, "aclshmemx_barrier_on_stream")
    _native.lib.aclshmemx_barrier_on_stream(t, _stream(stream))


def aclshmemx_barrier_all_on_stream(stream: SupportsIndex) -> None:
    """Enqueues a world barrier on ``stream``."""
    _native.lib.aclshmemx_barrier_all_on_stream(_stream(stream))


def aclshmemx_handle_wait(handle: Handle, stream: SupportsIndex) -> None:
    """Enqueues a completion wait and rendezvous of the handle's team on ``stream``."""
    if not isinstance(handle, Handle):
        raise TypeError(f"handle must be a Handle, not {type(handle).__name__}")
    t = _check_team(handle.team_id, "aclshmemx_handle_wait")
    ffi = _native.get_ffi()
    h = ffi.new("aclshmem_handle_t *")
    h.team_id = t
    _native.lib.aclshmemx_handle_wait(h[0], _stream(stream))


# ---------------------------------------------------------------------------
# Profiling
# ---------------------------------------------------------------------------


def aclshmemx_get_prof(verbose: bool = False) -> Optional[ProfData]:
    """A deep copy of this PE's profile, or None where profiling is off (only the PE named
    by SHMEM_CYCLE_PROF_PE records)."""
    ffi, lib = _native.load()
    out = ffi.new("aclshmem_prof_pe_t **")
    lib.aclshmemx_get_prof(out, bool(verbose))
    p = out[0]
    if p == ffi.NULL or p.pe_id < 0:
        return None
    return ProfData._from_c(p)


def aclshmemx_show_prof() -> None:
    """Prints the profile of the active instance."""
    _native.lib.aclshmemx_show_prof()


def aclshmemx_prof_start(frame: SupportsIndex) -> None:
    """Starts timing user profiling frame ``frame`` (0..999) in this block."""
    _native.lib.aclshmemx_prof_start(_int(frame, "frame"))


def aclshmemx_prof_end(frame: SupportsIndex) -> None:
    """Ends user frame ``frame``: adds one count and the cycles since prof_start."""
    _native.lib.aclshmemx_prof_end(_int(frame, "frame"))



def _adopt(module):
    """The module's functions as functions of this module."""
    for name in module.__all__:
        fn = globals()[name] = getattr(module, name)
        fn.__module__ = __name__  # documented, and shown in help(), as functions of this module


_collectives_lock = threading.Lock()


def __getattr__(name):
    # The collectives' typed families (two thirds of the generated functions) are imported
    # at their first use, not at import: a program that never calls one does not pay for them.
    # (The name test first: the import system asks for __path__ at every ``from shmem._pyshmem
    # import ...``, and the collectives' names are read from their declaration file.)
    if name.startswith("aclshmem") and _native.is_collective(name):
        with _collectives_lock:
            if name not in globals():
                from . import _pyshmem_coll_families

                _adopt(_pyshmem_coll_families)
        return globals()[name]
    if name == "GENERATED":
        # The names of the typed families' functions (shmem._native.family_functions()),
        # which the API reference shows as tables rather than one by one.
        generated = globals()["GENERATED"] = [entry[0] for entry in _native.family_functions()]
        return generated
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# The generated functions (shmem._ffi_build, from the declarations of the public headers).
from . import _pyshmem_families as _families  # noqa: E402  (they use the helpers above)

if _typing.TYPE_CHECKING:
    from ._pyshmem_coll_families import *  # noqa: F401,F403  (what type checkers see)
    from ._pyshmem_families import *  # noqa: F401,F403
_adopt(_families)
#: {seed name: C function}: the original's Python API names the sized put-with-signal
#: family aclshmemx_put{BITS}_signal[_nbi]; the C library has aclshmem_put{BITS}_signal[_nbi].
SEED_ALIASES = dict(_families.SEED_ALIASES)
