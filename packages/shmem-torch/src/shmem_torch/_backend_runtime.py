"""The torch.distributed backend's runtime: SHMEM for the process groups, the pool, and the
agreement of the ranks before a collective.

* **Start.**  The process group that is created while SHMEM is not running becomes the
  SHMEM world: PE i is its rank i.  Rank 0 makes the unique ID and hands it to the others
  through the group's store; ``python -m shmem.run`` jobs use the launcher's unique ID, and
  a SHMEM instance 0 that is already running with the same ranks is used as it is.
* **The pool.**  Every PE allocates a symmetric block of ``SHMEM_TORCH_POOL_SIZE`` bytes
  (default 256 MiB; the heap is sparse, so pages cost memory only once touched): the
  point-to-point control words and mailboxes (``shmem_torch._backend_p2p``), then the
  staging area, which the backend's collectives copy ordinary tensors through in chunks of
  ``SHMEM_TORCH_CHUNK_SIZE`` and which ``shmem_torch.staging`` lends to the shmem_torch
  collectives while the process group lives.
* **Agreement.**  Before a collective of several engine calls the ranks exchange what they
  were asked to do (call, dtype, number of elements, operation, root) with
  ``aclshmemx_team_exchange``: a mismatch raises the same clear error on every rank
  instead of hanging or mixing data.  A collective of one engine call needs no exchange:
  the engine compares the ranks' calls itself (``Runtime.settle``).
"""

import os
import struct
import warnings
from datetime import timedelta

import torch

from shmem import _pyshmem, _state, core
from shmem.core import AclshmemError, AclshmemInvalid

from . import _engine, staging
from .tensor import SUPPORTED_DTYPES, aclshmem_free_tensor, empty, is_symmetric

__all__ = ["Runtime", "Team", "lock", "current", "set_current", "describe_call", "KINDS", "DTYPE_CODE",
           "OP_CODE", "POOL_SIZE_ENV", "MEM_SIZE_ENV", "CHUNK_SIZE_ENV", "P2P_SLOT_ENV", "CHECK_ENV",
           "DEFAULT_POOL_SIZE", "DEFAULT_CHUNK_SIZE", "ALIGN", "HDR_BYTES", "round_up"]

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

ALIGN = 64
HDR_BYTES = 64  # header of a mailbox chunk

# Calls of the process groups serialise on this lock, with the shmem_torch collectives
# (they share the staging area).
lock = staging.lock
_runtime = None  # the Runtime serving the "shmem" groups of this process
_generation = 0  # how many times this process started the backend's SHMEM


def current():
    """The Runtime serving this process's "shmem" groups, or None."""
    return _runtime


def set_current(rt):
    global _runtime
    _runtime = rt


