"""Symmetric tensors: allocation, the registry of live allocations, peer views, free.

A symmetric tensor is a CPU tensor whose storage is a block of the SHMEM symmetric heap
(``shmem.core.buffer``), wrapped without a copy.  Every PE owns the same block at the same
offset of its own heap, and the heaps of the PEs of one node are mapped into each other,
so the copy of a symmetric tensor on another PE of the node is an ordinary tensor here
(``peer_tensor``).

The module keeps a registry of the live allocations (start address -> allocation), so
that any tensor aliasing symmetric memory - the tensor itself, a view, a slice, a
reinterpretation with ``.view(dtype)`` - resolves to its allocation and byte offset, and
so that anything else is refused with a clear error.

Views kept past free or finalize.  Every tensor of an allocation (the tensor, its views,
the peer tensors) shares one of a few storages made with ``torch.from_dlpack`` from the
allocation's Buffer or its peer views, so each storage is a view the Buffer counts.  Free
and finalize switch every one of those storages to refuse writes (any write through any
view raises), and shmem.core keeps memory with live views out of reuse (free) or mapped
to zero pages (finalize), so a kept view can at worst read stale data or zeros.
"""

import bisect
import math
import threading
import warnings
import weakref

import torch

from shmem import _pyshmem, _state
from shmem import core
from shmem.core import AclshmemError, AclshmemInvalid, AclshmemWarning

__all__ = [
    "aclshmem_create_tensor", "aclshmem_free_tensor", "empty", "zeros", "ones", "full", "like",
    "peer_tensor", "is_symmetric", "FreedTensor", "SUPPORTED_DTYPES", "local_device_count",
]

# Every dtype a symmetric tensor may have: anything with a fixed byte size that torch can
# lay out in memory.  (Quantized and bit-packed dtypes are not plain memory.)
SUPPORTED_DTYPES = tuple(
    dt for dt in (
        torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
        getattr(torch, "uint16", None), getattr(torch, "uint32", None), getattr(torch, "uint64", None),
        torch.float16, torch.bfloat16, torch.float32, torch.float64,
        torch.complex32, torch.complex64, torch.complex128,
        getattr(torch, "float8_e4m3fn", None), getattr(torch, "float8_e5m2", None),
        getattr(torch, "float8_e4m3fnuz", None), getattr(torch, "float8_e5m2fnuz", None),
    ) if dt is not None
)
_SUPPORTED = frozenset(SUPPORTED_DTYPES)

# Symmetric allocations start on this boundary (a cache line, and enough for any dtype and
# for vectorised kernels).
_ALIGNMENT = 64


# ---------------------------------------------------------------------------
# Argument checks
# ---------------------------------------------------------------------------


def check_int(value, name, lo=None, hi=None):
    """A non-bool int (numbers like numpy integers are accepted through __index__)."""
    if isinstance(value, bool) or isinstance(value, float) or value is None:
        raise AclshmemInvalid(f"{name} must be a non-bool integer, not {type(value).__name__} ({value!r})")
    try:
        v = int(value.__index__())
    except (AttributeError, TypeError):
        raise AclshmemInvalid(f"{name} must be a non-bool integer, not {type(value).__name__} ({value!r})") from None
    if lo is not None and v < lo:
        raise AclshmemInvalid(f"{name} must be >= {lo}, not {v}")
    if hi is not None and v > hi:
        raise AclshmemInvalid(f"{name} must be <= {hi}, not {v}")
    return v


def check_dtype(dtype, name="dtype"):
    if not isinstance(dtype, torch.dtype):
        raise AclshmemInvalid(f"{name} must be a torch.dtype (e.g. torch.float32), not "
                              f"{type(dtype).__name__} ({dtype!r})")
    if dtype not in _SUPPORTED:
        raise AclshmemInvalid(f"{name} {dtype} cannot be a symmetric tensor's dtype (quantized and "
                              "bit-packed dtypes are not plain memory)")
    return dtype


