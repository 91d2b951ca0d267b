"""Collectives on symmetric tensors, for the world team and any team.

Every PE of the team calls the same collective in the same order.  The data moves through
the peers' mappings of each other's heaps: a PE reads (or writes) its peers' copies of a
symmetric tensor directly with vectorised torch operations, and team barriers separate the
phases so that nobody overwrites memory a peer may still read.

all_reduce picks its algorithm by size:

* one-shot (up to ``ONE_SHOT_MAX_BYTES``): barrier; every PE reduces all the peers' copies
  into a private buffer; barrier; every PE copies the result into its tensor.
* slice-push (larger; ``LARGE_ALGORITHM``): the tensor is cut into one slice per PE.
  Barrier; PE i reduces slice i of all the copies and stores the result into slice i of
  every copy; barrier.  Slice i of any copy is read and written by PE i alone, so the
  reads and writes need no barrier between them: this is the two-shot algorithm
  (reduce-scatter, then all-gather) with the all-gather done by the slice's owner as
  soon as each chunk of it is reduced, while it is in cache.  Compared with gathering
  afterwards it saves a barrier and a pass that re-reads every reduced slice from memory.
* two-shot (``LARGE_ALGORITHM = "two-shot"``, kept for comparison): per block of
  ``TWO_SHOT_BLOCK_BYTES``, PE i reduces slice i of all the copies into its own copy;
  barrier; every PE copies the other slices from their owners; a final barrier.

Reductions combine the copies in team order (PE 0 first), in cache-sized chunks, so every
PE gets bit-identical results and every algorithm gives the same answer.  float16 and
bfloat16 (and complex32) accumulate in float32 (complex64).

PEs of the team on another node (whose heaps are not mapped here) are reached with the
library's get/put instead of direct loads and stores.

Threads: the collectives run their own torch operations (reductions, conversions, copies)
with at most ``cores / PEs on this node`` intra-op threads (``COMPUTE_THREADS`` overrides
that), and give the user's setting back before they return.  torch's default is one
thread per core in every process; with several PEs on a node, each PE's parallel regions
would oversubscribe the cores, and libgomp's workers keep spinning for milliseconds after
every parallel region (``GOMP_SPINCOUNT``), taking the cores the peer PEs need to reach
the next barrier (see docs/guides/benchmarking.rst, all_reduce).
"""

import ctypes
import os
import threading

import torch

from shmem import _pyshmem, core
from shmem.core import AclshmemError, AclshmemInvalid

from .tensor import call_checked, check_int, check_tensor, extent, peer_view, resolve

__all__ = ["all_reduce", "all_gather", "reduce_scatter", "broadcast", "all_to_all", "barrier",
           "ReduceOp", "ONE_SHOT_MAX_BYTES", "COMPUTE_THREADS", "compute_threads"]

# all_reduce switches from one-shot to LARGE_ALGORITHM above this many bytes.
ONE_SHOT_MAX_BYTES = 256 << 10
# Reductions work through the data in chunks of this many bytes of the accumulator, so the
# partial result stays in cache while every peer's chunk is folded in.
CHUNK_BYTES = 256 << 10
# The algorithm above ONE_SHOT_MAX_BYTES: "slice-push" (default) or "two-shot".
LARGE_ALGORITHM = "slice-push"
# Two-shot works through large tensors in blocks of this many bytes: each block is
# reduce-scattered and then gathered before the next, so the gather reads what the peers
# have just written while it is still in cache.  One barrier per block.
TWO_SHOT_BLOCK_BYTES = 4 << 20
# Slices (slice-push, two-shot) start on this boundary (bytes).
_SLICE_ALIGN = 64

# The most torch intra-op threads the collectives' own work uses: None (default) for the
# cores this process may run on divided by the PEs of this node (at least 1, and never
# more than the user's torch.get_num_threads()); an int to choose.
COMPUTE_THREADS = None

# Tests set this to route every peer access through the library's get/put, as for PEs on
# another node.
_force_rma = False


