"""The checks the shmem-torch tests run inside multi-PE jobs.

Starting PEs costs time, so each group of checks runs in one job (``run_group``): every
PE runs every check of the group in order and reports, per check, "ok" or the traceback.
The test modules turn each check into its own pytest item.

This module is imported by the PEs (through the sys.path that ``shmem.testing.run_pes``
hands them), so it does not import pytest.
"""

import traceback
import zlib

import torch

GROUPS = {}


def check(group):
    def register(fn):
        GROUPS.setdefault(group, []).append((fn.__name__, fn))
        return fn

    return register


def names(group):
    return [name for name, _ in GROUPS[group]]


def run_group(group, setup=None):
    """Runs the checks of ``group`` on this PE; returns {name: ("ok", None) | ("fail", text)}.

    After a failure the PEs may be out of step (one inside a collective the others left),
    so this PE then ends at once with the results so far; its peers see it die and fail
    their current check instead of hanging."""
    from shmem import testing

    import shmem_torch as st

    torch.set_num_threads(1)
    results = {}
    for name, fn in GROUPS[group]:
        try:
            fn()
            st.barrier()
            results[name] = ("ok", None)
        except BaseException:
            results[name] = ("fail", traceback.format_exc())
            testing.exit_pe(results)
    return results


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------

ALL_DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
              torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128]
EXTRA_DTYPES = [d for d in (getattr(torch, "uint16", None), getattr(torch, "uint32", None),
                            getattr(torch, "uint64", None), torch.complex32,
                            getattr(torch, "float8_e4m3fn", None), getattr(torch, "float8_e5m2", None))
                if d is not None]
INTS = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)
LOW = {torch.float16: torch.float32, torch.bfloat16: torch.float32}
REDUCIBLE = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
             torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128]
SHAPES = [(), (0,), (1,), (7,), (3, 5), (2, 3, 4), (4, 0, 2)]


def me():
    from shmem import core

    return core.my_pe()


def npes():
    from shmem import core

    return core.n_pes()


def expect_raises(exc, fn, *args, match=None, **kwargs):
    try:
        fn(*args, **kwargs)
    except exc as e:
        if match is not None and match.lower() not in str(e).lower():
            raise AssertionError(f"{fn.__name__} raised {type(e).__name__} without {match!r}: {e}") from None
        return e
    raise AssertionError(f"{getattr(fn, '__name__', fn)}{args} did not raise {exc.__name__}")


def data(key, pe, numel, dtype, op="sum"):
    """Deterministic test data of PE ``pe`` for case ``key`` (any PE can compute any PE's)."""
    g = torch.Generator().manual_seed(zlib.crc32(f"{key}/{pe}/{numel}/{dtype}/{op}".encode()))
    if dtype == torch.bool:
        return torch.randint(0, 2, (numel,), generator=g).bool()
    if dtype in INTS:
        lo, hi = (-3, 4) if op == "prod" else (-100, 100)
        if dtype == torch.uint8:
            lo, hi = (0, 4) if op == "prod" else (0, 120)
        return torch.randint(lo, hi, (numel,), generator=g).to(dtype)
    if dtype.is_complex:
        base = torch.complex(torch.randn(numel, generator=g), torch.randn(numel, generator=g))
        if op == "prod":
            base = base * 0.3 + 1
        return base.to(dtype)
    if op == "prod":
        return (torch.rand(numel, generator=g) * 0.5 + 0.75).to(dtype)
    if dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        return torch.randn(numel, generator=g).to(dtype)
    return torch.randint(0, 100, (numel,), generator=g).to(dtype)


def reduce_ref(inputs, op):
    """The reduction of ``inputs`` in order, accumulating like shmem_torch promises."""
    dtype = inputs[0].dtype
    if dtype == torch.bool:
        fn = torch.logical_or if op in ("sum", "max") else torch.logical_and
        r = inputs[0]
        for x in inputs[1:]:
            r = fn(r, x)
        return r
    acc = LOW.get(dtype, dtype)
    fn = {"sum": torch.add, "avg": torch.add, "prod": torch.mul, "min": torch.minimum, "max": torch.maximum}[op]
    r = inputs[0].to(acc)
    for x in inputs[1:]:
        r = fn(r, x.to(acc))
    if op == "avg":
        r = r / len(inputs)
    return r.to(dtype)