def check_shape(shape, name="shape"):
    """A tuple of non-negative ints from an int, a sequence of ints or a torch.Size."""
    if isinstance(shape, torch.Size):
        return tuple(int(s) for s in shape)
    if isinstance(shape, (list, tuple)):
        dims = tuple(check_int(s, f"{name}[{i}]", 0) for i, s in enumerate(shape))
    else:
        try:
            dims = (check_int(shape, name, 0),)
        except AclshmemInvalid:
            raise AclshmemInvalid(f"{name} must be an int, a tuple/list of ints or a torch.Size, "
                                  f"not {type(shape).__name__} ({shape!r})") from None
    return dims


def check_tensor(t, name):
    if isinstance(t, FreedTensor):
        raise AclshmemInvalid(f"{name} was freed by aclshmem_free_tensor and cannot be used any more")
    if not isinstance(t, torch.Tensor):
        raise AclshmemInvalid(f"{name} must be a torch.Tensor, not {type(t).__name__}")
    if t.device.type != "cpu":
        raise AclshmemInvalid(f"{name} must be a CPU tensor (the cpu platform's device is the host), "
                              f"not a tensor on {t.device}")
    if t.layout != torch.strided:
        raise AclshmemInvalid(f"{name} must be a dense (strided) tensor, not {t.layout}")
    return t


def active_instance():
    ctx = _pyshmem.aclshmemx_instance_ctx_get()
    if ctx is None or _pyshmem.aclshmemx_init_status() != _pyshmem.InitStatus.INITIALIZED:
        raise AclshmemError("SHMEM is not initialised: call shmem_torch.init() (or shmem.core.init()) first")
    return ctx.id


def check_pe(pe, name="pe"):
    """A world PE number of the active instance."""
    pe = check_int(pe, name)
    n = _pyshmem.pe_count()
    if n <= 0:
        raise AclshmemError("SHMEM is not initialised: call shmem_torch.init() (or shmem.core.init()) first")
    if not 0 <= pe < n:
        raise AclshmemInvalid(f"{name} must satisfy 0 <= {name} < {n} (the number of PEs), not {pe}")
    return pe


def extent(t):
    """(first byte address, bytes spanned) of the memory a strided tensor can touch."""
    try:
        if t.is_contiguous():
            n = t.numel()
            if n:
                return t.data_ptr(), n * t.element_size()
        if t.numel() == 0:
            # data_ptr() is 0 for an empty tensor; its place is still known from its storage.
            base = t.untyped_storage().data_ptr()
            return (base + t.storage_offset() * t.element_size() if base else 0), 0
        addr = t.data_ptr()
    except RuntimeError:
        # The storage refuses access: it belonged to a symmetric tensor that was freed.
        raise AclshmemInvalid(_freed_message("this tensor (a view kept from a freed symmetric tensor)")) from None
    last = sum((size - 1) * stride for size, stride in zip(t.shape, t.stride()))
    return addr, (last + 1) * t.element_size()


# ---------------------------------------------------------------------------
# Freed tensors
# ---------------------------------------------------------------------------


def _freed_message(what="this tensor"):
    return (f"{what} was freed by aclshmem_free_tensor (or released by finalize): its symmetric "
            "memory is gone and it cannot be used any more")


class FreedTensor(torch.Tensor):
    """The class a symmetric tensor is switched to when it is freed: it holds no memory
    (an empty storage) and every torch operation on it raises ``AclshmemInvalid``."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", None) or str(func)
        raise AclshmemInvalid(f"{name}: " + _freed_message("this tensor"))

    def __repr__(self):
        return "FreedTensor(<symmetric memory freed>)"

    __str__ = __repr__

    def __hash__(self):
        return id(self)

    def __reduce_ex__(self, protocol):
        raise AclshmemInvalid(_freed_message())


def _refuse_writes(flat):
    """Every later write through any tensor sharing ``flat``'s storage raises."""
    try:
        torch._C._set_throw_on_mutable_data_ptr(flat)
    except (AttributeError, RuntimeError):
        pass


def _detach(t):
    """Points ``t`` at an empty storage and makes every later use raise."""
    if t is None or isinstance(t, FreedTensor):
        return
    with torch.no_grad():
        try:
            # Writes through views the user made of this tensor raise from now on (reads
            # through such views cannot be caught: do not keep views past free).
            torch._C._set_throw_on_mutable_data_ptr(t)
        except (AttributeError, RuntimeError):
            pass
        t.set_()
    try:
        t.__class__ = FreedTensor
    except TypeError:  # a tensor subclass with its own layout: it keeps only the empty storage
        pass


