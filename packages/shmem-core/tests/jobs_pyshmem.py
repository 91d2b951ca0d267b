"""Checks of shmem._pyshmem run as one 4-PE job (see test_pyshmem.py)."""

import os

import numpy as np

from harness import Checks, raises
from shmem import _abi, _native, _pyshmem as P, _state, core
from shmem._pyshmem_types import is_valid_team

NPES = 4
checks = Checks()

# numpy dtypes of the C types of the RMA type table.
DTYPES = {
    "float": np.float32, "double": np.float64, "int8": np.int8, "int16": np.int16, "int32": np.int32,
    "int64": np.int64, "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
    "char": np.int8,
    # 16-bit floating-point storage types: the bindings take and return their bit patterns.
    "half": np.uint16, "bfloat16": np.uint16,
}


def main():
    return checks.run()


def ring():
    me, n = P.my_pe(), P.pe_count()
    return me, n, (me + 1) % n, (me - 1) % n


def view(addr, count, dtype=np.uint8):
    dt = np.dtype(dtype)
    return core.Buffer(addr, count * dt.itemsize).numpy(dt)


@checks
def identity_and_info():
    me, n, _, _ = ring()
    assert n == NPES
    assert P.my_pe(P.ACLSHMEM_TEAM_WORLD) == me and P.pe_count(P.ACLSHMEM_TEAM_WORLD) == n
    assert P.team_my_pe(0) == me and P.team_n_pes(0) == n
    assert P.my_pe(99) == -1 and P.pe_count(99) == -1 and P.team_my_pe(-1) == -1 and P.team_n_pes(2 ** 40) == -1
    raises(TypeError, P.team_my_pe, "0")
    raises(TypeError, P.my_pe, True)
    assert P.aclshmemx_init_status() is P.InitStatus.INITIALIZED
    assert P.aclshmem_info_get_version() == (1, 1)
    assert P.aclshmem_info_get_name().startswith("ACLSHMEM")
    assert P.get_ffts_config() == "0"
    assert P.aclshmemx_instance_ctx_get() == P.InstanceContext(0)
    assert P.aclshmemx_instance_ctx_set(0) == P.ACLSHMEM_SUCCESS
    assert P.aclshmemx_instance_ctx_set(9) != P.ACLSHMEM_SUCCESS  # never initialised
    assert P.aclshmemx_get_last_error()
    P.aclshmemx_clear_last_error()
    assert P.aclshmemx_get_last_error() == ""
    raises(ValueError, P.aclshmemx_instance_ctx_set, 255)
    raises(TypeError, P.aclshmemx_instance_ctx_set, True)
    raises(ValueError, P.aclshmemx_finalize, -1)
    raises(TypeError, P.aclshmemx_finalize, 0.0)


@checks
def describe_after_init():
    me, n, _, _ = ring()
    d = P.aclshmemx_describe(load=False)
    assert d["initialized"] is True and d["my_pe"] == me and d["n_pes"] == n
    assert d["transports_in_use"] == ["shm"]  # one node: the plug-in is never needed
    assert d["ucx_plugin"]["status"] in ("not_loaded_yet", "disabled"), d["ucx_plugin"]
    assert d["version"] == P.aclshmem_info_get_name().split("v")[-1]
    loaded = _native.library_path()  # a path, or the soname the system loader found
    assert os.path.basename(d["library_path"]).startswith("libaclshmem.so"), d["library_path"]
    if os.path.isabs(loaded):
        assert os.path.samefile(d["library_path"], loaded), (d["library_path"], loaded)


@checks
def memory():
    me, n, _, _ = ring()
    p = P.aclshmem_malloc(128)
    c = P.aclshmem_calloc(4, 8)
    a = P.aclshmem_align(256, 64)
    assert p and c and a and a % 256 == 0
    assert not view(c, 32).any()
    assert P.aclshmem_ptr(p, me) == p
    assert P.aclshmem_ptr(p, n) == 0 and P.aclshmem_ptr(p, -1) == 0 and P.aclshmem_ptr(8, 0) == 0
    raises(RuntimeError, P.aclshmem_malloc, 0)
    raises(RuntimeError, P.aclshmem_calloc, 0, 8)
    raises(RuntimeError, P.aclshmem_align, 3, 64)
    raises(RuntimeError, P.aclshmem_malloc, 1 << 42)
    raises(TypeError, P.aclshmem_malloc, 1.5)
    raises(OverflowError, P.aclshmem_malloc, -1)
    for x in (a, c, p):
        P.aclshmem_free(x)
    P.aclshmem_free(0)  # NULL: nothing
    dev = P.aclshmemx_get_heap_base()
    assert dev == P.aclshmemx_get_heap_base(P.MemType.DEVICE_SIDE) != 0
    host = P.aclshmemx_get_heap_base(P.MemType.HOST_SIDE)
    assert host and host != dev
    for mt in P.MemType:
        x = P.aclshmemx_malloc(64, mt)
        assert x
        P.aclshmemx_free(x, mt)
    x = P.aclshmemx_calloc(2, 16, P.MemType.HOST_SIDE)
    assert x and not view(x, 32).any()
    P.aclshmemx_free(x, P.MemType.HOST_SIDE)
    x = P.aclshmemx_align(128, 8)
    assert x % 128 == 0
    P.aclshmemx_free(x)
    assert P.aclshmemx_malloc(0) == 0
    assert P.aclshmemx_align(3, 8) == 0
    assert P.aclshmemx_malloc(1 << 42, P.MemType.DEVICE_SIDE) == 0
    assert P.aclshmemx_calloc(0, 8) == 0
    raises(ValueError, P.aclshmemx_malloc, 8, 5)
    raises(TypeError, P.aclshmemx_malloc, 8, "DEVICE_SIDE")


