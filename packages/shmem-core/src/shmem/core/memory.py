"""Symmetric memory: buffer, calloc, align, free, get_peer_buffer."""

from .. import _pyshmem
from .._pyshmem import MemType
from .utils import (
    SIZE_T_MAX,
    AclshmemError,
    AclshmemInvalid,
    Buffer,
    _instance_lock,
    _register,
    _unregister,
    active_instance_id,
    call_void,
    check_buffer,
    check_int,
    check_mem_type,
)

__all__ = ["buffer", "calloc", "align", "free", "get_peer_buffer", "Buffer", "MemType"]


def _owning(api, addr, length, mem_type):
    if not addr:
        raise AclshmemError(f"{api} failed: {_pyshmem.aclshmemx_get_last_error() or 'the library returned NULL'}")
    instance = active_instance_id()
    buf = Buffer._owning(addr, length, mem_type, instance)
    _register(buf)
    return buf


def buffer(size, release=False, except_on_del=True, mem_type=MemType.DEVICE_SIDE):
    """Collective: ``size`` bytes of symmetric memory as an owning Buffer.

    ``release`` and ``except_on_del`` are reserved.  Raises AclshmemInvalid for a bad size
    or heap type and AclshmemError when the allocation fails."""
    size = check_int(size, "size", 1, SIZE_T_MAX)
    mem_type = check_mem_type(mem_type)
    with _instance_lock:
        addr = _pyshmem.aclshmemx_malloc(size, mem_type)
        return _owning(f"buffer({size}, mem_type={mem_type.name})", addr, size, mem_type)


def calloc(count, size, mem_type=MemType.DEVICE_SIDE):
    """Collective: ``count * size`` zeroed bytes as an owning Buffer."""
    count = check_int(count, "count", 1, SIZE_T_MAX)
    size = check_int(size, "size", 1, SIZE_T_MAX)
    if count * size > SIZE_T_MAX:
        raise AclshmemInvalid(f"count * size = {count * size} does not fit in size_t")
    mem_type = check_mem_type(mem_type)
    with _instance_lock:
        addr = _pyshmem.aclshmemx_calloc(count, size, mem_type)
        return _owning(f"calloc({count}, {size}, mem_type={mem_type.name})", addr, count * size, mem_type)


def align(alignment, size, mem_type=MemType.DEVICE_SIDE):
    """Collective: ``size`` bytes aligned to ``alignment`` (a positive power of two)."""
    alignment = check_int(alignment, "alignment", 1, SIZE_T_MAX)
    if alignment & (alignment - 1):
        raise AclshmemInvalid(f"alignment must be a power of two, not {alignment}")
    size = check_int(size, "size", 1, SIZE_T_MAX)
    mem_type = check_mem_type(mem_type)
    with _instance_lock:
        addr = _pyshmem.aclshmemx_align(alignment, size, mem_type)
        return _owning(f"align({alignment}, {size}, mem_type={mem_type.name})", addr, size, mem_type)


def free(buf):
    """Collective: frees a Buffer returned by buffer, calloc or align."""
    if not isinstance(buf, Buffer):
        raise AclshmemInvalid(f"free needs a Buffer, not {type(buf).__name__}")
    if not buf.owned:
        raise AclshmemInvalid("free: this Buffer does not own its memory (an external address or a "
                              "peer view); free the Buffer that buffer/calloc/align returned")
    if buf.release_called:
        raise AclshmemInvalid("free: this Buffer has been freed already")
    with _instance_lock:
        check_buffer(buf, "buf")
        buf._released = True
        _unregister(buf)
        call_void("free", _pyshmem.aclshmemx_free, buf.addr, buf.mem_type)


def get_peer_buffer(buf, pe):
    """The address of ``buf``'s symmetric twin on PE ``pe``, as a Buffer this process can
    load from and store to.  Raises AclshmemError for an invalid address or PE (including a
    PE on another node, whose memory is not mapped here)."""
    check_buffer(buf, "buf")
    pe = check_int(pe, "pe")
    n = _pyshmem.pe_count()
    if not 0 <= pe < max(n, 0):
        raise AclshmemError(f"get_peer_buffer: PE {pe} is not in [0, {n})")
    addr = _pyshmem.aclshmem_ptr(buf.addr, pe)
    if not addr:
        text = _pyshmem.aclshmemx_get_last_error()
        raise AclshmemError(
            f"get_peer_buffer: no address of {buf.addr:#x} on PE {pe} (not a symmetric address, "
            f"or PE {pe} is on another node){': ' + text if text else ''}")
    return Buffer._borrowed(buf, addr)
