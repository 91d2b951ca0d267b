"""Checks of the torch.distributed backend "shmem", run inside PEs by test_backend.py.

Only the public torch.distributed API is used (plus shmem_torch.empty for a symmetric
tensor).  Each function returns a list of problems (empty: all good), so that one job
checks many things and the test prints every failure at once.
"""

import os
import warnings

import torch
import torch.distributed as dist

DTYPES = (torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int64, torch.int32, torch.uint8,
          torch.bool, torch.complex64)


class Checker:
    def __init__(self, rank):
        self.rank = rank
        self.problems = []

    def expect(self, cond, what):
        if not cond:
            self.problems.append(f"rank {self.rank}: {what}")

    def raises(self, fn, match, what, types=(ValueError, RuntimeError, NotImplementedError)):
        try:
            fn()
        except types as exc:
            if match.lower() not in str(exc).lower():
                self.problems.append(f"rank {self.rank}: {what}: error without {match!r}: {exc}")
            return
        self.problems.append(f"rank {self.rank}: {what}: no error")


def _ref_reduce(values, op):
    out = values[0].clone()
    for v in values[1:]:
        if op == dist.ReduceOp.SUM:
            out = out + v if out.dtype != torch.bool else out | v
        elif op == dist.ReduceOp.PRODUCT:
            out = out * v if out.dtype != torch.bool else out & v
        elif op == dist.ReduceOp.MIN:
            out = torch.minimum(out, v)
        elif op == dist.ReduceOp.MAX:
            out = torch.maximum(out, v)
        elif op == dist.ReduceOp.BAND:
            out = out & v
        elif op == dist.ReduceOp.BOR:
            out = out | v
        elif op == dist.ReduceOp.BXOR:
            out = out ^ v
    return out


def _data(rank, numel, dtype):
    """Values every rank can compute for every rank (small, exact in every dtype)."""
    base = torch.arange(numel, dtype=torch.int64) % 5 + rank + 1
    if dtype == torch.bool:
        return (base % 2 == 0)
    if dtype.is_complex:
        return torch.complex(base.float(), (base % 3).float()).to(dtype)
    return base.to(dtype)


def _init(port, rank, n):
    dist.init_process_group("shmem", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=n)


def _checked_session(port, body):
    """Starts the "shmem" process group of this PE, runs body(checker, rank, n) without
    autograd and one torch thread, ends the group; returns the problems found."""
    from shmem import testing

    import shmem_torch  # noqa: F401  (registers "shmem")

    torch.set_num_threads(1)
    rank, n = testing.pe(), testing.npes()
    _init(port, rank, n)
    c = Checker(rank)
    with torch.no_grad():
        body(c, rank, n)
    dist.barrier()
    dist.destroy_process_group()
    return c.problems


def collectives(port):
    """Every collective on n ranks: dtypes, ops, chunking (a small pool), async Work,
    zero-copy symmetric tensors, sub-groups, send/recv, bad input."""
    import shmem_torch as st

    def body(c, rank, n):
        _all_reduce(c, rank, n)
        _others(c, rank, n)
        _async(c, rank, n)
        _symmetric(c, rank, n, st)
        _subgroups(c, rank, n)
        _p2p(c, rank, n)
        _bad_input(c, rank, n)
        _settings_kept(c, rank, n)  # turns autograd on itself

    return _checked_session(port, body)