@checks
def teams():
    me, n, _, _ = ring()
    t = P.team_split_strided(0, 1, 1, n - 1)  # PEs 1 .. n-1
    if me >= 1:
        assert t > 0 and P.team_my_pe(t) == me - 1 and P.team_n_pes(t) == n - 1
        assert P.my_pe(t) == me - 1 and P.pe_count(t) == n - 1
        assert P.team_translate_pe(t, 0, 0) == 1 and P.team_translate_pe(0, me, t) == me - 1
        cfg = P.aclshmem_team_get_config(t)
        assert isinstance(cfg, P.TeamConfig) and isinstance(cfg.num_contexts, int)
    else:
        assert t == P.ACLSHMEM_TEAM_INVALID
        assert P.team_translate_pe(0, 0, 5) == -1
    P.team_destroy(t)
    if me >= 1:
        assert P.team_n_pes(t) == -1
    x, y = P.team_split_2d(0, 2)
    assert P.team_n_pes(x) == 2 and P.team_n_pes(y) == n // 2
    assert P.team_my_pe(x) == me % 2 and P.team_my_pe(y) == me // 2
    P.team_destroy(x)
    P.team_destroy(y)
    assert isinstance(P.aclshmem_team_get_config(0), P.TeamConfig)
    raises(RuntimeError, P.team_split_strided, 0, 0, 0, 2)
    raises(RuntimeError, P.team_split_strided, 0, 0, 1, n + 1)
    raises(RuntimeError, P.team_split_strided, 99, 0, 1, 1)
    raises(RuntimeError, P.team_split_2d, 0, 0)
    raises(RuntimeError, P.aclshmem_team_get_config, 99)
    assert P.team_translate_pe(0, n, 0) == -1 and P.team_translate_pe(99, 0, 0) == -1
    P.team_destroy(-1)


@checks
def team_split_mismatch():
    """PEs that ask for different splits of one parent: every PE raises AclshmemError with
    the library's message naming both requests, and no team is created."""
    me, n, _, _ = ring()
    start, size = (0, 2) if me == 0 else (1, 1)  # PE 0 asks for {0, 1}, the others for {1}
    err = raises(core.AclshmemError, P.team_split_strided, 0, start, 1, size, match="disagree")
    theirs = "PE 1 asked for (start 1, stride 1, size 1)" if me == 0 else "PE 0 asked for (start 0, stride 1, size 2)"
    mine = f"PE {me} for (start {start}, stride 1, size {size})"
    assert theirs in str(err) and mine in str(err) and "no team was created" in str(err), str(err)
    assert err.code == P.ACLSHMEM_INVALID_PARAM and isinstance(err, RuntimeError)
    err = raises(core.AclshmemError, P.team_split_2d, 0, 1 if me == 0 else 2, match="disagree")
    assert "(x_range 1)" in str(err) and "(x_range 2)" in str(err), str(err)
    # Nothing was created: the next split every PE agrees on gets the lowest id.
    t = P.team_split_strided(0, 0, 1, n)
    assert t == 1 and P.team_n_pes(t) == n
    P.aclshmem_barrier(t)
    P.team_destroy(t)


@checks
def barriers_and_handles():
    me, n, _, _ = ring()
    P.aclshmem_barrier(0)
    P.aclshmem_barrier_all()
    P.aclshmem_sync(0)
    P.aclshmem_sync_all()
    P.aclshmemx_barrier_on_stream(0, 0)
    P.aclshmemx_barrier_all_on_stream(0)
    h = P.Handle()
    assert h.team_id == P.ACLSHMEM_TEAM_WORLD
    P.aclshmemx_handle_wait(h, 0)
    assert P.aclshmemx_stream_synchronize(0) == P.ACLSHMEM_SUCCESS
    for bad in (7, True, -1, 2048):
        raises(ValueError, P.aclshmem_barrier, bad)
        raises(ValueError, P.aclshmem_sync, bad)
        raises(ValueError, P.aclshmemx_barrier_on_stream, bad, 0)
        raises(ValueError, P.Handle, bad)
    raises(TypeError, P.aclshmemx_barrier_all_on_stream, None)
    raises(TypeError, P.aclshmemx_handle_wait, 0, 0)
    assert is_valid_team(0) and not is_valid_team(True) and not is_valid_team(5)
    t = P.team_split_strided(0, 0, 1, 2)
    if me < 2:
        stale = P.Handle(t)
        P.aclshmemx_handle_wait(stale, 0)
        P.aclshmemx_stream_synchronize(0)
        P.team_destroy(t)
        raises(ValueError, P.aclshmemx_handle_wait, stale, 0)