def round_up(n, a=ALIGN):
    return -(-n // a) * a


# ---------------------------------------------------------------------------
# What a call is, for the agreement
# ---------------------------------------------------------------------------

DTYPE_CODE = {dt: i + 1 for i, dt in enumerate(SUPPORTED_DTYPES)}
_CODE_DTYPE = {i: dt for dt, i in DTYPE_CODE.items()}
_OP_NAMES = ["", "sum", "avg", "prod", "min", "max", "band", "bor", "bxor"]
OP_CODE = {name: i for i, name in enumerate(_OP_NAMES)}
KINDS = ["", "all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor", "reduce_scatter",
         "reduce_scatter_tensor", "gather", "scatter", "all_to_all", "all_to_all_single", "barrier",
         "all_reduce_coalesced"]
_KIND = {name: i for i, name in enumerate(KINDS)}
_ROOTED = frozenset(("broadcast", "reduce", "gather", "scatter"))
_RECORD = struct.Struct("<7q")  # kind, dtype, count, op, root, extra, zero-copy


def describe_call(record):
    """What a rank called, from its agreement record (a tuple of _RECORD's fields)."""
    kind = record[0]
    name = KINDS[kind] if 0 <= kind < len(KINDS) else f"call #{kind}"
    parts = []
    dt = _CODE_DTYPE.get(record[1])
    if dt is not None:
        parts.append(f"dtype {dt}")
    parts.append(f"{record[2]} elements")
    if 0 < record[3] < len(_OP_NAMES):
        parts.append(f"op {_OP_NAMES[record[3]].upper()}")
    if record[4] >= 0 and name in _ROOTED:
        parts.append(f"root {record[4]}")
    return f"{name} ({', '.join(parts)})"


class Team:
    """A SHMEM team serving a process group: its id, this PE's index and the world PE of
    each index."""

    __slots__ = ("id", "n", "me", "pes", "owned")

    def __init__(self, team_id, pes, me, owned):
        self.id = team_id
        self.pes = list(pes)
        self.n = len(self.pes)
        self.me = me
        self.owned = owned


# ---------------------------------------------------------------------------
# The runtime
# ---------------------------------------------------------------------------


class Runtime:
    """SHMEM and the pool of this process's "shmem" process groups."""

    def __init__(self):
        self.owns_shmem = False
        self.pool = None
        self.pool_addr = 0  # the pool's address (which the thread policy asks for)
        self.area = None  # the staging area (a staging.Area over the end of the pool)
        self.p2p = None  # the point-to-point state (the process group module sets it)
        self.groups = []  # the ProcessGroups made on this runtime (for shutdown)
        self.world_global_ranks = None

    @classmethod
    def start(cls, store, rank, size, timeout, global_ranks):
        rt = cls()
        pool_size = staging.size_env(POOL_SIZE_ENV, DEFAULT_POOL_SIZE)
        rt.chunk = max(ALIGN, round_up(staging.size_env(CHUNK_SIZE_ENV, DEFAULT_CHUNK_SIZE)))
        rt.check = os.environ.get(CHECK_ENV, "1").strip().lower() not in ("0", "false", "no", "off")
        rt.owns_shmem = _start_shmem(store, rank, size, timeout, pool_size)
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
        """The pool: control words of point-to-point (ready and ack, one int32 per PE each),
        one mailbox slot per PE, then the staging area."""
        n = self.n_world
        self.ready_off = 0
        self.ack_off = round_up(4 * n)
        ctrl = self.ack_off + round_up(4 * n)
        slot = staging.size_env(P2P_SLOT_ENV, 0)
        if not slot:
            slot = min(4 << 20, max(64 << 10, pool_size // (4 * max(n, 1))))
        self.slot = round_up(max(slot, HDR_BYTES + ALIGN), 4096)
        self.mbox_off = round_up(ctrl, 4096)
        self.stage_off = round_up(self.mbox_off + n * self.slot, 4096)
        total = max(pool_size, self.stage_off + (1 << 20))
        if total != pool_size and os.environ.get(POOL_SIZE_ENV):
            warnings.warn(f"{POOL_SIZE_ENV}={pool_size} leaves no room for staging next to the control area "
                          f"and {n} mailboxes of {self.slot} bytes; the pool has {total} bytes instead",
                          RuntimeWarning, stacklevel=3)
        self.pool = empty(total, dtype=torch.uint8)  # collective over the world
        self.pool_addr = self.pool.data_ptr()
        self.pool[:self.mbox_off].zero_()
        self.area = staging.Area(self.pool[self.stage_off:], owned=False)
        staging.install(self.area.bytes)
        self.world_team = Team(_pyshmem.ACLSHMEM_TEAM_WORLD, range(n), self.my_pe, owned=False)
        _pyshmem.aclshmem_barrier_all()  # every PE has cleared its control words

    def alive(self):
        return (self.pool is not None and _pyshmem.aclshmemx_init_status() == _pyshmem.InitStatus.INITIALIZED
                and is_symmetric(self.pool))

    def require(self, call):
        # shmem's cached active instance: asked of the library again only after init,
        # finalize or a switch of instance, which drop it
        if self.pool is None or (_state.active_state or _state.active_instance()) is None:
            raise AclshmemError(f"shmem backend: {call}: SHMEM was finalised (shmem_torch.finalize or "
                                "shmem.core.finalize) while the 'shmem' process group was alive; destroy the "
                                "process group first")

    def stage_chunk(self, parts=1):
        """The most bytes one of ``parts`` equal pieces of a chunk may take in the staging
        area (a multiple of ALIGN, at least ALIGN)."""
        return max(ALIGN, min(self.chunk, self.area.nbytes) // parts // ALIGN * ALIGN)

    def shutdown(self):
        """Frees the pool and the teams; finalises SHMEM if the backend started it
        (collective, from destroy_process_group on every rank)."""
        if _runtime is self:
            set_current(None)
        if self.pool is None:
            return
        live = _pyshmem.aclshmemx_init_status() == _pyshmem.InitStatus.INITIALIZED
        pool, self.pool = self.pool, None
        staging.uninstall(self.area.bytes)
        self.area = None
        if self.p2p is not None:
            self.p2p.close()
        import gc

        gc.collect()  # views of the pool (numpy, slices) go before it is freed
        if not live:
            return
        for g in list(self.groups):
            g.release_team()
        try:
            if is_symmetric(pool):
                aclshmem_free_tensor(pool)
        finally:
            if self.owns_shmem:
                core.finalize()  # what shmem_torch.finalize does (tensors left go by its hook)

    # -- agreement ------------------------------------------------------------

    def agree(self, team, call, kind, dtype=None, count=0, op="", root=-1, extra=0, zc=False):
        """Exchanges this PE's record of the call with the team's (one
        aclshmemx_team_exchange) and compares: raises the same error on every PE when they
        disagree.  Returns True when every PE passed ``zc`` true (its tensor is symmetric,
        so the collective can run on it in place)."""
        fields = (_KIND[kind], DTYPE_CODE.get(dtype, 0), count, OP_CODE.get(op, 0), root, extra, int(bool(zc)))
        if team.n == 1:
            return bool(zc)
        try:
            records = [_RECORD.unpack(r) for r in _engine.exchange(team.id, _RECORD.pack(*fields))]
        except _engine.Refused as exc:  # a rank made another collective instead
            raise AclshmemInvalid(f"shmem backend: {call}: the ranks of the group disagree: {exc}") from None
        for idx, theirs in enumerate(records):
            if theirs[:6] != fields[:6]:
                raise AclshmemInvalid(
                    f"shmem backend: {call}: the ranks of the group disagree: rank {idx} called "
                    f"{describe_call(theirs)}, rank {team.me} (this process) called {describe_call(fields)}")
        return all(r[6] for r in records)

    def settle(self, team, call, chunks, kind, dtype=None, count=0, op="", root=-1, zc=False, always=False):
        """Whether the collective runs in place on every rank's tensor, where ``zc`` says
        this rank's tensor is symmetric and ``chunks`` is how many engine calls it takes
        through the staging area.  One call: every rank makes one, which the engine itself
        compares, and each rank uses its own tensor or the area.  More: the ranks agree
        first (so that nobody makes one call where another makes several), unless
        SHMEM_TORCH_CHECK=0 and not ``always`` (then each trusts its own ``zc``)."""
        if chunks <= 1 or not (self.check or always):
            return zc
        return self.agree(team, call, kind, dtype, count, op, root, zc=zc)

def sym(t):
    """Whether t is a non-empty contiguous symmetric tensor (usable by the engine in place)."""
    return t.numel() > 0 and t.is_contiguous() and is_symmetric(t)


# ---------------------------------------------------------------------------
# Starting SHMEM
# ---------------------------------------------------------------------------


def _start_shmem(store, rank, size, timeout, pool_size):
    """Starts SHMEM for a process group of ``size`` ranks (or checks the running one);
    returns whether this call started it."""
    global _generation
    if _pyshmem.aclshmemx_init_status() == _pyshmem.InitStatus.INITIALIZED:
        pe, npes = _pyshmem.my_pe(), _pyshmem.pe_count()
        if (pe, npes) != (rank, size):
            raise AclshmemError(
                f"shmem backend: SHMEM is already running with this process as PE {pe} of {npes}, but the "
                f"process group has it as rank {rank} of {size}; finalize SHMEM first, or start the "
                "process group with the same ranks")
        return False
    _generation += 1
    launcher = _launcher_matches(rank, size)
    mem_size = _heap_size(launcher, pool_size)
    if launcher:
        core.init(mem_size=mem_size)
        return True
    uid = _exchange_uid(store, rank, size, timeout, _generation)
    core.init(uid=uid, rank=rank, nranks=size, mem_size=mem_size, initializer_method="uid")
    _pyshmem.aclshmem_barrier_all()
    if rank == 0:
        try:
            store.delete_key(_uid_key(_generation))
        except Exception:
            pass
    return True


def _heap_size(launcher, pool_size):
    mem_size = staging.size_env(MEM_SIZE_ENV, 0) if os.environ.get(MEM_SIZE_ENV) else None
    if mem_size is not None:
        return mem_size
    if launcher and os.environ.get("SHMEM_RUN_MEM_SIZE"):
        mem_size = staging.size_env("SHMEM_RUN_MEM_SIZE", 0)
        if mem_size >= pool_size + (8 << 20):
            return mem_size
    return pool_size + HEAP_EXTRA


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