class ReduceOp:
    """Reduction names: the ``op`` argument also takes these strings (any case) and
    ``torch.distributed.ReduceOp.SUM/PRODUCT/MIN/MAX/AVG``."""

    SUM = "sum"
    PROD = "prod"
    MIN = "min"
    MAX = "max"
    AVG = "avg"


_OP_ALIASES = {"sum": "sum", "prod": "prod", "product": "prod", "min": "min", "max": "max", "avg": "avg",
               "mean": "avg"}


def _op_name(op):
    if isinstance(op, str):
        name = _OP_ALIASES.get(op.lower())
        if name is not None:
            return name
    elif not isinstance(op, int):  # plain ints would compare equal to ReduceOp members
        try:
            import torch.distributed as dist

            if dist.is_available():
                table = {dist.ReduceOp.SUM: "sum", dist.ReduceOp.PRODUCT: "prod", dist.ReduceOp.MIN: "min",
                         dist.ReduceOp.MAX: "max", dist.ReduceOp.AVG: "avg"}
                for key, name in table.items():
                    try:
                        if op == key:
                            return name
                    except Exception:
                        pass
        except ImportError:
            pass
    raise AclshmemInvalid(f"op must be one of 'sum', 'prod', 'min', 'max', 'avg' (or a "
                          f"torch.distributed.ReduceOp of those), not {op!r}")


# ---------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------

_INTEGER = frozenset((torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64))
_FLOAT = frozenset((torch.float32, torch.float64))
_LOW_FLOAT = {torch.float16: torch.float32, torch.bfloat16: torch.float32, torch.complex32: torch.complex64}
_COMPLEX = frozenset((torch.complex64, torch.complex128))


class _Reduction:
    __slots__ = ("op", "dtype", "acc_dtype", "fn")

    def __init__(self, op, dtype):
        self.op = op
        self.dtype = dtype
        if dtype == torch.bool:
            if op == "avg":
                raise AclshmemInvalid("op 'avg' needs a floating-point or complex dtype, not torch.bool")
            self.acc_dtype = dtype
            self.fn = torch.logical_or if op in ("sum", "max") else torch.logical_and
            return
        if dtype in _INTEGER:
            if op == "avg":
                raise AclshmemInvalid(f"op 'avg' needs a floating-point or complex dtype, not {dtype} "
                                      "(use 'sum' and divide as you need)")
            self.acc_dtype = dtype
        elif dtype in _FLOAT or dtype in _COMPLEX:
            self.acc_dtype = dtype
        elif dtype in _LOW_FLOAT:
            self.acc_dtype = _LOW_FLOAT[dtype]
        else:
            raise AclshmemInvalid(f"reductions are not supported for {dtype} (torch has no CPU arithmetic "
                                  "for it); all_gather, broadcast and all_to_all are")
        if op in ("min", "max") and (self.acc_dtype in _COMPLEX):
            raise AclshmemInvalid(f"op '{op}' is not defined for complex tensors ({dtype})")
        self.fn = {"sum": torch.add, "avg": torch.add, "prod": torch.mul, "min": torch.minimum,
                   "max": torch.maximum}[op]


_reductions = {}


def _reduction(op, dtype):
    """_Reduction(op, dtype), made once per pair (a bad pair raises every time)."""
    red = _reductions.get((op, dtype))
    if red is None:
        red = _reductions[(op, dtype)] = _Reduction(op, dtype)
    return red


_local = threading.local()
_itemsizes = {}


def _itemsize(dtype):
    size = _itemsizes.get(dtype)
    if size is None:
        size = _itemsizes[dtype] = torch.empty((), dtype=dtype).element_size()
    return size


def _scratch(kind, dtype, numel):
    """A cached private 1-D tensor (per thread, kind and dtype) of numel elements: the first
    numel of a buffer kept for the kind and dtype (the slices are kept too)."""
    pool = getattr(_local, "pool", None)
    if pool is None:
        pool = _local.pool = {}
    key = (kind, dtype)
    entry = pool.get(key)
    if entry is None or entry[0].numel() < numel:
        entry = pool[key] = (torch.empty(max(numel, 1), dtype=dtype), {})
    t, views = entry
    v = views.get(numel)
    if v is None:
        if len(views) >= 64:
            views.clear()
        v = views[numel] = t[:numel]
    return v