@checks
def putmem_getmem_and_nbi():
    me, n, right, left = ring()
    src = P.aclshmem_malloc(64)
    dst = P.aclshmem_calloc(64, 1)
    view(src, 64)[:] = me
    P.aclshmem_barrier_all()
    P.aclshmem_putmem(dst, src, 64, right)
    P.aclshmem_barrier_all()
    assert (view(dst, 64) == left).all()
    local = np.zeros(64, np.uint8)
    P.aclshmem_getmem(local.ctypes.data, src, 64, right)
    assert (local == right).all()
    P.aclshmem_barrier_all()  # the left neighbour has read src
    view(src, 64)[:] = 100 + me
    P.aclshmem_barrier_all()
    P.aclshmem_putmem_nbi(dst, src, 32, right)
    P.aclshmem_quiet()
    P.aclshmem_fence()
    P.aclshmem_barrier_all()
    assert (view(dst, 64)[:32] == 100 + left).all() and (view(dst, 64)[32:] == left).all()
    P.aclshmem_getmem_nbi(local.ctypes.data, src, 64, left)
    P.aclshmem_quiet()
    assert (local == 100 + left).all()
    before = P.aclshmemx_get_last_error()
    P.aclshmem_putmem(dst, src, 8, n)  # a bad PE: the call records an error
    after = P.aclshmemx_get_last_error()
    assert after and after != before
    raises(ValueError, P.aclshmem_putmem, -1, src, 8, 0)
    raises(TypeError, P.aclshmem_putmem, dst, 1.5, 8, 0)
    raises(TypeError, P.aclshmem_getmem, dst, src, "8", 0)
    P.aclshmem_barrier_all()
    P.aclshmem_free(dst)
    P.aclshmem_free(src)


@checks
def templated_calls_check_what_their_fast_path_does_not_take():
    """The templated functions hand exact ints to cffi as they are; everything else goes
    through the converters, which keep the rules of the API: no bool as an address or
    stream, no float-like value as an integer, None is NULL, index-like ints are taken."""
    me, n, right, left = ring()
    src = P.aclshmem_malloc(16)
    dst = P.aclshmem_calloc(16, 1)
    view(src, 16)[:] = 7 + me
    P.aclshmem_barrier_all()
    raises(TypeError, P.aclshmem_putmem, True, src, 8, right, match="bool")
    raises(TypeError, P.aclshmem_putmem, dst, False, 8, right, match="bool")
    raises(TypeError, P.aclshmem_putmem, dst, src, np.float32(8.0), right)
    raises(TypeError, P.aclshmem_putmem, dst, src, 8, np.float64(1.0))
    raises(OverflowError, P.aclshmem_putmem, dst, src, -8, right)
    raises(OverflowError, P.aclshmem_putmem, dst, src, 8, 2 ** 40)
    raises(ValueError, P.aclshmem_putmem, 2 ** 64, src, 8, right)
    raises(TypeError, P.aclshmemx_putmem_on_stream, dst, src, 8, right, True)
    raises(TypeError, P.aclshmem_int32_p, dst, 1.0, right)
    raises(TypeError, P.aclshmem_double_p, dst, "1.0", right)
    P.aclshmemx_clear_last_error()
    P.aclshmem_putmem(dst, None, 0, right)  # nothing to copy: NULL is fine
    assert P.aclshmemx_get_last_error() == ""
    P.aclshmem_putmem(np.uint64(dst), np.int64(src), np.int32(8), np.int8(right))  # index-like ints
    P.aclshmem_barrier_all()
    assert (view(dst, 8) == 7 + left).all()
    P.aclshmem_barrier_all()  # every PE has looked before the next writes
    P.aclshmem_char_p(dst, 65, right)  # an int value: through the converter
    P.aclshmem_char_p(dst + 1, b"B", right)  # a 1-byte bytes: as cffi takes it
    P.aclshmem_double_p(dst + 8, 2, right)  # an int for a double
    P.aclshmem_barrier_all()
    assert P.aclshmem_char_g(dst, me) == 65 and P.aclshmem_char_g(dst + 1, me) == 66
    assert P.aclshmem_double_g(dst + 8, me) == 2.0
    P.aclshmem_barrier_all()
    P.aclshmem_free(dst)
    P.aclshmem_free(src)