def _all_reduce(c, rank, n):
    ops = [dist.ReduceOp.SUM, dist.ReduceOp.PRODUCT, dist.ReduceOp.MIN, dist.ReduceOp.MAX]
    for dtype in DTYPES:
        for op in ops:
            if dtype.is_complex and op in (dist.ReduceOp.MIN, dist.ReduceOp.MAX, dist.ReduceOp.PRODUCT):
                continue  # torch.distributed refuses these for complex tensors itself
            t = _data(rank, 37, dtype)
            dist.all_reduce(t, op=op)
            ref = _ref_reduce([_data(r, 37, dtype) for r in range(n)], op)
            if dtype in (torch.bfloat16, torch.float16):
                ok = torch.allclose(t.float(), ref.float(), rtol=1e-2)
            else:
                ok = torch.equal(t, ref)
            c.expect(ok, f"all_reduce {dtype} {op}: {t[:4].tolist()} != {ref[:4].tolist()}")
    for dtype in (torch.float32, torch.float64):
        t = _data(rank, 10, dtype)
        dist.all_reduce(t, op=dist.ReduceOp.AVG)
        ref = sum(_data(r, 10, dtype) for r in range(n)) / n
        c.expect(torch.allclose(t, ref), f"all_reduce AVG {dtype}")
    # complex32: reduced in complex64 through the pool (and in chunks: the pool is small here)
    for numel in (5, 200_001):
        t = _data(rank, numel, torch.complex32)
        dist.all_reduce(t)
        ref = sum(_data(r, numel, torch.complex64) for r in range(n)).to(torch.complex32)
        c.expect(torch.equal(t.to(torch.complex64), ref.to(torch.complex64)), f"all_reduce complex32 x{numel}")
    out = torch.zeros(3, dtype=torch.complex32)
    dist.reduce_scatter_tensor(out, torch.cat([_data(rank * 10 + j, 3, torch.complex32) for j in range(n)]))
    ref = sum(_data(r * 10 + rank, 3, torch.complex64) for r in range(n)).to(torch.complex32)
    c.expect(torch.equal(out.to(torch.complex64), ref.to(torch.complex64)), "reduce_scatter_tensor complex32")
    for op in (dist.ReduceOp.BAND, dist.ReduceOp.BOR, dist.ReduceOp.BXOR):
        for dtype in (torch.int64, torch.uint8, torch.bool):
            t = _data(rank, 9, dtype)
            dist.all_reduce(t, op=op)
            ref = _ref_reduce([_data(r, 9, dtype) for r in range(n)], op)
            c.expect(torch.equal(t, ref), f"all_reduce {op} {dtype}")
    # larger than the staging pool (SHMEM_TORCH_POOL_SIZE is small in the test): chunks
    big = torch.arange(1_500_000, dtype=torch.float64) + rank
    dist.all_reduce(big)
    c.expect(torch.equal(big, torch.arange(1_500_000, dtype=torch.float64) * n + n * (n - 1) / 2), "big all_reduce")
    # a non-contiguous tensor and a 0-d one and an empty one
    m = (torch.arange(12.0).reshape(3, 4) + rank).t()
    dist.all_reduce(m)
    c.expect(torch.equal(m, (torch.arange(12.0).reshape(3, 4) * n + n * (n - 1) / 2).t()), "non-contiguous")
    z = torch.tensor(float(rank))
    dist.all_reduce(z, op=dist.ReduceOp.MAX)
    c.expect(z.item() == n - 1, "0-d all_reduce")
    e = torch.empty(0)
    dist.all_reduce(e)
    _small_in_turn(c, rank, n)
    _staged_in_turn(c, rank, n)


def _settings_kept(c, rank, n):
    """The backend runs its own copies with the collectives' thread count and autograd
    off, and gives the caller's settings back, also when a call fails."""
    torch.set_num_threads(3)
    with torch.enable_grad():
        big = torch.ones(300_000)
        dist.all_reduce(big)
        c.expect(torch.equal(big, torch.full((300_000,), float(n))), "all_reduce with 3 threads")
        if rank == 0:
            dist.send(big, 1)
        elif rank == 1:
            dist.recv(big, 0)
        try:
            dist.all_reduce(torch.ones(3), op=dist.ReduceOp.BAND)  # float BAND: refused on every rank
        except Exception:
            pass
        c.expect(torch.get_num_threads() == 3, f"thread setting after the calls: {torch.get_num_threads()}")
        c.expect(torch.is_grad_enabled(), "grad mode after the calls")
    torch.set_num_threads(1)


def _small_in_turn(c, rank, n):
    """Small all_reduces (one barrier each, two areas used in turn) back to back with
    new data every time, ranks drifting apart, other collectives in between: a rank that
    wrote an area while another still read it would show here as a wrong sum."""
    import time

    first_wrong = None  # every rank goes on to the end, so that the others do not hang
    for i in range(300):
        numel = 1 + (i * 997) % 16384  # up to 64 KiB of float32
        if (i + rank) % 5 == 0:
            time.sleep(0.0002 * (rank + 1))
        t = torch.full((numel,), float(i * 10 + rank))
        dist.all_reduce(t)
        want = float(i * 10 * n + n * (n - 1) / 2)
        if first_wrong is None and not bool((t == want).all()):
            first_wrong = f"small all_reduce round {i}: got {t[:3].tolist()}..., want {want}"
        if i % 7 == 3:
            b = torch.full((5,), float(rank))
            dist.broadcast(b, src=i % n)
            c.expect(torch.equal(b, torch.full((5,), float(i % n))), f"broadcast between small all_reduces {i}")
    c.expect(first_wrong is None, first_wrong)
    h = torch.full((300,), 0.5 + rank, dtype=torch.float16)
    dist.all_reduce(h, op=dist.ReduceOp.AVG)
    c.expect(torch.equal(h.float(), torch.full((300,), 0.5 + (n - 1) / 2)), "float16 AVG of a small tensor")


