"""Checks of shmem.core's collectives (reduce, reducescatter, broadcast, fcollect, collect,
alltoall) and of the _pyshmem functions beneath them, run as one job per PE count (see
test_coll.py): NumPy arrays, DLPack tensors and raw Buffers of symmetric memory, every
element type, in place, on streams and on a strided sub-team, and a seeded mix of all of
them on sub-teams that come and go; bad arguments of one PE (AclshmemInvalid there,
before the call) and calls that differ between PEs (AclshmemError on every PE)."""

import numpy as np

from harness import Checks, raises
from shmem import _pyshmem as P, core
from shmem.core import AclshmemError, AclshmemInvalid

WORLD = core.ACLSHMEM_TEAM_WORLD
checks = Checks()

# (NumPy dtype, the reductions it takes) of the element types tested.
INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
FLOATS = ("float16", "float32", "float64", "longdouble")
COMPLEX = ("complex64", "complex128")


def main():
    return checks.run()


def values(pe, count, dtype):
    """PE pe's source: small integers 1..9 (complex ones with an imaginary part), exact in
    every type and every reduction of up to 4 PEs."""
    i = np.arange(count)
    v = 1 + (pe * 5 + i * 3 + (pe * i) % 7) % 9
    if np.dtype(dtype).kind == "c":
        return (v + 1j * ((pe + 2 * i) % 3)).astype(dtype)
    return v.astype(dtype)


def expected(op, n, count, dtype, first=0, shift=0):
    """op over the values of team PEs 0..n-1 (each PE p's as values(p + shift, ...))."""
    parts = [values(p + shift, first + count, dtype)[first:] for p in range(n)]
    if op in ("and", "or", "xor"):
        fn = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
        out = parts[0]
        for part in parts[1:]:
            out = fn(out, part)
        return out
    if op in ("min", "max"):
        return (np.minimum if op == "min" else np.maximum).reduce(parts)
    exact = np.array(parts, dtype=np.complex128 if np.dtype(dtype).kind == "c" else np.float64)
    result = exact.sum(axis=0) if op == "sum" else exact.prod(axis=0)  # exact: small integers
    if np.dtype(dtype).kind in "iu":  # the C arithmetic wraps around
        bits = np.dtype(dtype).itemsize * 8
        return np.array([int(x) % (1 << bits) for x in result], dtype=f"uint{bits}").view(dtype)
    return result.astype(dtype)  # rounded once, as the library does


class Scratch:
    """Symmetric memory for one check: each array() is a NumPy view of a fresh Buffer
    (collective); close() frees them all, once the check's views are gone."""

    def __init__(self):
        self.buffers = []

    def array(self, count, dtype):
        buf = core.buffer(max(count, 1) * np.dtype(dtype).itemsize)
        self.buffers.append(buf)
        return buf.numpy(dtype)[:count]

    def buffer(self, size):
        buf = core.buffer(size)
        self.buffers.append(buf)
        return buf

    def close(self):
        for buf in reversed(self.buffers):
            core.free(buf)


def with_scratch(fn):
    """A check that takes a Scratch, freed after it returned (its views died with it)."""

    def check():
        scratch = Scratch()
        result = fn(scratch)
        scratch.close()
        return result

    check.__name__ = fn.__name__
    return check


@checks
@with_scratch
def reduce_every_type_and_operation(s):
    me, n = core.my_pe(), core.n_pes()
    for dtype in INTS + FLOATS + COMPLEX:
        ops = [op for op in ("sum", "prod", "min", "max", "and", "or", "xor") if dtype in core.reduce_dtypes(op)]
        assert ops, dtype
        src, dst = s.array(3000, dtype), s.array(3000, dtype)
        for op in ops:
            for count in (0, 1, 5, 3000):
                src[:count] = values(me, count, dtype)
                core.reduce(WORLD, dst[:count], src[:count], op)
                assert np.array_equal(dst[:count], expected(op, n, count, dtype)), (dtype, op, count)
    assert set(core.reduce_dtypes("xor")) == set(INTS)
    assert "complex64" in core.reduce_dtypes("prod") and "complex64" not in core.reduce_dtypes("max")