@checks
def last_error_flag_is_the_threads_own_buffer():
    """shmem.core tells a failed void call from the first byte of the thread's error
    buffer: aclshmemx_get_last_error must return that buffer, the same every time, one
    per thread."""
    import threading

    ffi, lib = _native.load()
    flag = _state.last_error_flag()
    address = int(ffi.cast("uintptr_t", flag))
    assert address == int(ffi.cast("uintptr_t", lib.aclshmemx_get_last_error()))
    assert address == int(ffi.cast("uintptr_t", lib.aclshmemx_get_last_error()))
    flag[0] = 0
    assert P.aclshmemx_get_last_error() == ""
    P.aclshmem_putmem(P.aclshmemx_get_heap_base(), P.aclshmemx_get_heap_base(), 8, P.pe_count())  # bad PE
    assert flag[0] != 0 and P.aclshmemx_get_last_error()
    seen = []
    t = threading.Thread(target=lambda: seen.append((int(ffi.cast("uintptr_t", _state.last_error_flag())),
                                                     _state.last_error_flag()[0])))
    t.start()
    t.join()
    assert seen[0][0] != address and seen[0][1] == 0, seen
    flag[0] = 0
    assert P.aclshmemx_get_last_error() == ""


@checks
def typed_rma_every_type():
    me, n, right, left = ring()
    for name, dt in DTYPES.items():
        size = np.dtype(dt).itemsize
        sym = P.aclshmem_calloc(16, size)
        sym2 = P.aclshmem_calloc(16, size)
        src = (np.arange(16) + me).astype(dt)
        P.aclshmem_barrier_all()
        getattr(P, f"aclshmem_{name}_put")(sym, src.ctypes.data, 16, right)
        getattr(P, f"aclshmem_{name}_put_nbi")(sym2, src.ctypes.data, 8, right)
        P.aclshmem_quiet()
        P.aclshmem_barrier_all()
        assert (view(sym, 16, dt) == (np.arange(16) + left).astype(dt)).all(), name
        assert (view(sym2, 8, dt) == (np.arange(8) + left).astype(dt)).all(), name
        loc = np.zeros(16, dt)
        getattr(P, f"aclshmem_{name}_get")(loc.ctypes.data, sym, 16, right)
        assert (loc == src).all(), name
        loc[:] = 0
        getattr(P, f"aclshmem_{name}_get_nbi")(loc.ctypes.data, sym2, 8, right)
        P.aclshmem_quiet()
        assert (loc[:8] == src[:8]).all(), name
        P.aclshmem_barrier_all()
        getattr(P, f"aclshmem_{name}_p")(sym, 42, right)
        P.aclshmem_barrier_all()
        assert view(sym, 1, dt)[0] == 42, name
        got = getattr(P, f"aclshmem_{name}_g")(sym, left)
        assert got == 42, (name, got)
        P.aclshmem_barrier_all()
        # strided: every second element of the target gets src[0:4]
        view(sym, 16, dt)[:] = 0
        P.aclshmem_barrier_all()
        getattr(P, f"aclshmem_{name}_iput")(sym, src.ctypes.data, 2, 1, 4, right)
        P.aclshmem_barrier_all()
        expect = np.zeros(16, dt)
        expect[0:8:2] = (np.arange(4) + left).astype(dt)
        assert (view(sym, 16, dt) == expect).all(), name
        loc[:] = 0
        getattr(P, f"aclshmem_{name}_iget")(loc.ctypes.data, sym, 1, 2, 4, right)
        assert (loc[:4] == src[:4]).all(), name
        P.aclshmem_barrier_all()
        P.aclshmem_free(sym2)
        P.aclshmem_free(sym)
    raises(OverflowError, P.aclshmem_char_p, 8, 300, 0)


