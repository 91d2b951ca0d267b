"""Initialisation and finalisation: get_version, get_unique_id, init, finalize.

Finalize unmaps the instance's heaps (this PE's and the peers' mappings), whether it
succeeds or fails: when a peer died, the library's last barrier fails, and it still
unmaps.  Views that code outside this package still holds of that memory (memoryviews,
NumPy arrays, torch tensors of Buffers; see ``buffer``) would then fault on their next
access, so finalize maps fresh private zero pages over the address ranges those views
cover as soon as the library returns, before it raises the library's error if there is
one: a stale view reads zeros, its writes reach nobody, and nothing else can be mapped
there while it lives.  The pages are mapped with ``MAP_FIXED_NOREPLACE``, so a range
that something else took in the meantime is never overwritten (finalize then warns that
those views are unsafe); ranges whose views are all gone are unmapped at the next init or
finalize.  The library keeps the heaps in one case, a stream kernel that finalize had to
abandon (it may still use them): such ranges are still mapped from the library's heap
memfds, and their views go on reaching that memory.
"""

import ctypes
import os
import warnings
from typing import Any, List, Optional, Tuple, Union

from .. import _bootstrap, _pyshmem
from .._errors import AclshmemError, AclshmemInvalid, AclshmemWarning
from .._pyshmem import InitMode, UniqueId
from . import _logbridge, memory
from ._state import instance_lock, register_finalize_hook, run_finalize_hooks
from .buffer import take_leftovers
from .utils import active_instance_id, check_instance_id, check_int, native_error

__all__ = ["get_version", "get_unique_id", "init", "finalize", "register_finalize_hook", "UniqueId",
           "UniqueID"]

def _before_finalize(instance_id: int) -> List[Any]:
    """Runs the hooks, releases what was not freed, and returns the blocks of the instance
    (left over or deferred) whose views are still alive on this PE."""
    run_finalize_hooks(instance_id)
    blocks = _release_leftovers(instance_id) + memory.forget_instance(instance_id)
    return [blk for blk in blocks if blk.views()]


# ---------------------------------------------------------------------------
# Keeping the address ranges of live views mapped after finalize
# ---------------------------------------------------------------------------

_PROT_READ_WRITE = 0x1 | 0x2
_MAP_PRIVATE_ANONYMOUS_NORESERVE = 0x02 | 0x20 | 0x4000
_MAP_FIXED_NOREPLACE = 0x100000
_MAP_FAILED = ctypes.c_void_p(-1).value
_libc = None
# Zero-page ranges mapped for stale views: [(start, length, [Block])].
_zero_ranges: List[Tuple[int, int, List[Any]]] = []


def _libc_mmap() -> Any:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.mmap.restype = ctypes.c_void_p
        _libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                               ctypes.c_long]
        _libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    return _libc


