"""The collective checks (groups "world", "teams" and "three"): every shmem_torch collective,
op, dtype and several sizes, on the world, on sub-teams and on an odd number of PEs (see
test_world.py, test_teams.py and test_three.py).

They register with torch_checks, whose helpers they use; ``run`` is what each PE runs (it
imports this module, so the groups exist in the PE)."""

import torch

import torch_checks
from torch_checks import (ALL_DTYPES, EXTRA_DTYPES, REDUCIBLE, assert_same, check, data, expect_raises, me, npes,
                          reduce_ref, same_bytes, valid_ops)


def run(group):
    return torch_checks.run_group(group)


# ---------------------------------------------------------------------------
# Group "world" (4 PEs): every collective, op, dtype and several sizes
# ---------------------------------------------------------------------------

SMALL_SIZES = [1, 2, 3, 17, 1000, 4099]
TWO_SHOT_SIZES = [65539, 1048583]          # > 256 KiB for 4-byte types; odd
BIG = 4 * 1024 * 1024                        # 16 MiB of float32


def _all_reduce_case(key, numel, dtype, op, team=0, members=None):
    import shmem_torch as st

    members = list(range(npes())) if members is None else members
    idx = members.index(me())
    t = st.empty(numel, dtype=dtype)
    t.copy_(data(key, idx, numel, dtype, op))
    st.all_reduce(t, op=op, team=team)
    want = reduce_ref([data(key, i, numel, dtype, op) for i in range(len(members))], op)
    assert_same(t, want, f"all_reduce {op} {dtype} x{numel} team {team}")
    # every PE holds bit-identical results
    st.barrier(team)
    for pe in members:
        assert same_bytes(st.peer_tensor(t, pe), t), f"PE {pe} differs"
    st.barrier(team)
    st.aclshmem_free_tensor(t)


@check("world")
def all_reduce_every_dtype_and_op():
    for dtype in REDUCIBLE:
        for op in valid_ops(dtype):
            for numel in SMALL_SIZES:
                _all_reduce_case("ar", numel, dtype, op)


@check("world")
def all_reduce_two_shot_sizes():
    for dtype in (torch.float32, torch.int32, torch.float16, torch.bfloat16, torch.bool, torch.int8,
                  torch.complex128):
        for op in valid_ops(dtype):
            for numel in TWO_SHOT_SIZES:
                _all_reduce_case("ar2", numel, dtype, op)


@check("world")
def all_reduce_sizes_between_chunks():
    """Sizes that leave the PEs' shares of the engine's work uneven or empty."""
    for dtype in (torch.float32, torch.int16, torch.bfloat16, torch.bool):
        for op in valid_ops(dtype):
            for numel in (1, 5, 2047, 30011):
                _all_reduce_case("odd-sizes", numel, dtype, op)


@check("world")
def all_reduce_16_mib():
    for dtype, ops in ((torch.float32, ["sum", "prod", "min", "max", "avg"]), (torch.int32, ["sum"]),
                       (torch.bfloat16, ["sum"]), (torch.float64, ["max"])):
        numel = (16 << 20) // torch.empty((), dtype=dtype).element_size()
        for op in ops:
            _all_reduce_case("big", numel, dtype, op)
    _all_reduce_case("big-odd", BIG + 13, torch.float32, "sum")