def staged_unchecked(port):
    """The staged all_reduce with SHMEM_TORCH_CHECK=0: no fingerprint barrier before a
    collective, so the all_reduce alone must leave the staging area free when it returns."""
    return _checked_session(port, _staged_in_turn)


def _staged_all_reduce_case(c, rank, n, numel, dtype, op, group=None, members=None):
    members = members if members is not None else list(range(n))
    t = _data(rank, numel, dtype)
    dist.all_reduce(t, op=op, group=group)
    ref = _ref_reduce([_data(r, numel, dtype) for r in members], dist.ReduceOp.SUM if op == dist.ReduceOp.AVG else op)
    if op == dist.ReduceOp.AVG:
        ok = torch.allclose(t.float(), ref.float() / len(members), rtol=1e-2)
    elif dtype in (torch.bfloat16, torch.float16):
        ok = torch.allclose(t.float(), ref.float(), rtol=1e-2)
    else:
        ok = torch.equal(t, ref)
    if not ok:
        bad = (t != ref).nonzero()
        first = int(bad[0]) if bad.numel() else -1
        c.expect(False, f"staged all_reduce of {numel} x {dtype} {op} (group {members}): first wrong element "
                        f"{first}")


def _staged_in_turn(c, rank, n):
    """Ordinary tensors larger than the small path, through the staging area (256 KiB chunks
    in this test): sizes that leave ranks with an empty or short slice in the last chunk,
    dtypes that accumulate in float32, every op, a sub-group, back to back with ranks
    drifting apart and other collectives in between: a rank that wrote a slot of the area
    while another still read it would show here as a wrong element."""
    import time

    cases = [(70_001, torch.float32, dist.ReduceOp.SUM), (100_003, torch.float16, dist.ReduceOp.SUM),
             (65_537, torch.bfloat16, dist.ReduceOp.MAX), (40_000, torch.int64, dist.ReduceOp.MIN),
             (33_333, torch.complex64, dist.ReduceOp.SUM), (90_000, torch.int32, dist.ReduceOp.PRODUCT),
             (300_001, torch.uint8, dist.ReduceOp.SUM), (150_000, torch.bool, dist.ReduceOp.MAX),
             (50_000, torch.float64, dist.ReduceOp.AVG)]
    for i in range(3):
        for k, (numel, dtype, op) in enumerate(cases):
            if (i + k + rank) % 4 == 0:
                time.sleep(0.001 * (rank + 1))
            _staged_all_reduce_case(c, rank, n, numel + i, dtype, op)
            if k % 3 == 2:
                b = torch.full((70_000,), float(rank))
                dist.broadcast(b, src=(i + k) % n)
                c.expect(bool((b == float((i + k) % n)).all()), f"broadcast between staged all_reduces {i}.{k}")
    odds = list(range(1, n, 2))
    g = dist.new_group(odds)
    if rank in odds:
        _staged_all_reduce_case(c, rank, n, 200_000, torch.float32, dist.ReduceOp.SUM, group=g, members=odds)
    m = (torch.arange(120_000.0).reshape(300, 400) + rank).t()  # not contiguous
    dist.all_reduce(m)
    c.expect(torch.equal(m, (torch.arange(120_000.0).reshape(300, 400) * n + n * (n - 1) / 2).t()),
             "staged all_reduce of a non-contiguous tensor")


