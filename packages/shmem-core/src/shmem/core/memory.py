"""Symmetric memory: buffer, calloc, align, free, get_peer_buffer.

Free and exported views.  Code outside this package can hold views of a Buffer's memory
that Python cannot revoke (memoryviews, NumPy arrays, torch tensors; the Buffer's block
counts them, see ``buffer``).  Returning that memory to the allocator would let those views write
into the next allocation, so ``free`` does not release a block while any PE has a view of
it: the block is *deferred*.  Whether a block has views is known only on each PE, and
the decision must be the same on every PE (free is collective and the heaps stay
symmetric), so every free takes a vote: each PE contributes a bit mask (the block being freed and the
blocks deferred before) to the library's exchange (``aclshmemx_team_exchange``: a record
per PE, a barrier, each PE reads them all).  A deferred block is released at the first later free at which no PE has
a view of it any more, or at finalize.  The Buffer itself is released at once: its methods
raise, and the buffer protocol hands out only empty views.
"""

import struct
import warnings
from typing import Dict, List, Optional, Union

from .. import _pyshmem
from .._pyshmem import MemType
from .._errors import AclshmemError, AclshmemInvalid, AclshmemWarning
from ._state import instance_lock
from .buffer import Block, Buffer, check_buffer, register_block, unregister_block
from .utils import SIZE_T_MAX, active_instance_id, call_void, check_int, check_mem_type

__all__ = ["buffer", "calloc", "align", "free", "get_peer_buffer", "Buffer", "MemType"]

# A vote's mask has one bit for the block being freed and one per deferred block, in the
# order they were deferred (the same on every PE).  Blocks past the mask wait for a later
# free.
_MASK_BITS = 63


# instance id -> [Block], in the order they were deferred (the same on every PE)
_deferred: Dict[Optional[int], List[Block]] = {}


def _or_over_pes(mask: int) -> int:
    """Collective over the world team of the active instance: the OR of every PE's ``mask``
    (the library's exchange: each PE writes its record, a barrier, each reads them all)."""
    try:
        records = _pyshmem.team_exchange(_pyshmem.ACLSHMEM_TEAM_WORLD, struct.pack("=Q", mask))
    except AclshmemError as exc:
        raise AclshmemError(f"free failed while the PEs agreed on exported views: "
                            f"{_pyshmem.aclshmemx_get_last_error()}", exc.code) from None
    combined = 0
    for record in records:
        combined |= struct.unpack("=Q", record)[0]
    return combined


def forget_instance(instance_id: Optional[int]) -> List[Block]:
    """Drops the deferred blocks of an instance (its heaps are gone); returns them."""
    return _deferred.pop(instance_id, [])


def _owning(api: str, addr: int, length: int, mem_type: MemType) -> Buffer:
    if not addr:
        raise AclshmemError(f"{api} failed: {_pyshmem.aclshmemx_get_last_error() or 'the library returned NULL'}")
    instance = active_instance_id()
    buf = Buffer._owning(addr, length, mem_type, instance)
    register_block(buf._block)
    return buf


def buffer(size: int, release: bool = False, except_on_del: bool = True,
           mem_type: Union[MemType, int] = MemType.DEVICE_SIDE) -> Buffer:
    """Collective: ``size`` bytes of symmetric memory as an owning Buffer.

    ``release`` and ``except_on_del`` are reserved.  Raises AclshmemInvalid for a bad size
    or heap type and AclshmemError when the allocation fails."""
    size = check_int(size, "size", 1, SIZE_T_MAX)
    heap: MemType = check_mem_type(mem_type)
    with instance_lock:
        addr = _pyshmem.aclshmemx_malloc(size, heap)
        return _owning(f"buffer({size}, mem_type={heap.name})", addr, size, heap)


def calloc(count: int, size: int, mem_type: Union[MemType, int] = MemType.DEVICE_SIDE) -> Buffer:
    """Collective: ``count * size`` zeroed bytes as an owning Buffer."""
    count = check_int(count, "count", 1, SIZE_T_MAX)
    size = check_int(size, "size", 1, SIZE_T_MAX)
    if count * size > SIZE_T_MAX:
        raise AclshmemInvalid(f"count * size = {count * size} does not fit in size_t")
    heap: MemType = check_mem_type(mem_type)
    with instance_lock:
        addr = _pyshmem.aclshmemx_calloc(count, size, heap)
        return _owning(f"calloc({count}, {size}, mem_type={heap.name})", addr, count * size, heap)


