"""Stream-ordered RMA and signals: put, get, put_signal, signal_op, signal_wait, quiet."""

from typing import Callable, Union

from .. import _pyshmem, _state
from .._pyshmem_args import LazyFunction
from .._pyshmem import CmpOp, SignalOp
from .._errors import AclshmemError, AclshmemInvalid
from .buffer import Buffer, check_buffer
from .stream import Stream, StreamLike, check_stream, hold, keep_alive
from .utils import INT32_MAX, INT32_MIN, SIZE_T_MAX, call_void, check_enum, check_int, check_pe

ComparisonType = CmpOp

__all__ = ["put", "get", "put_signal", "signal_op", "signal_wait", "quiet", "SignalOp", "ComparisonType"]


def _check_lengths(dst: Buffer, src: Buffer) -> None:
    if dst.length < src.length:
        raise AclshmemInvalid(f"dst is {dst.length} bytes, shorter than src ({src.length} bytes)")


def _check_signal(signal_var: Buffer, name: str = "signal_var") -> Buffer:
    check_buffer(signal_var, name)
    if signal_var.length < 4:
        raise AclshmemInvalid(f"{name} must be at least 4 bytes (a 32-bit signal word), not {signal_var.length}")
    if signal_var.addr % 4:
        raise AclshmemInvalid(f"{name} must be 4-byte aligned (address {signal_var.addr:#x})")
    return signal_var


def _check_signal_value(value: int, name: str = "signal_val") -> int:
    return check_int(value, name, INT32_MIN, INT32_MAX)


def put(dst: Buffer, src: Buffer, remote_pe: int, stream: StreamLike = None) -> None:
    """Enqueues a copy of ``src`` (local) to symmetric ``dst`` on ``remote_pe``, ordered on
    ``stream`` (0 or None: the default stream).  Synchronise the stream to see it done.
    ``dst`` and ``src``, when one of them describes external memory, are kept alive until
    the stream has run the copy (dropping a Buffer of the symmetric heap frees nothing)."""
    _transfer("put", _c_aclshmemx_putmem_on_stream, dst, src, remote_pe, stream)


def get(dst: Buffer, src: Buffer, remote_pe: int, stream: StreamLike = None) -> None:
    """Enqueues a copy of symmetric ``src`` on ``remote_pe`` to local ``dst``, ordered on
    ``stream`` (0 or None: the default stream)."""
    _transfer("get", _c_aclshmemx_getmem_on_stream, dst, src, remote_pe, stream)


# The C functions of put and get with integer addresses (made at the first call).
_c_aclshmemx_putmem_on_stream = LazyFunction(globals(), "aclshmemx_putmem_on_stream")
_c_aclshmemx_getmem_on_stream = LazyFunction(globals(), "aclshmemx_getmem_on_stream")


def _transfer(api: str, c_fn: Callable[..., None], dst: Buffer, src: Buffer, remote_pe: int,
              stream: StreamLike) -> None:
    """put and get.  The fast path checks what the API requires with tests that cost no
    call into the library (the active instance and its PE count are cached by shmem._state),
    makes the one foreign call, and tells a failure from the thread's error buffer.  Any
    argument it does not take as it is goes through the full checks, in their documented
    order, with their messages.  (Written out, without helper calls: each costs ~50 ns.)"""
    state = _state.active_state or _state.active_instance()
    if stream is None:
        handle = 0
    elif type(stream) is int and 0 <= stream <= SIZE_T_MAX:
        handle = stream
    else:
        handle = -1  # a Stream object, or something the checks below reject
    if (state is not None and handle >= 0 and type(remote_pe) is int and 0 <= remote_pe < state[1]
            and isinstance(dst, Buffer) and isinstance(src, Buffer) and dst._length >= src._length):
        # check_buffer's conditions: not freed, and of the active instance unless external
        instance_id, dst_block, src_block = state[0], dst._block, src._block
        if ((dst_block is None or (not dst_block.released and dst_block.instance_id == instance_id))
                and (src_block is None or (not src_block.released and src_block.instance_id == instance_id))):
            flag = _state.last_error_flag()
            flag[0] = 0
            c_fn(dst._start, src._start, src._length, remote_pe, handle)
            if flag[0]:
                raise AclshmemError(f"{api} failed: {_pyshmem.aclshmemx_get_last_error()}")
            if dst_block is None or src_block is None:
                # An external Buffer may stand for memory that goes with it (a temporary
                # source): held until the stream ran the copy.  Dropping a Buffer of the
                # symmetric heap frees nothing (only free() does), so it need not be held.
                hold(handle, instance_id, dst, src)
            return
    check_buffer(dst, "dst")
    check_buffer(src, "src")
    _check_lengths(dst, src)
    pe = check_pe(remote_pe)
    s = check_stream(stream, allow_none=True)
    call_void(api, c_fn, dst.addr, src.addr, src.length, pe, s)
    keep_alive(s, dst, src)


def put_signal(dst: Buffer, src: Buffer, signal_var: Buffer, signal_val: int, signal_operation: Union[SignalOp, int],
               remote_pe: int, stream: StreamLike = None) -> None:
    """Copies ``src`` to ``dst`` on ``remote_pe``, then updates the 32-bit signal word
    ``signal_var`` there; complete when it returns.  ``stream`` is ignored."""
    check_buffer(dst, "dst")
    check_buffer(src, "src")
    _check_lengths(dst, src)
    _check_signal(signal_var)
    value = _check_signal_value(signal_val)
    op = check_enum(signal_operation, SignalOp, "signal_operation")
    pe = check_pe(remote_pe)
    call_void("put_signal", _pyshmem.aclshmemx_putmem_signal, dst.addr, src.addr, src.length,
              signal_var.addr, value, int(op), pe)


def signal_op(signal_var: Buffer, signal_val: int, signal_operation: Union[SignalOp, int], remote_pe: int,
              stream: StreamLike = None) -> None:
    """Enqueues an update (SIGNAL_SET / SIGNAL_ADD) of the signal word on ``remote_pe`` on
    ``stream`` (required; 0 is the default stream)."""
    _check_signal(signal_var)
    value = _check_signal_value(signal_val)
    op = check_enum(signal_operation, SignalOp, "signal_operation")
    pe = check_pe(remote_pe)
    s = check_stream(stream)
    call_void("signal_op", _pyshmem.aclshmemx_signal_op_on_stream, signal_var.addr, value, int(op), pe, s)
    keep_alive(s, signal_var)


def signal_wait(signal_var: Buffer, signal_val: int, signal_operation: Union[CmpOp, int],
                stream: Union[Stream, int]) -> None:
    """Enqueues a wait until ``signal_var cmp signal_val`` holds (a local signal word) on
    ``stream``; once the stream is synchronised the condition holds."""
    _check_signal(signal_var)
    value = _check_signal_value(signal_val)
    cmp = check_enum(signal_operation, CmpOp, "signal_operation")
    s = check_stream(stream)
    call_void("signal_wait", _pyshmem.aclshmemx_signal_wait_until_on_stream, signal_var.addr, int(cmp), value, s)
    keep_alive(s, signal_var)


def quiet(stream: Union[Stream, int]) -> None:
    """Enqueues a completion point for earlier operations on ``stream``."""
    s = check_stream(stream)
    call_void("quiet", _pyshmem.aclshmemx_quiet_on_stream, s)