def _others(c, rank, n):
    # broadcast, every root, several dtypes; one larger than the pool
    for dtype in (torch.float32, torch.int16, torch.bool, torch.complex128):
        for root in range(n):
            t = _data(rank, 11, dtype)
            dist.broadcast(t, src=root)
            c.expect(torch.equal(t, _data(root, 11, dtype)), f"broadcast {dtype} root {root}")
    big = torch.full((1_200_000,), rank, dtype=torch.int32)
    dist.broadcast(big, src=n - 1)
    c.expect(bool((big == n - 1).all()), "big broadcast")
    # reduce
    for root in range(n):
        t = _data(rank, 6, torch.float64)
        dist.reduce(t, dst=root, op=dist.ReduceOp.SUM)
        if rank == root:
            c.expect(torch.equal(t, sum(_data(r, 6, torch.float64) for r in range(n))), f"reduce root {root}")
        else:
            c.expect(torch.equal(t, _data(rank, 6, torch.float64)), "reduce leaves non-roots alone")
    t = _data(rank, 6, torch.int32)
    dist.reduce(t, dst=0, op=dist.ReduceOp.BXOR)
    if rank == 0:
        c.expect(torch.equal(t, _ref_reduce([_data(r, 6, torch.int32) for r in range(n)], dist.ReduceOp.BXOR)),
                 "reduce BXOR")
    # all_gather (list) and all_gather_into_tensor
    for dtype in (torch.float32, torch.int8, torch.bfloat16, torch.bool):
        outs = [torch.zeros(5, dtype=dtype) for _ in range(n)]
        dist.all_gather(outs, _data(rank, 5, dtype))
        c.expect(all(torch.equal(outs[r], _data(r, 5, dtype)) for r in range(n)), f"all_gather {dtype}")
        out = torch.zeros(n, 5, dtype=dtype)
        dist.all_gather_into_tensor(out, _data(rank, 5, dtype))
        c.expect(all(torch.equal(out[r], _data(r, 5, dtype)) for r in range(n)), f"all_gather_into_tensor {dtype}")
    big_out = torch.zeros(n * 700_000, dtype=torch.int32)
    dist.all_gather_into_tensor(big_out, torch.full((700_000,), rank, dtype=torch.int32))
    c.expect(all(bool((big_out[r * 700_000:(r + 1) * 700_000] == r).all()) for r in range(n)),
             "big all_gather_into_tensor")
    # reduce_scatter (list) and reduce_scatter_tensor
    for op in (dist.ReduceOp.SUM, dist.ReduceOp.MAX, dist.ReduceOp.AVG, dist.ReduceOp.BOR):
        dtype = torch.int64 if op == dist.ReduceOp.BOR else torch.float64
        rows = [_data(rank * 10 + j, 4, dtype) for j in range(n)]
        out = torch.zeros(4, dtype=dtype)
        dist.reduce_scatter(out, rows, op=op)
        ref = [_data(r * 10 + rank, 4, dtype) for r in range(n)]
        want = sum(ref) / n if op == dist.ReduceOp.AVG else _ref_reduce(ref, op)
        c.expect(torch.allclose(out.double(), want.double()), f"reduce_scatter {op}")
        out = torch.zeros(4, dtype=dtype)
        dist.reduce_scatter_tensor(out, torch.cat(rows), op=op)
        c.expect(torch.allclose(out.double(), want.double()), f"reduce_scatter_tensor {op}")
    inp = torch.arange(n * 600_000, dtype=torch.float32) + rank
    out = torch.zeros(600_000)
    dist.reduce_scatter_tensor(out, inp)
    c.expect(torch.equal(out, torch.arange(rank * 600_000, (rank + 1) * 600_000, dtype=torch.float32) * n
                         + n * (n - 1) / 2), "big reduce_scatter_tensor")
    # gather and scatter
    for root in range(n):
        g = [torch.zeros(3, dtype=torch.int64) for _ in range(n)] if rank == root else None
        dist.gather(_data(rank, 3, torch.int64), g, dst=root)
        if rank == root:
            c.expect(all(torch.equal(g[r], _data(r, 3, torch.int64)) for r in range(n)), f"gather root {root}")
        s = torch.zeros(3)
        dist.scatter(s, [_data(10 * root + r, 3, torch.float32) for r in range(n)] if rank == root else None,
                     src=root)
        c.expect(torch.equal(s, _data(10 * root + rank, 3, torch.float32)), f"scatter root {root}")
    g = [torch.zeros(900_000) for _ in range(n)] if rank == 0 else None
    dist.gather(torch.full((900_000,), float(rank)), g, dst=0)
    if rank == 0:
        c.expect(all(bool((g[r] == r).all()) for r in range(n)), "big gather")
    # all_to_all (list, uneven) and all_to_all_single (even and with split sizes)
    ins = [torch.full((r + 1,), rank * 100 + r, dtype=torch.int64) for r in range(n)]
    outs = [torch.zeros(rank + 1, dtype=torch.int64) for _ in range(n)]
    dist.all_to_all(outs, ins)
    c.expect(all(bool((outs[j] == j * 100 + rank).all()) for j in range(n)), "all_to_all uneven list")
    inp = torch.arange(n * 2, dtype=torch.float32) + 100 * rank
    out = torch.zeros(n * 2)
    dist.all_to_all_single(out, inp)
    want = torch.cat([torch.arange(rank * 2, rank * 2 + 2, dtype=torch.float32) + 100 * j for j in range(n)])
    c.expect(torch.equal(out, want), "all_to_all_single even")
    in_splits = [j + 1 for j in range(n)]
    inp = torch.cat([torch.full((j + 1, 2), rank * 10 + j) for j in range(n)])
    out = torch.zeros((rank + 1) * n, 2, dtype=torch.int64)
    dist.all_to_all_single(out, inp, [rank + 1] * n, in_splits)
    want = torch.cat([torch.full((rank + 1, 2), j * 10 + rank) for j in range(n)])
    c.expect(torch.equal(out, want), "all_to_all_single with split sizes")
    k = 400_000  # more than the staging area: several rounds
    inp = torch.cat([torch.full((k,), rank * 10 + j, dtype=torch.int32) for j in range(n)])
    out = torch.zeros(n * k, dtype=torch.int32)
    dist.all_to_all_single(out, inp)
    c.expect(all(bool((out[j * k:(j + 1) * k] == j * 10 + rank).all()) for j in range(n)), "big all_to_all_single")
    dist.barrier()


