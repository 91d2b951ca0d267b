"""Tensor RMA: put, get, put_signal, signal_wait_until.

Without a stream the calls are complete when they return (for a PE on this node they are
plain tensor copies through the peer's mapping).  With ``stream=`` (a
``shmem.core.Stream`` or its handle, 0 for the default stream) they are only enqueued on
that stream; synchronise it before reading the result or writing to the source.  The
tensors of an on-stream call are kept alive until the stream has run it
(``shmem.core.keep_alive``), so a temporary source may be dropped at once.
"""

import torch

from shmem import _pyshmem
from shmem.core import AclshmemInvalid, CmpOp, SignalOp, Stream
from shmem.core.stream import keep_alive

from .tensor import call_checked, check_int, check_pe, check_tensor, extent, peer_view, resolve

__all__ = ["put", "get", "put_signal", "signal_wait_until", "SignalOp", "CmpOp"]

_INT32_MIN, _INT32_MAX = -(2 ** 31), 2 ** 31 - 1


def _check_pair(dst, src, what):
    check_tensor(dst, "dst")
    check_tensor(src, "src")
    if dst.dtype != src.dtype:
        raise AclshmemInvalid(f"{what}: dst and src must have the same dtype, not {dst.dtype} and {src.dtype}")
    if dst.shape != src.shape:
        raise AclshmemInvalid(f"{what}: dst and src must have the same shape, not {tuple(dst.shape)} "
                              f"and {tuple(src.shape)}")


def _stream_handle(stream):
    if isinstance(stream, Stream):
        return stream.handle
    return check_int(stream, "stream", 0)


def _contiguous_for_library(t, name, api):
    if not t.is_contiguous():
        raise AclshmemInvalid(f"{api}: {name} must be contiguous for this transfer (a stream "
                              "operation, or a PE on another node)")
    return t


def put(dst, src, pe, stream=None):
    """Copies the local tensor ``src`` into PE ``pe``'s copy of the symmetric tensor
    ``dst`` (same shape and dtype; any strides on this node).

    Without ``stream`` the data is in place when the call returns; with ``stream`` the copy
    is enqueued on that stream (contiguous tensors only)."""
    _check_pair(dst, src, "put")
    alloc, offset = resolve(dst, "dst")
    pe = check_pe(pe)
    if dst.numel() == 0:
        return
    if stream is None:
        view = peer_view(alloc, offset, dst, pe)
        if view is not None:
            with torch.no_grad():
                view.copy_(src)
            return
    _contiguous_for_library(dst, "dst", "put")
    src_c = src if stream is not None else src.contiguous()
    _contiguous_for_library(src_c, "src", "put")
    nbytes = dst.numel() * dst.element_size()
    if stream is None:
        call_checked("put", _pyshmem.aclshmem_putmem, dst.data_ptr(), src_c.data_ptr(), nbytes, pe)
    else:
        handle = _stream_handle(stream)
        call_checked("put", _pyshmem.aclshmemx_putmem_on_stream, dst.data_ptr(), src_c.data_ptr(), nbytes, pe,
                     handle)
        keep_alive(handle, dst, src_c)


def get(dst, src, pe, stream=None):
    """Copies PE ``pe``'s copy of the symmetric tensor ``src`` into the local tensor
    ``dst`` (same shape and dtype).  With ``stream`` the copy is only enqueued."""
    _check_pair(dst, src, "get")
    alloc, offset = resolve(src, "src")
    pe = check_pe(pe)
    if src.numel() == 0:
        return
    if stream is None:
        view = peer_view(alloc, offset, src, pe)
        if view is not None:
            with torch.no_grad():
                dst.copy_(view)
            return
    _contiguous_for_library(src, "src", "get")
    nbytes = src.numel() * src.element_size()
    if stream is None:
        if dst.is_contiguous():
            call_checked("get", _pyshmem.aclshmem_getmem, dst.data_ptr(), src.data_ptr(), nbytes, pe)
        else:
            tmp = torch.empty_like(src, memory_format=torch.contiguous_format)
            call_checked("get", _pyshmem.aclshmem_getmem, tmp.data_ptr(), src.data_ptr(), nbytes, pe)
            with torch.no_grad():
                dst.copy_(tmp)
    else:
        _contiguous_for_library(dst, "dst", "get")
        handle = _stream_handle(stream)
        call_checked("get", _pyshmem.aclshmemx_getmem_on_stream, dst.data_ptr(), src.data_ptr(), nbytes, pe,
                     handle)
        keep_alive(handle, dst, src)