@checks
def sized_rma_every_width():
    me, n, right, left = ring()
    for bits in _native.RMA_SIZES:
        width = bits // 8
        sym = P.aclshmem_calloc(8, width)
        src = np.frombuffer(bytes((me * 16 + i) % 256 for i in range(8 * width)), np.uint8).copy()
        P.aclshmem_barrier_all()
        getattr(P, f"aclshmem_put{bits}")(sym, src.ctypes.data, 4, right)  # 4 elements of `bits`
        P.aclshmem_barrier_all()
        mine = view(sym, 8 * width)
        exp_left = np.frombuffer(bytes((left * 16 + i) % 256 for i in range(8 * width)), np.uint8)
        assert (mine[:4 * width] == exp_left[:4 * width]).all() and not mine[4 * width:].any(), bits
        P.aclshmem_barrier_all()
        getattr(P, f"aclshmem_put{bits}_nbi")(sym, src.ctypes.data, 8, right)
        P.aclshmem_quiet()
        P.aclshmem_barrier_all()
        assert (view(sym, 8 * width) == exp_left).all(), bits
        loc = np.zeros(8 * width, np.uint8)
        getattr(P, f"aclshmem_get{bits}")(loc.ctypes.data, sym, 8, right)
        assert (loc == src).all(), bits
        loc[:] = 0
        getattr(P, f"aclshmem_get{bits}_nbi")(loc.ctypes.data, sym, 2, right)
        P.aclshmem_quiet()
        assert (loc[:2 * width] == src[:2 * width]).all() and not loc[2 * width:].any(), bits
        P.aclshmem_barrier_all()
        view(sym, 8 * width)[:] = 0
        P.aclshmem_barrier_all()
        getattr(P, f"aclshmem_iput{bits}")(sym, src.ctypes.data, 2, 1, 3, right)
        P.aclshmem_barrier_all()
        got = view(sym, 8 * width).reshape(8, width)
        exp = exp_left.reshape(8, width)
        for i in range(3):
            assert (got[2 * i] == exp[i]).all(), bits
        loc[:] = 0
        getattr(P, f"aclshmem_iget{bits}")(loc.ctypes.data, sym, 1, 2, 3, right)
        mine_right = loc.reshape(8, width)
        for i in range(3):
            assert (mine_right[i] == src.reshape(8, width)[i]).all(), bits
        P.aclshmem_barrier_all()
        P.aclshmem_free(sym)


@checks
def put_with_signal():
    me, n, right, left = ring()
    data = P.aclshmem_calloc(64, 1)
    sig = P.aclshmem_calloc(4, 4)
    src = np.full(64, me + 1, np.uint8)
    P.aclshmem_barrier_all()
    P.aclshmemx_putmem_signal(data, src.ctypes.data, 64, sig, 3, P.SignalOp.SIGNAL_SET, right)
    assert P.aclshmem_signal_wait_until(sig, P.CmpOp.CMP_EQ, 3) == 3
    assert (view(data, 64) == left + 1).all()
    P.aclshmemx_putmem_signal_nbi(data, src.ctypes.data, 8, sig + 4, 2, P.SignalOp.SIGNAL_ADD, right)
    P.aclshmem_quiet()
    assert P.aclshmem_signal_wait_until(sig + 4, P.CmpOp.CMP_GE, 2) == 2
    P.aclshmem_barrier_all()
    for k, bits in enumerate(_native.RMA_SIZES):
        w = bits // 8
        view(sig, 4, np.int32)[:] = 0
        P.aclshmem_barrier_all()
        getattr(P, f"aclshmem_put{bits}_signal")(data, src.ctypes.data, 2, sig, 10 + k, P.SIGNAL_SET, right)
        getattr(P, f"aclshmem_put{bits}_signal_nbi")(data, src.ctypes.data, 1, sig + 4, 5, P.SIGNAL_ADD, right)
        P.aclshmem_quiet()
        assert P.aclshmem_signal_wait_until(sig, P.CMP_EQ, 10 + k) == 10 + k
        assert P.aclshmem_signal_wait_until(sig + 4, P.CMP_EQ, 5) == 5
        assert (view(data, 2 * w) == left + 1).all()
        P.aclshmem_barrier_all()
        # The seed's names of the same family: aclshmemx_put<BITS>_signal[_nbi].
        view(data, 64)[:] = 0
        P.aclshmem_barrier_all()
        getattr(P, f"aclshmemx_put{bits}_signal")(data, src.ctypes.data, 3, sig, 30 + k, P.SIGNAL_SET, right)
        getattr(P, f"aclshmemx_put{bits}_signal_nbi")(data, src.ctypes.data, 1, sig + 4, 2, P.SIGNAL_ADD, right)
        P.aclshmem_quiet()
        assert P.aclshmem_signal_wait_until(sig, P.CMP_EQ, 30 + k) == 30 + k
        assert P.aclshmem_signal_wait_until(sig + 4, P.CMP_EQ, 7) == 7
        assert (view(data, 3 * w) == left + 1).all() and not view(data, 64)[3 * w:].any(), bits
        P.aclshmem_barrier_all()
    for k, name in enumerate(DTYPES):
        dt = DTYPES[name]
        view(sig, 4, np.int32)[:] = 0
        typed_src = np.full(4, 9, dt)
        P.aclshmem_barrier_all()
        getattr(P, f"aclshmem_{name}_put_signal")(data, typed_src.ctypes.data, 4, sig, 20 + k, P.SIGNAL_SET, right)
        getattr(P, f"aclshmem_{name}_put_signal_nbi")(data, typed_src.ctypes.data, 1, sig + 4, 1, P.SIGNAL_ADD,
                                                      right)
        P.aclshmem_quiet()
        assert P.aclshmem_signal_wait_until(sig, P.CMP_EQ, 20 + k) == 20 + k
        assert P.aclshmem_signal_wait_until(sig + 4, P.CMP_EQ, 1) == 1
        assert (view(data, 4, dt) == 9).all(), name
        P.aclshmem_barrier_all()
    P.aclshmem_free(sig)
    P.aclshmem_free(data)


