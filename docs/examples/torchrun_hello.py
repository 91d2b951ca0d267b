"""shmem.core under torchrun: init() reads RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT.

    torchrun --standalone --nproc-per-node=2 torchrun_hello.py

Rank 0 hands the unique ID to the other ranks through torch's TCPStore on MASTER_PORT
(without torch: to ranks that hold the same SHMEM_JOB_SECRET).  No torch import here.
"""
import shmem.core as core

core.init(mem_size=16 << 20)
me, n = core.my_pe(), core.n_pes()
word = core.calloc(1, 4)
core.barrier_all()
if me == 0:
    for pe in range(1, n):              # PE 0 raises a signal word on every other PE
        core.signal_op(word, 7, core.SignalOp.SIGNAL_SET, pe, 0)
    core.synchronize(0)
else:
    core.signal_wait(word, 7, core.ComparisonType.CMP_EQ, 0)
    core.synchronize(0)
    # One write per line (end=""): torchrun's workers write unbuffered to one terminal.
    print(f"PE {me} of {n}: signal {word.numpy('int32')[0]} arrived from PE 0\n", end="")
core.barrier_all()
core.free(word)
core.finalize()
