"""shmem.core across nodes: every PE of a job of NODES x PPN PEs (argv: PPN), started by
one `python -m shmem.run --nnodes ...` per node.  Prints "PASS PE <me> core" and exits 0
when every check held; the first failed check raises (exit status 1)."""

import os
import sys

import numpy as np

import shmem.core as core

PPN = int(sys.argv[1])
SIZE = (1 << 20) + 13   # a MiB and an odd tail: no transfer is a multiple of a word
K = 100                  # atomics per PE


def pattern(pe):
    return np.random.default_rng(1000 + pe).integers(0, 256, SIZE, dtype=np.uint8)


def check(ok, what):
    if not ok:
        raise AssertionError(f"PE {me}: {what}")


core.init(mem_size=32 << 20)
me, n = core.my_pe(), core.n_pes()
node = me // PPN
# Node-major numbering: node R runs PEs R*PPN .. R*PPN+PPN-1.
check(me == int(os.environ["SHMEM_RUN_PE"]) and n == int(os.environ["SHMEM_RUN_NPES"]), "PE numbering")
check(n % PPN == 0 and n > PPN, f"{n} PEs are not several nodes of {PPN}")
other = (me + PPN) % n   # the same slot on the next node
print(f"PE {me}/{n} on node {node}, partner PE {other}", flush=True)

src, dst, back = core.buffer(SIZE), core.calloc(1, SIZE), core.calloc(1, SIZE)
words = core.calloc(4, 8)                       # [counter, float sum, lock, winners] on PE `target`
seen = core.calloc((n * K + 63) // 64, 8)       # a bit per ticket of the counter
src.numpy()[:] = pattern(me)
core.barrier_all()

# put to the partner on the other node; get from it
core.put(dst, src, other)
core.get(back, src, other)
core.synchronize(0)
core.barrier_all()
check(np.array_equal(dst.numpy(), pattern((me - PPN) % n)), "put from the other node: bytes differ")
check(np.array_equal(back.numpy(), pattern(other)), "get from the other node: bytes differ")

# atomics from every PE to the words of the last PE (on the last node)
target = n - 1
tickets = [core.atomic_fetch_inc(words, target, dtype="int64", index=0) for _ in range(K)]
check(tickets == sorted(tickets) and len(set(tickets)) == K, f"fetch_inc tickets {tickets[:5]}...")
for t in tickets:
    core.atomic_or(seen, 1 << (t % 64), target, dtype="uint64", index=t // 64)
for _ in range(K):
    core.atomic_add(words, 0.5, target, dtype="float64", index=1)
if core.atomic_compare_swap(words, 0, me + 1, target, dtype="int64", index=2) == 0:
    core.atomic_inc(words, target, dtype="int64", index=3)
core.barrier_all()
if me == target:
    w = words.numpy("int64")
    check(w[0] == n * K, f"counter {w[0]}, expected {n * K}")
    check(words.numpy("float64")[1] == n * K * 0.5, f"float sum {words.numpy('float64')[1]}")
    check(1 <= w[2] <= n and w[3] == 1, f"compare_swap: lock {w[2]}, {w[3]} winners")
    bits = seen.numpy("uint64")
    check(all(int(bits[t // 64]) >> (t % 64) & 1 for t in range(n * K)), "a ticket was handed out twice")
    del w, bits   # no NumPy view may outlive free

# load/store views exist for the PEs of this node only
for pe in range(n):
    peer = core.get_peer_buffer(src, pe)
    if pe // PPN == node:
        check(peer is not None and np.array_equal(peer.numpy()[:4096], pattern(pe)[:4096]),
              f"get_peer_buffer(src, {pe}) on this node")
    else:
        check(peer is None, f"get_peer_buffer(src, {pe}) for a PE on another node is {peer!r}, not None")

core.barrier_all()
for buf in (seen, words, back, dst, src):
    core.free(buf)
core.finalize()
print(f"PASS PE {me} core", flush=True)
