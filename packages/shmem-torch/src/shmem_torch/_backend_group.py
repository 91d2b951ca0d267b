"""The ``"shmem"`` process group: torch.distributed's calls, checked, on the backend's
collectives (``_backend_coll``) and point-to-point (``_backend_p2p``) over a SHMEM team.

* **Sub-groups.**  ``dist.new_group(ranks)`` with ranks ``start, start + stride, ...``
  becomes a SHMEM team (``aclshmem_team_split_strided``, collective over the world, which
  ``new_group`` is).  Other rank sets, and groups made with
  ``use_local_synchronization=True``, are served by gloo (with a warning).
* **Work.**  Collectives complete before they return (their Work is completed);
  ``async_op=True`` returns the same completed Work.  ``isend`` / ``irecv`` return Work
  that advances as the process waits.
"""

import sys
import warnings
from datetime import timedelta

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import _create_work_from_future

from shmem import _pyshmem
from shmem.core import AclshmemError, AclshmemInvalid

from . import _backend_coll as coll
from ._engine import Refused
from ._backend_p2p import Mailboxes, P2PWork, RecvOp, SendOp
from ._backend_runtime import Team, lock
from .collectives import ComputeScope, barrier
from .tensor import SUPPORTED_DTYPES

__all__ = ["BACKEND_NAME", "ShmemProcessGroup", "gloo_backend", "warn_fallback"]

BACKEND_NAME = "shmem"
_SUPPORTED = frozenset(SUPPORTED_DTYPES)


def _check_tensor(t, call, name="tensor"):
    if not isinstance(t, torch.Tensor):
        raise AclshmemInvalid(f"shmem backend: {call}: {name} must be a torch.Tensor, not {type(t).__name__}")
    if not t.is_cpu:
        raise AclshmemInvalid(f"shmem backend: {call}: {name} is on device '{t.device}'; the shmem backend "
                              "handles CPU tensors only (use a 'cpu:shmem,cuda:nccl' style backend string, "
                              "or move the tensor to the CPU)")
    if t.layout != torch.strided:
        raise AclshmemInvalid(f"shmem backend: {call}: {name} must be a dense (strided) tensor, not {t.layout}")
    if t.dtype not in _SUPPORTED:
        raise AclshmemInvalid(f"shmem backend: {call}: {name} has dtype {t.dtype}, which is not plain memory "
                              "(quantized and bit-packed dtypes are not supported)")
    try:
        t.data_ptr()
    except RuntimeError:  # its storage refuses access: what free leaves to the views kept of a tensor
        raise AclshmemInvalid(f"shmem backend: {call}: {name} has no memory to use: it is a view kept from a "
                              "symmetric tensor that was freed (or a tensor without data)") from None
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


def _check_pair(call, output, input, size, whole):
    """The tensors of all_gather_into_tensor (``whole`` = "output") and
    reduce_scatter_tensor ("input"): one dtype, the whole one group size times the other."""
    _check_tensor(output, call, "output")
    _check_tensor(input, call, "input")
    _same_dtype(output, input, call)
    big, small, part = (output, input, "input") if whole == "output" else (input, output, "output")
    if big.numel() != size * small.numel():
        raise AclshmemInvalid(f"shmem backend: {call}: the {whole} has {big.numel()} elements; it must have "
                              f"{size} x {small.numel()} (group size x {part})")


def _each_pair(method, outputs, inputs, opts):
    """A coalesced call: method(output, input, opts) for each pair, in order."""
    for o, i in zip(outputs, inputs):
        method(o, i, opts)
    return _done(list(outputs))


class _Serve(ComputeScope):
    """``with _Serve(pg, call) as (rt, team):`` the body of a call of process group pg:
    under the backend's lock, autograd off, and with the collectives' thread policy, so
    that the staging copies of a rank that shares the cores with the others start no
    OpenMP parallel region (whose workers spin for milliseconds after it and take the CPU
    the other ranks need).  One object per call (the scope itself), on every call's path:
    kept lean."""

    __slots__ = ("pg", "call")

    def __init__(self, pg, call):
        ComputeScope.__init__(self, 0)  # the pool's address, known once the call began
        self.pg = pg
        self.call = call

    def __enter__(self):
        lock.acquire()
        try:
            rt, team = self.pg._begin(self.call)
            self.addr = rt.pool_addr
            ComputeScope.__enter__(self)
        except BaseException:
            lock.release()
            raise
        return rt, team

    def __exit__(self, exc_type, exc, tb):
        try:
            ComputeScope.__exit__(self, exc_type, exc, tb)
        finally:
            lock.release()
        if isinstance(exc, Refused):  # the engine compared the ranks' calls and refused them all
            raise AclshmemInvalid(f"shmem backend: {self.call}: the ranks of the group disagree: {exc}") from None
        return False


