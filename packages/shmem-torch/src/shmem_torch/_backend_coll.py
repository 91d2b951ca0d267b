"""The torch.distributed backend's collectives on the library's engine (``_engine``).

Each function serves one kind of call of the process group, on the group's team, once
the ranks have settled the call (``Runtime.settle``: one engine call is compared by the
engine; several are agreed on first).  A tensor that is
symmetric on every rank is used in place (zero-copy); otherwise the tensors pass through
the staging area of the pool, a chunk at a time, and every rank makes the same engine
calls.  Collectives that the engine has no call for are made of the ones it has: reduce
is an all-reduce of which the root keeps the result, gather an all-gather, scatter a
broadcast of the root's pieces, and all_to_all with uneven pieces first collects every
rank's sizes and then moves the pieces in rounds of equal blocks.
"""

import torch
import torch.distributed as dist

from shmem.core import AclshmemInvalid

from . import _engine
from ._backend_runtime import ALIGN, sym
from .staging import copy as _copy

__all__ = ["Contig", "as_bytes", "op_of", "gather_chunks", "scatter_chunks", "all_reduce", "broadcast", "reduce",
           "all_gather_rows",
           "all_gather_single", "reduce_scatter_rows", "reduce_scatter_single", "gather", "scatter", "all_to_all"]

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
# ... by the operations' numbers: a dict lookup by the enum itself hashes and compares it through
# pybind11, three times the cost of int() (every all_reduce makes one)
_RED_BY_NUMBER = {int(key): name for key, name in _RED.items()}


def op_of(redop, call, dtype):
    """The backend's name of a torch.distributed ReduceOp, checked against ``dtype``."""
    key = getattr(redop, "op", redop)
    try:
        name = _RED_BY_NUMBER.get(int(key))
    except (TypeError, ValueError):  # not an operation of torch.distributed
        name = None
    if name is None:
        raise AclshmemInvalid(f"shmem backend: {call} does not support {key} (supported: SUM, AVG, PRODUCT, MIN, "
                              "MAX, and BAND/BOR/BXOR for integer and bool tensors)")
    try:
        _engine.reduction(name, dtype)
    except AclshmemInvalid as exc:
        raise AclshmemInvalid(f"shmem backend: {call} with ReduceOp.{key.name}: {exc}") from None
    return name


class Contig:
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


def as_bytes(t):
    """A flat uint8 view of a contiguous tensor."""
    flat = t.reshape(-1)
    if flat.dtype == torch.uint8:
        return flat
    if flat.numel() == 0:
        return torch.empty(0, dtype=torch.uint8)
    return flat.view(torch.uint8)


def _wire_item(red):
    """Bytes per element of the dtype the engine reduces red in."""
    return red.wire.itemsize


