"""The live self-test of ``shmem-config --check``: every PE runs this module.

``python -m shmem.run -n 2 -m shmem_tools._selftest`` initialises the library, puts a
pattern into the right neighbour's heap, reads the left neighbour's back with get, sends
a put-with-signal and waits for the neighbour's, meets in a barrier, frees and
finalises.  Each step is timed and checked; the PE reports {"step": ..., "ok": ...}
records (see shmem_tools._launch) and a final {"done": true}.
"""

import ctypes
import sys
import time
import traceback

from ._launch import report

SIZE = 4096


def _pattern(pe, n):
    return bytes((pe * 31 + i * 7 + 1) & 0xFF for i in range(n))


def main():
    step = "import shmem"
    t0 = time.monotonic()
    try:
        from shmem import core

        step = "init"
        core.init()
        me, n = core.my_pe(), core.n_pes()
        right, left = (me + 1) % n, (me - 1) % n
        report(step="init", ok=True, pe=me, npes=n, seconds=time.monotonic() - t0)

        step = "alloc"
        t = time.monotonic()
        data = core.calloc(1, SIZE)
        back = core.calloc(1, SIZE)
        sig = core.calloc(1, 64)
        local = ctypes.create_string_buffer(_pattern(me, SIZE), SIZE)
        src = core.Buffer(ctypes.addressof(local), SIZE)
        report(step="alloc", ok=True, seconds=time.monotonic() - t)

        step = "put"
        t = time.monotonic()
        core.put(data, src, right)
        core.synchronize(0)
        core.barrier_all()
        got = bytes(data.view())
        if got != _pattern(left, SIZE):
            raise AssertionError(f"put: PE {left}'s data did not arrive intact in PE {me}'s heap")
        report(step="put", ok=True, seconds=time.monotonic() - t)

        step = "get"
        t = time.monotonic()
        mine = core.Buffer(ctypes.addressof(local), SIZE)
        ctypes.memset(local, 0, SIZE)
        core.get(mine, data, right)  # the right neighbour holds my pattern
        core.synchronize(0)
        if bytes(local.raw) != _pattern(me, SIZE):
            raise AssertionError(f"get: PE {me} read back wrong data from PE {right}")
        report(step="get", ok=True, seconds=time.monotonic() - t)

        step = "put_signal"
        t = time.monotonic()
        core.put_signal(back, mine, sig, 1, core.SignalOp.SIGNAL_SET, right)
        core.signal_wait(sig, 1, core.ComparisonType.CMP_EQ, 0)
        core.synchronize(0)
        if bytes(back.view()) != _pattern(left, SIZE):
            raise AssertionError(f"put_signal: the signal arrived at PE {me} but the data from PE {left} did not")
        report(step="put_signal", ok=True, seconds=time.monotonic() - t)

        step = "barrier"
        t = time.monotonic()
        for _ in range(10):
            core.barrier_all()
        report(step="barrier", ok=True, seconds=time.monotonic() - t)

        step = "finalize"
        t = time.monotonic()
        core.free(sig)
        core.free(back)
        core.free(data)
        core.finalize()
        report(step="finalize", ok=True, seconds=time.monotonic() - t)
        report(done=True, ok=True, seconds=time.monotonic() - t0)
        return 0
    except BaseException as exc:  # report, then fail the PE
        report(step=step, ok=False, error=f"{type(exc).__name__}: {exc}")
        traceback.print_exc()
        return 1


if __name__ == "__main__":
    sys.exit(main())
