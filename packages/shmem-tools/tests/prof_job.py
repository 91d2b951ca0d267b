"""A small SHMEM program that profiles itself: run it with the launcher and
SHMEM_CYCLE_PROF_PE set, e.g.

    SHMEM_CYCLE_PROF_PE=0 python -m shmem.run -n 2 --mem-size 16M prof_job.py out.json

Every PE does puts, gets, put_signal + wait and barriers on the host, times two frames
of its own (0 "setup", 1 "exchange"), and runs a 4-block kernel whose blocks time frame
2 ("kernel work") and put to the neighbour.  The profiled PE saves its snapshot.
"""

import ctypes
import sys

from shmem import _native, core
from shmem import _pyshmem as low

from shmem_tools import prof

BLOCKS = 4
SIZE = 1024


def main(path):
    core.init()
    me, n = core.my_pe(), core.n_pes()
    right = (me + 1) % n
    ffi, lib = _native.load()

    low.aclshmemx_prof_start(0)
    data = core.calloc(BLOCKS + 1, SIZE)
    sig = core.calloc(1, 64)
    local = ctypes.create_string_buffer(b"x" * SIZE, SIZE)
    src = core.Buffer(ctypes.addressof(local), SIZE)
    low.aclshmemx_prof_end(0)

    low.aclshmemx_prof_start(1)
    for i in range(50):
        low.aclshmem_putmem(data.addr, src.addr, SIZE, right)
        low.aclshmem_getmem(src.addr, data.addr, SIZE, right)
    low.aclshmem_quiet()
    core.barrier_all()
    for i in range(1, 11):
        low.aclshmemx_putmem_signal(data.addr, src.addr, SIZE, sig.addr, i, core.SignalOp.SIGNAL_SET, right)
        low.aclshmem_signal_wait_until(sig.addr, core.ComparisonType.CMP_EQ, i)
        core.barrier_all()
    low.aclshmemx_prof_end(1)

    # A kernel: each block times frame 2 around a put of its own slice to the neighbour.
    def kernel(block_idx, block_dim, arg):
        lib.aclshmemx_prof_start(2)
        for _ in range(5 * (block_idx + 1)):
            lib.aclshmem_putmem(ffi.cast("char *", data.addr) + SIZE * (block_idx + 1),
                                ffi.cast("void *", src.addr), SIZE, right)
        lib.aclshmemx_prof_end(2)

    callback = ffi.callback("void(uint32_t, uint32_t, void *)", kernel)
    rc = lib.aclshmemx_kernel_launch(ffi.NULL, callback, BLOCKS, ffi.NULL)
    if rc != 0:
        raise RuntimeError(f"aclshmemx_kernel_launch failed: {rc} {low.aclshmemx_get_last_error()}")
    core.synchronize(0)
    core.barrier_all()

    saved = prof.capture(path, frame_names={0: "setup", 1: "exchange", 2: "kernel work"},
                         meta={"job": "prof_job.py", "npes": n})
    if saved:
        print(f"PE {me}: profile saved to {saved}")
    core.free(sig)
    core.free(data)
    core.finalize()


if __name__ == "__main__":
    main(sys.argv[1])