def _async(c, rank, n):
    t = torch.ones(8)
    w = dist.all_reduce(t, async_op=True)
    c.expect(w.wait() is True or w.wait() is None, "wait")
    c.expect(w.is_completed(), "async all_reduce is_completed")
    c.expect(torch.equal(w.get_future().value()[0], torch.full((8,), float(n))), "async future value")
    ws = [dist.broadcast(torch.zeros(2), src=0, async_op=True), dist.all_gather_into_tensor(
        torch.zeros(2 * n), torch.ones(2), async_op=True), dist.barrier(async_op=True)]
    for w in ws:
        w.wait()
        c.expect(w.is_completed(), "async is_completed")


def _symmetric(c, rank, n, st):
    # zero-copy: every rank passes the same symmetric tensor
    x = st.empty(1000, dtype=torch.float32)
    x.fill_(rank + 1)
    dist.all_reduce(x)
    c.expect(bool((x == n * (n + 1) / 2).all()), "all_reduce of a symmetric tensor")
    dist.broadcast(x[:10], src=1)
    # zero-copy of tensors of more than one dimension: the engine takes their address and length
    m = st.empty((4, 25), dtype=torch.float32)
    m.fill_(rank + 1)
    dist.all_reduce(m, op=dist.ReduceOp.AVG)
    c.expect(bool((m == (n + 1) / 2).all()), "all_reduce (AVG) of a 2-D symmetric tensor")
    whole, part = st.empty((n, 2, 3), dtype=torch.float64), st.empty((2, 3), dtype=torch.float64)
    whole.copy_(torch.arange(n * 6, dtype=torch.float64).view(n, 2, 3) + rank)
    dist.reduce_scatter_tensor(part, whole)
    expect = n * torch.arange(rank * 6, rank * 6 + 6, dtype=torch.float64).view(2, 3) + n * (n - 1) / 2
    c.expect(torch.equal(part, expect), "reduce_scatter_tensor of 3-D and 2-D symmetric tensors")
    for t in (part, whole, m):
        st.aclshmem_free_tensor(t)
    out = st.empty(n * 4, dtype=torch.int64)
    dist.all_gather_into_tensor(out, torch.full((4,), rank, dtype=torch.int64))
    c.expect(torch.equal(out.view(n, 4)[:, 0], torch.arange(n)), "all_gather into a symmetric tensor")
    # mixed: symmetric on rank 0 only -> staged, still right
    y = st.empty(16, dtype=torch.float32)
    t = y if rank == 0 else torch.empty(16)
    t.fill_(rank)
    dist.all_reduce(t)
    c.expect(bool((t == n * (n - 1) / 2).all()), "all_reduce, symmetric on one rank only")
    st.aclshmem_free_tensor(y)
    st.aclshmem_free_tensor(out)
    st.aclshmem_free_tensor(x)
    _after_free(c, rank, n, st)