# ---------------------------------------------------------------------------
# The registry
# ---------------------------------------------------------------------------


class _Allocation:
    """One symmetric allocation made by this module."""

    __slots__ = ("buffer", "base", "nbytes", "instance_id", "tensor_ref", "storage_key", "peers", "pieces",
                 "freed", "__weakref__")

    def __init__(self, buffer, nbytes, instance_id):
        self.buffer = buffer
        self.base = buffer.addr
        self.nbytes = nbytes
        self.instance_id = instance_id
        self.tensor_ref = None
        self.storage_key = None  # identity of the storage every tensor of the allocation shares
        self.peers = {}  # world PE -> flat uint8 tensor over that PE's copy (None: not mapped)
        self.pieces = []  # tensors with storages of their own (misaligned peer views)
        self.freed = False

    def alive(self):
        return not self.freed and not self.buffer.release_called

    def close(self):
        """Makes every storage of the allocation refuse writes and drops this module's
        references to them (before the memory is freed or unmapped)."""
        for flat in [*self.peers.values(), *self.pieces]:
            if flat is not None:
                _refuse_writes(flat)
        self.peers.clear()
        self.pieces.clear()

    def peer_flat(self, pe):
        """A flat uint8 tensor over PE ``pe``'s copy of the whole allocation, or None when
        that PE's heap is not mapped here (another node)."""
        try:
            return self.peers[pe]
        except KeyError:
            pass
        flat = None
        peer = core.get_peer_buffer(self.buffer, pe)
        if peer is not None:
            flat = torch.from_dlpack(peer)
        self.peers[pe] = flat
        return flat


_lock = threading.RLock()
_allocs = {}  # base address -> _Allocation
_bases = []  # sorted base addresses
# storage identity -> _Allocation, for the allocations registered with one: the fast path of
# resolve.  Sound because a registered allocation keeps its storage alive (peers[my_pe]
# shares it), so no other storage can have that identity until free or finalize
# unregisters the allocation; an ordinary tensor's storage is never in it.
_by_storage = {}
_keyless = 0  # registered allocations without a storage identity (the fast path cannot say no)


def _register(alloc):
    global _keyless
    with _lock:
        _allocs[alloc.base] = alloc
        bisect.insort(_bases, alloc.base)
        if alloc.storage_key is None:
            _keyless += 1
        else:
            _by_storage[alloc.storage_key] = alloc


def _unregister(alloc):
    global _keyless
    with _lock:
        if _allocs.get(alloc.base) is alloc:
            del _allocs[alloc.base]
            i = bisect.bisect_left(_bases, alloc.base)
            if i < len(_bases) and _bases[i] == alloc.base:
                del _bases[i]
            if alloc.storage_key is None:
                _keyless -= 1
            elif _by_storage.get(alloc.storage_key) is alloc:
                del _by_storage[alloc.storage_key]


def _find(addr):
    with _lock:
        i = bisect.bisect_right(_bases, addr) - 1
        if i < 0:
            return None
        return _allocs[_bases[i]]


def _storage_key(t):
    """An identity of the storage object under ``t`` (shared by all its views)."""
    try:
        return t.untyped_storage()._cdata
    except (AttributeError, RuntimeError):
        return None


def _indexed(t):
    """(allocation, byte offset) of a non-empty tensor whose storage is that of a live
    allocation of the active instance, found by the storage's identity (no search, no
    error); None when that does not settle it (``resolve`` then decides).  ``t`` is a
    checked CPU strided tensor."""
    alloc = _by_storage.get(_storage_key(t))
    if alloc is None or not alloc.alive():
        return None
    state = _state.active_state or _state.active_instance()
    if state is None or state[0] != alloc.instance_id:
        return None
    addr, span = extent(t)
    if span <= 0 or addr < alloc.base or addr + span > alloc.base + alloc.nbytes:
        return None
    return alloc, addr - alloc.base


