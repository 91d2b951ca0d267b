"""Every wait/test family of shmem._pyshmem for every type, as one 2-PE job."""

import numpy as np

from harness import Checks
from shmem import _native, _pyshmem as P, core

NPES = 2
SIZE_MAX = 2 ** 64 - 1
checks = Checks()

DTYPES = {
    "float": np.float32, "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
    "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64, "char": np.int8,
}
assert set(DTYPES) == {name for name, _ in _native.P2P_SYNC_TYPES}

EQ, NE, GT, GE, LT, LE = tuple(P.CmpOp)


def main():
    return checks.run()


def _local_families(name):
    """Waits and tests on a local symmetric array that already satisfies them."""
    dt = DTYPES[name]
    size = np.dtype(dt).itemsize
    f = lambda suffix: getattr(P, f"aclshmem_{name}_{suffix}")  # noqa: E731
    ivars = P.aclshmem_calloc(4, size)
    arr = core.Buffer(ivars, 4 * size).numpy(dt)
    arr[:] = np.array([1, 2, 3, 4]).astype(dt)
    status = np.zeros(4, np.int32)
    idx = np.zeros(4, np.uint64)
    res = np.zeros(1, np.uint64)
    ires = np.zeros(1, np.int32)
    vals = lambda *v: np.array(v).astype(dt)  # noqa: E731
    a = lambda x: x.ctypes.data  # noqa: E731

    f("wait_until")(ivars, EQ, 1)
    f("wait_until")(ivars + 3 * size, GT, 3)
    f("wait")(ivars + size, 0)                      # until != 0
    f("wait_until_all")(ivars, 4, 0, GE, 1)
    f("wait_until_all")(ivars, 4, a(status), LE, 4)
    f("wait_until_any")(ivars, 4, 0, EQ, 3, a(res))
    assert res[0] == 2, (name, res)
    status[:] = [1, 0, 0, 0]                         # element 0 left out
    f("wait_until_any")(ivars, 4, a(status), LT, 3, a(res))
    assert res[0] == 1, (name, res)
    status[:] = 0
    f("wait_until_some")(ivars, 4, a(idx), 0, GE, 3, a(res))
    assert res[0] == 2 and list(idx[:2]) == [2, 3], (name, res, idx)
    cv = vals(1, 2, 3, 4)
    f("wait_until_all_vector")(ivars, 4, 0, EQ, a(cv))
    cv = vals(9, 9, 3, 9)
    f("wait_until_any_vector")(ivars, 4, 0, EQ, a(cv), a(res))
    assert res[0] == 2, (name, res)
    cv = vals(1, 9, 3, 9)
    f("wait_until_some_vector")(ivars, 4, a(idx), 0, EQ, a(cv), a(res))
    assert res[0] == 2 and list(idx[:2]) == [0, 2], (name, res, idx)

    f("test")(ivars, EQ, 1, a(ires))
    assert ires[0] == 1, name
    f("test")(ivars, EQ, 5, a(ires))
    assert ires[0] == 0, name
    f("test")(ivars + size, NE, 2, a(ires))
    assert ires[0] == 0, name
    f("test_any")(ivars, 4, 0, GT, 2, a(res))
    assert res[0] in (2, 3), (name, res)            # any entry that holds (see any_fairness)
    f("test_any")(ivars, 4, 0, GT, 50, a(res))
    assert res[0] == SIZE_MAX, (name, res)
    status[:] = [0, 0, 1, 1]
    f("test_any")(ivars, 4, a(status), GT, 2, a(res))
    assert res[0] == SIZE_MAX, (name, res)
    f("test_any")(ivars, 0, 0, GT, 0, a(res))        # empty set
    assert res[0] == SIZE_MAX, (name, res)
    status[:] = 0
    f("test_some")(ivars, 4, a(idx), 0, LE, 2, a(res))
    assert res[0] == 2 and list(idx[:2]) == [0, 1], (name, res, idx)
    f("test_some")(ivars, 0, a(idx), 0, LE, 2, a(res))
    assert res[0] == 0, (name, res)
    cv = vals(1, 2, 3, 4)
    f("test_all_vector")(ivars, 4, 0, EQ, a(cv), a(ires))
    assert ires[0] == 1, name
    cv = vals(1, 2, 3, 5)
    f("test_all_vector")(ivars, 4, 0, EQ, a(cv), a(ires))
    assert ires[0] == 0, name
    f("test_all_vector")(ivars, 0, 0, EQ, a(cv), a(ires))
    assert ires[0] == 1, name                        # nelems 0: vacuously true
    f("test_any_vector")(ivars, 4, 0, EQ, a(cv), a(res))
    assert res[0] in (0, 1, 2), (name, res)
    cv = vals(0, 0, 0, 0)
    f("test_any_vector")(ivars, 4, 0, EQ, a(cv), a(res))
    assert res[0] == SIZE_MAX, (name, res)
    cv = vals(1, 0, 3, 0)
    f("test_some_vector")(ivars, 4, a(idx), 0, EQ, a(cv), a(res))
    assert res[0] == 2 and list(idx[:2]) == [0, 2], (name, res, idx)
    P.aclshmem_free(ivars)


