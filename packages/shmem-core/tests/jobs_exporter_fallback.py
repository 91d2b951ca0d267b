"""A PE whose shmem.core runs on the fallback exporter (a cffi buffer per Buffer), which
interpreters get whose bytearray or PickleBuffer layout differs from what the native
exporter types rely on (see shmem/core/_export.py).  Imported by the PEs only: shmem.core
must not be imported before ``counted_views_on_the_fallback`` makes the layout check fail."""

import pickle


class _NotPickleBuffer:
    """Stands for a PickleBuffer of another layout while shmem.core is imported."""

    def __init__(self, obj):
        self.obj = obj


def counted_views_on_the_fallback():
    import sys
    import warnings

    assert "shmem.core" not in sys.modules
    real, pickle.PickleBuffer = pickle.PickleBuffer, _NotPickleBuffer
    try:
        from shmem import core
        from shmem.core import _export
    finally:
        pickle.PickleBuffer = real
    assert _export.ExporterBase.__name__ == "_PythonExporterBase"

    core.init(mem_size=1 << 20)
    b = core.buffer(256)
    addr = b.addr
    kept = b[64:128].numpy("int32")  # of a slice that is dropped at once
    assert b._block.views() == 1 and b._exports == 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        core.free(b)
    c = core.buffer(256)
    c.numpy()[:] = 5
    kept[:] = 9  # lands in the deferred block
    core.barrier_all()
    untouched = bool((c.numpy() == 5).all())
    core.free(c)
    again = core.buffer(256)  # b's block stays out of reuse while `kept` lives
    deferred = again.addr != addr
    core.free(again)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        core.finalize()
    return untouched, deferred, any("1 view" in str(w.message) for w in caught), int(kept.max())