def _count(total, step):
    """How many chunks of step make total (at least one)."""
    return max(1, -(-total // step))


def _chunks(total, step):
    for s in range(0, total, step):
        yield s, min(s + step, total)


# ---------------------------------------------------------------------------
# all_reduce, broadcast, reduce
# ---------------------------------------------------------------------------


def all_reduce(rt, team, t, op, call):
    if team.n == 1:
        return
    red = _engine.reduction(op, t.dtype)
    item = _wire_item(red)
    per = rt.stage_chunk() // item
    zc = sym(t) and red.wire == t.dtype
    zc = rt.settle(team, call, _count(t.numel(), per), "all_reduce", t.dtype, t.numel(), op, zc=zc)
    if t.numel() == 0:
        return
    if zc:  # (the engine takes the tensor's address and length: no flat view to make)
        _engine.reduce(team.id, red, t, t)
        return
    c = Contig(t, write=True)
    flat = c.c.view(-1)
    for s, e in _chunks(flat.numel(), per):
        work = rt.area.view(0, (e - s) * item, red.wire)
        if red.wire == t.dtype:  # the engine reads and writes the tensor itself, work is its scratch
            _engine.reduce_local(team.id, red, flat[s:e], flat[s:e], work)
        else:  # computed in a wider type: converted in and out
            _copy(work, flat[s:e])
            _engine.reduce(team.id, red, work, work)
            _copy(flat[s:e], work)
    c.close()


def broadcast(rt, team, t, root, call):
    if team.n == 1:
        return
    nbytes = t.numel() * t.element_size()
    per = rt.stage_chunk()
    zc = rt.settle(team, call, _count(nbytes, per), "broadcast", t.dtype, t.numel(), root=root, zc=sym(t))
    if nbytes == 0:
        return
    if zc:
        _engine.broadcast(team.id, t, t, root)
        return
    c = Contig(t, write=team.me != root)
    data = as_bytes(c.c)
    for s, e in _chunks(nbytes, per):  # the engine reads and writes the tensor, the area is its scratch
        _engine.broadcast_local(team.id, data[s:e], data[s:e], rt.area.view(0, e - s), root)
    c.close()


def reduce(rt, team, t, op, root, call):
    """The all-reduce of every rank's t in the staging area; the root keeps the result."""
    if team.n == 1:
        return
    red = _engine.reduction(op, t.dtype)
    item = _wire_item(red)
    per = rt.stage_chunk() // item
    rt.settle(team, call, _count(t.numel(), per), "reduce", t.dtype, t.numel(), op, root=root, always=True)
    if t.numel() == 0:
        return
    c = Contig(t, write=team.me == root)
    flat = c.c.view(-1)
    for s, e in _chunks(flat.numel(), per):
        buf = rt.area.view(0, (e - s) * item, red.wire)
        _copy(buf, flat[s:e])
        _engine.reduce(team.id, red, buf, buf)
        if team.me == root:
            _copy(flat[s:e], buf)
    c.close()


# ---------------------------------------------------------------------------
# all_gather, gather, reduce_scatter, scatter
# ---------------------------------------------------------------------------


def _gather_chunks(rt, team, data, each):
    """fcollect of every rank's bytes ``data`` (k on each) through the staging area;
    each(s, e, block) is called per chunk [s, e) with a function block(j) giving rank j's
    bytes of the chunk."""
    n, me = team.n, team.me
    for s, e in _chunks(data.numel(), rt.stage_chunk(n)):
        w = e - s
        dst = rt.area.view(0, n * w)
        src = dst[me * w:(me + 1) * w]
        _copy(src, data[s:e])
        _engine.fcollect(team.id, dst, src)
        each(s, e, lambda j: dst[j * w:(j + 1) * w])


def gather_chunks(rt, team, nbytes):
    """How many engine calls an all-gather of nbytes per rank takes through the area."""
    return _count(nbytes, rt.stage_chunk(team.n))


def all_gather_rows(rt, team, outs, inp):
    """outs[j] <- the input of rank j, through the staging area (outs may be empty: the
    rank takes part and keeps nothing)."""
    data = as_bytes(inp.contiguous())
    outs_c = [Contig(o, write=True) for o in outs]
    out_bytes = [as_bytes(c.c) for c in outs_c]

    def each(s, e, block):
        for j, ob in enumerate(out_bytes):
            _copy(ob[s:e], block(j))

    _gather_chunks(rt, team, data, each)
    for c in outs_c:
        c.close()


def all_gather_single(rt, team, output, input, call):
    if team.n == 1:
        output.copy_(input.reshape(output.shape))
        return
    k = input.numel() * input.element_size()
    zc = rt.settle(team, call, gather_chunks(rt, team, k), "all_gather_into_tensor", input.dtype, input.numel(),
                   zc=sym(output))
    if k == 0:
        return
    if zc:
        mine = as_bytes(output)[team.me * k:(team.me + 1) * k]
        if mine.data_ptr() != input.data_ptr() or not input.is_contiguous():
            _copy(mine, as_bytes(input.contiguous()))
        _engine.fcollect(team.id, output, mine)
        return
    oc = Contig(output, write=True)
    all_gather_rows(rt, team, list(oc.c.view(team.n, -1)), input)
    oc.close()


def gather(rt, team, inp, outs, root, call):
    """outs (root only) <- every rank's inp: an all-gather of which the root keeps the rows."""
    rt.settle(team, call, gather_chunks(rt, team, inp.numel() * inp.element_size()), "gather", inp.dtype,
              inp.numel(), root=root, always=True)
    all_gather_rows(rt, team, outs, inp)  # the other ranks pass no rows


def scatter_chunks(rt, team, numel, op, dtype):
    """How many engine calls a reduce-scatter (op) of numel elements of dtype per rank takes
    through the area."""
    return _count(numel, rt.stage_chunk(team.n + 1) // _wire_item(_engine.reduction(op, dtype)))


def reduce_scatter_rows(rt, team, out, rows, op):
    """out <- the reduction over the ranks of their rows[me] (rows: n tensors of out's size)."""
    n = team.n
    red = _engine.reduction(op, out.dtype)
    oc = Contig(out, write=True)
    flat_out = oc.c.view(-1)
    flat_rows = [r.reshape(-1) for r in rows]
    item = _wire_item(red)
    for s, e in _chunks(flat_out.numel(), rt.stage_chunk(n + 1) // item):
        w = e - s
        src = rt.area.view(0, n * w * item, red.wire)
        for j in range(n):
            _copy(src[j * w:(j + 1) * w], flat_rows[j][s:e])
        dst = rt.area.view(n * w * item, w * item, red.wire)
        _engine.reducescatter(team.id, red, dst, src)
        _copy(flat_out[s:e], dst)
    oc.close()


def reduce_scatter_single(rt, team, output, input, op, call):
    if team.n == 1:
        output.copy_(input.reshape(output.shape))
        return
    red = _engine.reduction(op, output.dtype)
    zc = sym(output) and sym(input) and not _overlap(output, input) and red.wire == output.dtype
    chunks = scatter_chunks(rt, team, output.numel(), op, output.dtype)
    zc = rt.settle(team, call, chunks, "reduce_scatter_tensor", output.dtype, output.numel(), op, zc=zc)
    if output.numel() == 0:
        return
    if zc:
        _engine.reducescatter(team.id, red, output, input)
        return
    ic = input if input.is_contiguous() else input.contiguous()
    reduce_scatter_rows(rt, team, output, list(ic.view(team.n, -1)), op)


def _overlap(a, b):
    a0, a1 = a.data_ptr(), a.data_ptr() + a.numel() * a.element_size()
    b0, b1 = b.data_ptr(), b.data_ptr() + b.numel() * b.element_size()
    return a0 < b1 and b0 < a1


def scatter(rt, team, out, ins, root, call):
    """out <- piece ``me`` of the root's ins: a broadcast of the root's pieces, a chunk of
    each at a time."""
    chunks = _count(out.numel() * out.element_size(), rt.stage_chunk(team.n))
    rt.settle(team, call, chunks, "scatter", out.dtype, out.numel(), root=root, always=True)
    n, me = team.n, team.me
    oc = Contig(out, write=True)
    ob = as_bytes(oc.c)
    ib = [as_bytes(t.contiguous()) for t in ins]
    for s, e in _chunks(ob.numel(), rt.stage_chunk(n)):
        w = e - s
        buf = rt.area.view(0, n * w)
        if me == root:
            for j in range(n):
                _copy(buf[j * w:(j + 1) * w], ib[j][s:e])
        _engine.broadcast(team.id, buf, buf, root)
        _copy(ob[s:e], buf[me * w:(me + 1) * w])
    oc.close()


# ---------------------------------------------------------------------------
# all_to_all
# ---------------------------------------------------------------------------


def all_to_all(rt, team, out_parts, in_parts, dtype, call):
    """out_parts[j] <- in_parts[me] of rank j (contiguous uint8 tensors, sizes that may
    differ).  The ranks first collect every rank's sizes (so that a size that does not
    match fails on every rank alike), then move the parts in rounds of equal blocks."""
    rt.agree(team, call, call, dtype)
    n = team.n
    sizes = _collect_sizes(rt, team, [p.numel() for p in in_parts], [p.numel() for p in out_parts])
    for i in range(n):
        for j in range(n):
            sent, room = sizes[i][j], sizes[j][n + i]
            if sent != room:
                raise AclshmemInvalid(f"shmem backend: {call}: rank {i} sends {sent} bytes to rank {j}, but "
                                      f"the output of rank {j} for rank {i} holds {room} bytes")
    biggest = max(max(row[:n]) for row in sizes)
    if biggest == 0:
        return
    per = max(1, min(biggest, rt.area.nbytes // (2 * n) // ALIGN * ALIGN))
    for lo in range(0, biggest, per):
        src = rt.area.view(0, n * per)
        dst = rt.area.view(n * per, n * per)
        for j, part in enumerate(in_parts):
            piece = part[lo:lo + per]
            _copy(src[j * per:j * per + piece.numel()], piece)
        _engine.alltoall(team.id, dst, src, per)
        for j, part in enumerate(out_parts):
            piece = part[lo:lo + per]
            _copy(piece, dst[j * per:j * per + piece.numel()])


def _collect_sizes(rt, team, sends, rooms):
    """Every rank's [bytes it sends to each rank] + [bytes its output holds from each
    rank], in team order (an fcollect through the staging area)."""
    n, me = team.n, team.me
    row = 2 * n * 8
    dst = rt.area.view(0, n * row)
    src = dst[me * row:(me + 1) * row]
    src.view(torch.int64).copy_(torch.tensor(sends + rooms, dtype=torch.int64))
    _engine.fcollect(team.id, dst, src)
    return dst.view(torch.int64).view(n, 2 * n).tolist()