def resolve(t, name="tensor"):
    """(allocation, byte offset) of a tensor that lies in a live symmetric allocation of
    the active instance; AclshmemInvalid otherwise."""
    check_tensor(t, name)
    found = _indexed(t)
    if found is not None:
        return found
    addr, span = extent(t)
    alloc = _find(addr) if addr else None
    if alloc is None or addr + span > alloc.base + alloc.nbytes or (span == 0 and addr > alloc.base + alloc.nbytes):
        raise AclshmemInvalid(
            f"{name} is not a symmetric tensor: its memory is not in an allocation made by "
            "aclshmem_create_tensor / shmem_torch.empty/zeros/full/like (allocate it with one of those)")
    if alloc.storage_key is not None and _storage_key(t) != alloc.storage_key:
        # Same addresses, another storage: a view kept from a tensor that was freed, whose
        # memory now belongs to a newer allocation.
        raise AclshmemInvalid(_freed_message(f"{name} (a view kept from a freed symmetric tensor)"))
    if not alloc.alive():
        _unregister(alloc)
        raise AclshmemInvalid(_freed_message(f"{name}'s memory"))
    active = active_instance()
    if alloc.instance_id != active:
        raise AclshmemInvalid(f"{name} was allocated by SHMEM instance {alloc.instance_id} but the active "
                              f"instance is {active}")
    return alloc, addr - alloc.base


def is_symmetric(t):
    """True when ``t`` lies entirely in a live symmetric allocation of the active instance."""
    if isinstance(t, torch.Tensor) and not isinstance(t, FreedTensor) and t.layout == torch.strided and t.is_cpu:
        # the common cases without an exception: a tensor of a live allocation, or (while
        # every allocation is in the storage index) any storage that is not in it
        if _indexed(t) is not None:
            return True
        if not _keyless and _storage_key(t) not in _by_storage:
            return False
    try:
        resolve(t)
    except (AclshmemInvalid, AclshmemError):
        return False
    return True


def live_allocations(instance_id=None):
    with _lock:
        return [a for a in _allocs.values() if instance_id is None or a.instance_id == instance_id]


# ---------------------------------------------------------------------------
# device_id
# ---------------------------------------------------------------------------

_local_counts = {}  # (instance id, heap base) -> PEs on this node


def local_device_count():
    """How many PEs share this node (their heaps are mapped into this process).  On the
    cpu platform every one of them has the host as its device, so ``device_id`` may be any
    number from 0 to this count minus one (0, or the node-local rank, as code written for
    NPUs passes)."""
    iid = active_instance()
    base = _pyshmem.aclshmemx_get_heap_base()
    key = (iid, base)
    n = _local_counts.get(key)
    if n is None:
        n = sum(1 for pe in range(_pyshmem.pe_count()) if _pyshmem.aclshmem_ptr(base, pe))
        _local_counts[key] = max(n, 1)
    return _local_counts[key]


def check_device_id(device_id):
    d = check_int(device_id, "device_id")
    n = local_device_count()
    if not 0 <= d < n:
        raise AclshmemInvalid(
            f"device_id must be in [0, {n}) (the cpu platform has one device, the host, and a node "
            f"of {n} PE(s) may name it 0 or by the PE's node-local rank), not {d}")
    return d


# ---------------------------------------------------------------------------
# Creation and free
# ---------------------------------------------------------------------------


def aclshmem_create_tensor(shape, dtype=torch.float32, device_id=0):
    """Collective: a ``torch.Tensor`` of ``shape`` and ``dtype`` whose storage is the
    symmetric heap (uninitialised, like ``torch.empty``).

    Every PE must call it in the same order with the same shape and dtype (the library
    checks and fails on every PE otherwise).  ``device_id`` names the device: on this
    platform the host, which a node of k PEs may call 0 .. k-1 (0, or the node-local rank);
    other values raise ``AclshmemInvalid``.  The tensor lives until ``aclshmem_free_tensor``
    (or ``finalize``) releases it; dropping it does not free the memory.
    """
    dims = check_shape(shape)
    dtype = check_dtype(dtype)
    active_instance()
    check_device_id(device_id)
    numel = math.prod(dims)
    itemsize = torch.empty((), dtype=dtype).element_size()
    nbytes = numel * itemsize
    for first, _ in _allocation_hooks:
        first(active_instance())
    buf = core.align(_ALIGNMENT, max(nbytes, 1))  # collective; a 0-element tensor still takes a slot
    try:
        alloc = _Allocation(buf, nbytes, active_instance())
        # One storage over the whole block: this PE's own entry of the peer table, and the
        # storage of the tensor and of every view of it.
        flat = torch.from_dlpack(buf)
        alloc.peers[_pyshmem.my_pe()] = flat
        # The same storage, but not a view of flat: a view would keep flat (its ._base,
        # which free cannot clear) and with it the Buffer export alive after free.
        t = torch.empty(0, dtype=dtype).set_(flat.untyped_storage(), 0, dims)
    except BaseException:
        core.free(buf)
        raise
    alloc.tensor_ref = weakref.ref(t)
    alloc.storage_key = _storage_key(t)
    _register(alloc)
    return t


