"""The torch.distributed backend ``"shmem"``: ``dist.init_process_group("shmem")``.

Importing ``shmem_torch`` registers the backend for CPU tensors, so that ordinary
torch.distributed code (``dist.all_reduce``, DDP, ...) runs on the shmem_torch collectives::

    import torch.distributed as dist
    import shmem_torch  # noqa: F401  (registers "shmem")

    dist.init_process_group("shmem")   # torchrun, torch.multiprocessing or python -m shmem.run
    dist.all_reduce(t)                 # any CPU tensor

How it works
------------

* **Start.**  The process group that is created while SHMEM is not running becomes the
  SHMEM world: PE i is its rank i.  Rank 0 makes the unique ID and hands it to the others
  through the group's store; ``python -m shmem.run`` jobs use the launcher's unique ID, and
  a SHMEM instance 0 that is already running with the same ranks is used as it is.  Then
  every PE allocates the **pool**, a symmetric block of ``SHMEM_TORCH_POOL_SIZE`` bytes
  (default 256 MiB; the heap is sparse, so pages cost memory only once touched).
* **Staging.**  A tensor that is not symmetric is copied into the pool, the shmem_torch
  collective runs on the pool, and the result is copied back, chunk by chunk
  (``SHMEM_TORCH_CHUNK_SIZE``), so tensors of any size pass through a pool of any size
  (all_reduce copies in only what the other ranks reduce and copies the results straight
  into the tensor: see ``_staged_all_reduce``).  A
  tensor that already is symmetric (``shmem_torch.empty`` ...) is used in place (zero-copy)
  when every rank passes the same symmetric tensor.
* **Checks.**  Before a collective the ranks compare what they were asked to do (which
  call, dtype, number of elements, operation, root): a mismatch raises the same clear
  error on every rank instead of hanging or mixing data.  It costs one barrier per
  collective; ``SHMEM_TORCH_CHECK=0`` turns it off for all_reduce, broadcast, all_gather
  and reduce_scatter (then ranks must agree by themselves, and a symmetric tensor is used
  in place only if every rank passes the same one).
* **Sub-groups.**  ``dist.new_group(ranks)`` with ranks ``start, start + stride, ...``
  becomes a SHMEM team (``aclshmem_team_split_strided``, collective over the world, which
  ``new_group`` is).  Other rank sets, and groups made with
  ``use_local_synchronization=True``, are served by gloo (with a warning).
* **Point-to-point.**  Every PE has a mailbox slot per peer in its pool
  (``SHMEM_TORCH_P2P_SLOT`` bytes).  A send puts a chunk into the receiver's slot and
  signals it (put-with-signal); the receiver copies it out and acknowledges it; messages
  between two ranks arrive in order.  ``isend`` / ``irecv`` return a Work that advances
  whenever the process waits on (or asks about) any point-to-point Work.  A message larger
  than the slot moves chunk by chunk, so its sender must keep waiting on it while the
  receiver receives.
* **Small all_reduce.**  An all_reduce of the world group of at most 64 KiB goes through
  two small areas of the pool used in turn: copy in, one barrier (which also carries the
  check), then every rank folds the copies straight into its tensor.  Three barriers
  (check, collective, reuse) became one, which is what a small all_reduce costs when the
  ranks share cores.
* **Work.**  Collectives complete before they return (their Work is completed);
  ``async_op=True`` returns the same completed Work.
"""

import collections
import ctypes
import os
import sys
import threading
import time
import warnings
from datetime import timedelta

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import _create_work_from_future

from shmem import _pyshmem
from shmem import core
from shmem.core import AclshmemError, AclshmemInvalid

from . import collectives as _coll
from .amo import atomic_set
from .rma import get, put, put_signal
from .tensor import SUPPORTED_DTYPES, aclshmem_free_tensor, empty, is_symmetric, peer_tensor

__all__ = ["BACKEND_NAME", "register", "is_registered", "DEFAULT_POOL_SIZE", "DEFAULT_CHUNK_SIZE",
           "ShmemProcessGroup"]

BACKEND_NAME = "shmem"

# Environment variables (sizes take K/M/G suffixes: 256M, 1G).
POOL_SIZE_ENV = "SHMEM_TORCH_POOL_SIZE"
MEM_SIZE_ENV = "SHMEM_TORCH_MEM_SIZE"
CHUNK_SIZE_ENV = "SHMEM_TORCH_CHUNK_SIZE"
P2P_SLOT_ENV = "SHMEM_TORCH_P2P_SLOT"
CHECK_ENV = "SHMEM_TORCH_CHECK"

DEFAULT_POOL_SIZE = 256 << 20
DEFAULT_CHUNK_SIZE = 4 << 20
# The heap of a SHMEM the backend starts: the pool plus this much for the program's own
# symmetric tensors (sparse, like the pool).
HEAP_EXTRA = 1 << 30

_ALIGN = 64
_FP_WORDS = 8  # int64 words of one fingerprint slot
_FP_BYTES = _FP_WORDS * 8
_HDR_BYTES = 64  # header of a mailbox chunk
# all_reduce of the world group up to this many bytes takes one barrier instead of three:
# it goes through two areas of this size used in turn (see ShmemProcessGroup._small_all_reduce).
_SMALL_BYTES = 64 << 10

_lock = threading.RLock()
_runtime = None  # the _Runtime serving the "shmem" groups of this process
_generation = 0  # how many times this process started the backend's SHMEM


def _size_env(name, default):
    text = os.environ.get(name, "").strip()
    if not text:
        return default
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