@checks
@with_scratch
def reduce_in_place_with_enum_and_string_ops(s):
    me, n = core.my_pe(), core.n_pes()
    x = s.array(10000, "float64")
    for op in (core.ReduceOp.SUM, "MAX", " min "):
        x[:] = values(me, 10000, "float64")
        core.reduce(WORLD, x, x, op)
        name = op.value if isinstance(op, core.ReduceOp) else op.strip().lower()
        assert np.array_equal(x, expected(name, n, 10000, "float64")), op


@checks
@with_scratch
def reduce_raw_buffers_with_dtype(s):
    me, n = core.my_pe(), core.n_pes()
    src, dst = s.buffer(64), s.buffer(64)
    src.numpy("int32")[:] = values(me, 16, "int32")
    core.reduce(WORLD, dst, src, "sum", dtype="int32")
    assert np.array_equal(dst.numpy("int32"), expected("sum", n, 16, "int32"))
    core.reduce(WORLD, dst, src, "max", dtype=np.int16)  # 32 int16 elements
    want = np.maximum.reduce([values(p, 16, "int32").view(np.int16) for p in range(n)])
    assert np.array_equal(dst.numpy("int16"), want)


@checks
@with_scratch
def reducescatter_blocks(s):
    me, n = core.my_pe(), core.n_pes()
    for dtype, op in (("int64", "sum"), ("float32", "min"), ("uint8", "xor")):
        src, dst = s.array(7 * n, dtype), s.array(7, dtype)
        src[:] = values(me, 7 * n, dtype)
        core.reducescatter(WORLD, dst, src, op)
        assert np.array_equal(dst, expected(op, n, 7, dtype, first=7 * me)), (dtype, op)


@checks
@with_scratch
def broadcast_from_every_root(s):
    me, n = core.my_pe(), core.n_pes()
    src, dst = s.array(1001, "float32"), s.array(1001, "float32")
    for root in range(n):
        src[:] = values(me, 1001, "float32")
        dst[:] = -1
        core.broadcast(WORLD, dst, src, root=root)
        assert np.array_equal(dst, values(root, 1001, "float32")), root
    raw = s.buffer(33)  # bytes of a raw Buffer, in place
    raw[:] = bytes([me] * 33)
    core.broadcast(WORLD, raw, raw, n - 1)
    assert bytes(raw) == bytes([n - 1] * 33)