def _done(result):
    """A completed Work holding ``result`` (what a synchronous collective returns).  The
    future is torch's C one, which torch.futures.Future subclasses only to convert devices
    (a CPU result has none): a third cheaper."""
    fut = torch._C.Future([])
    fut.set_result(result)
    return _create_work_from_future(fut)


def _unsupported(name):
    def method(self, *args, **kwargs):
        raise NotImplementedError(f"shmem backend: {name} is not supported by the 'shmem' process group")

    method.__name__ = name
    return method


def _root_of(opts, size, call):
    root = opts.rootRank if opts is not None else 0
    if not 0 <= root < size:
        raise AclshmemInvalid(f"shmem backend: {call}: root {root} is not a rank of this group of {size}")
    return root


def _reduce_op(opts):
    return opts.reduceOp if opts is not None else dist.ReduceOp.SUM


class ShmemProcessGroup(dist.ProcessGroup):
    """The ``"shmem"`` process group: torch.distributed's calls on the library's
    collectives over a SHMEM team (see shmem_torch.backend)."""

    def __init__(self, rt, team, rank, size, is_world=False):
        super().__init__(rank, size)
        self._rt = rt
        self._team = team
        self._rank = rank
        self._size = size
        self._is_world = is_world
        self._closed = False
        if rt.p2p is None:
            rt.p2p = Mailboxes(rt)
        rt.groups.append(self)

    # -- identity -------------------------------------------------------------

    def getBackendName(self):
        return BACKEND_NAME

    def name(self):
        return BACKEND_NAME

    def _get_backend_name(self):
        return BACKEND_NAME

    # torch >= 2.14's batch_isend_irecv asks the group for its backend of the tensors' device
    # (to learn whether it coalesces); a C++ group answers with a registered backend, this
    # one is its own, and does not coalesce (each op of the batch is posted alone).
    def _get_backend(self, device):
        return self

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

    @property
    def team_id(self):
        return self._team.id

    @property
    def closed(self):
        return self._closed

    @property
    def is_world(self):
        return self._is_world

    @property
    def runtime(self):
        return self._rt

    def release_team(self):
        """Destroys the group's team if the group made it (collective over the team)."""
        if self._team.owned:
            self._team.owned = False
            try:
                _pyshmem.team_destroy(self._team.id)
            except Exception:
                pass

    def shutdown(self):
        with lock:
            if self._closed:
                return
            self._closed = True
            rt = self._rt
            if self in rt.groups:
                rt.groups.remove(self)
            if self._is_world:
                rt.shutdown()
            elif rt.pool is not None:
                self.release_team()

    def abort(self):
        self.shutdown()

    # new_group hook: torch asks the default group for it; a team split must be made by
    # every rank, and only this path reaches every rank (see _hook_wanted).
    @property
    def new_group(self):
        if not self._is_world or not _hook_wanted(sys._getframe(1)):
            raise AttributeError("new_group")
        return self._new_group

    # torch >= 2.14 also passes backend= (the subgroup's is this group's, whatever it names).
    def _new_group(self, ranks, timeout=None, pg_options=None, group_name=None, group_desc=None, backend=None):
        with lock:
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
                pg = ShmemProcessGroup(rt, Team(tid, ranks, ranks.index(me), owned=True), ranks.index(me), len(ranks))
            else:
                if not member:
                    return None
                warn_fallback(ranks, "its ranks are not evenly spaced in ascending order")
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

    def _begin(self, call):
        rt = self._rt
        if self._closed:
            raise AclshmemError(f"shmem backend: {call}: this process group was destroyed")
        rt.require(call)
        if rt.p2p.pending:
            rt.p2p.progress()
        return rt, self._team

    # -- reductions and broadcast ---------------------------------------------------

    def allreduce(self, tensors, opts=None):
        call = "all_reduce"
        t = _one(tensors, call)
        with _Serve(self, call) as (rt, team):
            coll.all_reduce(rt, team, t, coll.op_of(_reduce_op(opts), call, t.dtype), call)
        return _done([t])

    def allreduce_coalesced(self, tensors, opts=None):
        call = "all_reduce_coalesced"
        if not isinstance(tensors, (list, tuple)):
            raise AclshmemInvalid(f"shmem backend: {call} takes a list of tensors")
        for t in tensors:
            _check_tensor(t, call)
        with _Serve(self, call) as (rt, team):
            for t in tensors:
                coll.all_reduce(rt, team, t, coll.op_of(_reduce_op(opts), call, t.dtype), call)
        return _done(list(tensors))

    def broadcast(self, tensors, opts=None):
        call = "broadcast"
        t = _one(tensors, call)
        root = _root_of(opts, self._size, call)
        with _Serve(self, call) as (rt, team):
            coll.broadcast(rt, team, t, root, call)
        return _done([t])

    def reduce(self, tensors, opts=None):
        call = "reduce"
        t = _one(tensors, call)
        root = _root_of(opts, self._size, call)
        with _Serve(self, call) as (rt, team):
            coll.reduce(rt, team, t, coll.op_of(_reduce_op(opts), call, t.dtype), root, call)
        return _done([t])

    # -- all_gather -------------------------------------------------------------------

    def allgather(self, output_tensors, input_tensors, opts=None):
        call = "all_gather"
        inp = _one(input_tensors, call, "input_tensors")
        outs = self._rank_list(output_tensors, call, "output", inp, "input")
        with _Serve(self, call) as (rt, team):
            if team.n == 1:
                outs[0].copy_(inp.reshape(outs[0].shape))
            else:
                chunks = coll.gather_chunks(rt, team, inp.numel() * inp.element_size())
                rt.settle(team, call, chunks, call, inp.dtype, inp.numel())
                if inp.numel():
                    coll.all_gather_rows(rt, team, outs, inp)
        return _done([outs])

    def allgather_coalesced(self, output_lists, input_list, opts=None):
        for outs, inp in zip(output_lists, input_list):
            self.allgather([outs], [inp], opts)
        return _done(output_lists)

    def all_gather_single(self, output, input, opts=None):
        call = "all_gather_into_tensor"
        _check_pair(call, output, input, self._size, "output")
        with _Serve(self, call) as (rt, team):
            coll.all_gather_single(rt, team, output, input, call)
        return _done([output])

    _allgather_base = all_gather_single

    def all_gather_single_coalesced(self, outputs, inputs, opts=None):
        return _each_pair(self.all_gather_single, outputs, inputs, opts)

    allgather_into_tensor_coalesced = all_gather_single_coalesced

    # -- reduce_scatter ----------------------------------------------------------------

    def reduce_scatter(self, output_tensors, input_tensors, opts=None):
        call = "reduce_scatter"
        out = _one(output_tensors, call, "output_tensors")
        rows = self._rank_list(input_tensors, call, "input", out, "output")
        with _Serve(self, call) as (rt, team):
            op = coll.op_of(_reduce_op(opts), call, out.dtype)
            if team.n == 1:
                out.copy_(rows[0].reshape(out.shape))
                return _done([out])
            rt.settle(team, call, coll.scatter_chunks(rt, team, out.numel(), op, out.dtype), call, out.dtype,
                      out.numel(), op)
            if out.numel():
                coll.reduce_scatter_rows(rt, team, out, rows, op)
        return _done([out])

    def reduce_scatter_single(self, output, input, opts=None):
        call = "reduce_scatter_tensor"
        _check_pair(call, output, input, self._size, "input")
        with _Serve(self, call) as (rt, team):
            coll.reduce_scatter_single(rt, team, output, input, coll.op_of(_reduce_op(opts), call, output.dtype), call)
        return _done([output])

    _reduce_scatter_base = reduce_scatter_single

    def reduce_scatter_single_coalesced(self, outputs, inputs, opts=None):
        return _each_pair(self.reduce_scatter_single, outputs, inputs, opts)

    reduce_scatter_tensor_coalesced = reduce_scatter_single_coalesced

    # -- gather and scatter ----------------------------------------------------------------

    def gather(self, output_tensors, input_tensors, opts=None):
        call = "gather"
        inp = _one(input_tensors, call, "input_tensors")
        root = _root_of(opts, self._size, call)
        outs = self._root_list(output_tensors, call, root, inp, "output")
        with _Serve(self, call) as (rt, team):
            coll.gather(rt, team, inp, outs, root, call)
        return _done([outs])

    def scatter(self, output_tensors, input_tensors, opts=None):
        call = "scatter"
        out = _one(output_tensors, call, "output_tensors")
        root = _root_of(opts, self._size, call)
        ins = self._root_list(input_tensors, call, root, out, "input")
        with _Serve(self, call) as (rt, team):
            coll.scatter(rt, team, out, ins, root, call)
        return _done([out])

    def _root_list(self, tensors, call, root, ref, side):
        """The root's one list of a tensor per rank (gather's outputs, scatter's inputs),
        each like ``ref``; the other ranks pass none."""
        if self._rank != root:
            if tensors and any(len(x) for x in tensors):
                raise AclshmemInvalid(f"shmem backend: {call}: only the root (rank {root}) takes {side} tensors")
            return []
        if not isinstance(tensors, (list, tuple)) or len(tensors) != 1 or len(tensors[0]) != self._size:
            raise AclshmemInvalid(f"shmem backend: {call}: the root needs one list of {self._size} {side} tensors")
        ts = list(tensors[0])
        other = "input" if side == "output" else "output"
        for i, t in enumerate(ts):
            _check_tensor(t, call, f"{side} tensor {i}")
            _same_dtype(t, ref, call)
            if t.numel() != ref.numel():
                raise AclshmemInvalid(f"shmem backend: {call}: {side} tensor {i} has {t.numel()} elements, but "
                                      f"the {other} has {ref.numel()}")
        return ts

    # -- all_to_all ----------------------------------------------------------------------

    def alltoall(self, output_tensors, input_tensors, opts=None):
        call = "all_to_all"
        for name, lst in (("output_tensors", output_tensors), ("input_tensors", input_tensors)):
            if not isinstance(lst, (list, tuple)) or len(lst) != self._size:
                raise AclshmemInvalid(f"shmem backend: {call}: {name} must be a list of {self._size} tensors")
        for t in list(output_tensors) + list(input_tensors):
            _check_tensor(t, call)
        dtype = input_tensors[0].dtype
        for t in list(output_tensors) + list(input_tensors):
            if t.dtype != dtype:
                raise AclshmemInvalid(f"shmem backend: {call}: every tensor must have the same dtype ({dtype}), "
                                      f"not {t.dtype}")
        with _Serve(self, call) as (rt, team):
            outs_c = [coll.Contig(o, write=True) for o in output_tensors]
            ins = [coll.as_bytes(t.contiguous()) for t in input_tensors]
            coll.all_to_all(rt, team, [coll.as_bytes(c.c) for c in outs_c], ins, dtype, call)
            for c in outs_c:
                c.close()
        return _done(list(output_tensors))

    def all_to_all_single(self, output, input, output_split_sizes, input_split_sizes, opts=None):
        call = "all_to_all_single"
        _check_tensor(output, call, "output")
        _check_tensor(input, call, "input")
        _same_dtype(output, input, call)
        osplit, oitem = self._splits(output, output_split_sizes, call, "output")
        isplit, iitem = self._splits(input, input_split_sizes, call, "input")
        with _Serve(self, call) as (rt, team):
            oc = coll.Contig(output, write=True)
            outs = _cut(coll.as_bytes(oc.c), osplit, oitem)
            ins = _cut(coll.as_bytes(input.contiguous()), isplit, iitem)
            coll.all_to_all(rt, team, outs, ins, input.dtype, call)
            oc.close()
        return _done([output])

    alltoall_base = all_to_all_single

    def _splits(self, t, splits, call, name):
        """(rows per rank, bytes per row) of all_to_all_single's output or input."""
        n = self._size
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
        return splits, t.element_size() * per_row

    def barrier(self, opts=None):
        with _Serve(self, "barrier") as (rt, team):
            barrier(team.id)
        return _done([])

    def _start_coalescing(self, device=None):
        return None

    def _end_coalescing(self, device=None):
        return _done([])

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

    # -- point-to-point -----------------------------------------------------------------

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
            op = SendOp(self._peer(dstRank, call, "dst"), coll.as_bytes(t.contiguous()), int(tag))
            rt.p2p.post_send(op)
            return P2PWork(rt.p2p, rt, op, call, [t])

    def recv(self, tensors, srcRank, tag=0):
        t = _one(tensors, "recv")
        with _Serve(self, "recv") as (rt, team):
            return self._post_recv(rt, team, t, self._peer(srcRank, "recv", "src"), srcRank, tag)

    def recv_anysource(self, tensors, tag=0):
        t = _one(tensors, "recv")
        with _Serve(self, "recv") as (rt, team):
            return self._post_recv(rt, team, t, None, None, tag)

    def _post_recv(self, rt, team, t, src, group_src, tag):
        c = coll.Contig(t, write=True)
        op = RecvOp(src, coll.as_bytes(c.c), int(tag), team, group_src=group_src, on_done=c.close)
        rt.p2p.post_recv(op)
        return P2PWork(rt.p2p, rt, op, "recv", [t])


def _cut(b, splits, item):
    res, pos = [], 0
    for x in splits:
        res.append(b[pos:pos + x * item])
        pos += x * item
    return res


# ---------------------------------------------------------------------------
# gloo fall-back for groups that cannot be teams
# ---------------------------------------------------------------------------

_warned = set()


def warn_fallback(ranks, why):
    key = tuple(ranks)
    if key in _warned:
        return
    _warned.add(key)
    warnings.warn(f"shmem backend: the group of ranks {list(ranks)} cannot be a SHMEM team ({why}); it runs on "
                  "gloo instead", RuntimeWarning, stacklevel=4)


def gloo_backend(store, rank, size, timeout):
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
    backend = gloo_backend(dist.PrefixStore("cpu/", prefix), rank, size, timeout)
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