class _Peer:
    """One team member's copy of a contiguous symmetric tensor, as a flat 1-D tensor
    (``view``) when that PE's heap is mapped here, or as an address for get/put."""

    __slots__ = ("pe", "view", "addr", "dtype", "itemsize")

    def __init__(self, alloc, offset, flat, pe):
        self.pe = pe
        self.view = None if _force_rma else peer_view(alloc, offset, flat, pe)
        self.addr = flat.data_ptr()  # the local address: symmetric, the library translates it
        self.dtype = flat.dtype
        self.itemsize = flat.element_size()

    def read(self, lo, hi, out=None):
        """Elements [lo, hi) of this copy: a view, or fetched into ``out`` (or a new tensor)."""
        if self.view is not None:
            return self.view[lo:hi]
        if out is None:
            out = torch.empty(hi - lo, dtype=self.dtype)
        if hi > lo:
            _checked("get", _pyshmem.aclshmem_getmem, out.data_ptr(), self.addr + lo * self.itemsize,
                     (hi - lo) * self.itemsize, self.pe)
        return out

    def read_into(self, lo, hi, dst):
        if hi <= lo:
            return
        if self.view is not None:
            src = self.view[lo:hi]
            if dst.is_contiguous() and dst.dtype == src.dtype:
                # libc's memmove beats an elementwise copy on large blocks (string
                # instructions; no per-element dispatch).
                ctypes.memmove(dst.data_ptr(), src.data_ptr(), (hi - lo) * self.itemsize)
            else:
                dst.copy_(src)
        elif dst.is_contiguous():
            self.read(lo, hi, dst)
        else:
            dst.copy_(self.read(lo, hi))

    def write(self, lo, src):
        """Stores the 1-D tensor ``src`` at element ``lo`` of this copy."""
        n = src.numel()
        if n == 0:
            return
        if self.view is not None:
            dst = self.view[lo:lo + n]
            if src.is_contiguous() and src.dtype == dst.dtype:
                ctypes.memmove(dst.data_ptr(), src.data_ptr(), n * self.itemsize)
            else:
                dst.copy_(src)
        else:
            src = src.contiguous()
            _checked("put", _pyshmem.aclshmem_putmem, self.addr + lo * self.itemsize, src.data_ptr(),
                     n * self.itemsize, self.pe)


_checked = call_checked

# Peer lists kept per allocation (see _peer_list); more than this many shapes of one
# allocation start the allocation's list over.
_PLANS_PER_ALLOCATION = 16


def _peer_list(alloc, offset, flat, pes):
    """[_Peer(alloc, offset, flat, pe) for pe in pes], kept on the allocation: a collective
    called again on the same tensor (the usual case) skips making the peer views.  The
    allocation drops the list when it is freed."""
    key = (offset, flat.numel(), flat.dtype, pes if isinstance(pes, range) else tuple(pes), _force_rma)
    plans = alloc.plans
    peers = plans.get(key)
    if peers is None:
        peers = [_Peer(alloc, offset, flat, pe) for pe in pes]
        if len(plans) >= _PLANS_PER_ALLOCATION:
            plans.clear()
        plans[key] = peers
    return peers


def _all_mapped(peers):
    for p in peers:
        if p.view is None:
            return False
    return True


def _fold_views(peers, out, red, n_avg):
    """out[:] = reduce(p.view for p in peers) in peer order, for peers that are all mapped
    and an ``out`` of their dtype that overlaps none of them (one-shot's scratch)."""
    _fold([p.view for p in peers], out, red, n_avg)


def _fold(parts, out, red, n_avg):
    """out[:] = reduce(parts) in order (at least two 1-D tensors of out's length and
    dtype, none overlapping out), accumulated in red.acc_dtype."""
    fn = red.fn
    acc = out if red.acc_dtype == red.dtype else _scratch("acc", red.acc_dtype, out.numel())
    fn(parts[0], parts[1], out=acc)
    for q in parts[2:]:
        fn(acc, q, out=acc)
    if red.op == "avg" and n_avg > 1:
        acc.div_(n_avg)
    if acc is not out:
        out.copy_(acc)