@checks
def on_stream_operations():
    me, n, right, left = ring()
    src = P.aclshmem_malloc(64)
    dst = P.aclshmem_calloc(64, 1)
    sig = P.aclshmem_calloc(1, 4)
    view(src, 64)[:] = 50 + me
    s = P.aclshmemx_stream_create()
    assert isinstance(s, int) and s
    P.aclshmem_barrier_all()
    P.aclshmemx_putmem_on_stream(dst, src, 64, right, s)
    P.aclshmemx_quiet_on_stream(s)
    assert P.aclshmemx_stream_synchronize(s) == P.ACLSHMEM_SUCCESS
    P.aclshmem_barrier_all()
    assert (view(dst, 64) == 50 + left).all()
    local = np.zeros(64, np.uint8)
    P.aclshmemx_getmem_on_stream(local.ctypes.data, src, 64, right, 0)
    assert P.aclshmemx_stream_synchronize(0) == P.ACLSHMEM_SUCCESS
    assert (local == 50 + right).all()
    P.aclshmemx_signal_op_on_stream(sig, 9, P.SignalOp.SIGNAL_SET, right, s)
    P.aclshmemx_signal_wait_until_on_stream(sig, P.CmpOp.CMP_EQ, 9, s)
    assert P.aclshmemx_stream_synchronize(s) == P.ACLSHMEM_SUCCESS
    assert view(sig, 1, np.int32)[0] == 9
    P.aclshmemx_barrier_all_on_stream(s)
    P.aclshmemx_barrier_on_stream(0, s)
    P.aclshmemx_handle_wait(P.Handle(0), s)
    assert P.aclshmemx_stream_synchronize(s) == P.ACLSHMEM_SUCCESS
    for fn, args in ((P.aclshmemx_putmem_on_stream, (dst, src, 8, right)),
                     (P.aclshmemx_getmem_on_stream, (dst, src, 8, right)),
                     (P.aclshmemx_signal_op_on_stream, (sig, 1, 0, right)),
                     (P.aclshmemx_signal_wait_until_on_stream, (sig, 0, 9))):
        raises(TypeError, fn, *args, None)
    raises(TypeError, P.aclshmemx_quiet_on_stream, None)
    raises(TypeError, P.aclshmemx_stream_synchronize, None)
    assert P.aclshmemx_stream_destroy(s) == P.ACLSHMEM_SUCCESS
    P.aclshmem_barrier_all()
    for x in (sig, dst, src):
        P.aclshmem_free(x)


@checks
def engine_configs_and_qp_num():
    assert P.aclshmemx_set_mte_config(0, 16 * 1024, 0) == P.ACLSHMEM_SUCCESS
    assert P.aclshmemx_set_sdma_config(191 * 1024, 64, 0) == P.ACLSHMEM_SUCCESS
    assert P.aclshmemx_set_rdma_config(190 * 1024, 128, 0) == P.ACLSHMEM_SUCCESS
    assert P.aclshmemx_set_udma_config(189 * 1024, 128, 0) == P.ACLSHMEM_SUCCESS
    assert P.aclshmemx_set_rdma_config(0, 127, 0) == P.ACLSHMEM_INVALID_VALUE
    assert P.aclshmemx_set_udma_config(0, 64, 0) == P.ACLSHMEM_INVALID_VALUE
    raises(OverflowError, P.aclshmemx_set_mte_config, -1, 0, 0)
    assert P.aclshmemx_get_engine_config(P.OpEngineType.SDMA) == (191 * 1024, 64, 0)
    raises(ValueError, P.aclshmemx_get_engine_config, 3)
    raises(TypeError, P.aclshmemx_get_engine_config, "MTE")
    # The cpu platform has no queue-pair engines; a live instance refuses changes anyway.
    assert P.aclshmemx_set_qp_num(P.OpEngineType.ROCE, 4) == P.ACLSHMEM_NOT_SUPPORTED
    assert P.aclshmemx_set_qp_num(P.OpEngineType.MTE, 4) == P.ACLSHMEM_NOT_SUPPORTED
    assert P.aclshmemx_set_qp_num(P.OpEngineType.UDMA, 0) == P.ACLSHMEM_INVALID_VALUE
    assert P.aclshmemx_set_qp_num(P.OpEngineType.UDMA, P.ACLSHMEM_MAX_QP_NUM + 1) == P.ACLSHMEM_INVALID_VALUE
    raises(ValueError, P.aclshmemx_set_qp_num, 3, 4)
    raises(TypeError, P.aclshmemx_set_qp_num, "ROCE", 4)