@check("world")
def all_reduce_shapes_views_and_aliases():
    import torch.distributed as dist

    import shmem_torch as st

    rank, n = me(), npes()
    t = st.empty(4, 6, 5, dtype=torch.float32)
    t.copy_(data("shape", rank, t.numel(), torch.float32).reshape(4, 6, 5))
    st.all_reduce(t, op=dist.ReduceOp.SUM)
    want = reduce_ref([data("shape", i, 120, torch.float32) for i in range(n)], "sum").reshape(4, 6, 5)
    assert_same(t, want, "3-d")
    # a contiguous slice of a symmetric tensor (other parts stay untouched)
    t.fill_(rank)
    st.all_reduce(t[1:3], op="MAX")
    assert bool((t[1:3] == n - 1).all()) and bool((t[0] == rank).all()) and bool((t[3] == rank).all())
    # 0-d and empty tensors
    z = st.full((), rank + 1, dtype=torch.int64)
    st.all_reduce(z, op="prod")
    assert z.item() == torch.arange(1, n + 1).prod().item()
    e = st.empty(0, dtype=torch.float32)
    st.all_reduce(e)
    # tensors that require grad are reduced like any other
    g = st.ones(8)
    g.requires_grad_(True)
    st.all_reduce(g)
    assert bool((g.detach() == n).all())
    for x in (g, e, z, t):
        st.aclshmem_free_tensor(x)


@check("world")
def reduce_scatter_all_ops():
    import shmem_torch as st

    rank, n = me(), npes()
    for dtype in (torch.float32, torch.int64, torch.bfloat16, torch.float16, torch.bool, torch.complex64):
        for op in valid_ops(dtype):
            for k in (1, 5, 70001):
                inp = st.empty(n * k, dtype=dtype)
                inp.copy_(data("rs", rank, n * k, dtype, op))
                out = torch.empty(k, dtype=dtype)
                st.reduce_scatter(out, inp, op=op)
                full = reduce_ref([data("rs", i, n * k, dtype, op) for i in range(n)], op)
                assert_same(out, full[rank * k:(rank + 1) * k], f"reduce_scatter {op} {dtype} k={k}")
                st.aclshmem_free_tensor(inp)
    # in place: output is this PE's chunk of the input; and a non-contiguous output
    k = 33
    inp = st.empty(n, k, dtype=torch.float64)
    inp.copy_(data("rs-inplace", rank, n * k, torch.float64).reshape(n, k))
    st.reduce_scatter(inp[rank], inp, op="sum")
    full = reduce_ref([data("rs-inplace", i, n * k, torch.float64) for i in range(n)], "sum").reshape(n, k)
    assert_same(inp[rank], full[rank], "in-place reduce_scatter")
    inp.copy_(data("rs-nc", rank, n * k, torch.float64).reshape(n, k))
    out = torch.empty(k, 2, dtype=torch.float64)[:, 0]
    st.reduce_scatter(out, inp, op="max")
    full = reduce_ref([data("rs-nc", i, n * k, torch.float64) for i in range(n)], "max").reshape(n, k)
    assert_same(out, full[rank], "strided output")
    st.aclshmem_free_tensor(inp)


@check("world")
def all_gather_paths():
    import shmem_torch as st

    rank, n = me(), npes()
    for dtype in ALL_DTYPES + EXTRA_DTYPES:
        for k in (1, 3, 1025):
            want = torch.cat([data("ag", i, k, dtype) for i in range(n)])
            # symmetric output, local input (push)
            out = st.empty(n * k, dtype=dtype)
            st.all_gather(out, data("ag", rank, k, dtype))
            assert same_bytes(out, want), f"all_gather push {dtype} k={k}"
            # symmetric input, local output (pull)
            inp = st.empty(k, dtype=dtype)
            inp.copy_(data("ag", rank, k, dtype))
            local = torch.empty(n, k, dtype=dtype)
            st.all_gather(local, inp)
            assert same_bytes(local.reshape(-1), want), f"all_gather pull {dtype} k={k}"
            # in place
            out[rank * k:(rank + 1) * k].copy_(data("ag", rank, k, dtype))
            st.all_gather(out, out[rank * k:(rank + 1) * k])
            assert same_bytes(out, want), f"all_gather in place {dtype} k={k}"
            st.aclshmem_free_tensor(inp)
            st.aclshmem_free_tensor(out)
    # 16 MiB output, non-contiguous local input
    k = BIG // n
    out = st.empty(n, k, dtype=torch.float32)
    src = torch.arange(2 * k, dtype=torch.float32).reshape(k, 2)[:, 1] + rank
    st.all_gather(out, src)
    for i in range(n):
        assert torch.equal(out[i], torch.arange(2 * k, dtype=torch.float32).reshape(k, 2)[:, 1] + i)
    st.aclshmem_free_tensor(out)