def fold(parts, out, op, n_avg, addr):
    """For the torch.distributed backend: ``out`` (a local contiguous 1-D tensor) becomes
    the reduction ``op`` of ``parts`` (one flat tensor per team member, in team order),
    computed like all_reduce computes it, under the collectives' thread policy for the
    heap at ``addr``."""
    red = _reduction(_op_name(op), out.dtype)
    with _Scope(addr):
        _fold(parts, out, red, n_avg)


def _overlap(a_addr, a_len, b_addr, b_len):
    return a_len > 0 and b_len > 0 and a_addr < b_addr + b_len and b_addr < a_addr + a_len


def _reduce_range(peers, lo, hi, out, red, n_avg):
    """out[:] = reduce(p[lo:hi] for p in peers), combined in peer order, chunk by chunk.

    ``out`` is a local 1-D tensor of hi - lo elements; it may be one peer's own memory
    (the two-shot case) as long as that peer is the first or second (then the first
    operation reads it before writing it); otherwise the result goes through scratch."""
    count = hi - lo
    if count <= 0:
        return
    fn = red.fn
    acc = red.acc_dtype
    chunk = max(1, CHUNK_BYTES // _itemsize(acc))
    out_addr, out_len = out.data_ptr(), count * out.element_size()
    # direct: the result is computed in ``out`` itself.  When ``out`` is exactly peer k's
    # range (a PE reducing into its own copy), the partial result of peers 0..k-1 is kept
    # in scratch and the operation that folds in peer k writes ``out``: every input is
    # read before ``out`` is written, and the order stays 0, 1, 2, ...
    direct = acc == red.dtype and len(peers) >= 2
    own = None
    if direct:
        for k, p in enumerate(peers):
            if p.view is None:
                continue
            p_addr = p.view.data_ptr() + lo * p.itemsize
            if not _overlap(out_addr, out_len, p_addr, count * p.itemsize):
                continue
            if p_addr != out_addr or own is not None:
                direct = False
                break
            own = k
    split = own is not None and own >= 2
    fetch = [None] * len(peers)
    if any(p.view is None for p in peers):
        for k, p in enumerate(peers):
            if p.view is None:
                fetch[k] = torch.empty(min(chunk, count), dtype=p.dtype)
    tmp = None if direct and not split else _scratch("acc", acc, min(chunk, count))
    divide = red.op == "avg" and n_avg > 1
    for s in range(lo, hi, chunk):
        e = min(s + chunk, hi)
        parts = [p.read(s, e, None if fetch[k] is None else fetch[k][:e - s]) for k, p in enumerate(peers)]
        o = out[s - lo:e - lo]
        if split:
            t = tmp[:e - s]
            fn(parts[0], parts[1], out=t)
            for q in parts[2:own]:
                fn(t, q, out=t)
            fn(t, parts[own], out=o)
            for q in parts[own + 1:]:
                fn(o, q, out=o)
            if divide:
                o.div_(n_avg)
        elif direct:
            fn(parts[0], parts[1], out=o)
            for q in parts[2:]:
                fn(o, q, out=o)
            if divide:
                o.div_(n_avg)
        else:
            t = tmp[:e - s]
            t.copy_(parts[0])
            for q in parts[1:]:
                fn(t, q, out=t)
            if divide:
                t.div_(n_avg)
            o.copy_(t)


# ---------------------------------------------------------------------------
# Threads
# ---------------------------------------------------------------------------

# cores this process may run on // PEs of this node, worked out at the first collective
# after init (the finalize hook forgets it).
_share = None


def _node_pes(addr):
    """How many PEs of the world (this one included) run on this node: those whose heap
    this process maps (``addr`` is any symmetric address); 0 if ``addr`` is not one."""
    return sum(1 for pe in range(_pyshmem.pe_count()) if _pyshmem.aclshmem_ptr(addr, pe))


def _core_share(addr):
    global _share
    share = _share
    if share is None:
        node = _node_pes(addr)
        share = max(1, _cores() // max(1, node))
        if node:
            _share = share
    return share


def _forget_node(instance_id=None):
    global _share
    _share = None


core.register_finalize_hook(_forget_node)


def _cores():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def compute_threads(addr, user=None):
    """The intra-op threads the collectives use for their own torch operations (see
    ``COMPUTE_THREADS``); ``user`` is the caller's torch.get_num_threads()."""
    if user is None:
        user = torch.get_num_threads()
    if COMPUTE_THREADS is not None:
        return max(1, int(COMPUTE_THREADS))
    return min(user, _core_share(addr))


_set_grad_enabled = getattr(torch._C, "_set_grad_enabled", torch.set_grad_enabled)


class _Scope:
    """``with _Scope(addr):`` runs the library's own work with ``compute_threads`` torch
    threads and autograd off, and gives the caller's settings back afterwards (also on
    errors).  Setting the thread number is cheap (well under a microsecond) and starts no
    thread: with fewer threads torch runs the operations in this thread instead of waking
    OpenMP workers.  (torch.no_grad costs a few microseconds more than the flag itself.)"""

    __slots__ = ("addr", "saved", "grad")

    def __init__(self, addr):
        self.addr = addr
        self.saved = None
        self.grad = False

    def __enter__(self):
        self.grad = torch.is_grad_enabled()
        if self.grad:
            _set_grad_enabled(False)
        user = torch.get_num_threads()
        want = compute_threads(self.addr, user)
        if want != user:
            torch.set_num_threads(want)
            self.saved = user
        return self

    def __exit__(self, *exc):
        if self.saved is not None:
            torch.set_num_threads(self.saved)
            self.saved = None
        if self.grad:
            _set_grad_enabled(True)
            self.grad = False
        return False


# ---------------------------------------------------------------------------
# Teams and barriers
# ---------------------------------------------------------------------------


def _team_info(team):
    """(team id, number of PEs, this PE's index, world PE of each index)."""
    if type(team) is not int or team != _pyshmem.ACLSHMEM_TEAM_WORLD:
        team = check_int(team, "team", 0, _pyshmem.ACLSHMEM_MAX_TEAMS - 1)
    if _pyshmem.aclshmemx_init_status() != _pyshmem.InitStatus.INITIALIZED:
        raise AclshmemError("SHMEM is not initialised: call shmem_torch.init() (or shmem.core.init()) first")
    if team == _pyshmem.ACLSHMEM_TEAM_WORLD:
        n = _pyshmem.pe_count()
        return team, n, _pyshmem.my_pe(), range(n)
    n = _pyshmem.team_n_pes(team)
    if n <= 0:
        raise AclshmemInvalid(f"team {team} is not a live team (never created, or destroyed)")
    me = _pyshmem.team_my_pe(team)
    if me < 0:
        raise AclshmemInvalid(f"this PE is not a member of team {team}")
    pes = [_pyshmem.team_translate_pe(team, i, _pyshmem.ACLSHMEM_TEAM_WORLD) for i in range(n)]
    return team, n, me, pes


def _barrier(team):
    if team == _pyshmem.ACLSHMEM_TEAM_WORLD:
        call_checked("barrier of the world team", _pyshmem.aclshmem_barrier_all)
    else:
        call_checked(f"barrier of team {team}", _pyshmem.aclshmem_barrier, team)


def _each_member(team, me, n, visit):
    """Between two barriers of team, calls visit(j) for every member j, starting with this
    PE's own number so that the PEs reach different peers at the same moment."""
    _barrier(team)
    for step in range(n):
        visit((me + step) % n)
    _barrier(team)


def barrier(team=0):
    """Collective: returns when every PE of ``team`` (default: the world) has called it;
    stores made before it are visible to every PE of the team after it."""
    team, _, _, _ = _team_info(team)
    _barrier(team)


# ---------------------------------------------------------------------------
# Helpers for the collectives
# ---------------------------------------------------------------------------


def _symmetric_flat(t, name):
    """(allocation, offset, flat 1-D view) of a contiguous symmetric tensor."""
    alloc, offset = resolve(t, name)
    if not t.is_contiguous():
        raise AclshmemInvalid(f"{name} must be contiguous for collectives (use .contiguous() on a "
                              "symmetric copy, or a contiguous slice)")
    return alloc, offset, t.view(-1)


def _try_symmetric(t, name):
    check_tensor(t, name)
    try:
        return _symmetric_flat(t, name)
    except AclshmemInvalid as exc:
        if "not a symmetric tensor" in str(exc):
            return None
        raise


def _same_dtype(a, b, what, an="output", bn="input"):
    if a.dtype != b.dtype:
        raise AclshmemInvalid(f"{what}: {an} and {bn} must have the same dtype, not {a.dtype} and {b.dtype}")


def _flat_local(t, name):
    """A flat 1-D tensor over ``t``'s elements: a view when t is contiguous, else a copy."""
    check_tensor(t, name)
    return t.reshape(-1)


def _slices(numel, n, itemsize):
    align = max(1, _SLICE_ALIGN // itemsize)
    per = -(-numel // n)
    per = -(-per // align) * align
    return [(min(i * per, numel), min((i + 1) * per, numel)) for i in range(n)]


# ---------------------------------------------------------------------------
# The collectives
# ---------------------------------------------------------------------------


def all_reduce(tensor, op="sum", team=0):
    """Collective, in place: every PE's symmetric ``tensor`` becomes the reduction (``op``:
    sum, prod, min, max, avg) of all the team's copies.  Returns ``tensor``.

    bool reduces with or (sum, max) / and (prod, min); integers wrap like torch; avg needs
    a floating-point or complex dtype; float16 / bfloat16 accumulate in float32."""
    op = _op_name(op)
    alloc, offset, flat = _symmetric_flat(tensor, "tensor")
    red = _reduction(op, tensor.dtype)
    team, n, me, pes = _team_info(team)
    numel = flat.numel()
    if n == 1 or numel == 0:
        return tensor
    itemsize = flat.element_size()
    with _Scope(alloc.base):
        peers = _peer_list(alloc, offset, flat, pes)
        if numel * itemsize <= ONE_SHOT_MAX_BYTES:
            out = _scratch("one-shot", flat.dtype, numel)
            _barrier(team)
            if red.acc_dtype == red.dtype and numel * itemsize <= CHUNK_BYTES and _all_mapped(peers):
                _fold_views(peers, out, red, n)  # one chunk: what _reduce_range does, without the plan
            else:
                _reduce_range(peers, 0, numel, out, red, n)
            _barrier(team)
            ctypes.memmove(flat.data_ptr(), out.data_ptr(), numel * itemsize)
            return tensor
        if LARGE_ALGORITHM == "two-shot":
            _two_shot(peers, flat, red, n, me, team)
        else:
            bounds = _slices(numel, n, itemsize)
            lo, hi = bounds[me]
            _barrier(team)
            _reduce_push(peers, lo, hi, red, n, me)
            _barrier(team)
    return tensor


def _two_shot(peers, flat, red, n, me, team):
    """Blocked two-shot all_reduce: per block, reduce slice ``me`` into this PE's copy,
    barrier, gather the other slices from their owners."""
    numel, itemsize = flat.numel(), flat.element_size()
    block = max(n, TWO_SHOT_BLOCK_BYTES // itemsize)
    _barrier(team)
    for b_lo in range(0, numel, block):
        b_hi = min(b_lo + block, numel)
        bounds = _slices(b_hi - b_lo, n, itemsize)
        lo, hi = bounds[me]
        _reduce_range(peers, b_lo + lo, b_lo + hi, flat[b_lo + lo:b_lo + hi], red, n)
        _barrier(team)
        for k in range(1, n):
            j = (me + k) % n
            lo_j, hi_j = bounds[j]
            peers[j].read_into(b_lo + lo_j, b_lo + hi_j, flat[b_lo + lo_j:b_lo + hi_j])
    _barrier(team)


def _reduce_push(peers, lo, hi, red, n_avg, me):
    """Slice [lo, hi) of every copy becomes the reduction of that slice of all the copies.

    Works chunk by chunk: the chunk of every copy is folded (in peer order) into scratch,
    then the result is stored into the chunk of every copy.  Only the PE that owns the
    slice reads or writes it, so no barrier is needed between the reads and the writes."""
    count = hi - lo
    if count <= 0:
        return
    fn, acc, dtype = red.fn, red.acc_dtype, red.dtype
    chunk = max(1, CHUNK_BYTES // _itemsize(acc))
    tmp = _scratch("acc", acc, min(chunk, count))
    conv = None if acc == dtype else _scratch("one-shot", dtype, min(chunk, count))
    fetch = [None if p.view is not None else torch.empty(min(chunk, count), dtype=p.dtype) for p in peers]
    divide = red.op == "avg" and n_avg > 1
    n = len(peers)
    for s in range(lo, hi, chunk):
        e = min(s + chunk, hi)
        parts = [p.read(s, e, None if fetch[k] is None else fetch[k][:e - s]) for k, p in enumerate(peers)]
        t = tmp[:e - s]
        if conv is None:
            fn(parts[0], parts[1], out=t)
        else:
            t.copy_(parts[0])
            fn(t, parts[1], out=t)
        for q in parts[2:]:
            fn(t, q, out=t)
        if divide:
            t.div_(n_avg)
        if conv is not None:
            c = conv[:e - s]
            c.copy_(t)
            t = c
        for k in range(n):
            peers[(me + k) % n].write(s, t)


def reduce_scatter(output, input, op="sum", team=0):
    """Collective: ``output`` (k elements, any local tensor) becomes the reduction of chunk
    ``team_my_pe`` of every PE's symmetric ``input`` (n * k elements, contiguous).
    Returns ``output``."""
    op = _op_name(op)
    alloc, offset, flat_in = _symmetric_flat(input, "input")
    check_tensor(output, "output")
    _same_dtype(output, input, "reduce_scatter")
    red = _reduction(op, input.dtype)
    team, n, me, pes = _team_info(team)
    k = output.numel()
    if flat_in.numel() != n * k:
        raise AclshmemInvalid(f"reduce_scatter: input must have {n} x output.numel() = {n * k} elements "
                              f"(team of {n} PEs), not {flat_in.numel()}")
    with _Scope(alloc.base):
        peers = _peer_list(alloc, offset, flat_in, pes)
        direct = output.is_contiguous()
        out = output.view(-1) if direct else _scratch("one-shot", output.dtype, k)
        if direct and _overlap(out.data_ptr(), k * out.element_size(), flat_in.data_ptr(),
                               flat_in.numel() * flat_in.element_size()):
            if out.data_ptr() != flat_in.data_ptr() + me * k * flat_in.element_size():
                raise AclshmemInvalid("reduce_scatter: output overlaps input other than as input's own "
                                      "chunk of this PE")
        _barrier(team)
        _reduce_range(peers, me * k, (me + 1) * k, out, red, n)
        _barrier(team)
        if not direct:
            output.copy_(out.view(output.shape))
    return output


def all_gather(output, input, team=0):
    """Collective: ``output`` (n * k elements, contiguous) becomes the concatenation, in
    team order, of every PE's ``input`` (k elements).

    Either ``output`` is symmetric (each PE stores its input into every peer's output; the
    input may be any tensor) or ``input`` is (each PE reads every peer's input).  In place:
    pass ``input = output[chunk of this PE]``.  Returns ``output``."""
    check_tensor(output, "output")
    check_tensor(input, "input")
    _same_dtype(output, input, "all_gather")
    team, n, me, pes = _team_info(team)
    k = input.numel()
    if output.numel() != n * k:
        raise AclshmemInvalid(f"all_gather: output must have {n} x input.numel() = {n * k} elements "
                              f"(team of {n} PEs), not {output.numel()}")
    if not output.is_contiguous():
        raise AclshmemInvalid("all_gather: output must be contiguous")
    sym_out = _try_symmetric(output, "output")
    sym_in = None if sym_out is not None else _try_symmetric(input, "input")
    if sym_out is None and sym_in is None:
        raise AclshmemInvalid("all_gather: output or input must be a symmetric tensor (allocate one with "
                              "aclshmem_create_tensor / shmem_torch.empty)")
    with _Scope((sym_out or sym_in)[0].base):
        if sym_out is not None:
            alloc, offset, flat_out = sym_out
            src = _flat_local(input, "input")
            peers = _peer_list(alloc, offset, flat_out, pes)
            def push(j):
                if not (j == me and flat_out[me * k:].data_ptr() == src.data_ptr()):  # else in place
                    peers[j].write(me * k, src)

            _each_member(team, me, n, push)
            return output
        alloc, offset, flat_in = sym_in
        flat_out = output.view(-1)
        peers = _peer_list(alloc, offset, flat_in, pes)
        _each_member(team, me, n, lambda j: peers[j].read_into(0, k, flat_out[j * k:(j + 1) * k]))
    return output


def broadcast(tensor, root=0, team=0):
    """Collective, in place: every PE's symmetric ``tensor`` becomes a copy of PE
    ``root``'s (``root`` is numbered in ``team``).  Returns ``tensor``."""
    alloc, offset = resolve(tensor, "tensor")
    team, n, me, pes = _team_info(team)
    root = check_int(root, "root")
    if not 0 <= root < n:
        raise AclshmemInvalid(f"root must satisfy 0 <= root < {n} (the team's size), not {root}")
    with _Scope(alloc.base):
        if _force_rma or not tensor.is_contiguous():
            view = None if _force_rma else peer_view(alloc, offset, tensor, pes[root])
            if view is None and not tensor.is_contiguous():
                raise AclshmemInvalid("broadcast: tensor must be contiguous when the root is on another node")
        _barrier(team)
        if me != root and tensor.numel():
            if tensor.is_contiguous():
                flat = tensor.view(-1)
                _peer_list(alloc, offset, flat, (pes[root],))[0].read_into(0, flat.numel(), flat)
            else:
                tensor.copy_(view)
        _barrier(team)
    return tensor


def all_to_all(output, input, team=0):
    """Collective: chunk j of ``output`` on PE i becomes chunk i of PE j's ``input`` (both n * k
    elements, contiguous, not overlapping).  ``input`` or ``output`` must be symmetric.
    Returns ``output``."""
    check_tensor(output, "output")
    check_tensor(input, "input")
    _same_dtype(output, input, "all_to_all")
    team, n, me, pes = _team_info(team)
    total = input.numel()
    if output.numel() != total:
        raise AclshmemInvalid(f"all_to_all: output and input must have the same number of elements, not "
                              f"{output.numel()} and {total}")
    if total % n:
        raise AclshmemInvalid(f"all_to_all: the number of elements ({total}) must be a multiple of the "
                              f"team's size ({n})")
    if not output.is_contiguous() or not input.is_contiguous():
        raise AclshmemInvalid("all_to_all: output and input must be contiguous")
    a, la = extent(output)
    b, lb = extent(input)
    if _overlap(a, la, b, lb):
        raise AclshmemInvalid("all_to_all: output and input must not overlap (it cannot run in place)")
    k = total // n
    sym_in = _try_symmetric(input, "input")
    sym_out = None if sym_in is not None else _try_symmetric(output, "output")
    if sym_in is None and sym_out is None:
        raise AclshmemInvalid("all_to_all: input or output must be a symmetric tensor (allocate one with "
                              "aclshmem_create_tensor / shmem_torch.empty)")
    with _Scope((sym_in or sym_out)[0].base):
        if sym_in is not None:
            alloc, offset, flat_in = sym_in
            flat_out = output.view(-1)
            peers = _peer_list(alloc, offset, flat_in, pes)
            _each_member(team, me, n,
                         lambda j: peers[j].read_into(me * k, (me + 1) * k, flat_out[j * k:(j + 1) * k]))
            return output
        alloc, offset, flat_out = sym_out
        flat_in = input.view(-1)
        peers = _peer_list(alloc, offset, flat_out, pes)
        _each_member(team, me, n, lambda j: peers[j].write(me * k, flat_in[j * k:(j + 1) * k]))
    return output