def assert_same(got, want, what):
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {tuple(got.shape)} != {tuple(want.shape)}"
    if got.dtype.is_floating_point or got.dtype.is_complex:
        torch.testing.assert_close(got, want, msg=lambda m: f"{what}: {m}")
    else:
        if not torch.equal(got, want):
            bad = (got != want).nonzero()[:5].flatten().tolist()
            raise AssertionError(f"{what}: differs at {bad}: got {got.flatten()[bad].tolist()}, "
                                 f"want {want.flatten()[bad].tolist()}")


def same_bytes(a, b):
    """Byte equality (works for every dtype, including those without torch.equal)."""
    return torch.equal(a.reshape(-1).contiguous().view(torch.uint8), b.reshape(-1).contiguous().view(torch.uint8))


def valid_ops(dtype):
    if dtype == torch.bool or dtype in INTS:
        return ["sum", "prod", "min", "max"]
    if dtype.is_complex:
        return ["sum", "prod", "avg"]
    return ["sum", "prod", "min", "max", "avg"]


# ---------------------------------------------------------------------------
# Group "tensors" (2 PEs): allocation, every dtype and shape, peer views, put/get, free
# ---------------------------------------------------------------------------


def _fill_for(t, pe, key):
    src = data(key, pe, t.numel(), t.dtype).reshape(t.shape)
    t.copy_(src)
    return src


@check("tensors")
def dtype_shape_roundtrip():
    import shmem_torch as st

    rank, n = me(), npes()
    nxt, prv = (rank + 1) % n, (rank - 1) % n
    for dtype in ALL_DTYPES + EXTRA_DTYPES:
        for shape in SHAPES:
            key = f"rt-{dtype}-{shape}"
            t = st.aclshmem_create_tensor(shape, dtype=dtype)
            assert t.dtype == dtype and tuple(t.shape) == shape and t.device.type == "cpu", (t.dtype, t.shape)
            assert t.is_contiguous() and st.is_symmetric(t), key
            mine = _fill_for(t, rank, key)
            st.barrier()
            # peer view: read the neighbour's copy in place
            peer = st.peer_tensor(t, nxt)
            assert peer.dtype == dtype and peer.shape == t.shape
            assert same_bytes(peer, data(key, nxt, t.numel(), dtype).reshape(shape)), f"peer view {key}"
            # get from the previous PE into a local tensor
            got = torch.empty(shape, dtype=dtype)
            st.get(got, t, prv)
            assert same_bytes(got, data(key, prv, t.numel(), dtype).reshape(shape)), f"get {key}"
            st.barrier()
            # put: each PE writes its neighbour's copy with a marker of its own
            marker = data(key + "-put", rank, t.numel(), dtype).reshape(shape)
            st.put(t, marker, nxt)
            st.barrier()
            assert same_bytes(t, data(key + "-put", prv, t.numel(), dtype).reshape(shape)), f"put {key}"
            st.barrier()
            # write through the peer view
            st.peer_tensor(t, nxt).copy_(mine)
            st.barrier()
            assert same_bytes(t, data(key, prv, t.numel(), dtype).reshape(shape)), f"peer write {key}"
            st.barrier()
            st.aclshmem_free_tensor(t)


@check("tensors")
def top_level_shmem_names():
    import shmem
    import shmem_torch as st

    assert shmem.aclshmem_create_tensor is st.aclshmem_create_tensor
    assert shmem.aclshmem_free_tensor is st.aclshmem_free_tensor
    t = shmem.aclshmem_create_tensor((2, 3), dtype=torch.int32, device_id=0)
    assert t.shape == (2, 3) and t.dtype == torch.int32
    t2 = shmem.aclshmem_create_tensor([4])
    assert t2.dtype == torch.float32  # the default dtype
    shmem.aclshmem_free_tensor(t2)
    shmem.aclshmem_free_tensor(t)


@check("tensors")
def factories():
    import shmem_torch as st

    rank, n = me(), npes()
    z = st.zeros(3, 4, dtype=torch.int64)
    assert z.shape == (3, 4) and bool((z == 0).all())
    o = st.ones((5,), dtype=torch.float16)
    assert bool((o == 1).all())
    f = st.full((2, 2), rank + 0.5, dtype=torch.float64)
    assert bool((f == rank + 0.5).all())
    # full/zeros/ones return when every PE has filled its copy: a peer's copy is ready.
    assert bool((st.peer_tensor(f, (rank + 1) % n) == (rank + 1) % n + 0.5).all())
    src = torch.arange(12, dtype=torch.int16).reshape(3, 4) * (rank + 1)
    lk = st.like(src)
    assert torch.equal(lk, src) and st.is_symmetric(lk) and lk.dtype == torch.int16
    lk2 = st.like(src, copy=False)
    assert lk2.shape == src.shape
    e = st.empty()
    assert e.dim() == 0
    for t in (z, o, f, lk, lk2, e):
        st.aclshmem_free_tensor(t)