def _after_free(c, rank, n, st):
    """The backend tells symmetric tensors by their storage: after a free, an ordinary
    tensor whose storage object takes the freed storage's place, the next allocation at
    the freed addresses and a view kept from the freed tensor are each told right."""
    import gc

    x = st.empty(256, dtype=torch.float32)
    address, key = x.data_ptr(), x.untyped_storage()._cdata
    x.fill_(rank + 1)
    dist.all_reduce(x)  # zero-copy
    c.expect(bool((x == n * (n + 1) / 2).all()), "all_reduce of a symmetric tensor before its free")
    st.aclshmem_free_tensor(x)
    del x
    gc.collect()
    ordinary, reused = [], None  # kept alive, so that each new storage object takes a new place
    while reused is None and len(ordinary) < 2000:
        ordinary.append(torch.empty(256))
        if ordinary[-1].untyped_storage()._cdata == key:
            reused = ordinary[-1]
    c.expect(reused is not None, "no ordinary storage took the freed storage's place (the check needs one)")
    if reused is not None:
        reused.fill_(rank + 2)
        dist.all_reduce(reused)
        c.expect(bool((reused == n * (n + 3) / 2).all()), "all_reduce of an ordinary tensor in a freed storage's place")
        dist.broadcast(reused, src=n - 1)
        c.expect(bool((reused == n * (n + 3) / 2).all()), "broadcast of an ordinary tensor in a freed storage's place")
    del ordinary, reused
    again = st.empty(256, dtype=torch.float32)
    c.expect(again.data_ptr() == address, "the freed block was not reused (the check needs it)")
    again.fill_(rank)
    view = again[:16]
    dist.broadcast(again, src=1)
    c.expect(bool((again == 1).all()), "broadcast of the allocation at a freed one's addresses")
    st.aclshmem_free_tensor(again)
    c.raises(lambda: dist.all_reduce(view), "freed", "all_reduce of a view kept from a freed symmetric tensor")


def _subgroups(c, rank, n):
    evens = list(range(0, n, 2))
    odds = list(range(1, n, 2))
    g_even = dist.new_group(evens)
    g_odd = dist.new_group(odds)
    g_all = dist.new_group()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        irregular = [0, 1, 3] if n >= 4 else [1]
        g_irr = dist.new_group(irregular)
    gloo = dist.new_group(backend="gloo")
    c.expect(dist.get_backend(gloo) == "gloo", f"new_group(backend='gloo') is {dist.get_backend(gloo)}")
    mine, g_mine = (evens, g_even) if rank % 2 == 0 else (odds, g_odd)
    c.expect(dist.get_backend(g_mine) == "shmem", "sub-group backend")
    t = torch.tensor([float(rank)])
    dist.all_reduce(t, group=g_mine)
    c.expect(t.item() == sum(mine), f"all_reduce in sub-group {mine}: {t.item()}")
    b = torch.tensor([rank])
    dist.broadcast(b, group_src=len(mine) - 1, group=g_mine)
    c.expect(b.item() == mine[-1], "broadcast in sub-group")
    outs = [torch.zeros(1, dtype=torch.int64) for _ in mine]
    dist.all_gather(outs, torch.tensor([rank]), group=g_mine)
    c.expect([o.item() for o in outs] == mine, "all_gather in sub-group")
    if len(mine) > 1:  # p2p inside a sub-group: group ranks
        me = mine.index(rank)
        peer = mine[(me + 1) % len(mine)]
        src = mine[(me - 1) % len(mine)]
        r = torch.zeros(1, dtype=torch.int64)
        reqs = dist.batch_isend_irecv([dist.P2POp(dist.isend, torch.tensor([rank]), peer, group=g_mine),
                                       dist.P2POp(dist.irecv, r, src, group=g_mine)])
        for q in reqs:
            q.wait()
        c.expect(r.item() == src, "p2p in a sub-group")
    t = torch.ones(3)
    dist.all_reduce(t, group=g_all)
    c.expect(bool((t == n).all()), "new_group() of all ranks")
    if rank in irregular:
        t = torch.ones(2)
        dist.all_reduce(t, group=g_irr)
        c.expect(bool((t == len(irregular)).all()), "irregular sub-group (gloo)")
        if n >= 4:
            c.expect(any("gloo" in str(w.message) for w in caught), "warning for the irregular sub-group")
    t = torch.ones(2)
    dist.all_reduce(t, group=gloo)
    c.expect(bool((t == n).all()), "gloo group next to shmem")
    for g in (g_even, g_odd, g_all, g_irr, gloo):
        if g is not None and g != dist.GroupMember.NON_GROUP_MEMBER:
            dist.destroy_process_group(g)
    dist.barrier()