@check("world")
def broadcast_every_root():
    import shmem_torch as st

    rank, n = me(), npes()
    for dtype in ALL_DTYPES + EXTRA_DTYPES:
        for numel in (1, 4099):
            t = st.empty(numel, dtype=dtype)
            for root in range(n):
                t.copy_(data("bc", rank, numel, dtype))
                st.broadcast(t, root=root)
                assert same_bytes(t, data("bc", root, numel, dtype)), f"broadcast {dtype} root {root}"
            st.aclshmem_free_tensor(t)
    t = st.empty(BIG, dtype=torch.float32)
    t.fill_(rank)
    st.broadcast(t, root=n - 1)
    assert bool((t == n - 1).all())
    # a strided tensor and a 0-d tensor
    t2 = t[:1000].view(100, 10)
    t2.fill_(rank)
    st.broadcast(t2.t(), root=1)
    assert bool((t2 == 1).all())
    z = st.full((), rank * 3, dtype=torch.int16)
    st.broadcast(z, root=2)
    assert z.item() == 6
    st.aclshmem_free_tensor(z)
    st.aclshmem_free_tensor(t)


@check("world")
def all_to_all_paths():
    import shmem_torch as st

    rank, n = me(), npes()
    for dtype in (torch.float32, torch.int8, torch.bool, torch.complex128, torch.bfloat16):
        for k in (1, 7, 5000):
            def chunk(src_pe, dst_pe):
                return data(f"a2a-{src_pe}-{dst_pe}", 0, k, dtype)
            mine = torch.cat([chunk(rank, j) for j in range(n)])
            want = torch.cat([chunk(j, rank) for j in range(n)])
            # symmetric input (pull)
            inp = st.empty(n * k, dtype=dtype)
            inp.copy_(mine)
            out = torch.empty(n * k, dtype=dtype)
            st.all_to_all(out, inp)
            assert same_bytes(out, want), f"all_to_all pull {dtype} k={k}"
            # symmetric output (push)
            sym_out = st.empty(n, k, dtype=dtype)
            st.all_to_all(sym_out, mine.reshape(n, k))
            assert same_bytes(sym_out, want), f"all_to_all push {dtype} k={k}"
            st.aclshmem_free_tensor(sym_out)
            st.aclshmem_free_tensor(inp)


def _c32(x):
    """x as the complex32 tensor holds it, in complex64."""
    return x.to(torch.complex32).to(torch.complex64)


@check("world")
def complex32_reduces_in_complex64():
    """complex32, which the engine has no type for, is reduced in complex64 through the
    staging area and rounded once: all_reduce (sum, prod, avg; in chunks too) and
    reduce_scatter, as shmem_torch's functions and as the custom ops."""
    import shmem_torch as st

    rank, n = me(), npes()
    for numel in (7, 70_001):  # 70001 x 8 bytes in complex64: several chunks of the area
        for op in ("sum", "prod", "avg"):
            t = st.empty(numel, dtype=torch.complex32)
            t.copy_(data("c32", rank, numel, torch.complex64, op))
            st.all_reduce(t, op=op)
            want = reduce_ref([_c32(data("c32", i, numel, torch.complex64, op)) for i in range(n)], op)
            assert_same(t.to(torch.complex64), _c32(want),
                        f"complex32 all_reduce {op} x{numel}")
            st.aclshmem_free_tensor(t)
    k = 1001
    inp = st.empty(n * k, dtype=torch.complex32)
    inp.copy_(data("c32-rs", rank, n * k, torch.complex64))
    out = torch.empty(k, dtype=torch.complex32)
    st.reduce_scatter(out, inp)
    full = reduce_ref([_c32(data("c32-rs", i, n * k, torch.complex64)) for i in range(n)], "sum")
    assert_same(out.to(torch.complex64), _c32(full[rank * k:(rank + 1) * k]), "complex32 reduce_scatter")
    st.aclshmem_free_tensor(inp)


