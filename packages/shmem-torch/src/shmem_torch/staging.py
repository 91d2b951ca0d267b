"""The staging pool: symmetric memory that ordinary (not symmetric) tensors pass through on
their way into and out of the collectives engine, which works on symmetric memory only.

Each SHMEM instance has one staging area.  shmem_torch allocates a small one
(``SHMEM_TORCH_STAGING_SIZE``, default 256 KiB; the heap is sparse, so untouched pages cost
no memory) together with the first symmetric tensor of the instance: allocation is a
collective of the whole world, which a collective of a smaller team could not make, and
every collective of shmem_torch has a symmetric tensor, so the area is there before it
is needed.  The torch.distributed backend installs the staging part of its larger pool
instead while its process group lives.

A collective copies an ordinary tensor in, runs the engine on the area, and copies the
result out, a chunk (at most the area) at a time.  The area serves one collective at a
time (``lock``).
"""

import ctypes
import os
import threading

import torch

from shmem.core import AclshmemError, AclshmemInvalid

from .tensor import active_instance, aclshmem_free_tensor, empty, register_allocation_hook

__all__ = ["STAGING_SIZE_ENV", "DEFAULT_STAGING_SIZE", "Area", "area", "install", "uninstall", "lock", "size_env",
           "copy"]

STAGING_SIZE_ENV = "SHMEM_TORCH_STAGING_SIZE"
DEFAULT_STAGING_SIZE = 256 << 10

lock = threading.RLock()


def size_env(name, default):
    """A positive size from environment variable ``name`` (K/M/G suffixes), or default."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    from shmem import _pyshmem
    from shmem._sizes import parse_size

    try:
        value = parse_size(text)
    except ValueError as exc:
        raise AclshmemInvalid(f"{name}={text!r}: {exc}") from None
    if value <= 0:
        raise AclshmemInvalid(f"{name} must be a positive size, not {text!r}")
    if value > _pyshmem.ACLSHMEM_MAX_LOCAL_SIZE:  # every one of these sizes lives in the symmetric heap
        raise AclshmemInvalid(f"{name}={text!r}: more than the largest symmetric heap "
                              f"({_pyshmem.ACLSHMEM_MAX_LOCAL_SIZE} bytes)")
    return value


def copy(dst, src):
    """dst <- src: tensors of the same shape and dtype; libc's memmove when both are
    contiguous (no per-element dispatch, no threads), else torch's copy."""
    if dst.numel() == 0:
        return
    if dst.is_contiguous() and src.is_contiguous() and dst.dtype == src.dtype:
        ctypes.memmove(dst.data_ptr(), src.data_ptr(), dst.numel() * dst.element_size())
    else:
        dst.copy_(src)


class Area:
    """A block of symmetric memory (a 1-D uint8 tensor, the same place on every PE)."""

    __slots__ = ("bytes", "addr", "nbytes", "owned")

    def __init__(self, block, owned):
        self.bytes = block
        self.addr = block.data_ptr()
        self.nbytes = block.numel()
        self.owned = owned  # allocated here (freed here) or lent by the backend

    def view(self, offset, nbytes, dtype=torch.uint8):
        """Bytes [offset, offset + nbytes) as a 1-D tensor of dtype."""
        piece = self.bytes[offset:offset + nbytes]
        return piece if dtype == torch.uint8 else piece.view(dtype)


_areas = {}  # instance id -> [Area, ...]: the last one serves; the backend's sits above ours
_making = False


def area():
    """The staging area of the active instance."""
    stack = _areas.get(active_instance())
    if not stack:
        raise AclshmemInvalid(f"no staging area for an ordinary tensor: the symmetric heap had no room for it "
                              f"({STAGING_SIZE_ENV}, default {DEFAULT_STAGING_SIZE} bytes) when the first "
                              "symmetric tensor was allocated; pass symmetric tensors, or give the heap room")
    return stack[-1]


def install(block):
    """Lends ``block`` (a symmetric uint8 tensor) as the active instance's staging area
    until uninstall(block)."""
    with lock:
        _areas.setdefault(active_instance(), []).append(Area(block, owned=False))


def uninstall(block):
    with lock:
        for stack in _areas.values():
            for a in list(stack):
                if a.bytes is block:
                    stack.remove(a)


def _make_area(instance_id):
    """Allocation hook: the instance's own area, before its first symmetric tensor."""
    global _making
    if _making or _areas.get(instance_id):
        return
    size = size_env(STAGING_SIZE_ENV, DEFAULT_STAGING_SIZE)
    _making = True
    try:
        block = empty(size, dtype=torch.uint8)  # collective, like the allocation that called us
    except AclshmemError:
        return  # a heap too small for it fails alike on every PE: collectives then need symmetric tensors
    finally:
        _making = False
    _areas.setdefault(instance_id, []).insert(0, Area(block, owned=True))


def _drop_areas(instance_id):
    """Finalize hook: frees the instance's own area (collective, like finalize)."""
    stack = _areas.pop(instance_id, [])
    for a in stack:
        if a.owned:
            try:
                aclshmem_free_tensor(a.bytes)
            except AclshmemInvalid:
                pass  # already released with the instance's other tensors


register_allocation_hook(_make_area, _drop_areas)