def align(alignment: int, size: int, mem_type: Union[MemType, int] = MemType.DEVICE_SIDE) -> Buffer:
    """Collective: ``size`` bytes aligned to ``alignment`` (a positive power of two)."""
    alignment = check_int(alignment, "alignment", 1, SIZE_T_MAX)
    if alignment & (alignment - 1):
        raise AclshmemInvalid(f"alignment must be a power of two, not {alignment}")
    size = check_int(size, "size", 1, SIZE_T_MAX)
    heap: MemType = check_mem_type(mem_type)
    with instance_lock:
        addr = _pyshmem.aclshmemx_align(alignment, size, heap)
        return _owning(f"align({alignment}, {size}, mem_type={heap.name})", addr, size, heap)


def free(buf: Buffer) -> None:
    """Collective: frees a Buffer returned by buffer, calloc or align.

    The Buffer, its slices and peer views are released at once (their methods raise
    ``AclshmemInvalid``).  If any PE still has views of the memory (a memoryview, NumPy
    array, or torch tensor from DLPack or torch.frombuffer), the memory is not returned to the heap yet - those views could
    otherwise write into the next allocation: it is released at a later free once no PE
    has views of it any more, or at finalize.  The PEs that hold views warn
    (``AclshmemWarning``)."""
    if not isinstance(buf, Buffer):
        raise AclshmemInvalid(f"free needs a Buffer, not {type(buf).__name__}")
    if not buf.owned:
        raise AclshmemInvalid("free: this Buffer does not own its memory (an external address or a "
                              "peer view); free the Buffer that buffer/calloc/align returned")
    if buf.release_called:
        raise AclshmemInvalid("free: this Buffer has been freed already")
    with instance_lock:
        check_buffer(buf, "buf")
        block = buf._block
        assert block is not None  # an owning Buffer has its block
        block.close()
        unregister_block(block)
        pending = _deferred.setdefault(block.instance_id, [])
        candidates = pending[:_MASK_BITS - 1] + [block]
        local_views = [blk.views() for blk in candidates]
        mask = sum(1 << i for i, n in enumerate(local_views) if n)
        busy = _or_over_pes(mask)
        if busy >> (len(candidates) - 1) & 1:
            pending.append(block)
            if local_views[-1]:
                warnings.warn(
                    f"free: {local_views[-1]} view(s) of this Buffer (memoryview, NumPy array or torch "
                    "tensor) are alive on this PE; its memory is kept out of reuse until they are gone, "
                    "and released at a later free or at finalize", AclshmemWarning, stacklevel=2)
        for i, blk in enumerate(candidates):
            if not busy >> i & 1:
                if blk is not block:
                    pending.remove(blk)
                call_void("free", _pyshmem.aclshmemx_free, blk.addr, blk.mem_type)


def get_peer_buffer(buf: Buffer, pe: int) -> Optional[Buffer]:
    """The address of ``buf``'s symmetric twin on PE ``pe``, as a Buffer this process can
    load from and store to, or None when PE ``pe`` is on another node (its memory is not
    mapped here; put/get reach it).  Raises AclshmemError for an invalid address or PE."""
    check_buffer(buf, "buf")
    pe = check_int(pe, "pe")
    n = _pyshmem.pe_count()
    if not 0 <= pe < max(n, 0):
        raise AclshmemError(f"get_peer_buffer: PE {pe} is not in [0, {n})")
    _pyshmem.aclshmemx_clear_last_error()
    addr = _pyshmem.aclshmem_ptr(buf.addr, pe)
    if not addr:
        text = _pyshmem.aclshmemx_get_last_error()
        if not text:  # a valid address and PE without a mapping: another node
            return None
        raise AclshmemError(f"get_peer_buffer: no address of {buf.addr:#x} on PE {pe}: {text}")
    return Buffer._borrowed(buf, addr)