@checks
def tls_settings_refused_while_initialised():
    assert P.set_conf_store_tls(False, "") == P.ACLSHMEM_NOT_SUPPORTED
    assert P.set_conf_store_tls_key("key", "pw", lambda c: c) == P.ACLSHMEM_NOT_SUPPORTED
    raises(TypeError, P.set_conf_store_tls, True, 5)
    raises(TypeError, P.set_conf_store_tls_key, "key", "pw", 5)


@checks
def logging():
    lines = []
    assert P.set_extern_logger(lambda level, msg: lines.append((level, msg))) == P.ACLSHMEM_SUCCESS
    assert P.aclshmemx_instance_ctx_set(17) != P.ACLSHMEM_SUCCESS  # an error is logged
    assert P.set_extern_logger(None) == P.ACLSHMEM_SUCCESS
    assert lines, "the extern logger got no line"
    level, msg = lines[-1]
    assert isinstance(level, int) and level >= 2 and isinstance(msg, str) and "17" in msg
    assert P.set_log_level(3) == P.ACLSHMEM_SUCCESS
    assert P.set_log_level(0) == P.ACLSHMEM_SUCCESS
    assert P.set_log_level(3) == P.ACLSHMEM_SUCCESS
    assert P.set_log_level(99) != P.ACLSHMEM_SUCCESS
    raises(TypeError, P.set_extern_logger, 5)
    raises(TypeError, P.set_log_level, "DEBUG")


@checks
def profiling_off():
    assert P.aclshmemx_get_prof() is None
    assert P.aclshmemx_get_prof(verbose=False) is None
    P.aclshmemx_show_prof()
    P.aclshmemx_prof_start(1)
    P.aclshmemx_prof_end(1)
    assert P.aclshmemx_block_idx() == 0 and P.aclshmemx_block_num() == 1


# ---------------------------------------------------------------------------
# Issue 12: AMOs, host signal_op, barrier_vec
# ---------------------------------------------------------------------------

# The AMO types: NumPy type of the value, or None for bfloat16 (no NumPy type).
AMO_NUMPY = {
    "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64, "uint8": np.uint8,
    "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64, "float": np.float32, "double": np.float64,
    "half": np.float16, "bfloat16": None,
}


def to_c(tname, x):
    """x as the binding takes it: half and bfloat16 as bit patterns (x is exact in both)."""
    if tname == "half":
        return int(np.float16(x).view(np.uint16))
    if tname == "bfloat16":
        return int(np.float32(x).view(np.uint32)) >> 16
    return x


def from_c(tname, raw):
    if tname == "half":
        return float(np.uint16(raw).view(np.float16))
    if tname == "bfloat16":
        return float(np.uint32(int(raw) << 16).view(np.float32))
    return raw


def amo(tname, op):
    return getattr(P, f"aclshmem_{tname}_atomic_{op}")


@checks
def amo_every_operation_and_type():
    """Every PE works on its right neighbour's element, so every result is known."""
    me, n, right, left = ring()
    generated = set(P.GENERATED)
    assert sorted(AMO_NUMPY) == sorted({tname for _, tname in _abi.ATOMICS})
    sym = P.aclshmem_calloc(4, 8)
    for tname in AMO_NUMPY:
        def c(x, tname=tname):
            return to_c(tname, x)

        def v(raw, tname=tname):
            return from_c(tname, raw)

        has = lambda op, tname=tname: f"aclshmem_{tname}_atomic_{op}" in generated  # noqa: E731
        base = 10 + me
        amo(tname, "set")(sym, c(base), right)
        assert v(amo(tname, "fetch")(sym, right)) == base, tname
        assert v(amo(tname, "fetch_add")(sym, c(2), right)) == base, tname
        amo(tname, "add")(sym, c(3), right)
        assert v(amo(tname, "swap")(sym, c(40), right)) == base + 5, tname
        expected = 40
        if has("compare_swap"):
            assert v(amo(tname, "compare_swap")(sym, c(39), c(50), right)) == 40, tname  # no swap
            assert v(amo(tname, "compare_swap")(sym, c(40), c(50), right)) == 40, tname  # swapped
            expected = 50
        if has("inc"):
            amo(tname, "inc")(sym, right)
            assert amo(tname, "fetch_inc")(sym, right) == 51, tname
            assert amo(tname, "fetch_and")(sym, 0b111100, right) == 52, tname
            amo(tname, "and")(sym, 0b011111, right)
            assert amo(tname, "fetch_or")(sym, 0b1, right) == 52 & 0b111100 & 0b011111, tname
            amo(tname, "or")(sym, 64, right)
            assert amo(tname, "fetch_xor")(sym, 0b11, right) == 85, tname
            amo(tname, "xor")(sym, 0b100, right)
            expected = 85 ^ 0b11 ^ 0b100
        P.aclshmem_barrier_all()  # left has finished with my element
        storage = np.uint16 if tname in ("half", "bfloat16") else AMO_NUMPY[tname]  # bit patterns
        assert v(view(sym, 1, storage)[0].item()) == expected, (tname, view(sym, 1, storage)[0])
        P.aclshmem_barrier_all()
    # 0.5 + 0.25 and 1 + 2**-11 round as in the type (half: to even, so 1.0).
    amo("half", "set")(sym, to_c("half", 1.0), right)
    assert from_c("half", amo("half", "fetch_add")(sym, to_c("half", 2.0 ** -11), right)) == 1.0
    assert from_c("half", amo("half", "fetch")(sym, right)) == 1.0
    amo("bfloat16", "set")(sym, to_c("bfloat16", 256.0), right)
    amo("bfloat16", "add")(sym, to_c("bfloat16", 3.0), right)  # 259 is a tie: to even, 260
    assert from_c("bfloat16", amo("bfloat16", "fetch")(sym, right)) == 260.0
    P.aclshmem_barrier_all()
    P.aclshmem_free(sym)