def _make_local_check(name):
    def check():
        _local_families(name)

    check.__name__ = f"local_wait_test_{name}"
    return check


for _name in DTYPES:
    checks(_make_local_check(_name))


@checks
def any_fairness():
    """The ANY families called through the bindings do not starve an entry: with all four
    entries holding, a series of calls returns each of them (the C library starts every scan
    after the index the previous scan of the array returned), and status still masks."""
    ivars = P.aclshmem_calloc(4, 4)
    core.Buffer(ivars, 16).numpy(np.int32)[:] = 7
    res = np.zeros(1, np.uint64)
    cv = np.full(4, 7, np.int32)
    status = np.array([0, 1, 0, 0], np.int32)
    calls = {
        "test_any": lambda st: P.aclshmem_int32_test_any(ivars, 4, st, EQ, 7, res.ctypes.data),
        "test_any_vector": lambda st: P.aclshmem_int32_test_any_vector(ivars, 4, st, EQ, cv.ctypes.data,
                                                                      res.ctypes.data),
        "wait_until_any": lambda st: P.aclshmem_int32_wait_until_any(ivars, 4, st, EQ, 7, res.ctypes.data),
        "wait_until_any_vector": lambda st: P.aclshmem_int32_wait_until_any_vector(
            ivars, 4, st, EQ, cv.ctypes.data, res.ctypes.data),
    }
    for name, call in calls.items():
        seen = set()
        for _ in range(4):
            call(0)
            seen.add(int(res[0]))
        assert seen == {0, 1, 2, 3}, (name, seen)
        masked = set()
        for _ in range(100):
            call(status.ctypes.data)
            masked.add(int(res[0]))
        assert masked == {0, 2, 3}, (name, masked)
    P.aclshmem_free(ivars)


@checks
def blocking_waits_across_pes():
    """PE 1 writes each type's variable on PE 0 after a delay; PE 0 blocks until it
    changes."""
    import time

    me = P.my_pe()
    for name, dt in DTYPES.items():
        size = np.dtype(dt).itemsize
        ivar = P.aclshmem_calloc(2, size)
        P.aclshmem_barrier_all()
        if me == 1:
            time.sleep(0.02)
            getattr(P, f"aclshmem_{name}_p")(ivar, 7, 0)
            getattr(P, f"aclshmem_{name}_p")(ivar + size, 5, 0)
        else:
            getattr(P, f"aclshmem_{name}_wait_until")(ivar, EQ, 7)
            getattr(P, f"aclshmem_{name}_wait")(ivar + size, 0)
            assert core.Buffer(ivar, size).numpy(dt)[0] == 7
        P.aclshmem_barrier_all()
        P.aclshmem_free(ivar)


@checks
def signal_wait_until_across_pes():
    me = P.my_pe()
    sig = P.aclshmem_calloc(1, 4)
    data = P.aclshmem_calloc(16, 1)
    src = np.full(16, 3, np.uint8)
    P.aclshmem_barrier_all()
    if me == 1:
        P.aclshmemx_putmem_signal(data, src.ctypes.data, 16, sig, 11, P.SIGNAL_SET, 0)
    else:
        assert P.aclshmem_signal_wait_until(sig, GE, 10) == 11
        assert (core.Buffer(data, 16).numpy() == 3).all()
    P.aclshmem_barrier_all()
    P.aclshmem_free(data)
    P.aclshmem_free(sig)


@checks
def bad_comparison_is_reported():
    ivars = P.aclshmem_calloc(4, 4)
    res = np.zeros(1, np.uint64)
    ires = np.zeros(1, np.int32)
    before = P.aclshmemx_get_last_error()
    P.aclshmem_int32_test_any(ivars, 4, 0, 9, 0, res.ctypes.data)
    assert res[0] == SIZE_MAX
    after = P.aclshmemx_get_last_error()
    assert after and after != before
    P.aclshmem_int32_test(ivars, 17, 0, ires.ctypes.data)
    P.aclshmem_free(ivars)
