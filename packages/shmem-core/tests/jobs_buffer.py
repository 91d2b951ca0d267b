"""Checks of Buffer as a Python buffer (buffer protocol, NumPy, DLPack) and of free with
live views, run as one 2-PE job (see test_buffer_protocol.py)."""

import gc
import threading
import warnings

import numpy as np

from harness import Checks, raises
from shmem import core
from shmem.core import AclshmemInvalid, AclshmemWarning

NPES = 2
checks = Checks()


def main():
    return checks.run()


def quiet_free(buf):
    """free, returning the AclshmemWarnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        core.free(buf)
    return [str(w.message) for w in caught if issubclass(w.category, AclshmemWarning)]


@checks
def memoryview_indexing_and_slicing():
    b = core.buffer(64)
    mv = memoryview(b)
    assert (mv.format, mv.itemsize, mv.ndim, mv.nbytes, mv.readonly) == ("B", 1, 1, 64, False)
    mv[0] = 7  # raised NotImplementedError ("unsupported format <B") before
    assert mv[0] == 7 and b[0] == 7 and b[-64] == 7
    mv[1:4] = b"xyz"
    assert bytes(mv[1:4]) == b"xyz" and bytes(b)[1:4] == b"xyz" and mv[1:4].tolist() == [120, 121, 122]
    b[63] = 255
    assert mv[-1] == 255 and len(b) == 64 and list(b)[-1] == 255
    assert mv.cast("I")[0] == int.from_bytes(bytes(b)[:4], "little")
    del mv
    core.free(b)


@checks
def slices_are_views():
    b = core.buffer(32)
    s = b[8:16]
    assert isinstance(s, core.Buffer) and (s.addr, s.length) == (b.addr + 8, 8)
    assert not s.owned and s.instance_id == b.instance_id and "view" in repr(s)
    s[0] = 42
    s[1:3] = b"\x01\x02"
    assert b[8] == 42 and b[9:11].numpy().tolist() == [1, 2]
    assert b[-4:].addr == b.addr + 28
    raises(AclshmemInvalid, core.free, s, match="own")
    raises(AclshmemInvalid, b.__getitem__, slice(0, 8, 2), match="contiguous")
    raises(AclshmemInvalid, b.__getitem__, slice(5, 5), match="empty")
    ext = core.Buffer(b.addr, 32)[4:8]
    assert ext.instance_id is None and not ext.owned  # a slice of a descriptor is a descriptor
    core.free(b)
    assert s.release_called
    raises(AclshmemInvalid, s.__getitem__, 0, match="freed")


@checks
def element_access_bad_input():
    b = core.buffer(16)
    raises(IndexError, b.__getitem__, 16)
    raises(IndexError, b.__getitem__, -17)
    raises(TypeError, b.__getitem__, "0")
    raises(TypeError, b.__getitem__, 1.0)
    for bad in (256, -1, 1.5, True, b"a", None):
        raises(AclshmemInvalid, b.__setitem__, 0, bad)
    raises(AclshmemInvalid, b.__setitem__, slice(0, 4), b"abc", match="3 bytes")
    raises(AclshmemInvalid, b.__setitem__, slice(0, 4), 1234, match="bytes-like")
    raises(AclshmemInvalid, b.view, "Z")
    raises(AclshmemInvalid, b.view, "B", (3, 3))
    raises(AclshmemInvalid, b.numpy, "int64", (3,), match="needs 24 bytes")
    raises(AclshmemInvalid, b.numpy, object)
    raises(AclshmemInvalid, b.numpy, "uint8", ("x",))
    core.free(b)


@checks
def numpy_zero_copy():
    b = core.buffer(64)
    a = np.frombuffer(b, dtype=np.int32)
    a[:] = np.arange(16)
    assert b.numpy("int32", (4, 4))[3, 3] == 15  # typed view with a shape
    b.view("i", (4, 4))[0, 1] = -5
    assert a[1] == -5
    arr = np.asarray(b)
    assert arr.dtype == np.uint8 and arr.shape == (64,) and arr.ctypes.data == b.addr
    arr[0] = 99
    assert b[0] == 99
    iface = b.__array_interface__
    assert iface["typestr"] == "|u1" and iface["shape"] == (64,)
    del a, arr, iface
    core.free(b)


@checks
def dlpack_numpy_zero_copy():
    b = core.buffer(64)
    assert b.__dlpack_device__() == (1, 0)
    a = np.from_dlpack(b)
    assert a.dtype == np.uint8 and a.shape == (64,) and a.ctypes.data == b.addr and a.flags.writeable
    a[5] = 17
    assert b[5] == 17
    b[6] = 18
    assert a[6] == 18
    legacy = np.from_dlpack(type("Legacy", (), {"__dlpack__": lambda self, stream=None: b.__dlpack__(),
                                                "__dlpack_device__": lambda self: (1, 0)})())
    assert legacy[5] == 17  # the v0.8 capsule ("dltensor") too
    assert b._exports >= 2
    del a, legacy
    gc.collect()
    assert b.view().nbytes == 64
    raises(BufferError, b.__dlpack__, dl_device=(2, 0))
    raises(BufferError, b.__dlpack__, copy=True)
    raises(AclshmemInvalid, b.__dlpack__, stream=3)
    capsule = b.__dlpack__()  # never consumed, then dropped: no longer counted
    del capsule
    assert b._block.views() == 0
    core.free(b)


@checks
def dlpack_torch_zero_copy():
    try:
        import torch
    except ImportError:
        return "torch not installed"
    b = core.buffer(64)
    t = torch.from_dlpack(b)
    assert t.dtype == torch.uint8 and t.shape == (64,) and t.data_ptr() == b.addr
    t[3] = 33
    assert b[3] == 33
    b[4] = 44
    assert int(t[4]) == 44
    f = t.view(torch.float32)
    f[2] = 1.5
    assert b.numpy("float32")[2] == 1.5
    assert b._block.views() == 1
    del t, f
    assert b._block.views() == 0  # torch ran the deleter
    core.free(b)


@checks
def view_count_is_exact_under_threads():
    b = core.buffer(4096)

    def churn():
        for i in range(2000):
            with memoryview(b) as mv:
                mv[i % 4096] = i % 256
            np.frombuffer(b, dtype=np.uint8, count=8)

    threads = [threading.Thread(target=churn) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    gc.collect()
    assert b._exports == 0
    kept = [memoryview(b) for _ in range(1000)]
    assert b._exports == 1000
    del kept
    assert b._exports == 0
    assert quiet_free(b) == []


@checks
def use_after_free_raises():
    b = core.buffer(32)
    peer = core.get_peer_buffer(b, (core.my_pe() + 1) % core.n_pes())
    core.free(b)
    for buf in (b, peer):
        raises(AclshmemInvalid, buf.__setitem__, 0, 7, match="freed")  # accepted silently before
        raises(AclshmemInvalid, buf.__getitem__, 0, match="freed")
        raises(AclshmemInvalid, bytes, buf)
        raises(AclshmemInvalid, buf.numpy)
        raises(AclshmemInvalid, buf.view)
        raises(AclshmemInvalid, buf.__dlpack__)
        raises(AclshmemInvalid, getattr, buf, "__array_interface__")
        raises(AclshmemInvalid, buf.__getitem__, slice(0, 4))
        assert memoryview(buf).nbytes == 0  # the raw protocol hands out nothing any more


def _reused(addr, length):
    """Allocates (collectively) until a block starts at ``addr``'s block; True if one does
    within a few tries."""
    made = [core.buffer(length) for _ in range(4)]
    hit = any(m.addr == addr for m in made)
    for m in reversed(made):
        core.free(m)
    return hit


@checks
def free_with_views_keeps_memory_out_of_reuse():
    me = core.my_pe()
    b = core.buffer(256)
    addr = b.addr
    # Only PE 0 keeps a view: every PE must still defer, or the heaps would diverge.
    kept = np.frombuffer(b, dtype=np.uint8) if me == 0 else None
    messages = quiet_free(b)
    assert bool(messages) == (me == 0), messages
    assert not _reused(addr, 256)  # reused before: a write through `kept` hit the next buffer
    c = core.buffer(256)
    c.numpy()[:] = 1
    if kept is not None:
        kept[:] = 9  # lands in the deferred block, not in c
    core.barrier_all()
    assert (c.numpy() == 1).all()
    # The heaps stayed symmetric: a put lands where the peer expects it.
    core.put(c, c, (me + 1) % core.n_pes(), 0)
    core.synchronize(0)
    core.barrier_all()
    del kept
    core.free(c)  # no PE has views of b any more: released here, with c
    assert _reused(addr, 256)


@checks
def dlpack_view_defers_free():
    try:
        import torch
    except ImportError:
        return "torch not installed"
    b = core.buffer(128)
    t = torch.from_dlpack(b)
    messages = quiet_free(b)
    assert messages and "1 view" in messages[0]
    assert not _reused(b.addr, 128)
    del t
    spare = core.buffer(8)
    core.free(spare)  # the deferred block goes back with this free
    assert _reused(b.addr, 128)


@checks
def torch_frombuffer_is_a_counted_view():
    try:
        import torch
    except ImportError:
        return "torch not installed"
    b = core.buffer(256)
    addr = b.addr
    t = torch.frombuffer(b, dtype=torch.uint8)  # torch releases its export at once, keeps b's exporter
    assert t.data_ptr() == addr
    t[0] = 1
    assert b[0] == 1
    views = b._block.views()
    messages = quiet_free(b)
    c = core.buffer(256)  # got b's address before
    c.numpy()[:] = 5
    t[:] = 9  # lands in the deferred block, not in c
    core.barrier_all()
    assert (c.numpy() == 5).all(), "a write through the stale tensor reached the next allocation"
    assert views == 1 and messages and "1 view" in messages[0], (views, messages)
    del t
    core.free(c)  # the deferred block goes back with this free
    assert _reused(addr, 256)


@checks
def constructor_is_cheap_and_plain():
    assert not hasattr(core.Buffer, "from_buffer") and not hasattr(core.Buffer, "_length_")
    a, b = core.Buffer(4096, 10), core.Buffer(8192, 12345)
    assert type(a) is type(b) is core.Buffer  # one class for every length
    assert repr(a).startswith("Buffer(addr=0x1000, length=10") and "external" in repr(a)
    raises(AttributeError, setattr, a, "color", 1)  # __slots__
    raises(AttributeError, setattr, a, "_exports", 1)
