"""Ring exchange on N PEs, with checks.

    python -m shmem.run -n 4 examples/python/ring.py

Every PE
1. sends a block of numbers to its right neighbour with put_signal and waits (on the
   default stream) for the block of its left neighbour, then checks it;
2. passes numbers around the ring with put on its own stream, N-1 steps, adding up what
   arrives, and checks that every PE ends with the sum of all ranks;
3. reads its right neighbour's block directly through a peer buffer.
It prints one "verified" line and exits 0 when everything matched (1 otherwise).
"""

import sys

import numpy as np

import shmem.core as core


def main():
    core.init(mem_size=32 << 20)  # the launcher provides the unique ID, rank and PE count
    me, n = core.my_pe(), core.n_pes()
    right, left = (me + 1) % n, (me - 1) % n
    count = 1024

    block = core.buffer(count * 8)   # symmetric: every PE allocates the same, in the same order
    inbox = core.calloc(count, 8)
    signal = core.calloc(1, 4)
    block.numpy("int64")[:] = np.arange(count) + 1000 * me
    core.barrier_all()

    # 1. put with signal to the right; wait for the left neighbour's signal
    core.put_signal(inbox, block, signal, 1, core.SignalOp.SIGNAL_SET, right)
    core.signal_wait(signal, 1, core.ComparisonType.CMP_EQ, 0)
    core.synchronize(0)
    exchange_ok = np.array_equal(inbox.numpy("int64"), np.arange(count) + 1000 * left)

    # 2. a running sum around the ring, on a stream of our own
    outgoing = core.buffer(8)
    incoming = core.calloc(1, 8)
    passing, total = me, me
    with core.Stream() as stream:
        for _ in range(n - 1):
            outgoing.numpy("int64")[0] = passing
            core.barrier_all()               # everyone has read its incoming slot
            core.put(incoming, outgoing, right, stream)
            stream.synchronize()
            core.barrier_all()               # every put has landed
            passing = int(incoming.numpy("int64")[0])
            total += passing
    sum_ok = total == n * (n - 1) // 2

    # 3. load the right neighbour's block directly (same node: mapped here)
    peer = core.get_peer_buffer(block, right)
    peer_ok = int(peer.numpy("int64")[5]) == 1000 * right + 5

    core.barrier_all()
    for buf in (incoming, outgoing, signal, inbox, block):
        core.free(buf)
    core.finalize()

    ok = exchange_ok and sum_ok and peer_ok
    print(f"PE {me}/{n}: block from PE {left} {'verified' if exchange_ok else 'WRONG'}, "
          f"ring sum {total} {'verified' if sum_ok else 'WRONG'}, "
          f"peer read {'verified' if peer_ok else 'WRONG'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