def _p2p(c, rank, n):
    nxt, prv = (rank + 1) % n, (rank - 1) % n
    # ring of isend/irecv, small and larger than a mailbox slot (chunked)
    for numel in (1, 1000, 700_000):
        s = torch.arange(numel, dtype=torch.float32) + 1000 * rank
        r = torch.zeros(numel)
        reqs = dist.batch_isend_irecv([dist.P2POp(dist.isend, s, nxt), dist.P2POp(dist.irecv, r, prv)])
        for q in reqs:
            q.wait()
        c.expect(torch.equal(r, torch.arange(numel, dtype=torch.float32) + 1000 * prv), f"ring {numel}")
    # blocking send/recv between 0 and 1, several messages in order, several dtypes
    if rank == 0:
        for i, dtype in enumerate((torch.int64, torch.bfloat16, torch.bool)):
            dist.send(_data(i, 5, dtype), dst=1)
        w = dist.isend(torch.tensor([7, 8]), dst=1, tag=3)
        w.wait()
        c.expect(w.is_completed(), "isend is_completed")
    elif rank == 1:
        for i, dtype in enumerate((torch.int64, torch.bfloat16, torch.bool)):
            t = torch.zeros(5, dtype=dtype)
            dist.recv(t, src=0)
            c.expect(torch.equal(t, _data(i, 5, dtype)), f"recv {dtype}")
        t = torch.zeros(2, dtype=torch.int64)
        w = dist.irecv(t, src=0, tag=3)
        w.wait()
        c.expect(w.is_completed() and t.tolist() == [7, 8], "irecv with a tag")
        # any source
        u = torch.zeros(1, dtype=torch.int64)
        src = dist.recv(u)
        c.expect(src == 0 and u.item() == 99, f"recv from any source: {src}, {u.item()}")
    if rank == 0:
        dist.send(torch.tensor([99]), dst=1)
    # a recv whose size does not match the message: a clear error, then the channel works on
    if rank == 0:
        dist.send(torch.zeros(4), dst=1)
        dist.send(torch.tensor([5.0]), dst=1)
    elif rank == 1:
        c.raises(lambda: dist.recv(torch.zeros(3), src=0), "bytes", "recv of the wrong size")
        t = torch.zeros(1)
        dist.recv(t, src=0)
        c.expect(t.item() == 5.0, "recv after a mismatch")
    c.raises(lambda: dist.send(torch.zeros(1), dst=rank), "destination rank", "send to self")
    dist.barrier()


def _bad_input(c, rank, n):
    c.raises(lambda: dist.all_reduce(torch.empty(3, device="meta")), "cpu tensors only", "a meta tensor")
    c.raises(lambda: dist.all_gather([torch.zeros(2)] * (n + 1), torch.zeros(2)), "the group has",
             "all_gather with a wrong output list")
    c.raises(lambda: dist.all_gather([torch.zeros(3)] * n, torch.zeros(2)), "elements", "all_gather wrong size")
    c.raises(lambda: dist.all_gather_into_tensor(torch.zeros(n * 2 + 1), torch.zeros(2)), "must have",
             "all_gather_into_tensor of the wrong size")
    c.raises(lambda: dist.all_gather_into_tensor(torch.zeros(n * 2), torch.zeros(2, dtype=torch.int64)),
             "same dtype", "mismatched dtypes")
    c.raises(lambda: dist.reduce_scatter_tensor(torch.zeros(2), torch.zeros(2 * n + 2)), "must have",
             "reduce_scatter_tensor of the wrong size")
    c.raises(lambda: dist.all_reduce(torch.ones(2, dtype=torch.int64), op=dist.ReduceOp.AVG), "avg",
             "AVG of integers")
    c.raises(lambda: dist.all_reduce(torch.ones(2), op=dist.ReduceOp.BAND), "integer", "BAND of floats")
    c.raises(lambda: dist.all_reduce(torch.ones(2), op=dist._make_nccl_premul_sum(2.0)), "PREMUL_SUM",
             "PREMUL_SUM")
    c.raises(lambda: dist.all_to_all_single(torch.zeros(n), torch.zeros(n), [1] * (n + 1), [1] * n), "split",
             "all_to_all_single with wrong split sizes")
    # the ranks disagree: the same clear error on every rank, and the group works on
    c.raises(lambda: dist.all_reduce(torch.ones(10 + rank)), "disagree", "all_reduce of different sizes")
    c.raises(lambda: dist.all_reduce(torch.ones(4, dtype=torch.float32 if rank else torch.float64)), "disagree",
             "all_reduce of different dtypes")
    c.raises(lambda: dist.broadcast(torch.ones(3), src=0) if rank else dist.all_reduce(torch.ones(3)), "disagree",
             "different calls")
    t = torch.ones(4)
    dist.all_reduce(t)
    c.expect(bool((t == n).all()), "all_reduce after the errors")