def aclshmem_free_tensor(tensor):
    """Collective: releases the symmetric memory of a tensor made by
    ``aclshmem_create_tensor`` (or ``empty``/``zeros``/``full``/``like``).

    Afterwards the tensor holds no memory and every use of it raises ``AclshmemInvalid``.
    Freeing twice, freeing a view or slice (free the tensor the allocation returned), or
    freeing a tensor that was not allocated here raises ``AclshmemInvalid``.
    """
    if isinstance(tensor, FreedTensor):
        raise AclshmemInvalid("aclshmem_free_tensor: this tensor has been freed already")
    if not isinstance(tensor, torch.Tensor):
        raise AclshmemInvalid(f"aclshmem_free_tensor needs a torch.Tensor, not {type(tensor).__name__}")
    try:
        alloc, offset = resolve(tensor)
    except AclshmemInvalid as exc:
        raise AclshmemInvalid(f"aclshmem_free_tensor: {exc}") from None
    original = alloc.tensor_ref() if alloc.tensor_ref is not None else None
    if original is not None and original is not tensor:
        raise AclshmemInvalid(
            "aclshmem_free_tensor: this tensor is a view or slice of a symmetric tensor; free the tensor "
            "that aclshmem_create_tensor returned")
    if original is None and offset != 0:
        raise AclshmemInvalid("aclshmem_free_tensor: this tensor does not start at its symmetric "
                              "allocation; free the tensor that aclshmem_create_tensor returned")
    with _lock:
        if alloc.freed:
            raise AclshmemInvalid("aclshmem_free_tensor: this tensor has been freed already")
        alloc.freed = True
        _unregister(alloc)
    alloc.close()
    _detach(tensor)
    core.free(alloc.buffer)  # collective


def release_instance(instance_id):
    """Detaches every tensor of ``instance_id`` still allocated (before its finalize) and
    returns how many there were.  Their memory is released by the finalize that follows."""
    leftovers = live_allocations(instance_id)
    for alloc in leftovers:
        with _lock:
            alloc.freed = True
            _unregister(alloc)
        alloc.close()
        t = alloc.tensor_ref() if alloc.tensor_ref is not None else None
        _detach(t)
    return len(leftovers)


# ---------------------------------------------------------------------------
# Factories
# ---------------------------------------------------------------------------


def _fill_and_sync(t, fill):
    with torch.no_grad():
        fill(t)
    # Every PE has filled its copy before anyone returns, so a peer's first put is not
    # overwritten by a late fill.
    _world_barrier()


def call_checked(api, fn, *args):
    """Calls a libaclshmem function that reports failure only through the thread's last
    error (the void ones) and raises AclshmemError with that message.  Returns fn's
    result."""
    try:
        _pyshmem.aclshmemx_clear_last_error()
        before = ""
    except AttributeError:  # a library without aclshmemx_clear_last_error
        before = _pyshmem.aclshmemx_get_last_error()
    result = fn(*args)
    after = _pyshmem.aclshmemx_get_last_error()
    if after and after != before:
        raise AclshmemError(f"{api} failed: {after}")
    return result


def _world_barrier():
    call_checked("barrier_all", _pyshmem.aclshmem_barrier_all)


def empty(*shape, dtype=torch.float32, device_id=0):
    """Collective: an uninitialised symmetric tensor (``shmem_torch.empty(2, 3)`` or
    ``empty((2, 3))``)."""
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = shape[0]
    return aclshmem_create_tensor(shape, dtype=dtype, device_id=device_id)