@check("tensors")
def views_and_slices():
    import shmem_torch as st

    rank, n = me(), npes()
    nxt = (rank + 1) % n
    t = st.empty(6, 8, dtype=torch.float32)
    t.copy_(torch.arange(48, dtype=torch.float32).reshape(6, 8) + 100 * rank)
    st.barrier()
    theirs = torch.arange(48, dtype=torch.float32).reshape(6, 8) + 100 * nxt
    cases = {
        "row": lambda x: x[2],
        "slice": lambda x: x[1:4],
        "column (strided)": lambda x: x[:, 3],
        "transpose": lambda x: x.t(),
        "step slice": lambda x: x[::2, 1::3],
        "element": lambda x: x[5, 7],
        "flat view": lambda x: x.view(-1)[10:30],
        "reinterpret int32": lambda x: x.view(torch.int32)[1:3],
        "reinterpret bytes, misaligned": lambda x: x.view(torch.uint8).view(-1)[3:11],
        "empty slice": lambda x: x[3:3],
    }
    for name, f in cases.items():
        v = f(t)
        assert st.is_symmetric(v), name
        pv = st.peer_tensor(v, nxt)
        want = f(theirs)
        assert pv.shape == want.shape and pv.dtype == want.dtype, name
        assert same_bytes(pv, want), name
    # put and get through strided views
    st.barrier()
    col = torch.full((6,), -1.0 - rank)
    st.put(t[:, 2], col, nxt)
    st.barrier()
    assert bool((t[:, 2] == -1.0 - (rank - 1) % n).all())
    got = torch.empty(4)
    st.get(got, t[1:5, 2], nxt)
    assert bool((got == -1.0 - rank).all())
    # a non-contiguous destination for get
    dst = torch.zeros(8, 6).t()
    st.get(dst, t, nxt)
    assert torch.equal(dst, st.peer_tensor(t, nxt))
    st.barrier()
    st.aclshmem_free_tensor(t)


@check("tensors")
def device_id_meaning():
    import shmem_torch as st

    k = st.local_device_count()
    assert k == npes(), "all PEs of the test run on this node"
    for d in range(k):
        t = st.aclshmem_create_tensor((2,), device_id=d)
        assert t.device.type == "cpu"
        st.aclshmem_free_tensor(t)
    import numpy as np

    t = st.aclshmem_create_tensor((2,), device_id=np.int64(0))
    st.aclshmem_free_tensor(t)


@check("tensors")
def free_leaves_nothing_alive():
    """Freeing the tensor the allocation returned releases its memory at once: no warning
    about views still alive (the tensor itself once kept its base view, and the Buffer
    export with it), and the same block is handed out again."""
    import warnings

    import shmem_torch as st

    for dtype, shape in ((torch.float32, (1000,)), (torch.int64, (3, 5))):
        t = st.empty(shape, dtype=dtype)
        t.fill_(1)
        address = t.data_ptr()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            st.aclshmem_free_tensor(t)
        assert not caught, [str(w.message) for w in caught]
        again = st.empty(shape, dtype=dtype)
        assert again.data_ptr() == address, "the freed block was not reused"
        st.aclshmem_free_tensor(again)


@check("tensors")
def freed_tensor_raises():
    import shmem_torch as st
    from shmem.core import AclshmemInvalid

    t = st.empty(16, dtype=torch.float32)
    t.fill_(1)
    view = t[4:8]
    st.aclshmem_free_tensor(t)
    assert isinstance(t, st.FreedTensor)
    for fn in (lambda: t + 1, lambda: t.sum(), lambda: t.fill_(0), lambda: t.numpy(), lambda: t[0],
               lambda: t.copy_(torch.ones(16)), lambda: torch.add(torch.ones(16), t), lambda: t.shape,
               lambda: t.tolist(), lambda: t.data_ptr()):
        expect_raises(AclshmemInvalid, fn, match="freed")
    assert "freed" in repr(t)
    expect_raises(AclshmemInvalid, st.aclshmem_free_tensor, t, match="freed already")
    expect_raises(AclshmemInvalid, st.peer_tensor, t, 0, match="freed")
    expect_raises(AclshmemInvalid, st.all_reduce, t, match="freed")
    expect_raises(AclshmemInvalid, st.put, t, torch.ones(16), 0, match="freed")
    # A view the user kept: the library refuses it, and writing through it raises.
    expect_raises(AclshmemInvalid, st.peer_tensor, view, 0)
    expect_raises(AclshmemInvalid, st.all_reduce, view)
    expect_raises(RuntimeError, view.fill_, 2.0)
    # the memory is reused by the next allocation, which works normally; the stale view
    # is still refused
    t2 = st.zeros(16)
    assert bool((t2 == 0).all())
    expect_raises(AclshmemInvalid, st.peer_tensor, view, 0, match="freed")
    expect_raises(AclshmemInvalid, st.all_reduce, view, match="freed")
    st.aclshmem_free_tensor(t2)