def _round_up(n, a=_ALIGN):
    return -(-n // a) * a


# ---------------------------------------------------------------------------
# Argument checks and codes
# ---------------------------------------------------------------------------

_DTYPE_CODE = {dt: i + 1 for i, dt in enumerate(SUPPORTED_DTYPES)}
_CODE_DTYPE = {i: dt for dt, i in _DTYPE_CODE.items()}

_RED = {
    dist.ReduceOp.RedOpType.SUM: "sum",
    dist.ReduceOp.RedOpType.AVG: "avg",
    dist.ReduceOp.RedOpType.PRODUCT: "prod",
    dist.ReduceOp.RedOpType.MIN: "min",
    dist.ReduceOp.RedOpType.MAX: "max",
    dist.ReduceOp.RedOpType.BAND: "band",
    dist.ReduceOp.RedOpType.BOR: "bor",
    dist.ReduceOp.RedOpType.BXOR: "bxor",
}
_OP_NAMES = ["", "sum", "avg", "prod", "min", "max", "band", "bor", "bxor"]
_OP_CODE = {name: i for i, name in enumerate(_OP_NAMES)}
_BITWISE = {"band": torch.bitwise_and, "bor": torch.bitwise_or, "bxor": torch.bitwise_xor}
_BITWISE_DTYPES = frozenset(dt for dt in (
    torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
    getattr(torch, "uint16", None), getattr(torch, "uint32", None), getattr(torch, "uint64", None)) if dt)

# what each call is, for the fingerprints
_KINDS = ["", "all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor", "reduce_scatter",
          "reduce_scatter_tensor", "gather", "scatter", "all_to_all", "all_to_all_single", "barrier",
          "all_reduce_coalesced"]
_KIND = {name: i for i, name in enumerate(_KINDS)}


def _op_of(redop, call, dtype):
    """The shmem_torch name of a torch.distributed ReduceOp for ``dtype``."""
    key = getattr(redop, "op", redop)
    name = _RED.get(key)
    if name is None:
        raise AclshmemInvalid(f"shmem backend: {call} does not support {key} (supported: SUM, AVG, PRODUCT, MIN, "
                              "MAX, and BAND/BOR/BXOR for integer and bool tensors)")
    if name in _BITWISE and dtype not in _BITWISE_DTYPES:
        raise AclshmemInvalid(f"shmem backend: {call}: ReduceOp.{key.name} needs an "
                              f"integer or bool tensor, not {dtype}")
    if name in ("sum", "avg", "prod", "min", "max"):
        try:
            _coll._Reduction(name, dtype)
        except AclshmemInvalid as exc:
            raise AclshmemInvalid(f"shmem backend: {call} with ReduceOp.{key.name}: {exc}") from None
    return name


def _check_tensor(t, call, name="tensor"):
    if not isinstance(t, torch.Tensor):
        raise AclshmemInvalid(f"shmem backend: {call}: {name} must be a torch.Tensor, not {type(t).__name__}")
    if t.device.type != "cpu":
        raise AclshmemInvalid(f"shmem backend: {call}: {name} is on device '{t.device}'; the shmem backend "
                              "handles CPU tensors only (use a 'cpu:shmem,cuda:nccl' style backend string, "
                              "or move the tensor to the CPU)")
    if t.layout != torch.strided:
        raise AclshmemInvalid(f"shmem backend: {call}: {name} must be a dense (strided) tensor, not {t.layout}")
    if t.dtype not in _DTYPE_CODE:
        raise AclshmemInvalid(f"shmem backend: {call}: {name} has dtype {t.dtype}, which is not plain memory "
                              "(quantized and bit-packed dtypes are not supported)")
    return t


def _one(tensors, call, name="tensors"):
    if not isinstance(tensors, (list, tuple)) or len(tensors) != 1:
        n = len(tensors) if isinstance(tensors, (list, tuple)) else type(tensors).__name__
        raise AclshmemInvalid(f"shmem backend: {call} takes exactly one tensor per process ({name}), not {n}")
    return _check_tensor(tensors[0], call)


def _same_dtype(a, b, call):
    if a.dtype != b.dtype:
        raise AclshmemInvalid(f"shmem backend: {call}: output and input must have the same dtype, not "
                              f"{a.dtype} and {b.dtype}")


def _nbytes(t):
    return t.numel() * t.element_size()


def _bytes(t):
    """A flat uint8 view of a contiguous tensor."""
    flat = t.reshape(-1)
    if flat.dtype == torch.uint8:
        return flat
    if flat.numel() == 0:
        return torch.empty(0, dtype=torch.uint8)
    return flat.view(torch.uint8)


class _Contig:
    """A contiguous stand-in of a tensor (itself when contiguous) written back on close."""

    __slots__ = ("t", "c", "write")

    def __init__(self, t, write):
        self.t = t
        self.c = t if t.is_contiguous() else t.contiguous()
        self.write = write and self.c is not t

    def close(self):
        if self.write:
            with torch.no_grad():
                self.t.copy_(self.c)


class _Serve:
    """``with _Serve(pg, call) as (rt, team):`` the body of a call of process group pg:
    under the backend's lock, autograd off, and with the collectives' thread policy
    (shmem_torch.collectives.compute_threads), so that the staging copies of a rank that
    shares the cores with the others start no OpenMP parallel region (whose workers spin
    for milliseconds after it and take the CPU the other ranks need)."""

    __slots__ = ("pg", "call", "scope")

    def __init__(self, pg, call):
        self.pg = pg
        self.call = call
        self.scope = None

    def __enter__(self):
        _lock.acquire()
        try:
            rt, team = self.pg._begin(self.call)
            self.scope = _coll._Scope(rt.heap_base)
            self.scope.__enter__()
        except BaseException:
            _lock.release()
            raise
        return rt, team

    def __exit__(self, *exc):
        try:
            self.scope.__exit__(*exc)
        finally:
            _lock.release()
        return False


def _done(result):
    fut = torch.futures.Future()
    fut.set_result(result)
    return _create_work_from_future(fut)


# ---------------------------------------------------------------------------
# Teams
# ---------------------------------------------------------------------------


class _Team:
    """A SHMEM team serving a process group: its id, this PE's index, the world PE of each
    index, and the sequence number of the group's collectives (for the fingerprint slots)."""

    __slots__ = ("id", "n", "me", "pes", "seq", "owned")

    def __init__(self, team_id, pes, me, owned):
        self.id = team_id
        self.pes = list(pes)
        self.n = len(self.pes)
        self.me = me
        self.seq = 0
        self.owned = owned


# ---------------------------------------------------------------------------
# The runtime: SHMEM, the pool, point-to-point state
# ---------------------------------------------------------------------------


class _Runtime:
    def __init__(self):
        self.owns_shmem = False
        self.pool = None
        self.groups = []  # weak-ish: ProcessGroups created on this runtime (for shutdown)
        self.world_global_ranks = None

    # -- start / stop ------------------------------------------------------

    @classmethod
    def start(cls, store, rank, size, timeout, global_ranks):
        global _generation
        rt = cls()
        pool_size = _size_env(POOL_SIZE_ENV, DEFAULT_POOL_SIZE)
        rt.chunk = max(_ALIGN, _round_up(_size_env(CHUNK_SIZE_ENV, DEFAULT_CHUNK_SIZE)))
        rt.check = os.environ.get(CHECK_ENV, "1").strip().lower() not in ("0", "false", "no", "off")
        status = _pyshmem.aclshmemx_init_status()
        if status == _pyshmem.InitStatus.INITIALIZED:
            pe, npes = _pyshmem.my_pe(), _pyshmem.pe_count()
            if (pe, npes) != (rank, size):
                raise AclshmemError(
                    f"shmem backend: SHMEM is already running with this process as PE {pe} of {npes}, but the "
                    f"process group has it as rank {rank} of {size}; finalize SHMEM first, or start the "
                    "process group with the same ranks")
        else:
            _generation += 1
            mem_size = _size_env(MEM_SIZE_ENV, 0) or None
            launcher = _launcher_matches(rank, size)
            if mem_size is None:
                if launcher and os.environ.get("SHMEM_RUN_MEM_SIZE"):
                    mem_size = _size_env("SHMEM_RUN_MEM_SIZE", 0)
                    if mem_size < pool_size + (8 << 20):
                        mem_size = pool_size + HEAP_EXTRA
                else:
                    mem_size = pool_size + HEAP_EXTRA
            if launcher:
                core.init(mem_size=mem_size)
            else:
                uid = _exchange_uid(store, rank, size, timeout, _generation)
                core.init(uid=uid, rank=rank, nranks=size, mem_size=mem_size, initializer_method="uid")
                _pyshmem.aclshmem_barrier_all()
                if rank == 0:
                    try:
                        store.delete_key(_uid_key(_generation))
                    except Exception:
                        pass
            rt.owns_shmem = True
        rt.n_world = _pyshmem.pe_count()
        rt.my_pe = _pyshmem.my_pe()
        rt.world_global_ranks = list(global_ranks) if global_ranks else list(range(size))
        try:
            rt._layout(pool_size)
        except BaseException:
            if rt.owns_shmem:
                core.finalize()
            raise
        return rt

    def _layout(self, pool_size):
        n = self.n_world
        max_teams = _pyshmem.ACLSHMEM_MAX_TEAMS
        self.fp_off = 0
        self.sig_off = _round_up(max_teams * 2 * _FP_BYTES)
        self.ready_off = self.sig_off
        self.ack_off = self.sig_off + _round_up(4 * n)
        ctrl = self.ack_off + _round_up(4 * n)
        slot = _size_env(P2P_SLOT_ENV, 0)
        if not slot:
            slot = min(4 << 20, max(64 << 10, pool_size // (4 * max(n, 1))))
        self.slot = _round_up(max(slot, _HDR_BYTES + _ALIGN), 4096)
        self.mbox_off = _round_up(ctrl, 4096)
        self.small_off = _round_up(self.mbox_off + n * self.slot, 4096)
        self.stage_off = self.small_off + 2 * _SMALL_BYTES
        total = max(pool_size, self.stage_off + (1 << 20))
        if total != pool_size and os.environ.get(POOL_SIZE_ENV):
            warnings.warn(f"{POOL_SIZE_ENV}={pool_size} leaves no room for staging next to the control area "
                          f"and {n} mailboxes of {self.slot} bytes; the pool has {total} bytes instead",
                          RuntimeWarning, stacklevel=3)
        self.stage_bytes = total - self.stage_off
        self.pool = empty(total, dtype=torch.uint8)  # collective over the world
        self.pool_bytes = total
        import numpy as np

        self.np_pool = self.pool.numpy()
        self.fp_np = self.np_pool[self.fp_off:self.sig_off].view(np.int64)
        self.fp_np[:] = 0
        self.ready_t = self.pool[self.ready_off:self.ready_off + 4 * n].view(torch.int32)
        self.ack_t = self.pool[self.ack_off:self.ack_off + 4 * n].view(torch.int32)
        self.ready_np = self.np_pool[self.ready_off:self.ready_off + 4 * n].view(np.int32)
        self.ack_np = self.np_pool[self.ack_off:self.ack_off + 4 * n].view(np.int32)
        self.ready_np[:] = 0
        self.ack_np[:] = 0
        self.heap_base = _pyshmem.aclshmemx_get_heap_base()
        self.peer_pools = {}
        for pe in range(n):
            self.peer_pools[pe] = self.pool if pe == self.my_pe else peer_tensor(self.pool, pe)
        self.peer_np = {pe: (None if t is None else t.numpy()) for pe, t in self.peer_pools.items()}
        # point-to-point
        self.tx_seq = [0] * n
        self.rx_seq = [0] * n
        self.sendq = collections.defaultdict(collections.deque)
        self.recvq = collections.defaultdict(collections.deque)
        self.anyq = collections.deque()
        self.pending = 0
        self.world_team = _Team(_pyshmem.ACLSHMEM_TEAM_WORLD, range(n), self.my_pe, owned=False)
        _pyshmem.aclshmem_barrier_all()  # every PE has cleared its control words

    def alive(self):
        return (self.pool is not None and _pyshmem.aclshmemx_init_status() == _pyshmem.InitStatus.INITIALIZED
                and is_symmetric(self.pool))

    def require(self, call):
        if self.pool is None or _pyshmem.aclshmemx_init_status() != _pyshmem.InitStatus.INITIALIZED:
            raise AclshmemError(f"shmem backend: {call}: SHMEM was finalised (shmem_torch.finalize or "
                                "shmem.core.finalize) while the 'shmem' process group was alive; destroy the "
                                "process group first")

    def shutdown(self):
        """Frees the pool and the teams; finalises SHMEM if the backend started it
        (collective, from destroy_process_group on every rank)."""
        global _runtime
        if _runtime is self:
            _runtime = None
        if self.pool is None:
            return
        live = _pyshmem.aclshmemx_init_status() == _pyshmem.InitStatus.INITIALIZED
        pool, self.pool = self.pool, None
        self.np_pool = self.fp_np = self.ready_np = self.ack_np = None
        self.ready_t = self.ack_t = None
        self.peer_pools = {}
        self.peer_np = {}
        self.sendq.clear()
        self.recvq.clear()
        self.anyq.clear()
        import gc

        gc.collect()  # views of the pool (numpy, slices) go before it is freed
        if not live:
            return
        for g in list(self.groups):
            team = getattr(g, "_team", None)
            if team is not None and team.owned:
                team.owned = False
                try:
                    _pyshmem.team_destroy(team.id)
                except Exception:
                    pass
        try:
            if is_symmetric(pool):
                aclshmem_free_tensor(pool)
        finally:
            if self.owns_shmem:
                from .distributed import finalize

                finalize()

    # -- pool access --------------------------------------------------------

    def small(self, pe, parity, nbytes):
        """The first nbytes of PE pe's small area ``parity`` as a 1-D uint8 tensor: a view
        when that PE's pool is mapped here, else a copy fetched with get (another node)."""
        return self.peer_bytes(pe, self.small_off + parity * _SMALL_BYTES, nbytes)

    def peer_bytes(self, pe, start, nbytes):
        """Bytes [start, start + nbytes) of PE pe's pool as a uint8 tensor: a view when that
        PE's pool is mapped here, else a copy fetched with get (another node)."""
        pool = self.peer_pools.get(pe)
        if pool is not None:
            return pool[start:start + nbytes]
        copy = torch.empty(nbytes, dtype=torch.uint8)
        get(copy, self.pool[start:start + nbytes], pe)
        return copy

    def stage_addr(self, offset):
        """The address of byte ``offset`` of this PE's staging area."""
        return self.pool.data_ptr() + self.stage_off + offset

    def stage(self, nbytes, offset=0):
        """A 1-D uint8 view of this PE's staging area."""
        return self.pool[self.stage_off + offset:self.stage_off + offset + nbytes]

    def pull(self, pe, offset, dst):
        """dst (a contiguous local uint8 tensor) <- bytes [offset, offset + len) of PE pe's
        staging area."""
        n = dst.numel()
        if n == 0:
            return
        start = self.stage_off + offset
        view = self.peer_pools.get(pe)
        if view is not None and dst.is_contiguous():
            # libc's memmove: string instructions, no per-element dispatch, no threads
            ctypes.memmove(dst.data_ptr(), view.data_ptr() + start, n)
        elif view is not None:
            with torch.no_grad():
                dst.copy_(view[start:start + n])
        else:
            with torch.no_grad():
                get(dst, self.pool[start:start + n], pe)

    def staged(self, pe, offset, nbytes):
        """Bytes [offset, offset + nbytes) of PE pe's staging area as a uint8 tensor: a
        view when that PE's pool is mapped here, else a copy fetched with get."""
        return self.peer_bytes(pe, self.stage_off + offset, nbytes)

    # -- fingerprints -------------------------------------------------------

    def agree(self, team, call, fields, zc=-1):
        """Writes this PE's fingerprint of the call, waits for the team (a barrier) and
        compares: raises the same error on every PE when they disagree.  Returns True when
        every PE passed the same symmetric tensor (``zc``: its heap offset, -1 for none)."""
        team.seq += 1
        slot = (team.id * 2 + (team.seq & 1)) * _FP_WORDS
        mine = self.fp_np[slot:slot + _FP_WORDS]
        mine[0] = team.seq
        mine[1:1 + len(fields)] = fields
        mine[1 + len(fields):_FP_WORDS - 1] = 0
        mine[_FP_WORDS - 1] = zc
        _coll.barrier(team.id)
        if team.n == 1:
            return zc >= 0
        import numpy as np

        ref = bytes(mine[:_FP_WORDS - 1])
        all_zc = zc >= 0
        for idx, pe in enumerate(team.pes):
            if pe == self.my_pe:
                continue
            arr = self.peer_np.get(pe)
            if arr is not None:
                theirs = arr[self.fp_off + slot * 8:self.fp_off + (slot + _FP_WORDS) * 8].view(np.int64)
            else:
                buf = torch.empty(_FP_BYTES, dtype=torch.uint8)
                start = self.fp_off + slot * 8
                get(buf, self.pool[start:start + _FP_BYTES], pe)
                theirs = buf.numpy().view(np.int64)
            if bytes(theirs[:_FP_WORDS - 1]) != ref:
                raise AclshmemInvalid(
                    f"shmem backend: {call}: the ranks of the group disagree: rank {idx} called "
                    f"{_describe(theirs)}, rank {team.me} (this process) called {_describe(mine)}")
            if int(theirs[_FP_WORDS - 1]) != zc:
                all_zc = False
        return all_zc

    def sym_offset(self, t):
        """Heap offset of t when it is a contiguous symmetric tensor usable in place, else -1."""
        if not t.is_contiguous() or not is_symmetric(t):
            return -1
        if t.numel() == 0:
            return -1
        return t.data_ptr() - self.heap_base

    # -- point-to-point progress ----------------------------------------------

    def progress(self):
        """Advances every pending send and receive as far as it can without waiting;
        returns True when anything moved."""
        with _coll._Scope(self.heap_base):  # the mailbox copies: see _Serve
            return self._progress()

    def _progress(self):
        moved = False
        for q in list(self.sendq.values()) + list(self.recvq.values()):
            while q:
                op = q[0]
                if op.advance(self):
                    moved = True
                if op.finished:
                    q.popleft()
                    self.pending -= 1
                    moved = True
                else:
                    break
        while self.anyq:
            op = self.anyq[0]
            src = self._ready_source()
            if src is None:
                break
            self.anyq.popleft()
            op.bind(self, src)
            self.recvq[src].append(op)
            moved = True
            if op.advance(self) and op.finished:
                self.recvq[src].remove(op)
                self.pending -= 1
        return moved

    def _ready_source(self):
        for s in range(self.n_world):
            if self.recvq.get(s):
                continue
            if int(self.ready_np[s]) > self.rx_seq[s]:
                return s
        return None

    def wait_ops(self, ops, timeout, call):
        deadline = None if timeout is None else time.monotonic() + timeout
        spins = 0
        delay = 1e-5
        while True:
            self.progress()
            if all(op.finished for op in ops):
                break
            spins += 1
            if spins > 200:
                time.sleep(delay)
                delay = min(delay * 2, 1e-3)
            if deadline is not None and time.monotonic() > deadline:
                raise RuntimeError(f"shmem backend: {call} timed out after {timeout:g} s (the peer did not "
                                   "post the matching send/recv)")
        for op in ops:
            if op.error is not None:
                raise op.error


def _describe(fp):
    kind = int(fp[1])
    name = _KINDS[kind] if 0 <= kind < len(_KINDS) else f"call #{kind}"
    parts = [name]
    dt = _CODE_DTYPE.get(int(fp[2]))
    if dt is not None:
        parts.append(f"dtype {dt}")
    parts.append(f"{int(fp[3])} elements")
    op = int(fp[4])
    if 0 < op < len(_OP_NAMES):
        parts.append(f"op {_OP_NAMES[op].upper()}")
    if int(fp[5]) >= 0 and kind in (_KIND["broadcast"], _KIND["reduce"], _KIND["gather"], _KIND["scatter"]):
        parts.append(f"root {int(fp[5])}")
    return ", ".join(parts[:1]) + " (" + ", ".join(parts[1:]) + ")"


def _uid_key(generation):
    return f"shmem_torch/uid/{generation}"


def _launcher_matches(rank, size):
    """True when this process runs under python -m shmem.run as PE rank of size."""
    try:
        return (bool(os.environ.get("SHMEM_RUN_UID")) and int(os.environ.get("SHMEM_RUN_PE", "-1")) == rank
                and int(os.environ.get("SHMEM_RUN_NPES", "-1")) == size)
    except ValueError:
        return False


def _make_uid(size):
    addr = os.environ.get("MASTER_ADDR")
    if addr:
        try:
            from shmem import _bootstrap

            return _bootstrap._torchrun_uid_maker(core.get_unique_id, addr, size)()
        except (ImportError, AttributeError):
            pass
    return core.get_unique_id()


def _exchange_uid(store, rank, size, timeout, generation):
    key = _uid_key(generation)
    if rank == 0:
        uid = _make_uid(size)
        store.set(key, uid)
        return uid
    try:
        store.wait([key], timeout if isinstance(timeout, timedelta) else timedelta(seconds=1800))
    except TypeError:
        store.wait([key])
    uid = store.get(key)
    return bytes(uid)


# ---------------------------------------------------------------------------
# Point-to-point operations
# ---------------------------------------------------------------------------


class _SendOp:
    __slots__ = ("dst", "data", "tag", "total", "off", "sent_any", "finished", "error")

    def __init__(self, dst, data, tag):
        self.dst = dst
        self.data = data  # contiguous uint8
        self.tag = tag
        self.total = data.numel()
        self.off = 0
        self.sent_any = False
        self.finished = False
        self.error = None

    def _who(self):
        return self.dst

    def advance(self, rt):
        moved = False
        room = rt.slot - _HDR_BYTES
        d = self.dst
        while not self.finished:
            k = rt.tx_seq[d] + 1
            if int(rt.ack_np[d]) < k - 1:
                return moved
            n = min(room, self.total - self.off)
            base = rt.mbox_off + rt.my_pe * rt.slot  # my slot in d's mailbox
            if n:
                put(rt.pool[base + _HDR_BYTES:base + _HDR_BYTES + n], self.data[self.off:self.off + n], d)
            hdr = torch.tensor([k, self.tag, n, self.total, self.off, 0, 0, 0], dtype=torch.int64).view(torch.uint8)
            put_signal(rt.pool[base:base + _HDR_BYTES], hdr, rt.ready_t[rt.my_pe:rt.my_pe + 1], k, "set", d)
            rt.tx_seq[d] = k
            self.off += n
            self.sent_any = True
            moved = True
            if self.off >= self.total:
                self.finished = True
        return moved


class _RecvOp:
    __slots__ = ("src", "data", "tag", "total", "off", "got_any", "finished", "error", "discard", "group_src",
                 "team")

    def __init__(self, src, data, tag, team=None):
        self.src = src  # world PE, or None: any source
        self.data = data
        self.tag = tag
        self.total = data.numel()
        self.off = 0
        self.got_any = False
        self.finished = False
        self.error = None
        self.discard = False
        self.group_src = None
        self.team = team

    def bind(self, rt, src):
        self.src = src
        if self.team is not None:
            try:
                self.group_src = self.team.pes.index(src)
            except ValueError:
                self.group_src = -1

    def advance(self, rt):
        moved = False
        s = self.src
        import numpy as np

        while not self.finished:
            k = rt.rx_seq[s] + 1
            if int(rt.ready_np[s]) < k:
                return moved
            base = rt.mbox_off + s * rt.slot
            hdr = rt.np_pool[base:base + _HDR_BYTES].view(np.int64)
            seq, tag, n, total, off = (int(x) for x in hdr[:5])
            if seq != k:
                self.error = AclshmemError(f"shmem backend: recv from PE {s}: mailbox out of step (chunk {seq}, "
                                           f"expected {k})")
                self.finished = True
                return True
            if off == 0 and not self.discard:
                if tag != self.tag:
                    self.error = AclshmemInvalid(
                        f"shmem backend: recv: the next message from rank {self._who()} has tag {tag}, but this "
                        f"recv asks for tag {self.tag} (messages between two ranks arrive in the order they "
                        "were sent)")
                elif total != self.total:
                    self.error = AclshmemInvalid(
                        f"shmem backend: recv: rank {self._who()} sent {total} bytes, but the receive tensor "
                        f"holds {self.total} bytes (sizes and dtypes of send and recv must match)")
                if self.error is not None:
                    self.discard = True
            if not self.discard and n:
                with torch.no_grad():
                    self.data[off:off + n].copy_(rt.pool[base + _HDR_BYTES:base + _HDR_BYTES + n])
            rt.rx_seq[s] = k
            atomic_set(rt.ack_t, k, s, index=rt.my_pe)
            self.got_any = True
            moved = True
            if off + n >= total:
                self.finished = True
            self.off = off + n
        return moved

    def _who(self):
        return self.group_src if self.group_src is not None else self.src


class _P2PWork(dist.Work):
    """Work of isend / irecv: completes as the process waits on it (or on other p2p Work)."""

    def __init__(self, rt, op, call, result):
        super().__init__()
        self._rt = rt
        self._op = op
        self._call = call
        self._result = result
        self._fut = None

    def is_completed(self):
        with _lock:
            if not self._op.finished and self._rt.pool is not None:
                self._rt.progress()
        return self._op.finished

    def wait(self, timeout=None):
        secs = None
        if isinstance(timeout, timedelta) and timeout.total_seconds() > 0:
            secs = timeout.total_seconds()
        with _lock:
            if not self._op.finished:
                self._rt.require(self._call)
                self._rt.wait_ops([self._op], secs, self._call)
            elif self._op.error is not None:
                raise self._op.error
        return True

    def exception(self):
        return self._op.error

    def is_success(self):
        return self._op.finished and self._op.error is None

    def get_future(self):
        if self._fut is None:
            self.wait()
            fut = torch.futures.Future()
            fut.set_result(self._result)
            self._fut = fut
        return self._fut

    def source_rank(self):
        self.wait()
        return self._op._who()

    def _source_rank(self):
        return self.source_rank()

    def result(self):
        self.wait()
        return self._result

    def synchronize(self):
        self.wait()


# ---------------------------------------------------------------------------
# The process group
# ---------------------------------------------------------------------------


def _unsupported(name):
    def method(self, *args, **kwargs):
        raise NotImplementedError(f"shmem backend: {name} is not supported by the 'shmem' process group")

    method.__name__ = name
    return method


class ShmemProcessGroup(dist.ProcessGroup):
    """The ``"shmem"`` process group: torch.distributed's calls on the shmem_torch
    collectives over a SHMEM team (see the module's documentation)."""

    def __init__(self, rt, team, rank, size, is_world=False):
        super().__init__(rank, size)
        self._rt = rt
        self._team = team
        self._rank = rank
        self._size = size
        self._is_world = is_world
        self._closed = False
        rt.groups.append(self)

    # -- identity -------------------------------------------------------------

    def getBackendName(self):
        return BACKEND_NAME

    def name(self):
        return BACKEND_NAME

    def _get_backend_name(self):
        return BACKEND_NAME

    # the group's name and description live in its backends for C++ process groups; this
    # one keeps them itself (torch sets them through _set_group_name / _set_group_desc)
    def setGroupName(self, name):
        self._group_name = name

    def getGroupName(self):
        return getattr(self, "_group_name", "")

    def setGroupDesc(self, desc):
        self._group_desc = desc

    def getGroupDesc(self):
        return getattr(self, "_group_desc", "")

    def __repr__(self):
        return f"ShmemProcessGroup(rank={self._rank}, size={self._size}, team={self._team.id})"

    # -- life -------------------------------------------------------------------

    def shutdown(self):
        with _lock:
            if self._closed:
                return
            self._closed = True
            rt = self._rt
            if self in rt.groups:
                rt.groups.remove(self)
            if self._is_world:
                rt.shutdown()
            elif self._team.owned and rt.pool is not None:
                self._team.owned = False
                try:
                    _pyshmem.team_destroy(self._team.id)
                except Exception:
                    pass

    def abort(self):
        self.shutdown()

    # new_group hook: torch asks the default group for it; a team split must be made by
    # every rank, and only this path reaches every rank (see _hook_wanted).
    @property
    def new_group(self):
        if not self._is_world or not _hook_wanted(sys._getframe(1)):
            raise AttributeError("new_group")
        return self._new_group

    def _new_group(self, ranks, timeout=None, pg_options=None, group_name=None, group_desc=None):
        with _lock:
            rt = self._rt
            rt.require("new_group")
            ranks = [int(r) for r in ranks]
            me = self._rank
            member = me in ranks
            stride = ranks[1] - ranks[0] if len(ranks) > 1 else 1
            strided = stride >= 1 and all(ranks[i] == ranks[0] + i * stride for i in range(len(ranks)))
            if strided:
                tid = _pyshmem.team_split_strided(_pyshmem.ACLSHMEM_TEAM_WORLD, ranks[0], stride, len(ranks))
                if not member:
                    return None
                if tid < 0:
                    raise AclshmemError(f"shmem backend: new_group({ranks}): the team split gave no team")
                team = _Team(tid, ranks, ranks.index(me), owned=True)
                pg = ShmemProcessGroup(rt, team, ranks.index(me), len(ranks))
            else:
                if not member:
                    return None
                _warn_fallback(ranks, "its ranks are not evenly spaced in ascending order")
                pg = _gloo_group(ranks.index(me), len(ranks), group_name, timeout)
            if group_name is not None:
                pg._set_group_name(group_name)
            if group_desc is not None:
                try:
                    pg._set_group_desc(group_desc)
                except Exception:
                    pass
            return pg

    split_group = _unsupported("split_group")
    merge_remote_group = _unsupported("merge_remote_group")
    monitored_barrier = _unsupported("monitored_barrier")

    # -- helpers ----------------------------------------------------------------

    def _begin(self, call):
        rt = self._rt
        if self._closed:
            raise AclshmemError(f"shmem backend: {call}: this process group was destroyed")
        rt.require(call)
        if rt.pending:
            rt.progress()
        return rt, self._team

    # -- collectives ------------------------------------------------------------

    def allreduce(self, tensors, opts=None):
        call = "all_reduce"
        t = _one(tensors, call)
        redop = opts.reduceOp if opts is not None else dist.ReduceOp.SUM
        with _Serve(self, call) as (rt, team):
            op = _op_of(redop, call, t.dtype)
            self._all_reduce(rt, team, t, op, call)
        return _done([t])

    def _all_reduce(self, rt, team, t, op, call):
        if team.n == 1:
            return
        if team is rt.world_team and op not in _BITWISE and 0 < _nbytes(t) <= _SMALL_BYTES:
            self._small_all_reduce(rt, team, t, op, call)  # symmetric or not: a copy is cheaper than 2 barriers
            return
        zc = rt.sym_offset(t) if op not in _BITWISE else -1
        if rt.check:
            zc_ok = rt.agree(team, call, [_KIND["all_reduce"], _DTYPE_CODE[t.dtype], t.numel(), _OP_CODE[op], -1], zc)
        else:
            zc_ok = zc >= 0
        if t.numel() == 0:
            return
        if zc_ok:
            _coll.all_reduce(t, op, team.id)
            return
        if op in _BITWISE:
            self._pull_reduce(rt, team, t, op, root=None, call=call, checked=rt.check)
            return
        self._staged_all_reduce(rt, team, t, op)

    def _staged_all_reduce(self, rt, team, t, op):
        """all_reduce of an ordinary tensor through the staging area, chunk by chunk.  Each
        rank owns one slice of a chunk and one slot of the staging area, at the same place
        for every chunk:

        1. copy the slices the other ranks own into their slots (the own slice is not staged;
           a chunk is cut into n equal slices, at most a slot each);
        2. barrier; reduce the own slice (the owners' staged copies and this rank's own
           tensor, in team order) into the own slot;
        3. barrier; copy every slice's result from its owner's own slot into the tensor.

        Step 1 of the next chunk writes only the slots of the other ranks, which nobody reads
        in step 3, and the own slot is written again (step 2) only after a barrier that every
        rank reaches after its step 3: so two barriers per chunk, and one at the end that frees
        the area for the next collective.  Compared with copying the chunk in, running the
        symmetric all_reduce on it and copying it out, this moves about a quarter fewer bytes,
        which is what a large all_reduce costs when the ranks share the memory bandwidth."""
        c = _Contig(t, write=True)
        flat = c.c.view(-1)
        item = t.element_size()
        n, me = team.n, team.me
        slot = min(rt.chunk, rt.stage_bytes) // n // _ALIGN * _ALIGN
        per = max(1, slot // item)
        numel = flat.numel()
        base = flat.data_ptr()
        for s in range(0, numel, per * n):
            # even slices of the chunk, at most per elements each
            bounds = [(s + lo, s + hi) for lo, hi in _coll._slices(min(per * n, numel - s), n, item)]
            for j, (lo, hi) in enumerate(bounds):
                if j != me and hi > lo:
                    ctypes.memmove(rt.stage_addr(j * slot), base + lo * item, (hi - lo) * item)
            _coll.barrier(team.id)
            lo, hi = bounds[me]
            if hi > lo:
                nbytes = (hi - lo) * item
                parts = [flat[lo:hi] if j == me else rt.staged(pe, me * slot, nbytes).view(t.dtype)
                         for j, pe in enumerate(team.pes)]
                _coll.fold(parts, rt.stage(nbytes, me * slot).view(t.dtype), op, n, rt.heap_base)
            _coll.barrier(team.id)
            for j, (lo, hi) in enumerate(bounds):
                if hi > lo:
                    rt.pull(team.pes[j], j * slot, _bytes(flat[lo:hi]))
        _coll.barrier(team.id)
        c.close()

    def _small_all_reduce(self, rt, team, t, op, call):
        """all_reduce of a small ordinary tensor over the world with one barrier.

        Each PE copies its tensor into its small area ``team.seq & 1`` (the parity of this
        call's sequence number) and writes its fingerprint, then one barrier; after it every
        PE checks the fingerprints and folds the team's copies, in team order, straight into
        its own tensor.  No barrier is needed after the reads: an area is written again two
        collectives later at the earliest, and the barrier of the collective in between
        cannot be passed before every PE has finished reading this one."""
        parity = (team.seq + 1) & 1
        c = _Contig(t, write=True)
        flat = c.c.view(-1)
        nbytes = _nbytes(t)
        mine = rt.small(rt.my_pe, parity, nbytes)
        ctypes.memmove(mine.data_ptr(), flat.data_ptr(), nbytes)
        if rt.check:
            rt.agree(team, call, [_KIND["all_reduce"], _DTYPE_CODE[t.dtype], t.numel(), _OP_CODE[op], -1])
        else:
            team.seq += 1
            _coll.barrier(team.id)
        parts = [rt.small(pe, parity, nbytes).view(t.dtype) for pe in team.pes]
        _coll.fold(parts, flat, op, team.n, rt.heap_base)
        c.close()

    def _pull_reduce(self, rt, team, t, op, root, call, checked):
        """Reduction by pulling every peer's copy (BAND/BOR/BXOR): copy in, barrier, each
        PE (or the root) pulls and reduces, barrier.  Chunked by the staging area."""
        if not checked:
            rt.agree(team, call, [_KIND["all_reduce"], _DTYPE_CODE[t.dtype], t.numel(), _OP_CODE[op], -1])
        fn = _BITWISE[op]
        c = _Contig(t, write=True)
        data = _bytes(c.c)
        item = t.element_size()
        step = max(item, (min(rt.chunk, rt.stage_bytes) // item) * item)
        tmp = torch.empty(min(step, data.numel()), dtype=torch.uint8)
        with torch.no_grad():
            for s in range(0, data.numel(), step):
                e = min(s + step, data.numel())
                rt.stage(e - s).copy_(data[s:e])
                _coll.barrier(team.id)
                if root is None or team.me == root:
                    acc = data[s:e].view(t.dtype)
                    parts = []
                    for j, pe in enumerate(team.pes):
                        if j == team.me:
                            parts.append(rt.stage(e - s).view(t.dtype).clone())
                        else:
                            piece = tmp[:e - s]
                            rt.pull(pe, 0, piece)
                            parts.append(piece.view(t.dtype).clone())
                    res = parts[0]
                    for q in parts[1:]:
                        res = fn(res, q)
                    acc.copy_(res)
                _coll.barrier(team.id)
        c.close()

    def allreduce_coalesced(self, tensors, opts=None):
        call = "all_reduce_coalesced"
        if not isinstance(tensors, (list, tuple)):
            raise AclshmemInvalid(f"shmem backend: {call} takes a list of tensors")
        for t in tensors:
            _check_tensor(t, call)
        redop = opts.reduceOp if opts is not None else dist.ReduceOp.SUM
        with _Serve(self, call) as (rt, team):
            for t in tensors:
                self._all_reduce(rt, team, t, _op_of(redop, call, t.dtype), call)
        return _done(list(tensors))

    def broadcast(self, tensors, opts=None):
        call = "broadcast"
        t = _one(tensors, call)
        root = opts.rootRank if opts is not None else 0
        if not 0 <= root < self._size:
            raise AclshmemInvalid(f"shmem backend: {call}: root {root} is not a rank of this group of {self._size}")
        with _Serve(self, call) as (rt, team):
            if team.n > 1:
                zc = rt.sym_offset(t)
                if rt.check:
                    zc_ok = rt.agree(team, call, [_KIND[call], _DTYPE_CODE[t.dtype], t.numel(), 0, root], zc)
                else:
                    zc_ok = zc >= 0
                if zc_ok:
                    _coll.broadcast(t, root, team.id)
                elif t.numel():
                    c = _Contig(t, write=team.me != root)
                    data = _bytes(c.c)
                    step = min(rt.chunk, rt.stage_bytes)
                    with torch.no_grad():
                        for s in range(0, data.numel(), step):
                            e = min(s + step, data.numel())
                            buf = rt.stage(e - s)
                            if team.me == root:
                                buf.copy_(data[s:e])
                            _coll.broadcast(buf, root, team.id)
                            if team.me != root:
                                data[s:e].copy_(buf)
                    c.close()
        return _done([t])

    def reduce(self, tensors, opts=None):
        call = "reduce"
        t = _one(tensors, call)
        root = opts.rootRank if opts is not None else 0
        redop = opts.reduceOp if opts is not None else dist.ReduceOp.SUM
        if not 0 <= root < self._size:
            raise AclshmemInvalid(f"shmem backend: {call}: root {root} is not a rank of this group of {self._size}")
        with _Serve(self, call) as (rt, team):
            op = _op_of(redop, call, t.dtype)
            if team.n > 1:
                rt.agree(team, call, [_KIND[call], _DTYPE_CODE[t.dtype], t.numel(), _OP_CODE[op], root])
                if op in _BITWISE:
                    self._pull_reduce(rt, team, t, op, root=root, call=call, checked=True)
                elif t.numel():
                    c = _Contig(t, write=team.me == root)
                    flat = c.c.view(-1)
                    item = t.element_size()
                    step = max(1, min(rt.chunk, rt.stage_bytes) // item)
                    with torch.no_grad():
                        for s in range(0, flat.numel(), step):
                            e = min(s + step, flat.numel())
                            buf = rt.stage((e - s) * item).view(t.dtype)
                            buf.copy_(flat[s:e])
                            _coll.all_reduce(buf, op, team.id)
                            if team.me == root:
                                flat[s:e].copy_(buf)
                    c.close()
        return _done([t])

    def _gather_rows(self, rt, team, outs, inp, call, kind):
        """outs[j] <- input of rank j (all_gather), staged through the pool in chunks."""
        n = team.n
        data = _bytes(inp.contiguous())
        k = data.numel()
        outs_c = [_Contig(o, write=True) for o in outs]
        out_bytes = [_bytes(o.c) for o in outs_c]
        step = max(1, min(rt.chunk, rt.stage_bytes // n))
        with torch.no_grad():
            for s in range(0, k, step):
                e = min(s + step, k)
                w = e - s
                buf = rt.stage(n * w)
                _coll.all_gather(buf, data[s:e], team.id)
                for j in range(n):
                    out_bytes[j][s:e].copy_(buf[j * w:(j + 1) * w])
        for c in outs_c:
            c.close()

    def allgather(self, output_tensors, input_tensors, opts=None):
        call = "all_gather"
        inp = _one(input_tensors, call, "input_tensors")
        outs = self._rank_list(output_tensors, call, "output", inp, "input")
        with _Serve(self, call) as (rt, team):
            if team.n == 1:
                with torch.no_grad():
                    outs[0].copy_(inp.view(outs[0].shape) if inp.numel() else inp.reshape(outs[0].shape))
            else:
                if rt.check:
                    rt.agree(team, call, [_KIND[call], _DTYPE_CODE[inp.dtype], inp.numel(), 0, -1])
                if inp.numel():
                    self._gather_rows(rt, team, outs, inp, call, "all_gather")
        return _done([outs])

    def allgather_coalesced(self, output_lists, input_list, opts=None):
        for outs, inp in zip(output_lists, input_list):
            self.allgather([outs], [inp], opts)
        return _done(output_lists)

    def all_gather_single(self, output, input, opts=None):
        call = "all_gather_into_tensor"
        _check_tensor(output, call, "output")
        _check_tensor(input, call, "input")
        _same_dtype(output, input, call)
        if output.numel() != self._size * input.numel():
            raise AclshmemInvalid(f"shmem backend: {call}: the output has {output.numel()} elements; it must "
                                  f"have {self._size} x {input.numel()} (group size x input)")
        with _Serve(self, call) as (rt, team):
            if team.n == 1:
                with torch.no_grad():
                    output.copy_(input.reshape(output.shape))
                return _done([output])
            zc = rt.sym_offset(output)
            if rt.check:
                zc_ok = rt.agree(team, call, [_KIND[call], _DTYPE_CODE[input.dtype], input.numel(), 0, -1], zc)
            else:
                zc_ok = zc >= 0
            if input.numel() == 0:
                return _done([output])
            if zc_ok:
                _coll.all_gather(output.view(-1), input, team.id)
            else:
                oc = _Contig(output, write=True)
                rows = list(oc.c.view(team.n, -1))
                self._gather_rows(rt, team, rows, input, call, "all_gather")
                oc.close()
        return _done([output])

    _allgather_base = all_gather_single

    def all_gather_single_coalesced(self, outputs, inputs, opts=None):
        for o, i in zip(outputs, inputs):
            self.all_gather_single(o, i, opts)
        return _done(list(outputs))

    allgather_into_tensor_coalesced = all_gather_single_coalesced

    def _reduce_scatter_rows(self, rt, team, out, rows, op, call):
        """out <- reduction over ranks of their rows[me]; rows: n local tensors of out's size."""
        n = team.n
        oc = _Contig(out, write=True)
        flat_out = oc.c.view(-1)
        k = flat_out.numel()
        item = out.element_size()
        if op in _BITWISE:
            self._pull_reduce_scatter(rt, team, flat_out, rows, op, call)
            oc.close()
            return
        flat_rows = [r.reshape(-1) for r in rows]
        step = max(1, min(rt.chunk, rt.stage_bytes // n) // item)
        with torch.no_grad():
            for s in range(0, k, step):
                e = min(s + step, k)
                w = e - s
                buf = rt.stage(n * w * item).view(out.dtype)
                for j in range(n):
                    buf[j * w:(j + 1) * w].copy_(flat_rows[j][s:e])
                _coll.reduce_scatter(flat_out[s:e], buf, op, team.id)
        oc.close()

    def _pull_reduce_scatter(self, rt, team, flat_out, rows, op, call):
        n = team.n
        fn = _BITWISE[op]
        item = flat_out.element_size()
        k = flat_out.numel()
        step = max(1, min(rt.chunk, rt.stage_bytes // n) // item)
        with torch.no_grad():
            for s in range(0, k, step):
                e = min(s + step, k)
                w = e - s
                buf = rt.stage(n * w * item).view(flat_out.dtype)
                for j in range(n):
                    buf[j * w:(j + 1) * w].copy_(rows[j].reshape(-1)[s:e])
                _coll.barrier(team.id)
                res = None
                for j, pe in enumerate(team.pes):
                    piece = torch.empty(w * item, dtype=torch.uint8)
                    rt.pull(pe, team.me * w * item, piece)
                    v = piece.view(flat_out.dtype)
                    res = v if res is None else fn(res, v)
                flat_out[s:e].copy_(res)
                _coll.barrier(team.id)

    def reduce_scatter(self, output_tensors, input_tensors, opts=None):
        call = "reduce_scatter"
        out = _one(output_tensors, call, "output_tensors")
        rows = self._rank_list(input_tensors, call, "input", out, "output")
        redop = opts.reduceOp if opts is not None else dist.ReduceOp.SUM
        with _Serve(self, call) as (rt, team):
            op = _op_of(redop, call, out.dtype)
            if team.n == 1:
                with torch.no_grad():
                    out.copy_(rows[0].reshape(out.shape))
                    if op == "avg":
                        pass
                return _done([out])
            if rt.check or op in _BITWISE:
                rt.agree(team, call, [_KIND[call], _DTYPE_CODE[out.dtype], out.numel(), _OP_CODE[op], -1])
            if out.numel():
                self._reduce_scatter_rows(rt, team, out, rows, op, call)
        return _done([out])

    def reduce_scatter_single(self, output, input, opts=None):
        call = "reduce_scatter_tensor"
        _check_tensor(output, call, "output")
        _check_tensor(input, call, "input")
        _same_dtype(output, input, call)
        if input.numel() != self._size * output.numel():
            raise AclshmemInvalid(f"shmem backend: {call}: the input has {input.numel()} elements; it must have "
                                  f"{self._size} x {output.numel()} (group size x output)")
        redop = opts.reduceOp if opts is not None else dist.ReduceOp.SUM
        with _Serve(self, call) as (rt, team):
            op = _op_of(redop, call, output.dtype)
            if team.n == 1:
                with torch.no_grad():
                    output.copy_(input.reshape(output.shape))
                return _done([output])
            zc = rt.sym_offset(input) if op not in _BITWISE else -1
            if rt.check or op in _BITWISE:
                zc_ok = rt.agree(team, call, [_KIND[call], _DTYPE_CODE[output.dtype], output.numel(),
                                              _OP_CODE[op], -1], zc)
            else:
                zc_ok = zc >= 0
            if output.numel():
                if zc_ok:
                    _coll.reduce_scatter(output, input, op, team.id)
                else:
                    ic = input if input.is_contiguous() else input.contiguous()
                    rows = list(ic.view(team.n, -1))
                    self._reduce_scatter_rows(rt, team, output, rows, op, call)
        return _done([output])

    _reduce_scatter_base = reduce_scatter_single

    def reduce_scatter_single_coalesced(self, outputs, inputs, opts=None):
        for o, i in zip(outputs, inputs):
            self.reduce_scatter_single(o, i, opts)
        return _done(list(outputs))

    reduce_scatter_tensor_coalesced = reduce_scatter_single_coalesced

    def gather(self, output_tensors, input_tensors, opts=None):
        call = "gather"
        inp = _one(input_tensors, call, "input_tensors")
        root = opts.rootRank if opts is not None else 0
        if not 0 <= root < self._size:
            raise AclshmemInvalid(f"shmem backend: {call}: root {root} is not a rank of this group of {self._size}")
        outs = []
        if self._rank == root:
            if (not isinstance(output_tensors, (list, tuple)) or len(output_tensors) != 1
                    or len(output_tensors[0]) != self._size):
                raise AclshmemInvalid(f"shmem backend: {call}: the root needs one list of {self._size} output "
                                      "tensors")
            outs = list(output_tensors[0])
            for i, o in enumerate(outs):
                _check_tensor(o, call, f"output tensor {i}")
                _same_dtype(o, inp, call)
                if o.numel() != inp.numel():
                    raise AclshmemInvalid(f"shmem backend: {call}: output tensor {i} has {o.numel()} elements, "
                                          f"but the input has {inp.numel()}")
        elif output_tensors and any(len(x) for x in output_tensors):
            raise AclshmemInvalid(f"shmem backend: {call}: only the root (rank {root}) takes output tensors")
        with _Serve(self, call) as (rt, team):
            data = _bytes(inp.contiguous())
            k = data.numel()
            fields = [_KIND[call], _DTYPE_CODE[inp.dtype], inp.numel(), 0, root]
            outs_c = [_Contig(o, write=True) for o in outs]
            ob = [_bytes(c.c) for c in outs_c]
            step = max(1, min(rt.chunk, rt.stage_bytes))
            first = True
            with torch.no_grad():
                for s in range(0, max(k, 1), step):
                    e = min(s + step, k)
                    rt.stage(e - s).copy_(data[s:e])
                    if first:
                        rt.agree(team, call, fields)
                        first = False
                    else:
                        _coll.barrier(team.id)
                    if team.me == root:
                        for j, pe in enumerate(team.pes):
                            if j == team.me:
                                ob[j][s:e].copy_(data[s:e])
                            else:
                                rt.pull(pe, 0, ob[j][s:e])
                    _coll.barrier(team.id)
            for c in outs_c:
                c.close()
        return _done([outs])

    def scatter(self, output_tensors, input_tensors, opts=None):
        call = "scatter"
        out = _one(output_tensors, call, "output_tensors")
        root = opts.rootRank if opts is not None else 0
        if not 0 <= root < self._size:
            raise AclshmemInvalid(f"shmem backend: {call}: root {root} is not a rank of this group of {self._size}")
        ins = []
        if self._rank == root:
            if (not isinstance(input_tensors, (list, tuple)) or len(input_tensors) != 1
                    or len(input_tensors[0]) != self._size):
                raise AclshmemInvalid(f"shmem backend: {call}: the root needs one list of {self._size} input tensors")
            ins = list(input_tensors[0])
            for i, t in enumerate(ins):
                _check_tensor(t, call, f"input tensor {i}")
                _same_dtype(out, t, call)
                if t.numel() != out.numel():
                    raise AclshmemInvalid(f"shmem backend: {call}: input tensor {i} has {t.numel()} elements, but "
                                          f"the output has {out.numel()}")
        elif input_tensors and any(len(x) for x in input_tensors):
            raise AclshmemInvalid(f"shmem backend: {call}: only the root (rank {root}) takes input tensors")
        with _Serve(self, call) as (rt, team):
            oc = _Contig(out, write=True)
            ob = _bytes(oc.c)
            k = ob.numel()
            n = team.n
            ib = [_bytes(t.contiguous()) for t in ins]
            step = max(1, min(rt.chunk, rt.stage_bytes // n))
            fields = [_KIND[call], _DTYPE_CODE[out.dtype], out.numel(), 0, root]
            first = True
            with torch.no_grad():
                for s in range(0, max(k, 1), step):
                    e = min(s + step, k)
                    w = e - s
                    if team.me == root:
                        for j in range(n):
                            rt.stage(w, j * w).copy_(ib[j][s:e])
                    if first:
                        rt.agree(team, call, fields)
                        first = False
                    else:
                        _coll.barrier(team.id)
                    if team.me == root:
                        ob[s:e].copy_(ib[team.me][s:e])
                    else:
                        rt.pull(team.pes[root], team.me * w, ob[s:e])
                    _coll.barrier(team.id)
            oc.close()
        return _done([out])

    def _all_to_all(self, rt, team, out_parts, in_parts, dtype, call):
        """out_parts[j] <- in_parts[me] of rank j; parts are contiguous uint8 tensors."""
        import numpy as np

        n = team.n
        sizes = [p.numel() for p in in_parts]
        head = _round_up(8 * n)
        total = sum(sizes)
        one_round = head + _round_up(total) <= rt.stage_bytes
        szv = rt.np_pool[rt.stage_off:rt.stage_off + 8 * n].view(np.int64)
        szv[:] = sizes
        offs = []
        pos = head
        for sz in sizes:
            offs.append(pos)
            pos += sz
        with torch.no_grad():
            if one_round:
                for j in range(n):
                    rt.stage(sizes[j], offs[j]).copy_(in_parts[j])
            rt.agree(team, call, [_KIND[call], _DTYPE_CODE[dtype], 0, 0, -1, int(one_round)])
            # every rank's sizes: row s = what rank s sends to each rank
            matrix = []
            for j, pe in enumerate(team.pes):
                if j == team.me:
                    matrix.append(list(sizes))
                else:
                    b = torch.empty(8 * n, dtype=torch.uint8)
                    rt.pull(pe, 0, b)
                    matrix.append([int(x) for x in b.numpy().view(np.int64)])
            bad = [(j, matrix[j][team.me], out_parts[j].numel()) for j in range(n)
                   if matrix[j][team.me] != out_parts[j].numel()]
            all_one = all(head + _round_up(sum(row)) <= rt.stage_bytes for row in matrix)
            if bad:
                _coll.barrier(team.id)
                j, sent, want = bad[0]
                raise AclshmemInvalid(f"shmem backend: {call}: rank {j} sends {sent} bytes to this rank "
                                      f"({team.me}), but the output for rank {j} holds {want} bytes")
            if all_one:
                for j, pe in enumerate(team.pes):
                    src_off = head + sum(matrix[j][:team.me])
                    if j == team.me:
                        out_parts[j].copy_(in_parts[j])
                    else:
                        rt.pull(pe, src_off, out_parts[j])
                _coll.barrier(team.id)
                return
            # rounds: the pair (s -> d) moves bytes [r*per, (r+1)*per) in round r
            per = max(_ALIGN, ((rt.stage_bytes - head) // n) // _ALIGN * _ALIGN)
            rounds = max(-(-max(max(row) for row in matrix) // per), 1)
            for r in range(rounds):
                lo = r * per
                for j in range(n):
                    part = in_parts[j][lo:lo + per]
                    rt.stage(part.numel(), head + j * per).copy_(part)
                _coll.barrier(team.id)
                for j, pe in enumerate(team.pes):
                    dst = out_parts[j][lo:lo + per]
                    if j == team.me:
                        dst.copy_(in_parts[j][lo:lo + per])
                    else:
                        rt.pull(pe, head + team.me * per, dst)
                _coll.barrier(team.id)

    def alltoall(self, output_tensors, input_tensors, opts=None):
        call = "all_to_all"
        for name, lst in (("output_tensors", output_tensors), ("input_tensors", input_tensors)):
            if not isinstance(lst, (list, tuple)) or len(lst) != self._size:
                raise AclshmemInvalid(f"shmem backend: {call}: {name} must be a list of {self._size} tensors")
        for i, t in enumerate(list(output_tensors) + list(input_tensors)):
            _check_tensor(t, call)
        dtype = input_tensors[0].dtype
        for t in list(output_tensors) + list(input_tensors):
            if t.dtype != dtype:
                raise AclshmemInvalid(f"shmem backend: {call}: every tensor must have the same dtype ({dtype}), "
                                      f"not {t.dtype}")
        with _Serve(self, call) as (rt, team):
            outs_c = [_Contig(o, write=True) for o in output_tensors]
            ins = [_bytes(t.contiguous()) for t in input_tensors]
            self._all_to_all(rt, team, [_bytes(c.c) for c in outs_c], ins, dtype, call)
            for c in outs_c:
                c.close()
        return _done(list(output_tensors))

    def all_to_all_single(self, output, input, output_split_sizes, input_split_sizes, opts=None):
        call = "all_to_all_single"
        _check_tensor(output, call, "output")
        _check_tensor(input, call, "input")
        _same_dtype(output, input, call)
        n = self._size

        def parts(t, splits, name):
            if t.dim() == 0:
                raise AclshmemInvalid(f"shmem backend: {call}: {name} must have at least one dimension")
            rows = t.shape[0]
            per_row = t.numel() // rows if rows else 0
            splits = [int(x) for x in (splits or [])]
            if not splits:
                if rows % n:
                    raise AclshmemInvalid(f"shmem backend: {call}: {name} has {rows} rows, which do not split "
                                          f"evenly among {n} ranks (pass split sizes)")
                splits = [rows // n] * n
            if len(splits) != n or any(x < 0 for x in splits) or sum(splits) != rows:
                raise AclshmemInvalid(f"shmem backend: {call}: {name} split sizes {splits} must be {n} "
                                      f"non-negative numbers adding up to its {rows} rows")
            item = t.element_size() * per_row
            return splits, item

        osplit, oitem = parts(output, output_split_sizes, "output")
        isplit, iitem = parts(input, input_split_sizes, "input")
        with _Serve(self, call) as (rt, team):
            oc = _Contig(output, write=True)
            ob = _bytes(oc.c)
            ib = _bytes(input.contiguous())

            def cut(b, splits, item):
                res, pos = [], 0
                for x in splits:
                    res.append(b[pos:pos + x * item])
                    pos += x * item
                return res

            self._all_to_all(rt, team, cut(ob, osplit, oitem), cut(ib, isplit, iitem), input.dtype, call)
            oc.close()
        return _done([output])

    alltoall_base = all_to_all_single

    def barrier(self, opts=None):
        with _Serve(self, "barrier") as (rt, team):
            _coll.barrier(team.id)
        return _done([])

    def _start_coalescing(self, device=None):
        return None

    def _end_coalescing(self, device=None):
        return _done([])

    # -- point-to-point -----------------------------------------------------------

    def _rank_list(self, tensors, call, side, ref, ref_side):
        """The list of one tensor per rank that all_gather (outputs) and reduce_scatter
        (inputs) take as ``[[t0, t1, ...]]``, each checked against ``ref`` (the other side:
        same dtype, same number of elements)."""
        if not isinstance(tensors, (list, tuple)) or len(tensors) != 1 or not isinstance(tensors[0], (list, tuple)):
            raise AclshmemInvalid(f"shmem backend: {call}: {side}_tensors must be one list of {self._size} tensors")
        ts = list(tensors[0])
        if len(ts) != self._size:
            raise AclshmemInvalid(f"shmem backend: {call}: the {side} list has {len(ts)} tensors, but the group "
                                  f"has {self._size} ranks")
        for i, t in enumerate(ts):
            _check_tensor(t, call, f"{side} tensor {i}")
            _same_dtype(*((t, ref) if side == "output" else (ref, t)), call)
            if t.numel() != ref.numel():
                raise AclshmemInvalid(f"shmem backend: {call}: {side} tensor {i} has {t.numel()} elements, but the "
                                      f"{ref_side} has {ref.numel()} (each {side} must match the {ref_side})")
        return ts

    def _peer(self, rank, call, what):
        if not isinstance(rank, int) or not 0 <= rank < self._size:
            raise AclshmemInvalid(f"shmem backend: {call}: {what} {rank} is not a rank of this group of "
                                  f"{self._size}")
        if rank == self._rank:
            raise AclshmemInvalid(f"shmem backend: {call}: {what} is this rank ({rank}); send/recv to self is "
                                  "not supported")
        return self._team.pes[rank]

    def send(self, tensors, dstRank, tag=0):
        call = "send"
        t = _one(tensors, call)
        with _Serve(self, call) as (rt, team):
            d = self._peer(dstRank, call, "dst")
            data = _bytes(t.contiguous())
            op = _SendOp(d, data, int(tag))
            q = rt.sendq[d]
            q.append(op)
            rt.pending += 1
            rt.progress()
            return _P2PWork(rt, op, call, [t])

    def recv(self, tensors, srcRank, tag=0):
        call = "recv"
        t = _one(tensors, call)
        with _Serve(self, call) as (rt, team):
            s = self._peer(srcRank, call, "src")
            c = _Contig(t, write=True)
            op = _RecvOp(s, _bytes(c.c), int(tag), team)
            op.group_src = srcRank
            rt.recvq[s].append(op)
            rt.pending += 1
            rt.progress()
            return _P2PWork(rt, _Finisher(op, c), call, [t])

    def recv_anysource(self, tensors, tag=0):
        call = "recv"
        t = _one(tensors, call)
        with _Serve(self, call) as (rt, team):
            c = _Contig(t, write=True)
            op = _RecvOp(None, _bytes(c.c), int(tag), team)
            rt.anyq.append(op)
            rt.pending += 1
            rt.progress()
            return _P2PWork(rt, _Finisher(op, c), call, [t])


class _Finisher:
    """Wraps a receive: once finished, the contiguous stand-in is written back."""

    __slots__ = ("op", "c", "closed")

    def __init__(self, op, c):
        self.op = op
        self.c = c
        self.closed = False

    @property
    def finished(self):
        if self.op.finished and not self.closed:
            self.closed = True
            if self.op.error is None:
                self.c.close()
        return self.op.finished

    @property
    def error(self):
        return self.op.error

    def _who(self):
        return self.op._who()


# ---------------------------------------------------------------------------
# gloo fall-back for groups that cannot be teams
# ---------------------------------------------------------------------------

_warned = set()


def _warn_fallback(ranks, why):
    key = tuple(ranks)
    if key in _warned:
        return
    _warned.add(key)
    warnings.warn(f"shmem backend: the group of ranks {list(ranks)} cannot be a SHMEM team ({why}); it runs on "
                  "gloo instead", RuntimeWarning, stacklevel=4)


def _gloo_backend(store, rank, size, timeout):
    from torch.distributed import ProcessGroupGloo

    if not isinstance(timeout, timedelta):
        timeout = timedelta(minutes=30)
    return ProcessGroupGloo(store, rank, size, timeout)


def _gloo_group(rank, size, group_name, timeout):
    """A ProcessGroup on gloo for a new_group that cannot be a team (made by its members)."""
    c10d = dist.distributed_c10d
    default_store = c10d._world.pg_map[c10d._get_default_group()][1]
    prefix = dist.PrefixStore(f"{group_name}/shmem-gloo/", default_store)
    pg = dist.ProcessGroup(prefix, rank, size)
    gloo_type = dist.ProcessGroup.BackendType.GLOO
    pg._set_default_backend(gloo_type)
    backend = _gloo_backend(dist.PrefixStore("cpu/", prefix), rank, size, timeout)
    pg._register_backend(torch.device("cpu"), gloo_type, backend)
    return pg


def _hook_wanted(frame):
    """Whether torch's new_group (the caller) asks for a "shmem" group made by every rank."""
    loc = frame.f_locals
    if loc.get("use_local_synchronization"):
        return False
    backend = loc.get("backend")
    if backend is not None and str(backend).lower() not in (BACKEND_NAME, "undefined"):
        return False
    return True


# ---------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------


def _create(common, backend_options=None):
    """torch.distributed's creator of a "shmem" group (extended API)."""
    store = common.store
    rank, size = common.group_rank, common.group_size
    timeout = common.timeout
    global_ranks = list(common.global_ranks_in_group or [])
    global _runtime
    with _lock:
        rt = _runtime
        if rt is not None and rt.pool is None:
            rt = _runtime = None
        if rt is None:
            rt = _Runtime.start(store, rank, size, timeout, global_ranks)
            _runtime = rt
            return ShmemProcessGroup(rt, rt.world_team, rank, size, is_world=True)
        members = global_ranks or list(range(size))
        if members == rt.world_global_ranks:
            # the same processes as the SHMEM world, in the same order: a team of all
            tid = _pyshmem.team_split_strided(_pyshmem.ACLSHMEM_TEAM_WORLD, 0, 1, size)
            return ShmemProcessGroup(rt, _Team(tid, range(size), rank, owned=True), rank, size)
        _warn_fallback(members, "it was not created by every rank of the SHMEM world (use_local_synchronization, "
                       "or a default group of another backend)")
        return _gloo_backend(store, rank, size, timeout)


def is_registered():
    return BACKEND_NAME.upper() in getattr(dist.Backend, "_plugins", {})


def register():
    """Registers the backend "shmem" for CPU tensors (done when shmem_torch is imported)."""
    if not dist.is_available() or is_registered():
        return
    dist.Backend.register_backend(BACKEND_NAME, _create, extended_api=True, devices=["cpu"])


def serves(group=None):
    """True when SHMEM runs for the "shmem" process group ``group`` (default: the default
    group) with its ranks as PEs - then shmem_torch.init has nothing to do."""
    rt = _runtime
    if rt is None or rt.pool is None:
        return False
    if _pyshmem.aclshmemx_init_status() != _pyshmem.InitStatus.INITIALIZED:
        return False
    if group is None:
        if not (dist.is_available() and dist.is_initialized()):
            return False
        group = dist.distributed_c10d._get_default_group()
    return isinstance(group, ShmemProcessGroup) and group._is_world and group._rt is rt


# ---------------------------------------------------------------------------
# For the custom ops (shmem_torch._ops): a collective on tensors that are not symmetric
# ---------------------------------------------------------------------------

_OPS = {"sum": dist.ReduceOp.SUM, "avg": dist.ReduceOp.AVG, "prod": dist.ReduceOp.PRODUCT,
        "min": dist.ReduceOp.MIN, "max": dist.ReduceOp.MAX}


def _group_of_team(team):
    rt = _runtime
    if rt is None or rt.pool is None:
        return None
    for g in rt.groups:
        if isinstance(g, ShmemProcessGroup) and g._team.id == team and not g._closed:
            return g
    return None


def staged(name, team, *tensors, op="sum", root=0):
    """Runs shmem_torch collective ``name`` on tensors that may be ordinary ones (torch.compile
    hands the custom ops copies): through the "shmem" process group of ``team`` when there
    is one, else through temporary symmetric tensors (world team only).  Same results as
    the collective on symmetric tensors."""
    from torch._C._distributed_c10d import AllreduceOptions, BroadcastOptions, ReduceScatterOptions

    g = _group_of_team(team)
    if g is not None:
        if name == "all_reduce":
            opts = AllreduceOptions()
            opts.reduceOp = _OPS[op]
            g.allreduce([tensors[0]], opts)
        elif name == "broadcast":
            opts = BroadcastOptions()
            opts.rootRank = root
            g.broadcast([tensors[0]], opts)
        elif name == "all_gather":
            g.all_gather_single(tensors[0], tensors[1])
        elif name == "reduce_scatter":
            opts = ReduceScatterOptions()
            opts.reduceOp = _OPS[op]
            g.reduce_scatter_single(tensors[0], tensors[1], opts)
        elif name == "all_to_all":
            g.all_to_all_single(tensors[0], tensors[1], [], [])
        return
    if team != _pyshmem.ACLSHMEM_TEAM_WORLD:
        raise AclshmemInvalid(f"{name}: under torch.compile, a tensor that is not symmetric needs the 'shmem' "
                              f"process group of team {team} (or a symmetric tensor)")
    from .tensor import like

    tmp = [like(t.contiguous()) for t in tensors]  # collective, in the same order on every PE
    try:
        if name == "all_reduce":
            _coll.all_reduce(tmp[0], op, team)
        elif name == "broadcast":
            _coll.broadcast(tmp[0], root, team)
        elif name == "all_gather":
            _coll.all_gather(tmp[0], tmp[1], team)
        elif name == "reduce_scatter":
            _coll.reduce_scatter(tmp[0], tmp[1], op, team)
        elif name == "all_to_all":
            _coll.all_to_all(tmp[0], tmp[1], team)
        with torch.no_grad():
            tensors[0].copy_(tmp[0])
    finally:
        for t in reversed(tmp):
            aclshmem_free_tensor(t)