@check("world")
def collective_errors():
    import shmem_torch as st
    from shmem.core import AclshmemInvalid

    n = npes()
    t = st.zeros(8, dtype=torch.float32)
    i = st.zeros(8, dtype=torch.int32)
    c = st.zeros(8, dtype=torch.complex64)
    u = st.zeros(8, dtype=torch.float8_e4m3fn) if hasattr(torch, "float8_e4m3fn") else None
    plain = torch.zeros(8)
    expect_raises(AclshmemInvalid, st.all_reduce, t, op="xor", match="op")
    expect_raises(AclshmemInvalid, st.all_reduce, t, op=3, match="op")
    expect_raises(AclshmemInvalid, st.all_reduce, i, op="avg", match="avg")
    expect_raises(AclshmemInvalid, st.all_reduce, c, op="max", match="complex")
    if u is not None:
        expect_raises(AclshmemInvalid, st.all_reduce, u, match="not supported")
    expect_raises(AclshmemInvalid, st.all_reduce, plain, match="not a symmetric")
    m = st.zeros(4, 4)
    expect_raises(AclshmemInvalid, st.all_reduce, m.t(), match="contiguous")
    for bad in (-1, 2048, 77, True, "0", None):
        expect_raises(AclshmemInvalid, st.all_reduce, t, "sum", bad, match="team")
        expect_raises(AclshmemInvalid, st.barrier, bad, match="team")
    for bad in (-1, n, True, 0.5):
        expect_raises(AclshmemInvalid, st.broadcast, t, bad, match="root")
    expect_raises(AclshmemInvalid, st.all_gather, t, torch.zeros(3), match="elements")
    expect_raises(AclshmemInvalid, st.all_gather, t, torch.zeros(8 // n, dtype=torch.float64), match="dtype")
    expect_raises(AclshmemInvalid, st.all_gather, torch.zeros(8), torch.zeros(8 // n), match="symmetric")
    expect_raises(AclshmemInvalid, st.reduce_scatter, torch.zeros(3), t, match="elements")
    expect_raises(AclshmemInvalid, st.reduce_scatter, torch.zeros(8 // n), plain, match="not a symmetric")
    expect_raises(AclshmemInvalid, st.all_to_all, torch.zeros(8), torch.zeros(8), match="symmetric")
    expect_raises(AclshmemInvalid, st.all_to_all, t, t, match="overlap")
    expect_raises(AclshmemInvalid, st.all_to_all, torch.zeros(4), t, match="same number")
    odd = st.zeros(n + 1)
    expect_raises(AclshmemInvalid, st.all_to_all, torch.zeros(n + 1), odd, match="multiple")
    for x in (odd, m, c, i, t) + ((u,) if u is not None else ()):
        st.aclshmem_free_tensor(x)


# ---------------------------------------------------------------------------
# Group "teams" (4 PEs): collectives on strided teams
# ---------------------------------------------------------------------------


@check("teams")
def collectives_on_teams():
    import shmem_torch as st
    from shmem import _pyshmem
    from shmem.core import AclshmemInvalid

    rank, n = me(), npes()
    assert n == 4
    even = _pyshmem.team_split_strided(0, 0, 2, 2)   # PEs 0, 2
    odd = _pyshmem.team_split_strided(0, 1, 2, 2)    # PEs 1, 3
    three = _pyshmem.team_split_strided(0, 1, 1, 3)  # PEs 1, 2, 3
    my_pair = even if rank % 2 == 0 else odd
    pair_members = [0, 2] if rank % 2 == 0 else [1, 3]
    teams = [(my_pair, pair_members)]
    if rank >= 1:
        teams.append((three, [1, 2, 3]))
    else:
        assert three == _pyshmem.ACLSHMEM_TEAM_INVALID
    # every PE allocates the same tensors (allocation is world-collective)
    for numel in (1, 999, 70001, 1048583):
        for dtype, op in ((torch.float32, "sum"), (torch.int64, "max"), (torch.bfloat16, "avg"),
                          (torch.int16, "prod"), (torch.float64, "min")):
            t = st.empty(numel, dtype=dtype)
            for team, members in teams:
                idx = members.index(rank)
                key = f"team-{members}"
                t.copy_(data(key, idx, numel, dtype, op))
                st.all_reduce(t, op=op, team=team)
                want = reduce_ref([data(key, i, numel, dtype, op) for i in range(len(members))], op)
                assert_same(t, want, f"team {members} all_reduce {op} {dtype} x{numel}")
            st.barrier()
            st.aclshmem_free_tensor(t)
    k = 6
    inp_all = st.empty(4 * k, dtype=torch.float32)  # allocation is world-collective: once for all teams
    out_all = st.empty(4 * k, dtype=torch.float32)
    for team, members in teams:
        m, idx = len(members), members.index(rank)
        inp, out = inp_all[:m * k], out_all[:m * k]  # slices of symmetric tensors are symmetric
        inp.copy_(data("tm-rs", idx, m * k, torch.float32))
        red = torch.empty(k)
        st.reduce_scatter(red, inp, team=team)
        full = reduce_ref([data("tm-rs", i, m * k, torch.float32) for i in range(m)], "sum")
        assert_same(red, full[idx * k:(idx + 1) * k], f"team {members} reduce_scatter")
        st.all_gather(out, torch.full((k,), float(members[idx])), team=team)
        assert torch.equal(out, torch.tensor(members, dtype=torch.float32).repeat_interleave(k))
        inp.fill_(rank)
        st.broadcast(inp, root=m - 1, team=team)
        assert bool((inp == members[-1]).all())
        inp.copy_(torch.arange(m * k, dtype=torch.float32) + 1000 * idx)
        st.all_to_all(out, inp, team=team)
        want = torch.cat([torch.arange(idx * k, (idx + 1) * k, dtype=torch.float32) + 1000 * j for j in range(m)])
        assert torch.equal(out, want), f"team {members} all_to_all"
        st.barrier(team)
        expect_raises(AclshmemInvalid, st.broadcast, inp, m, team, match="root")
    st.barrier()
    st.aclshmem_free_tensor(out_all)
    st.aclshmem_free_tensor(inp_all)
    for team in (even, odd, three):
        if team >= 0:
            _pyshmem.team_destroy(team)
    st.barrier()


# ---------------------------------------------------------------------------
# Group "three" (3 PEs): an odd PE count, and every collective over the library's get/put
# ---------------------------------------------------------------------------


@check("three")
def odd_pe_count_collectives():
    for dtype in (torch.float32, torch.int64, torch.float16, torch.bool):
        for op in valid_ops(dtype):
            for numel in (1, 5, 4099, 65539 * 2 + 1):
                _all_reduce_case("three", numel, dtype, op)


@check("three")
def collectives_with_ordinary_operands():
    """Every collective with one side an ordinary tensor (through the staging area), sizes
    larger than the area (several chunks), on an odd number of PEs."""
    import shmem_torch as st

    rank, n = me(), npes()
    for dtype, op in ((torch.float32, "sum"), (torch.int32, "max"), (torch.float16, "avg")):
        for numel in (3, 4099, 300001):
            _all_reduce_case("rma", numel, dtype, op)
    k = 100_001  # 800 KB per PE: several chunks of the 256 KiB staging area
    inp = st.empty(n * k, dtype=torch.int64)
    inp.copy_(data("rma-rs", rank, n * k, torch.int64))
    out = torch.empty(k, dtype=torch.int64)
    st.reduce_scatter(out, inp, op="sum")
    full = reduce_ref([data("rma-rs", i, n * k, torch.int64) for i in range(n)], "sum")
    assert_same(out, full[rank * k:(rank + 1) * k], "reduce_scatter into an ordinary tensor")
    sym = st.empty(n * k, dtype=torch.int64)
    st.all_gather(sym, torch.full((k,), rank, dtype=torch.int64))
    assert torch.equal(sym, torch.arange(n).repeat_interleave(k))
    mine = st.full((k,), rank, dtype=torch.int64)
    local = torch.empty(n * k, dtype=torch.int64)
    st.all_gather(local, mine)
    assert torch.equal(local, torch.arange(n).repeat_interleave(k))
    st.aclshmem_free_tensor(mine)
    inp.fill_(rank)
    st.broadcast(inp, root=1)
    assert bool((inp == 1).all())
    inp.copy_(torch.arange(n * k) + 10000 * rank)
    st.all_to_all(local, inp)
    assert torch.equal(local, torch.cat([torch.arange(rank * k, (rank + 1) * k) + 10000 * j for j in range(n)]))
    st.all_to_all(sym, torch.arange(n * k) + 10000 * rank)
    assert torch.equal(sym, torch.cat([torch.arange(rank * k, (rank + 1) * k) + 10000 * j for j in range(n)]))
    st.aclshmem_free_tensor(sym)
    st.aclshmem_free_tensor(inp)


@check("three")
def collectives_through_a_small_staging_area():
    """The staged paths in many chunks: a 64 KiB staging area lent with staging.install,
    every collective that takes an ordinary tensor on one side, sizes of several chunks."""
    import shmem_torch as st
    from shmem_torch import staging

    rank, n = me(), npes()
    block = st.empty(64 << 10, dtype=torch.uint8)
    staging.install(block)
    try:
        k = 10_001  # 40 to 80 KB per PE and block: more than the area
        for dtype, op in ((torch.float32, "sum"), (torch.int64, "max"), (torch.bfloat16, "avg")):
            inp = st.empty(n * k, dtype=dtype)
            inp.copy_(data("small-rs", rank, n * k, dtype, op))
            full = reduce_ref([data("small-rs", i, n * k, dtype, op) for i in range(n)], op)
            out = torch.empty(k, 2, dtype=dtype)[:, 1]  # strided
            st.reduce_scatter(out, inp, op=op)
            assert_same(out, full[rank * k:(rank + 1) * k], f"reduce_scatter {op} {dtype} in chunks")
            st.aclshmem_free_tensor(inp)
        mine = st.full((k,), rank, dtype=torch.int16)
        local = torch.empty(n * k, dtype=torch.int16)
        st.all_gather(local, mine)
        assert torch.equal(local, torch.arange(n, dtype=torch.int16).repeat_interleave(k)), "all_gather in chunks"
        sym = st.empty(n * k, dtype=torch.int64)
        sym.copy_(torch.arange(n * k) + 100_000 * rank)
        got = torch.empty(n * k, dtype=torch.int64)
        st.all_to_all(got, sym)
        want = torch.cat([torch.arange(rank * k, (rank + 1) * k) + 100_000 * j for j in range(n)])
        assert torch.equal(got, want), "all_to_all from a symmetric input in chunks"
        st.all_to_all(sym, torch.arange(n * k) + 100_000 * rank)
        assert torch.equal(sym, want), "all_to_all into a symmetric output in chunks"
        t = st.empty(300, 100, dtype=torch.float64)
        t.copy_(torch.arange(30_000, dtype=torch.float64).reshape(300, 100) + rank)
        st.broadcast(t.t(), root=2)  # strided: through the area
        assert torch.equal(t, torch.arange(30_000, dtype=torch.float64).reshape(300, 100) + 2), "broadcast in chunks"
        for x in (t, sym, mine):
            st.aclshmem_free_tensor(x)
    finally:
        staging.uninstall(block)
        st.aclshmem_free_tensor(block)