@check("tensors")
def symmetric_answer_after_free_and_reuse():
    """is_symmetric and resolve find a tensor's allocation by its storage first (the fast
    path of the backend), never by an address alone: an ordinary tensor whose storage
    object takes a freed symmetric storage's place, an ordinary tensor over the addresses
    of the allocation that took the freed block, and a view kept from a freed tensor are
    not symmetric; the new allocation is."""
    import ctypes
    import gc

    import shmem_torch as st
    from shmem.core import AclshmemInvalid

    gc.collect()  # views of earlier checks go: the heap takes back what they kept out of reuse
    st.aclshmem_free_tensor(st.empty(64))
    t = st.empty(64)
    address, key = t.data_ptr(), t.untyped_storage()._cdata
    st.aclshmem_free_tensor(t)
    del t
    gc.collect()  # the freed allocation's storage goes: its object's place is free
    ordinary, reused = [], None  # kept alive, so that each new storage object takes a new place
    while reused is None and len(ordinary) < 2000:
        ordinary.append(torch.empty(64))
        if ordinary[-1].untyped_storage()._cdata == key:
            reused = ordinary[-1]
    assert reused is not None, "no ordinary storage took the freed storage's place (the check needs one)"
    assert not st.is_symmetric(reused), "an ordinary tensor passed for symmetric (the freed storage's identity)"
    expect_raises(AclshmemInvalid, st.peer_tensor, reused, 0, match="not a symmetric tensor")
    del ordinary, reused
    again = st.empty(64)
    assert again.data_ptr() == address, "the freed block was not reused"
    assert st.is_symmetric(again) and st.is_symmetric(again[8:16])
    alias = torch.frombuffer((ctypes.c_char * 256).from_address(address), dtype=torch.float32)
    assert not st.is_symmetric(alias), "an ordinary storage over symmetric addresses passed for symmetric"
    assert not st.is_symmetric(torch.empty(64)) and not st.is_symmetric(again.clone())
    del alias
    view = again[8:16]
    st.aclshmem_free_tensor(again)
    assert not st.is_symmetric(view)
    expect_raises(AclshmemInvalid, st.peer_tensor, view, 0, match="freed")