def zeros(*shape, dtype=torch.float32, device_id=0):
    """Collective: a symmetric tensor of zeros; returns when every PE has filled its copy."""
    t = empty(*shape, dtype=dtype, device_id=device_id)
    _fill_and_sync(t, lambda x: x.zero_())
    return t


def ones(*shape, dtype=torch.float32, device_id=0):
    """Collective: a symmetric tensor of ones; returns when every PE has filled its copy."""
    t = empty(*shape, dtype=dtype, device_id=device_id)
    _fill_and_sync(t, lambda x: x.fill_(1))
    return t


def full(shape, fill_value, dtype=torch.float32, device_id=0):
    """Collective: a symmetric tensor filled with ``fill_value``; returns when every PE has
    filled its copy.  ``fill_value`` may differ between PEs."""
    t = aclshmem_create_tensor(shape, dtype=dtype, device_id=device_id)
    _fill_and_sync(t, lambda x: x.fill_(fill_value))
    return t


def like(tensor, copy=True, device_id=0):
    """Collective: a symmetric tensor with ``tensor``'s shape and dtype holding a copy of
    its values (``copy=False``: uninitialised).  Returns when every PE has its copy."""
    check_tensor(tensor, "tensor")
    t = aclshmem_create_tensor(tuple(tensor.shape), dtype=check_dtype(tensor.dtype), device_id=device_id)
    if copy:
        _fill_and_sync(t, lambda x: x.copy_(tensor))
    return t


# ---------------------------------------------------------------------------
# Peer views
# ---------------------------------------------------------------------------


def peer_view(alloc, offset, t, pe):
    """``t`` (which lies at ``offset`` in ``alloc``) as seen in PE ``pe``'s copy, or None
    when that PE is not mapped here."""
    flat = alloc.peer_flat(pe)
    if flat is None:
        return None
    dtype = t.dtype
    if t.numel() == 0:
        return flat[offset:offset].view(dtype).view(t.shape)
    _, span = extent(t)
    piece = flat[offset:offset + span]
    itemsize = t.element_size()
    if offset % itemsize:
        # A reinterpreted, misaligned view: go through a tensor built at that address.
        pbuf = core.get_peer_buffer(alloc.buffer, pe)[offset:offset + span]
        piece = torch.from_dlpack(pbuf).view(dtype)
        alloc.pieces.append(piece)
    else:
        piece = piece.view(dtype)
    if t.is_contiguous():
        return piece.view(t.shape)
    return piece.as_strided(t.shape, t.stride())


def peer_tensor(tensor, pe):
    """A zero-copy view of PE ``pe``'s copy of the symmetric tensor ``tensor`` (or of a
    view or slice of one): reading it reads that PE's memory, ``peer.copy_(x)`` writes it.

    ``pe`` is a world PE number; for a PE on another node, whose memory is not mapped
    here, it returns None (use ``put``/``get`` for it).  The view is valid while the tensor
    is allocated; after ``aclshmem_free_tensor`` (or finalize) writes through it raise
    and reads see stale data (or zeros after finalize)."""
    alloc, offset = resolve(tensor, "tensor")
    pe = check_pe(pe)
    return peer_view(alloc, offset, tensor, pe)


def finalize_warning(count, instance_id):
    warnings.warn(
        f"finalize: {count} symmetric tensor(s) of instance {instance_id} were not freed with "
        "aclshmem_free_tensor; they are released now and cannot be used any more",
        AclshmemWarning, stacklevel=3)


_allocation_hooks = []  # (before_allocation, before_release) pairs


def register_allocation_hook(before_allocation, before_release):
    """Registers ``before_allocation(instance_id)``, called on every PE before each symmetric
    tensor is allocated (so the hook may allocate symmetric memory of its own, collectively,
    at the same moment on every PE), and ``before_release(instance_id)``, called before the
    tensors still allocated are counted and released at finalize (so the hook may free its
    own without a warning)."""
    if (before_allocation, before_release) not in _allocation_hooks:
        _allocation_hooks.append((before_allocation, before_release))


def _detach_before_finalize(instance_id):
    """Finalize unmaps the heaps: tensors still pointing there must raise, not crash."""
    for _, release in list(_allocation_hooks):
        release(instance_id)
    count = release_instance(instance_id)
    if count:
        finalize_warning(count, instance_id)


core.register_finalize_hook(_detach_before_finalize)
