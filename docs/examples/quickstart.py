"""Every PE writes its number into a symmetric buffer and reads its right neighbour's.

    python -m shmem.run -n 4 quickstart.py
"""
import shmem.core as core

core.init(mem_size=16 << 20)          # the launcher hands over the unique ID, rank and PE count
me, n = core.my_pe(), core.n_pes()
right = (me + 1) % n

mine = core.buffer(8)                 # collective: every PE allocates the same, in the same order
mine.numpy("int64")[0] = 100 + me     # a NumPy view of this PE's copy
core.barrier_all()                    # every PE has written its copy

got = core.buffer(8)
core.get(got, mine, right)            # enqueued on the default stream (0) ...
core.synchronize(0)                   # ... and complete once it is synchronised
peer = core.get_peer_buffer(mine, right)   # the neighbour's copy, mapped into this process

print(f"PE {me} of {n}: PE {right} holds {got.numpy('int64')[0]} "
      f"(read directly: {peer.numpy('int64')[0]})")

core.barrier_all()                    # nobody frees while a neighbour may still read
core.free(got)                        # collective, like the allocations
core.free(mine)
core.finalize()