@check("tensors")
def tensor_api_errors():
    import numpy as np

    import shmem_torch as st
    from shmem.core import AclshmemInvalid

    n = npes()
    plain = torch.zeros(4)
    # non-symmetric tensors
    for fn in (lambda: st.peer_tensor(plain, 0), lambda: st.put(plain, plain, 0), lambda: st.get(plain, plain, 0),
               lambda: st.all_reduce(plain), lambda: st.broadcast(plain), lambda: st.aclshmem_free_tensor(plain)):
        expect_raises(AclshmemInvalid, fn, match="not a symmetric tensor")
    expect_raises(AclshmemInvalid, st.aclshmem_free_tensor, "x", match="torch.Tensor")
    expect_raises(AclshmemInvalid, st.peer_tensor, [1, 2], 0, match="torch.Tensor")
    # bad dtype
    for bad in ("float32", np.float32, float, None, torch.qint8, torch.quint8):
        expect_raises(AclshmemInvalid, st.aclshmem_create_tensor, (2,), bad, match="dtype")
    # bad shape
    for bad in (-1, (2, -1), "abc", 2.5, (2, "x"), None, (True, 2)):
        expect_raises(AclshmemInvalid, st.aclshmem_create_tensor, bad, match="shape")
    # bad device_id
    for bad in (-1, n, 99, True, 0.0, "0", None):
        expect_raises(AclshmemInvalid, st.aclshmem_create_tensor, (2,), torch.float32, bad, match="device_id")
    t = st.zeros(4, 2)
    # bad pe
    for bad in (-1, n, 1000, True, 1.0, "1", None):
        expect_raises(AclshmemInvalid, st.peer_tensor, t, bad, match="pe")
        expect_raises(AclshmemInvalid, st.put, t, torch.zeros(4, 2), bad, match="pe")
        expect_raises(AclshmemInvalid, st.get, torch.zeros(4, 2), t, bad, match="pe")
    # shape and dtype mismatch
    expect_raises(AclshmemInvalid, st.put, t, torch.zeros(8), 0, match="shape")
    expect_raises(AclshmemInvalid, st.put, t, torch.zeros(4, 3), 0, match="shape")
    expect_raises(AclshmemInvalid, st.get, torch.zeros(2, 4), t, 0, match="shape")
    expect_raises(AclshmemInvalid, st.put, t, torch.zeros(4, 2, dtype=torch.float64), 0, match="dtype")
    expect_raises(AclshmemInvalid, st.get, torch.zeros(4, 2, dtype=torch.int32), t, 0, match="dtype")
    # a view / slice is not freeable on its own; the tensor itself still works after
    expect_raises(AclshmemInvalid, st.aclshmem_free_tensor, t[1:], match="view or slice")
    expect_raises(AclshmemInvalid, st.aclshmem_free_tensor, t.view(8), match="view or slice")
    st.aclshmem_free_tensor(t)
    # free a tensor of the other instance-less kind: a tensor over a core Buffer
    from shmem import core

    buf = core.buffer(64)
    over = torch.frombuffer(buf, dtype=torch.float32)
    expect_raises(AclshmemInvalid, st.aclshmem_free_tensor, over, match="not a symmetric tensor")
    core.free(buf)


# ---------------------------------------------------------------------------
# Group "rma" (2 PEs): put_signal, signal waits, stream variants, the library path
# ---------------------------------------------------------------------------


@check("rma")
def put_signal_and_wait():
    import shmem_torch as st
    from shmem.core import CmpOp, SignalOp

    rank, n = me(), npes()
    nxt = (rank + 1) % n
    buf = st.zeros(1000, dtype=torch.float64)
    sig = st.zeros(1, dtype=torch.int32)
    payload = torch.arange(1000, dtype=torch.float64) * (rank + 1)
    for round_ in range(1, 4):
        st.put_signal(buf, payload + round_, sig, round_, SignalOp.SIGNAL_SET, nxt)
        value = st.signal_wait_until(sig, CmpOp.CMP_GE, round_)
        assert value >= round_
        prv = (rank - 1) % n
        want = torch.arange(1000, dtype=torch.float64) * (prv + 1) + round_
        assert torch.equal(buf, want), f"round {round_}"
        st.barrier()
    # SIGNAL_ADD and string spellings
    sig.zero_()
    st.barrier()
    for _ in range(3):
        st.put_signal(buf[:10], payload[:10], sig, 2, "add", nxt)
    assert st.signal_wait_until(sig, ">=", 6) == 6
    st.barrier()
    st.aclshmem_free_tensor(sig)
    st.aclshmem_free_tensor(buf)


@check("rma")
def stream_variants():
    import shmem_torch as st
    from shmem import core
    from shmem.core import CmpOp, SignalOp

    rank, n = me(), npes()
    nxt, prv = (rank + 1) % n, (rank - 1) % n
    dst = st.zeros(256, dtype=torch.int32)
    sig = st.zeros(1, dtype=torch.int32)
    src = torch.arange(256, dtype=torch.int32) + 1000 * rank
    with core.Stream() as s:
        st.put(dst, src, nxt, stream=s)
        s.synchronize()
        st.barrier()
        assert torch.equal(dst, torch.arange(256, dtype=torch.int32) + 1000 * prv)
        got = torch.empty(256, dtype=torch.int32)
        st.get(got, dst, nxt, stream=s.handle)
        s.synchronize()
        assert torch.equal(got, torch.arange(256, dtype=torch.int32) + 1000 * rank)
        st.barrier()
        doubled = src * 2  # a stream operation reads its source when it runs: keep it alive
        st.put_signal(dst, doubled, sig, 7, SignalOp.SIGNAL_SET, nxt, stream=s)
        st.signal_wait_until(sig, CmpOp.CMP_EQ, 7, stream=s)
        s.synchronize()
        assert torch.equal(dst, (torch.arange(256, dtype=torch.int32) + 1000 * prv) * 2), (sig.item(), dst[:4].tolist())
    st.barrier()  # every PE has checked its dst before it is written again
    st.put(dst, src, nxt, stream=0)  # the default stream
    core.synchronize(0)
    st.barrier()
    assert torch.equal(dst, torch.arange(256, dtype=torch.int32) + 1000 * prv)
    st.barrier()
    st.aclshmem_free_tensor(sig)
    st.aclshmem_free_tensor(dst)


