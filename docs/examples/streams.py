"""Stream-ordered work: a put and a signal on a stream of our own, a wait on another.

    python -m shmem.run -n 2 streams.py
"""
import shmem.core as core

core.init(mem_size=16 << 20)
me, n = core.my_pe(), core.n_pes()
right, left = (me + 1) % n, (me - 1) % n

data = core.calloc(4, 8)
flag = core.calloc(1, 4)
src = core.buffer(32)
src.numpy("int64")[:] = [me * 10 + i for i in range(4)]
core.barrier_all()

with core.Stream() as s:                           # a queue served by a worker thread
    core.put(data, src, right, s)                  # these calls only enqueue ...
    core.quiet(s)                                  # ... the data is complete here ...
    core.signal_op(flag, 1, core.SignalOp.SIGNAL_SET, right, s)   # ... before the signal
    core.signal_wait(flag, 1, core.ComparisonType.CMP_EQ, 0)      # the default stream waits
    core.synchronize(0)                            # the host waits for the default stream
    s.synchronize()
print(f"PE {me}: from PE {left}: {data.numpy('int64').tolist()}")

core.barrier_all()
for buf in (src, flag, data):
    core.free(buf)
core.finalize()