def ddp(port, seed, steps):
    """Trains the same small model with DDP on "shmem" and on gloo (same seed and data);
    returns both models' parameters after ``steps`` steps."""
    from shmem import testing

    import shmem_torch  # noqa: F401
    from torch.nn.parallel import DistributedDataParallel as DDP

    torch.set_num_threads(1)
    rank, n = testing.pe(), testing.npes()
    _init(port, rank, n)
    gloo = dist.new_group(backend="gloo")
    result = {}
    for name, group in (("shmem", None), ("gloo", gloo)):
        torch.manual_seed(seed)
        model = torch.nn.Sequential(torch.nn.Linear(20, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64),
                                    torch.nn.ReLU(), torch.nn.Linear(64, 3))
        if rank == 1:  # DDP broadcasts rank 0's parameters first
            with torch.no_grad():
                for p in model.parameters():
                    p.add_(1.0)
        ddp_model = DDP(model, process_group=group, bucket_cap_mb=0.01)  # several buckets
        opt = torch.optim.SGD(ddp_model.parameters(), lr=0.05, momentum=0.9)
        gen = torch.Generator().manual_seed(seed + rank)
        for _ in range(steps):
            x = torch.randn(16, 20, generator=gen)
            y = torch.randn(16, 3, generator=gen)
            opt.zero_grad()
            torch.nn.functional.mse_loss(ddp_model(x), y).backward()
            opt.step()
        result[name] = [p.detach().clone() for p in model.parameters()]
    dist.destroy_process_group()
    return result


def compiled(port):
    """torch.compile of functions calling the shmem_torch collectives: one graph, no break,
    right results on symmetric and ordinary tensors, and dist.all_reduce inside."""
    import torch._dynamo

    import shmem_torch as st
    from shmem import testing

    torch.set_num_threads(1)
    rank, n = testing.pe(), testing.npes()
    _init(port, rank, n)
    c = Checker(rank)

    def f(t):
        y = t * 2
        st.all_reduce(t)
        st.barrier()
        return t + y

    sym = st.empty(8)
    sym.fill_(rank + 1)
    exp = torch._dynamo.explain(f)(sym)
    c.expect(exp.graph_count == 1 and exp.graph_break_count == 0,
             f"explain: {exp.graph_count} graphs, {exp.graph_break_count} breaks {exp.break_reasons}")
    total = n * (n + 1) / 2
    for backend in ("aot_eager", "inductor"):
        torch._dynamo.reset()
        g = torch.compile(f, fullgraph=True, backend=backend)
        for kind, t in (("symmetric", sym), ("ordinary", torch.empty(8))):
            t.fill_(rank + 1)
            out = g(t)
            c.expect(bool((t == total).all()), f"{backend} {kind}: the tensor is reduced in place: {t.tolist()}")
            c.expect(bool((out == total + 2 * (rank + 1)).all()), f"{backend} {kind}: result {out.tolist()}")

    def h(a, b):
        st.all_gather(a, b)
        st.reduce_scatter(b, a, op="max")
        return a.sum()

    torch._dynamo.reset()
    hc = torch.compile(h, fullgraph=True, backend="aot_eager")
    a = st.zeros(n * 2)
    b = torch.full((2,), float(rank))
    hc(a, b)
    c.expect(a.tolist() == sum([[float(r)] * 2 for r in range(n)], []), f"compiled all_gather {a.tolist()}")
    c.expect(b.tolist() == [float(rank)] * 2, f"compiled reduce_scatter {b.tolist()}")
    st.aclshmem_free_tensor(a)
    st.aclshmem_free_tensor(sym)
    dist.destroy_process_group()
    return c.problems


def script_env_check():
    """Body of the launcher scripts (torchrun, torch.multiprocessing, shmem.run)."""
    rank = dist.get_rank()
    n = dist.get_world_size()
    t = torch.full((3,), float(rank + 1))
    dist.all_reduce(t)
    outs = [torch.zeros(1) for _ in range(n)]
    dist.all_gather(outs, torch.tensor([float(rank)]))
    return f"rank {rank}/{n}: backend {dist.get_backend()} sum {t[0].item():g} gather {[o.item() for o in outs]}"


def spawned(rank, n, port, outdir):
    """torch.multiprocessing.spawn target: env:// rendezvous (MASTER_ADDR / MASTER_PORT)."""
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    import shmem_torch  # noqa: F401

    dist.init_process_group("shmem", rank=rank, world_size=n)
    line = script_env_check()
    dist.destroy_process_group()
    with open(os.path.join(outdir, f"{rank}.txt"), "w") as f:
        f.write(line)
