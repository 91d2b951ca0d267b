"""Collectives on symmetric tensors, for the world team and any team.

Every PE of the team calls the same collective in the same order.  The work is done by
the library's collectives engine (aclshmem/coll.h, through ``shmem_torch._engine``): on
one node the PEs read each other's memory directly, PEs on other nodes are reached with
the inter-node transport, and every PE gets bit-identical results (each element is
reduced once, in team order; float16 and bfloat16 in float32, rounded once).  A call that
does not match the other PEs' (another size, dtype, operation or root) fails on every PE
with an error instead of hanging.

Symmetric tensors (``shmem_torch.empty`` ...) are used in place (zero-copy).  Where a
collective allows an ordinary tensor on one side (the output of ``reduce_scatter``, either
side of ``all_gather`` and ``all_to_all``), it passes through the staging area
(``shmem_torch.staging``) a chunk at a time.  Every PE should pass the same kinds of
tensors (symmetric or not) for a call: the chunks are the engine's calls.

Threads: the collectives' own torch operations (the division of ``avg``, copies of
non-contiguous tensors) run with at most ``cores / PEs on this node`` intra-op threads
(``COMPUTE_THREADS`` overrides that) and give the user's setting back before they
return: with several PEs on a node, each PE's OpenMP workers would otherwise take the
cores the peer PEs need (see docs/guides/benchmarking.rst, all_reduce).
"""

import os

import torch

from shmem import _pyshmem, core
from shmem.core import AclshmemError, AclshmemInvalid

from . import _engine, staging
from .staging import copy as _copy
from .tensor import call_checked, check_int, check_tensor, extent, resolve

__all__ = ["all_reduce", "all_gather", "reduce_scatter", "broadcast", "all_to_all", "barrier",
           "ReduceOp", "COMPUTE_THREADS", "compute_threads", "ComputeScope", "op_name", "team_info"]

# The most torch intra-op threads the collectives' own work uses: None (default) for the
# cores this process may run on divided by the PEs of this node (at least 1, and never
# more than the user's torch.get_num_threads()); an int to choose.
COMPUTE_THREADS = None


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


def op_name(op):
    """The name ("sum", "prod", "min", "max", "avg") of a reduction given as a name or a
    torch.distributed.ReduceOp; AclshmemInvalid for anything else."""
    if isinstance(op, str):
        name = _OP_ALIASES.get(op.lower())
        if name is not None:
            return name
    elif not isinstance(op, int):  # plain ints would compare equal to ReduceOp members
        name = _dist_op_name(op)
        if name is not None:
            return name
    raise AclshmemInvalid(f"op must be one of 'sum', 'prod', 'min', 'max', 'avg' (or a "
                          f"torch.distributed.ReduceOp of those), not {op!r}")