@checks
@with_scratch
def fcollect_and_collect(s):
    me, n = core.my_pe(), core.n_pes()
    src, dst = s.array(5, "int16"), s.array(5 * n, "int16")
    src[:] = values(me, 5, "int16")
    core.fcollect(WORLD, dst, src)
    everyone = np.concatenate([values(p, 5, "int16") for p in range(n)])
    assert np.array_equal(dst, everyone)
    dst[:] = 0
    dst[5 * me:5 * me + 5] = values(me, 5, "int16")
    core.fcollect(WORLD, dst, dst[5 * me:5 * me + 5])  # in place
    assert np.array_equal(dst, everyone)
    mine = s.array(n, "complex128")[:me + 1]  # collect: PE p gives p + 1 elements
    mine[:] = values(me, me + 1, "complex128")
    out = s.array(n * (n + 1) // 2, "complex128")
    core.collect(WORLD, out, mine)
    assert np.array_equal(out, np.concatenate([values(p, p + 1, "complex128") for p in range(n)]))


@checks
@with_scratch
def collect_into_too_small_a_dst_fails_on_every_pe(s):
    me, n = core.my_pe(), core.n_pes()
    src, dst = s.buffer(8), s.buffer(8 * n)
    small = dst[:8 * n - 1] if me == n - 1 else dst
    err = raises(AclshmemInvalid, core.collect, WORLD, small, src)
    assert "add up to" in str(err) and f"[{n - 1}]" in str(err), err


@checks
@with_scratch
def alltoall_blocks(s):
    me, n = core.my_pe(), core.n_pes()
    src, dst = s.array(3 * n, "uint32"), s.array(3 * n, "uint32")
    src[:] = [1000 * me + k for k in range(3 * n)]  # block j: for PE j
    core.alltoall(WORLD, dst, src)
    want = np.concatenate([[1000 * p + 3 * me + k for k in range(3)] for p in range(n)])
    assert np.array_equal(dst, want), (dst, want)


class DLPackOnly:
    """A DLPack tensor without the NumPy interfaces (as a torch tensor is)."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


@checks
@with_scratch
def dlpack_tensors(s):
    me, n = core.my_pe(), core.n_pes()
    src, dst = s.array(100, "int32"), s.array(100, "int32")
    src[:] = values(me, 100, "int32")
    core.reduce(WORLD, DLPackOnly(dst), DLPackOnly(src), "sum")
    assert np.array_equal(dst, expected("sum", n, 100, "int32"))
    raises(AclshmemInvalid, core.reduce, WORLD, DLPackOnly(dst[::2]), DLPackOnly(src[::2]), "sum")
    try:
        import torch
    except ImportError:
        return
    halves = s.array(64, "uint16")  # bfloat16, which NumPy has not, through torch
    t = torch.utils.dlpack.from_dlpack(halves).view(torch.bfloat16)
    t[:] = float(me + 1)
    core.reduce(WORLD, t, t, "sum")
    assert t.float().eq(n * (n + 1) / 2).all().item(), t


@checks
@with_scratch
def on_a_stream(s):
    me, n = core.my_pe(), core.n_pes()
    src, dst = s.array(4099, "int64"), s.array(4099, "int64")
    src[:] = values(me, 4099, "int64")
    stream = core.Stream()
    core.reduce(WORLD, dst, src, "sum", stream=stream)
    core.reduce(WORLD, dst, dst, "max", stream=stream)  # in stream order, after the sum
    stream.synchronize()
    assert np.array_equal(dst, expected("sum", n, 4099, "int64"))
    core.broadcast(WORLD, dst, src, 0, stream=0)  # the default stream
    core.synchronize(0)
    assert np.array_equal(dst, values(0, 4099, "int64"))
    stream.close()


@checks
@with_scratch
def on_a_strided_sub_team(s):
    me, n = core.my_pe(), core.n_pes()
    src, dst = s.array(64, "float64"), s.array(64, "float64")
    team = P.team_split_strided(WORLD, 1, 2, n // 2) if n > 1 else -1  # PEs 1, 3, ...
    if me % 2 == 1:
        tme, tn = core.team_my_pe(team), core.team_n_pes(team)
        src[:] = values(tme, 64, "float64")
        core.reduce(team, dst, src, "prod")
        assert np.array_equal(dst, expected("prod", tn, 64, "float64"))
        core.fcollect(team, dst[:8 * tn], src[:8])
        assert np.array_equal(dst[:8 * tn], np.concatenate([values(p, 8, "float64") for p in range(tn)]))
        P.team_destroy(team)
    core.barrier_all()


@checks
@with_scratch
def bad_arguments_raise_invalid_before_the_call(s):
    n = core.n_pes()
    src, dst = s.array(8, "int32"), s.array(8, "int32")
    raw_src, raw_dst = s.buffer(32), s.buffer(32)
    private = np.zeros(8, dtype=np.int32)
    read_only = dst[:]
    read_only.flags.writeable = False
    cases = [
        (core.reduce, (WORLD, dst, src, "mean"), "op must be"),
        (core.reduce, (WORLD, dst, src, 3), "op must be"),
        (core.reduce, (WORLD, private, src, "sum"), "not symmetric"),
        (core.reduce, (WORLD, dst, private, "sum"), "not symmetric"),
        (core.reduce, (WORLD, read_only, src, "sum"), "read-only"),
        (core.reduce, (WORLD, dst, src.view(np.uint32), "sum"), "same element type"),
        (core.reduce, (WORLD, dst[:4], src, "sum"), "src has 8 elements"),
        (core.reduce, (WORLD, dst.view(np.float32), src.view(np.float32), "xor"), "no xor reduction of float32"),
        (core.reduce, (WORLD, raw_dst, raw_src, "sum"), "dtype="),
        (core.reduce, (WORLD, raw_dst, raw_src, "sum"), "dtype="),
        (core.reduce, (WORLD, raw_dst, raw_src, "sum", None), "dtype="),
        (core.reduce, (WORLD, dst[::2], src[::2], "sum"), "contiguous"),
        (core.reduce, (WORLD, "dst", src, "sum"), "must be a Buffer"),
        (core.broadcast, (WORLD, dst, src, n), "root"),
        (core.broadcast, (WORLD, dst[:3], src, 0), "same size"),
        (core.alltoall, (WORLD, dst, src[:5]), "multiple"),
        (core.reduce, (77, dst, src, "sum"), "not a live team"),
        (core.reduce, (WORLD, dst, src, "sum", "stream"), "stream"),
    ]
    if n > 1:
        cases += [(core.reducescatter, (WORLD, dst, src, "sum"), "needs"),
                  (core.fcollect, (WORLD, dst, src), "needs")]
    for fn, args, text in cases:
        err = raises(AclshmemInvalid, fn, *args)
        assert text in str(err), (fn.__name__, text, str(err))
    raises(AclshmemInvalid, core.reduce, WORLD, raw_dst, raw_src, "sum", dtype="float128x")


@checks
@with_scratch
def calls_that_differ_fail_on_every_pe(s):
    me, n = core.my_pe(), core.n_pes()
    src, dst = s.array(16, "int32"), s.array(16, "int32")
    if n < 2:
        return
    last = me == n - 1
    for fn, args in ((core.reduce, (WORLD, dst[:15] if last else dst, src[:15] if last else src, "sum")),
                     (core.reduce, (WORLD, dst, src, "max" if last else "min")),
                     (core.broadcast, (WORLD, dst, src, 1 if last else 0))):
        err = raises(AclshmemError, fn, *args)
        assert "different calls" in str(err), str(err)
    src[:] = me  # and after that the team works
    core.reduce(WORLD, dst, src, "sum")
    assert (dst == n * (n - 1) // 2).all()


@checks
@with_scratch
def a_barrier_against_a_collective_fails_the_collective(s):
    """The last PE calls the team's barrier where the others call fcollect: each of them gets
    an AclshmemError, the barrier returns, and the team's next collective works."""
    me, n = core.my_pe(), core.n_pes()
    src, dst = s.array(4, "int32"), s.array(4 * n, "int32")
    if n < 2:
        return
    core.barrier_all()
    if me == n - 1:
        core.barrier_all()
    else:
        err = raises(AclshmemError, core.fcollect, WORLD, dst, src)
        assert "entered a barrier of the team" in str(err), str(err)
    src[:] = me
    core.fcollect(WORLD, dst, src)
    assert (dst == np.repeat(np.arange(n), 4)).all(), dst


@checks
@with_scratch
def pyshmem_functions_are_the_c_ones(s):
    me, n = core.my_pe(), core.n_pes()
    src, dst = s.array(4, "int32"), s.array(4 * n, "int32")
    src[:] = me
    assert P.aclshmem_int32_sum_reduce(WORLD, dst.ctypes.data, src.ctypes.data, 4) == 0
    assert (dst[:4] == n * (n - 1) // 2).all()
    assert P.aclshmem_fcollectmem(WORLD, dst.ctypes.data, src.ctypes.data, 16) == 0
    assert list(dst[::4]) == list(range(n))
    rc = P.aclshmem_int32_sum_reduce(WORLD, dst.ctypes.data, 12345, 4)  # not symmetric: an error code
    assert rc == P.ACLSHMEM_INVALID_PARAM and "not symmetric" in P.aclshmemx_get_last_error()
    mine = np.array([me * 10, me], dtype=np.int64)
    everyone = np.zeros(2 * n, dtype=np.int64)
    assert P.aclshmemx_team_exchange(WORLD, mine.ctypes.data, 16, everyone.ctypes.data) == 0
    assert list(everyone) == [v for p in range(n) for v in (p * 10, p)]


@checks
@with_scratch
def reduce_local_of_ordinary_arrays(s):
    """aclshmemx_reduce_local: NumPy arrays of this process (not symmetric), a symmetric work
    Buffer; in place and not, sizes on both of the engine's ways; a bad type or operation on
    one PE fails on every PE."""
    me, n = core.my_pe(), core.n_pes()
    work = s.buffer(70001 * 16)
    for dtype, op in (("float32", "sum"), ("int64", "max"), ("complex128", "prod"), ("uint8", "xor")):
        ctype = {"float32": "float", "complex128": "complexd"}.get(dtype, dtype)
        for count in (0, 5, 3000, 70001):
            src = values(me, count, dtype)
            dst = np.zeros(count, dtype=dtype)
            for out in (dst, src):  # out of place, then in place
                rc = P.aclshmemx_reduce_local(WORLD, out.ctypes.data, src.ctypes.data, work.addr, count,
                                              P.LOCAL_REDUCE_TYPES[ctype], P.LOCAL_REDUCE_OPS[op])
                assert rc == 0, P.aclshmemx_get_last_error()
                assert np.array_equal(out, expected(op, n, count, dtype)), (dtype, op, count)
    a = np.ones(8, dtype=np.float32)
    bad = (P.LOCAL_REDUCE_TYPES["float"], P.LOCAL_REDUCE_OPS["and"]) if me == 0 else \
        (P.LOCAL_REDUCE_TYPES["float"], P.LOCAL_REDUCE_OPS["sum"])
    rc = P.aclshmemx_reduce_local(WORLD, a.ctypes.data, a.ctypes.data, work.addr, 8, *bad)
    assert rc == P.ACLSHMEM_INVALID_PARAM, rc
    message = P.aclshmemx_get_last_error()
    assert ("no and reduction of float" if me == 0 else "failed on PE 0") in message, message
    rc = P.aclshmemx_reduce_local(WORLD, a.ctypes.data, a.ctypes.data, a.ctypes.data, 8, 999, 0)
    assert rc == P.ACLSHMEM_INVALID_PARAM and "unknown type 999" in P.aclshmemx_get_last_error()
    assert (a == 1).all()  # nothing was written


@checks
@with_scratch
def broadcast_local_of_ordinary_arrays(s):
    """aclshmemx_broadcastmem_local: NumPy arrays of this process, a symmetric work Buffer; each
    root, in place on the root and not, sizes in the records and beyond; a work that is not
    symmetric on one PE fails on every PE and writes nothing."""
    me, n = core.my_pe(), core.n_pes()
    work = s.buffer(200001)
    for count in (0, 100, 200001):
        for root in range(n):
            src = (np.arange(count) * 7 + root).astype(np.uint8)
            dst = src if me == root and count % 2 else np.zeros(count, dtype=np.uint8)
            rc = P.aclshmemx_broadcastmem_local(WORLD, dst.ctypes.data, src.ctypes.data if me == root else 0,
                                                work.addr, count, root)
            assert rc == 0, P.aclshmemx_get_last_error()
            assert np.array_equal(dst, (np.arange(count) * 7 + root).astype(np.uint8)), (count, root)
    dst = np.zeros(64, dtype=np.uint8)
    other = np.zeros(64, dtype=np.uint8)
    rc = P.aclshmemx_broadcastmem_local(WORLD, dst.ctypes.data, dst.ctypes.data,
                                        other.ctypes.data if me == n - 1 else work.addr, 64, 0)
    assert rc == P.ACLSHMEM_INVALID_PARAM, rc
    message = P.aclshmemx_get_last_error()
    assert ("is not symmetric" if me == n - 1 else f"failed on PE {n - 1}") in message, message
    assert not dst.any()
    rc = P.aclshmemx_broadcastmem_local(WORLD, dst.ctypes.data, dst.ctypes.data, work.addr, 64, n)
    assert rc == P.ACLSHMEM_INVALID_PARAM and f"root {n} is not a PE" in P.aclshmemx_get_last_error()


def _replace_team(teams, k, rng, n):
    """Destroys sub-team k (where this PE is in it) and splits another off the world."""
    if teams[k] != P.ACLSHMEM_TEAM_INVALID:
        P.team_destroy(teams[k])
    start = int(rng.integers(n))
    stride = 1 + int(rng.integers(n))
    size = 1 + int(rng.integers((n - 1 - start) // stride + 1))
    teams[k] = P.team_split_strided(WORLD, start, stride, size)


@checks
@with_scratch
def a_seeded_mix_on_sub_teams_that_come_and_go(s):
    """300 steps that every PE draws from one seed: a team (the world or one of 3 strided
    sub-teams, one replaced every 25 steps), a collective, an element type and operation
    from the library's tables, a size and a root.  The team's members call it (the others
    go on), so collectives of different teams overlap on the same Buffers; each step's
    values differ, so a stale round's data fails the check."""
    n = core.n_pes()
    rng = np.random.default_rng(20261203)
    src_buf, dst_buf = s.buffer(600 * 16 * n), s.buffer(600 * 16 * n)
    teams = [P.ACLSHMEM_TEAM_INVALID] * 3
    for k in range(3):
        _replace_team(teams, k, rng, n)
    ops = [op.value for op in core.ReduceOp]
    for step in range(1, 301):
        if step % 25 == 0:
            _replace_team(teams, int(rng.integers(3)), rng, n)
        pick, kind = int(rng.integers(4)), int(rng.integers(5))
        op = ops[int(rng.integers(len(ops)))]
        types = [t for t in core.reduce_dtypes(op) if t != "bfloat16"]  # (NumPy has no bfloat16)
        dtype = types[int(rng.integers(len(types)))]
        count = int(rng.choice([0, 1, 7, 64, 129, 600]))
        root_draw = int(rng.integers(64))
        team = WORLD if pick == 3 else teams[pick]
        if team == P.ACLSHMEM_TEAM_INVALID:
            continue
        me, tn = core.team_my_pe(team), core.team_n_pes(team)
        src, dst = src_buf.numpy(dtype), dst_buf.numpy(dtype)
        src[:count * tn] = values(me + step, count * tn, dtype)
        what = (step, kind, op, dtype, count, tn)
        if kind == 0:
            core.reduce(team, dst[:count], src[:count], op)
            assert np.array_equal(dst[:count], expected(op, tn, count, dtype, shift=step)), what
        elif kind == 1:
            core.reducescatter(team, dst[:count], src[:count * tn], op)
            assert np.array_equal(dst[:count], expected(op, tn, count, dtype, first=me * count, shift=step)), what
        elif kind == 2:
            root = root_draw % tn
            core.broadcast(team, dst[:count], src[:count], root=root)
            assert np.array_equal(dst[:count], values(root + step, count, dtype)), what
        elif kind == 3:
            core.fcollect(team, dst[:count * tn], src[:count])
            want = np.concatenate([values(p + step, count, dtype) for p in range(tn)])
            assert np.array_equal(dst[:count * tn], want), what
        else:
            core.alltoall(team, dst[:count * tn], src[:count * tn])
            want = np.concatenate([values(p + step, count * tn, dtype)[me * count:(me + 1) * count]
                                   for p in range(tn)])
            assert np.array_equal(dst[:count * tn], want), what
    core.barrier_all()
    for team in teams:
        if team != P.ACLSHMEM_TEAM_INVALID:
            P.team_destroy(team)