@check("rma")
def rma_errors():
    import shmem_torch as st
    from shmem.core import AclshmemInvalid

    t = st.zeros(8, dtype=torch.int32)
    f = st.zeros(8, dtype=torch.float32)
    expect_raises(AclshmemInvalid, st.put_signal, t, torch.zeros(8, dtype=torch.int32), f, 1, "set", 0,
                  match="int32")
    expect_raises(AclshmemInvalid, st.put_signal, t, torch.zeros(8, dtype=torch.int32), torch.zeros(1, dtype=torch.int32),
                  1, "set", 0, match="not a symmetric")
    expect_raises(AclshmemInvalid, st.put_signal, t, torch.zeros(8, dtype=torch.int32), t[:1], 1, "xor", 0,
                  match="signal_op")
    expect_raises(AclshmemInvalid, st.put_signal, t, torch.zeros(8, dtype=torch.int32), t[:1], 2 ** 31, "set", 0,
                  match="signal_value")
    expect_raises(AclshmemInvalid, st.signal_wait_until, t[:1], "approximately", 1, match="cmp")
    expect_raises(AclshmemInvalid, st.signal_wait_until, t[:0], "eq", 1, match="at least one")
    expect_raises(AclshmemInvalid, st.put, t[::2], torch.zeros(4, dtype=torch.int32), 0, stream=0,
                  match="contiguous")
    expect_raises(AclshmemInvalid, st.put, t, torch.zeros(8, dtype=torch.int32), 0, stream=-1, match="stream")
    st.aclshmem_free_tensor(f)
    st.aclshmem_free_tensor(t)


@check("rma")
def library_path_when_not_mapped():
    """put/get through the library (the path for PEs on another node), forced here."""
    import shmem_torch as st
    from shmem_torch import tensor as T

    rank, n = me(), npes()
    nxt, prv = (rank + 1) % n, (rank - 1) % n
    t = st.zeros(3, 5, dtype=torch.int64)
    orig = T._Allocation.peer_flat
    T._Allocation.peer_flat = lambda self, pe: None  # as if no peer were mapped
    try:
        st.put(t, torch.full((3, 5), rank + 10, dtype=torch.int64), nxt)
        st.barrier()
        assert bool((t == prv + 10).all())
        got = torch.empty(5, 3, dtype=torch.int64).t()  # non-contiguous destination
        st.get(got, t, nxt)
        assert bool((got == rank + 10).all())
        assert st.peer_tensor(t, nxt) is None  # as for a PE on another node
    finally:
        T._Allocation.peer_flat = orig
    st.barrier()
    st.aclshmem_free_tensor(t)


# ---------------------------------------------------------------------------
# torch.distributed interop (run without the launcher's init)
# ---------------------------------------------------------------------------


def init_from_process_group(port):
    """A PE that starts SHMEM from a gloo process group; returns what it saw."""
    import warnings

    import torch.distributed as dist

    import shmem_torch as st
    from shmem import core, testing

    torch.set_num_threads(1)
    rank, n = testing.pe(), testing.npes()
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=n)
    st.init(mem_size=64 << 20)
    assert core.my_pe() == rank and core.n_pes() == n
    x = st.full((1000,), float(rank + 1))
    st.all_reduce(x)
    ref = torch.full((1000,), float(rank + 1))
    dist.all_reduce(ref)
    assert torch.equal(x, ref)
    st.aclshmem_free_tensor(x)
    left = st.empty(4)  # not freed: finalize releases it with a warning and detaches it
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        st.finalize()
    assert any("not freed" in str(w.message) for w in caught), [str(w.message) for w in caught]
    assert isinstance(left, st.FreedTensor)
    # init again, from an explicit group
    group = dist.new_group(list(range(n)))
    st.init(group=group, mem_size=16 << 20)
    y = st.zeros(3, dtype=torch.int64)
    y.fill_(rank)
    st.all_reduce(y, op="max")
    result = y.tolist()
    st.aclshmem_free_tensor(y)
    z = st.empty(2)  # not freed: shmem.core.finalize detaches it through the finalize hook
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        core.finalize()
    assert isinstance(z, st.FreedTensor)
    dist.destroy_process_group()
    return result