def _dist_op_name(op):
    try:
        import torch.distributed as dist
    except ImportError:
        return None
    if not dist.is_available():
        return None
    table = {dist.ReduceOp.SUM: "sum", dist.ReduceOp.PRODUCT: "prod", dist.ReduceOp.MIN: "min",
             dist.ReduceOp.MAX: "max", dist.ReduceOp.AVG: "avg"}
    for key, name in table.items():
        try:
            if op == key:
                return name
        except Exception:
            pass
    return None


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
    ``COMPUTE_THREADS``); ``addr`` is any symmetric address, ``user`` the caller's
    torch.get_num_threads()."""
    if user is None:
        user = torch.get_num_threads()
    if COMPUTE_THREADS is not None:
        return max(1, int(COMPUTE_THREADS))
    return min(user, _core_share(addr))


_set_grad_enabled = getattr(torch._C, "_set_grad_enabled", torch.set_grad_enabled)


class ComputeScope:
    """``with ComputeScope(addr):`` runs the library's own torch work with
    ``compute_threads`` threads and autograd off, and gives the caller's settings back
    afterwards (also on errors).  Setting the thread number is cheap and starts no thread."""

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


def team_info(team):
    """(team id, number of PEs, this PE's index) of a live team this PE belongs to."""
    if type(team) is not int or team != _pyshmem.ACLSHMEM_TEAM_WORLD:
        team = check_int(team, "team", 0, _pyshmem.ACLSHMEM_MAX_TEAMS - 1)
    if _pyshmem.aclshmemx_init_status() != _pyshmem.InitStatus.INITIALIZED:
        raise AclshmemError("SHMEM is not initialised: call shmem_torch.init() (or shmem.core.init()) first")
    if team == _pyshmem.ACLSHMEM_TEAM_WORLD:
        return team, _pyshmem.pe_count(), _pyshmem.my_pe()
    n = _pyshmem.team_n_pes(team)
    if n <= 0:
        raise AclshmemInvalid(f"team {team} is not a live team (never created, or destroyed)")
    me = _pyshmem.team_my_pe(team)
    if me < 0:
        raise AclshmemInvalid(f"this PE is not a member of team {team}")
    return team, n, me


def _barrier(team):
    if team == _pyshmem.ACLSHMEM_TEAM_WORLD:
        call_checked("barrier of the world team", _pyshmem.aclshmem_barrier_all)
    else:
        call_checked(f"barrier of team {team}", _pyshmem.aclshmem_barrier, team)


def barrier(team=0):
    """Collective: returns when every PE of ``team`` (default: the world) has called it;
    stores made before it are visible to every PE of the team after it."""
    team, _, _ = team_info(team)
    _barrier(team)


# ---------------------------------------------------------------------------
# Helpers for the collectives
# ---------------------------------------------------------------------------


def _symmetric_flat(t, name):
    """A flat 1-D view of a contiguous symmetric tensor."""
    resolve(t, name)
    if not t.is_contiguous():
        raise AclshmemInvalid(f"{name} must be contiguous for collectives (use .contiguous() on a "
                              "symmetric copy, or a contiguous slice)")
    return t.view(-1)


def _try_symmetric(t, name):
    """t's flat view when t is a contiguous symmetric tensor, else None."""
    check_tensor(t, name)
    if not t.is_contiguous():
        return None
    try:
        resolve(t, name)
    except AclshmemInvalid as exc:
        if "not a symmetric tensor" in str(exc):
            return None
        raise
    return t.view(-1)


def _same_dtype(a, b, what, an="output", bn="input"):
    if a.dtype != b.dtype:
        raise AclshmemInvalid(f"{what}: {an} and {bn} must have the same dtype, not {a.dtype} and {b.dtype}")


def _overlap(a, b):
    a_addr, a_len = extent(a)
    b_addr, b_len = extent(b)
    return a_len > 0 and b_len > 0 and a_addr < b_addr + b_len and b_addr < a_addr + a_len


def _chunk(unit_bytes, total, area):
    """How many units (of unit_bytes each, at most total) a chunk through the staging area
    takes."""
    return max(1, min(total, area.nbytes // unit_bytes))


# ---------------------------------------------------------------------------
# The collectives
# ---------------------------------------------------------------------------


def all_reduce(tensor, op="sum", team=0):
    """Collective, in place: every PE's symmetric ``tensor`` becomes the reduction (``op``:
    sum, prod, min, max, avg) of all the team's copies.  Returns ``tensor``.

    bool reduces with or (sum, max) / and (prod, min); integers wrap like torch; avg needs
    a floating-point or complex dtype (the sum divided by the team's size); float16 /
    bfloat16 are computed in float32."""
    name = op_name(op)
    flat = _symmetric_flat(tensor, "tensor")
    red = _engine.reduction(name, tensor.dtype)
    team, n, _ = team_info(team)
    if n == 1 or flat.numel() == 0:
        return tensor
    if red.wire != tensor.dtype:  # reduced in a wider dtype: converted through the staging area
        with staging.lock, ComputeScope(flat.data_ptr()):
            _converted_all_reduce(team, red, flat, staging.area())
        return tensor
    with ComputeScope(flat.data_ptr()):
        _engine.reduce(team, red, flat, flat)
    return tensor


def _converted_all_reduce(team, red, flat, area):
    item = torch.empty((), dtype=red.wire).element_size()
    step = _chunk(item, flat.numel(), area)
    for s in range(0, flat.numel(), step):
        e = min(s + step, flat.numel())
        buf = area.view(0, (e - s) * item, red.wire)
        buf.copy_(flat[s:e])
        _engine.reduce(team, red, buf, buf)
        flat[s:e].copy_(buf)


def reduce_scatter(output, input, op="sum", team=0):
    """Collective: ``output`` (k elements, any local tensor) becomes the reduction of chunk
    ``team_my_pe`` of every PE's symmetric ``input`` (n * k elements, contiguous).
    Returns ``output``."""
    name = op_name(op)
    flat_in = _symmetric_flat(input, "input")
    check_tensor(output, "output")
    _same_dtype(output, input, "reduce_scatter")
    red = _engine.reduction(name, input.dtype)
    team, n, me = team_info(team)
    k = output.numel()
    if flat_in.numel() != n * k:
        raise AclshmemInvalid(f"reduce_scatter: input must have {n} x output.numel() = {n * k} elements "
                              f"(team of {n} PEs), not {flat_in.numel()}")
    if k == 0:
        return output
    item = input.element_size()
    direct = _try_symmetric(output, "output")
    if direct is not None and _overlap(output, input):
        if output.data_ptr() != flat_in.data_ptr() + me * k * item:
            raise AclshmemInvalid("reduce_scatter: output overlaps input other than as input's own "
                                  "chunk of this PE")
        direct = None  # in place: the engine's source and destination must not overlap
    with staging.lock, ComputeScope(flat_in.data_ptr()):
        area = staging.area()
        if red.wire == input.dtype and (direct is not None or k * item <= area.nbytes):
            dst = direct if direct is not None else area.view(0, k * item, input.dtype)
            _engine.reducescatter(team, red, dst, flat_in)
            if direct is None:
                _copy_out(output, dst)
            return output
        _staged_reduce_scatter(team, red, output, flat_in.view(n, k), area)
    return output


def _copy_out(output, flat):
    """output (any layout) <- the 1-D tensor flat."""
    if output.is_contiguous():
        _copy(output.view(-1), flat)
    else:
        output.copy_(flat.view(output.shape))


def _staged_reduce_scatter(team, red, output, rows, area):
    """reduce_scatter of rows (n x k, this PE's input) into output, through the staging
    area: per chunk of w elements, the n row pieces go in one after the other."""
    n, k = rows.shape
    item = torch.empty((), dtype=red.wire).element_size()
    w = _chunk((n + 1) * item, k, area)
    contiguous = output.is_contiguous()
    out = output.view(-1) if contiguous else torch.empty(k, dtype=output.dtype)
    for s in range(0, k, w):
        e = min(s + w, k)
        width = e - s
        src = area.view(0, n * width * item, red.wire)
        _copy(src.view(n, width), rows[:, s:e])
        dst = area.view(n * width * item, width * item, red.wire)
        _engine.reducescatter(team, red, dst, src)
        _copy(out[s:e], dst)
    if not contiguous:
        output.copy_(out.view(output.shape))


def all_gather(output, input, team=0):
    """Collective: ``output`` (n * k elements, contiguous) becomes the concatenation, in
    team order, of every PE's ``input`` (k elements).

    ``output`` or ``input`` must be symmetric (a symmetric output is written in place; an
    ordinary one is filled through the staging area).  In place: pass ``input =
    output[chunk of this PE]``.  Returns ``output``."""
    check_tensor(output, "output")
    check_tensor(input, "input")
    _same_dtype(output, input, "all_gather")
    team, n, me = team_info(team)
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
    if k == 0:
        return output
    with staging.lock, ComputeScope((sym_out if sym_out is not None else sym_in).data_ptr()):
        if sym_out is not None:
            mine = sym_out[me * k:(me + 1) * k]
            if mine.data_ptr() != input.data_ptr() or not input.is_contiguous():
                _copy(mine, input.reshape(-1))
            _engine.fcollect(team, sym_out, mine)
            return output
        _staged_all_gather(team, output.view(n, k), sym_in, me, staging.area())
    return output


def _staged_all_gather(team, rows, flat_in, me, area):
    """all_gather into rows (n x k, ordinary) through the staging area, a chunk of every
    PE's input at a time."""
    n, k = rows.shape
    item = rows.element_size()
    w = _chunk(n * item, k, area)
    for s in range(0, k, w):
        e = min(s + w, k)
        width = e - s
        dst = area.view(0, n * width * item, rows.dtype)
        if width == k:
            src = flat_in  # the whole input in one go: straight from the symmetric input
        else:
            src = dst[me * width:(me + 1) * width]
            _copy(src, flat_in[s:e])
        _engine.fcollect(team, dst, src)
        _copy(rows[:, s:e], dst.view(n, width))


def broadcast(tensor, root=0, team=0):
    """Collective, in place: every PE's symmetric ``tensor`` becomes a copy of PE
    ``root``'s (``root`` is numbered in ``team``).  Returns ``tensor``."""
    resolve(tensor, "tensor")
    team, n, me = team_info(team)
    root = check_int(root, "root")
    if not 0 <= root < n:
        raise AclshmemInvalid(f"root must satisfy 0 <= root < {n} (the team's size), not {root}")
    if tensor.numel() == 0:
        return tensor
    nbytes = tensor.numel() * tensor.element_size()
    if tensor.is_contiguous():
        _engine.broadcast(team, tensor, tensor, root)
        return tensor
    # strided: the elements go through the staging area, in order
    with staging.lock, ComputeScope(extent(tensor)[0]):
        area = staging.area()
        flat = tensor.reshape(-1) if me == root else torch.empty(tensor.numel(), dtype=tensor.dtype)
        data = flat.view(torch.uint8)
        for s in range(0, nbytes, area.nbytes):
            e = min(s + area.nbytes, nbytes)
            buf = area.view(0, e - s)
            if me == root:
                _copy(buf, data[s:e])
            _engine.broadcast(team, buf, buf, root)
            if me != root:
                _copy(data[s:e], buf)
        if me != root:
            tensor.copy_(flat.view(tensor.shape))
    return tensor


def all_to_all(output, input, team=0):
    """Collective: chunk j of ``output`` on PE i becomes chunk i of PE j's ``input`` (both n * k
    elements, contiguous, not overlapping).  ``input`` or ``output`` must be symmetric
    (the other side passes through the staging area).  Returns ``output``."""
    check_tensor(output, "output")
    check_tensor(input, "input")
    _same_dtype(output, input, "all_to_all")
    team, n, _ = team_info(team)
    total = input.numel()
    if output.numel() != total:
        raise AclshmemInvalid(f"all_to_all: output and input must have the same number of elements, not "
                              f"{output.numel()} and {total}")
    if total % n:
        raise AclshmemInvalid(f"all_to_all: the number of elements ({total}) must be a multiple of the "
                              f"team's size ({n})")
    if not output.is_contiguous() or not input.is_contiguous():
        raise AclshmemInvalid("all_to_all: output and input must be contiguous")
    if _overlap(output, input):
        raise AclshmemInvalid("all_to_all: output and input must not overlap (it cannot run in place)")
    sym_in = _try_symmetric(input, "input")
    sym_out = _try_symmetric(output, "output")
    if sym_in is None and sym_out is None:
        raise AclshmemInvalid("all_to_all: input or output must be a symmetric tensor (allocate one with "
                              "aclshmem_create_tensor / shmem_torch.empty)")
    if total == 0:
        return output
    k = total // n
    item = input.element_size()
    if sym_in is not None and sym_out is not None:
        _engine.alltoall(team, sym_out, sym_in, k * item)
        return output
    with staging.lock, ComputeScope((sym_in if sym_in is not None else sym_out).data_ptr()):
        staged_all_to_all(team, output.view(n, k), input.view(n, k), staging.area())
    return output


def staged_all_to_all(team, out_rows, in_rows, area, offset=0):
    """all_to_all of in_rows (n x k, contiguous rows) into out_rows through the staging
    area from byte ``offset`` on, a chunk of every block at a time."""
    n, k = in_rows.shape
    item = in_rows.element_size()
    w = max(1, min(k, (area.nbytes - offset) // (2 * n * item)))
    for s in range(0, k, w):
        e = min(s + w, k)
        width = e - s
        src = area.view(offset, n * width * item, in_rows.dtype)
        dst = area.view(offset + n * width * item, n * width * item, in_rows.dtype)
        _copy(src.view(n, width), in_rows[:, s:e])
        _engine.alltoall(team, dst, src, width * item)
        _copy(out_rows[:, s:e], dst.view(n, width))