@checks
def amo_bad_input():
    me, n, right, left = ring()
    sym = P.aclshmem_calloc(4, 8)
    local = np.zeros(4, np.int64)
    for tname in AMO_NUMPY:
        for args, why in (((sym, to_c(tname, 1), n), "a PE past the last"),
                          ((sym, to_c(tname, 1), -1), "a negative PE"),
                          ((local.ctypes.data, to_c(tname, 1), right), "an address outside the heap"),
                          ((sym + 1, to_c(tname, 1), right), "a misaligned address")):
            if why == "a misaligned address" and tname in ("int8", "uint8"):
                continue
            P.aclshmemx_clear_last_error()
            assert amo(tname, "fetch_add")(*args) == 0, (tname, why)
            assert P.aclshmemx_get_last_error(), (tname, why)
            P.aclshmemx_clear_last_error()
            amo(tname, "set")(*args)
            assert P.aclshmemx_get_last_error(), (tname, why)
        raises(TypeError, amo(tname, "add"), sym, "1", right)
        raises(TypeError, amo(tname, "fetch"), sym, 1.5)
        raises(ValueError, amo(tname, "swap"), -5, to_c(tname, 1), right)
    assert not local.any() and not view(sym, 32).any()  # nothing was changed
    raises(OverflowError, P.aclshmem_int8_atomic_add, sym, 128, right)
    raises(OverflowError, P.aclshmem_uint32_atomic_add, sym, -1, right)
    raises(TypeError, P.aclshmem_int64_atomic_add, sym, 1.0, right)
    raises(TypeError, P.aclshmem_half_atomic_add, sym, 1.5, right, match="bit pattern")
    raises(OverflowError, P.aclshmem_bfloat16_atomic_set, sym, 0x10000, right)
    raises(OverflowError, P.aclshmem_half_p, sym, -1, right)
    P.aclshmem_barrier_all()
    P.aclshmem_free(sym)


@checks
def host_signal_op_and_barrier_vec():
    me, n, right, left = ring()
    sig = P.aclshmem_calloc(2, 4)
    data = P.aclshmem_calloc(8, 1)
    P.aclshmem_barrier_all()
    P.aclshmem_uint8_p(data, 100 + me, right)
    P.aclshmemx_signal_op(sig, 5, P.SignalOp.SIGNAL_ADD, right)  # ordered after the put
    assert P.aclshmem_signal_wait_until(sig, P.CMP_EQ, 5) == 5
    assert view(data, 1)[0] == 100 + left
    P.aclshmemx_signal_op(sig + 4, 77, P.SIGNAL_SET, right)
    assert P.aclshmem_signal_wait_until(sig + 4, P.CMP_EQ, 77) == 77
    P.aclshmemx_clear_last_error()
    P.aclshmemx_signal_op(sig, 1, P.SIGNAL_ADD, n)
    assert P.aclshmemx_get_last_error()
    P.aclshmemx_clear_last_error()
    P.aclshmemx_signal_op(sig, 1, 9, right)  # not a signal operation
    assert P.aclshmemx_get_last_error()
    raises(TypeError, P.aclshmemx_signal_op, sig, 1.0, P.SIGNAL_SET, right)
    # barrier_vec is a barrier: a value put before it is there after it.
    P.aclshmemx_barrier_vec(P.ACLSHMEM_TEAM_WORLD)
    P.aclshmem_uint8_p(data + 1, 200 + me, right)
    P.aclshmemx_barrier_vec(0)
    assert view(data, 2)[1] == 200 + left
    P.aclshmem_uint8_p(data + 2, 50 + me, left)
    P.aclshmemx_barrier_all_vec()
    assert view(data, 3)[2] == 50 + right
    raises(ValueError, P.aclshmemx_barrier_vec, 99)
    raises(ValueError, P.aclshmemx_barrier_vec, True)
    P.aclshmem_barrier_all()
    P.aclshmem_free(data)
    P.aclshmem_free(sig)