def _signal_word(signal, name="signal"):
    """The address of the 32-bit signal word a symmetric int32 tensor names (its first
    element)."""
    resolve(signal, name)
    if signal.dtype != torch.int32:
        raise AclshmemInvalid(f"{name} must be an int32 symmetric tensor (a 32-bit signal word), not {signal.dtype}")
    if signal.numel() < 1:
        raise AclshmemInvalid(f"{name} must have at least one element")
    addr, _ = extent(signal)
    return addr


def _signal_op(op):
    if isinstance(op, SignalOp):
        return op
    if isinstance(op, str):
        key = op.upper()
        key = key if key.startswith("SIGNAL_") else "SIGNAL_" + key
        if key in SignalOp.__members__:
            return SignalOp[key]
    elif isinstance(op, int) and not isinstance(op, bool):
        try:
            return SignalOp(op)
        except ValueError:
            pass
    raise AclshmemInvalid(f"signal_op must be SignalOp.SIGNAL_SET or SignalOp.SIGNAL_ADD (or 'set'/'add'), not {op!r}")


def put_signal(dst, src, signal, signal_value, signal_op, pe, stream=None):
    """Copies ``src`` into PE ``pe``'s ``dst`` (both contiguous), then updates the first
    element of the symmetric int32 tensor ``signal`` on that PE (``SIGNAL_SET`` or
    ``SIGNAL_ADD`` ``signal_value``).  A PE waiting on the signal sees the data once it
    sees the signal.  With ``stream`` both steps are enqueued, in order."""
    _check_pair(dst, src, "put_signal")
    resolve(dst, "dst")
    sig = _signal_word(signal)
    value = check_int(signal_value, "signal_value", _INT32_MIN, _INT32_MAX)
    op = _signal_op(signal_op)
    pe = check_pe(pe)
    _contiguous_for_library(dst, "dst", "put_signal")
    src_c = src if stream is not None else src.contiguous()
    _contiguous_for_library(src_c, "src", "put_signal")
    nbytes = dst.numel() * dst.element_size()
    if stream is None:
        call_checked("put_signal", _pyshmem.aclshmemx_putmem_signal, dst.data_ptr(), src_c.data_ptr(), nbytes, sig,
                     value, int(op), pe)
    else:
        s = _stream_handle(stream)
        if nbytes:
            call_checked("put_signal", _pyshmem.aclshmemx_putmem_on_stream, dst.data_ptr(), src_c.data_ptr(),
                         nbytes, pe, s)
        call_checked("put_signal", _pyshmem.aclshmemx_signal_op_on_stream, sig, value, int(op), pe, s)
        keep_alive(s, dst, src_c, signal)


_CMP_NAMES = {"eq": "CMP_EQ", "==": "CMP_EQ", "ne": "CMP_NE", "!=": "CMP_NE", "gt": "CMP_GT", ">": "CMP_GT",
              "ge": "CMP_GE", ">=": "CMP_GE", "lt": "CMP_LT", "<": "CMP_LT", "le": "CMP_LE", "<=": "CMP_LE"}


def _cmp(cmp):
    if isinstance(cmp, CmpOp):
        return cmp
    if isinstance(cmp, str) and cmp.lower() in _CMP_NAMES:
        return CmpOp[_CMP_NAMES[cmp.lower()]]
    if isinstance(cmp, str) and cmp.upper() in CmpOp.__members__:
        return CmpOp[cmp.upper()]
    if isinstance(cmp, int) and not isinstance(cmp, bool) and cmp in CmpOp._value2member_map_:
        return CmpOp(cmp)
    raise AclshmemInvalid(f"cmp must be a CmpOp (CMP_EQ, CMP_NE, CMP_GT, CMP_GE, CMP_LT, CMP_LE) or one of "
                          f"{sorted(_CMP_NAMES)}, not {cmp!r}")


def signal_wait_until(signal, cmp, value, stream=None):
    """Waits until the local signal word (first element of the symmetric int32 tensor
    ``signal``) satisfies ``word cmp value``; returns the word's value.  With ``stream``
    the wait is enqueued on that stream instead (and None is returned)."""
    sig = _signal_word(signal)
    c = _cmp(cmp)
    v = check_int(value, "value", _INT32_MIN, _INT32_MAX)
    if stream is None:
        return int(call_checked("signal_wait_until", _pyshmem.aclshmem_signal_wait_until, sig, int(c), v))
    handle = _stream_handle(stream)
    call_checked("signal_wait_until", _pyshmem.aclshmemx_signal_wait_until_on_stream, sig, int(c), v, handle)
    keep_alive(handle, signal)
    return None