def _page_ranges(blocks: List[Any]) -> List[List[Any]]:
    """The page-rounded, merged address ranges of the exported views of ``blocks``, each
    with the blocks whose views lie in it."""
    page = os.sysconf("SC_PAGE_SIZE")
    spans = sorted(((addr // page * page, -(-(addr + length) // page) * page, blk)
                    for blk in blocks for addr, length in blk.exported_ranges()), key=lambda s: s[:2])
    merged: List[List[Any]] = []
    for start, end, blk in spans:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
            merged[-1][2].append(blk)
        else:
            merged.append([start, end, [blk]])
    return merged


def _kept_by_library(start: int, end: int) -> bool:
    """Whether all of [start, end) is still mapped from the library's heap memfds
    (``/memfd:aclshmem-...``): finalize keeps the heaps for a stream kernel it abandoned."""
    covered = start
    with open("/proc/self/maps", "r", encoding="ascii", errors="replace") as maps:
        for line in maps:  # sorted by address
            span, _, rest = line.partition(" ")
            low, high = (int(x, 16) for x in span.split("-"))
            if high <= covered:
                continue
            if low > covered or "/memfd:aclshmem-" not in rest:
                return False
            covered = high
            if covered >= end:
                return True
    return False


def _map_zero_pages(blocks: List[Any]) -> None:
    """Once the library's finalize returned (successful or not): private zero pages where
    live views point."""
    if not blocks:
        return
    libc = _libc_mmap()
    unsafe = kept = 0
    for start, end, owners in _page_ranges(blocks):
        got = libc.mmap(start, end - start, _PROT_READ_WRITE,
                        _MAP_PRIVATE_ANONYMOUS_NORESERVE | _MAP_FIXED_NOREPLACE, -1, 0)
        if got == start:
            _zero_ranges.append((start, end - start, owners))
            continue
        if got not in (None, _MAP_FAILED):
            libc.munmap(got, end - start)  # a kernel without MAP_FIXED_NOREPLACE took it as a hint
        if _kept_by_library(start, end):
            kept += 1
        else:
            unsafe += 1
    views = sum(blk.views() for blk in blocks)
    warnings.warn(
        f"finalize: {views} view(s) (memoryview, NumPy array or torch tensor) of {len(blocks)} symmetric "
        "allocation(s) are still alive; they now read zeros and their writes reach nobody"
        + (f" - except in {kept} address range(s) that the library keeps mapped for a stream kernel it "
           "abandoned: views there still reach that memory" if kept else "")
        + (f" - except in {unsafe} address range(s) that were taken before they could be protected: "
           "do not use those views" if unsafe else ""),
        AclshmemWarning, stacklevel=3)


def _unmap_unused_zero_pages() -> None:
    """Unmaps the zero-page ranges whose views are all gone."""
    keep = []
    for start, length, owners in _zero_ranges:
        if any(blk.views() for blk in owners):
            keep.append((start, length, owners))
        else:
            _libc_mmap().munmap(start, length)
    _zero_ranges[:] = keep

UniqueID = UniqueId
UID_SIZE = _pyshmem.ACLSHMEM_UNIQUE_ID_SIZE
# What init's ``uid`` takes: a UniqueID or its 136 bytes.
UniqueIdLike = Union[UniqueId, bytes, bytearray, memoryview]


def get_version() -> str:
    """The library version as ``"libaclshmem_version=X.Y"``."""
    major, minor = _pyshmem.aclshmem_info_get_version()
    return f"libaclshmem_version={major}.{minor}"


def get_unique_id(empty: bool = False) -> bytes:
    """A new unique ID as 136 bytes.  Call it in one process (e.g. rank 0) and hand the
    bytes to every PE.  ``empty`` is reserved.  Raises AclshmemError on failure."""
    uid = UniqueId()
    rc = _pyshmem.aclshmemx_get_uniqueid(uid)
    if rc != _pyshmem.ACLSHMEM_SUCCESS:
        raise native_error("get_unique_id (aclshmemx_get_uniqueid)", rc)
    return uid.to_bytes()


def _uid_bytes(uid: object) -> bytes:
    if isinstance(uid, UniqueId):
        return uid.to_bytes()
    if isinstance(uid, (bytes, bytearray, memoryview)):
        data = bytes(uid)
        if len(data) != UID_SIZE:
            raise AclshmemInvalid(f"uid must be exactly {UID_SIZE} bytes, not {len(data)}")
        return data
    raise AclshmemInvalid(f"uid must be a UniqueID or its {UID_SIZE} bytes, not {type(uid).__name__}")


def init(device: object = None, uid: Optional[UniqueIdLike] = None, rank: Optional[int] = None,
         nranks: Optional[int] = None, mpi_comm: object = None, initializer_method: str = "",
         mem_size: Optional[int] = None, instance_id: int = 0) -> None:
    """Collective: joins the job identified by ``uid`` as PE ``rank`` of ``nranks`` with a
    symmetric heap of ``mem_size`` bytes, as instance ``instance_id`` (0..254).

    ``device`` and ``mpi_comm`` are reserved.  ``initializer_method`` is "uid" (or empty).
    Without ``uid``, the unique ID, rank and PE count come from ``python -m shmem.run`` or
    ``torchrun`` (see ``shmem._bootstrap``); ``mem_size`` may then also come from the
    launcher's ``--mem-size``.  Raises AclshmemInvalid for missing or bad arguments and
    AclshmemError when the library fails.
    """
    instance_id = check_instance_id(instance_id)
    if not isinstance(initializer_method, str) or initializer_method not in ("", "uid"):
        raise AclshmemInvalid(f"initializer_method must be \"uid\", not {initializer_method!r}")

    mem_size = _heap_size(mem_size)
    if rank is not None:
        check_int(rank, "rank", 0)
    if nranks is not None:
        check_int(nranks, "nranks", 1, _pyshmem.ACLSHMEM_MAX_PES)

    server = None
    if uid is not None:
        uid_data = _uid_bytes(uid)
        if rank is None or nranks is None:
            raise AclshmemInvalid("init with a uid also needs rank and nranks")
    else:
        try:
            env = _bootstrap.launcher_env()
        except _bootstrap.BootstrapError as exc:
            raise AclshmemInvalid(f"init: {exc}") from None
        if env is not None:
            if instance_id != 0:
                raise AclshmemInvalid(
                    "init: the launcher's unique ID serves instance 0; pass uid= (one unique ID per "
                    "instance, e.g. made by rank 0 and handed to every PE) for other instances")
            uid_data, env_rank, env_n = env
            rank = env_rank if rank is None else rank
            nranks = _job_size(env_n, _bootstrap.ENV_NPES) if nranks is None else nranks
        else:
            try:
                tr = _bootstrap.torchrun_env()
            except _bootstrap.BootstrapError as exc:
                raise AclshmemInvalid(f"init: {exc}") from None
            if tr is None:
                raise AclshmemInvalid(
                    "init needs uid, rank and nranks (rank 0 makes the uid with get_unique_id() and "
                    "hands the bytes to every PE), or a launcher: python -m shmem.run -n N prog.py, "
                    "or torchrun")
            t_rank, t_world, host, port = tr
            rank = t_rank if rank is None else rank
            nranks = _job_size(t_world, "WORLD_SIZE") if nranks is None else nranks
            if not 0 <= rank < nranks:
                raise AclshmemInvalid(f"rank must satisfy 0 <= rank < nranks, not rank={rank}, nranks={nranks}")
            try:
                uid_data, server = _bootstrap.torchrun_uid(
                    rank, nranks, host, port, instance_id, lambda: get_unique_id())
            except _bootstrap.BootstrapError as exc:
                raise AclshmemError(f"init: {exc}") from None

    check_int(rank, "rank", 0)
    check_int(nranks, "nranks", 1, _pyshmem.ACLSHMEM_MAX_PES)
    if not rank < nranks:
        raise AclshmemInvalid(f"rank must satisfy 0 <= rank < nranks, not rank={rank}, nranks={nranks}")

    # Before the library starts, so that its lines about init reach Python's logging too.
    _logbridge.install_if_configured()
    try:
        with instance_lock:
            attr = _pyshmem.InitAttr()
            rc = _pyshmem.aclshmemx_set_attr_uniqueid_args(rank, nranks, mem_size, uid_data, attr)
            if rc != _pyshmem.ACLSHMEM_SUCCESS:
                raise native_error("init (aclshmemx_set_attr_uniqueid_args)", rc)
            attr.instance_id = instance_id
            rc = _pyshmem.aclshmemx_init_attr(InitMode.UNIQUEID, attr)
            if rc != _pyshmem.ACLSHMEM_SUCCESS:
                raise native_error(f"init of instance {instance_id} as PE {rank} of {nranks}", rc)
            take_leftovers(instance_id)  # nothing can be left of an earlier life of this ID
            memory.forget_instance(instance_id)
            _unmap_unused_zero_pages()
    finally:
        if server is not None:
            server.close()


def _heap_size(mem_size: Optional[int]) -> int:
    """The symmetric heap size of init: ``mem_size``, else the launcher's
    (SHMEM_RUN_MEM_SIZE), within the library's limits; an error names where it came from."""
    name = "mem_size"
    if mem_size is None:
        try:
            mem_size = _bootstrap.default_mem_size()
        except ValueError as exc:
            raise AclshmemInvalid(str(exc)) from None  # names the variable and its value
        if mem_size is None:
            raise AclshmemInvalid("mem_size is required: the symmetric heap size of each PE, in bytes")
        name = _bootstrap.ENV_MEM_SIZE
    return check_int(mem_size, name, 1, _pyshmem.ACLSHMEM_MAX_LOCAL_SIZE)


def _job_size(nranks: int, variable: str) -> int:
    """The PE count that ``variable`` gave, within the library's limits (checked before
    any PE waits for the others)."""
    return check_int(nranks, variable, 1, _pyshmem.ACLSHMEM_MAX_PES)


def _release_leftovers(instance_id: int) -> List[Any]:
    """Releases the blocks of ``instance_id`` that were never freed (with a warning) and
    returns them."""
    leftovers = take_leftovers(instance_id)
    if not leftovers:
        return []
    for blk in leftovers:
        blk.close()
    total = sum(blk.length for blk in leftovers)
    warnings.warn(
        f"finalize: {len(leftovers)} symmetric buffer(s) of instance {instance_id} ({total} bytes) "
        "were not freed; finalize releases them, and Buffer objects that refer to them must not "
        "be used any more",
        AclshmemWarning,
        stacklevel=4,
    )
    return leftovers


def finalize(instance_id: Optional[int] = None) -> None:
    """Collective: finalises the active instance, or ``instance_id`` (0..254).

    Buffers of that instance that were not freed are released (with a warning).  Views of
    its memory that are still alive (memoryviews, NumPy arrays, torch tensors) read zeros
    afterwards instead of faulting (with a warning; see the module's documentation), also
    when finalize fails: raises AclshmemError with the library's reason (e.g. a PE that
    died), and the instance is finalized all the same."""
    with instance_lock:
        _unmap_unused_zero_pages()
        if instance_id is None:
            target = active_instance_id()
            if target is None:
                raise AclshmemError("finalize: no instance is initialised")
            viewed = _before_finalize(target)
            rc = _pyshmem.aclshmem_finalize()
            api = "finalize"
        else:
            target = check_instance_id(instance_id)
            viewed = _before_finalize(target)
            rc = _pyshmem.aclshmemx_finalize(target)
            api = f"finalize({target})"
        # Failed or not, the library has unmapped the heaps (it only reports what went wrong
        # on the way, e.g. a dead peer): the views need their zero pages before we raise.
        _map_zero_pages(viewed)
        if rc != _pyshmem.ACLSHMEM_SUCCESS:
            raise native_error(api, rc)
