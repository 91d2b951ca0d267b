"""shmem_torch collectives across nodes: every PE of a job of NODES x PPN PEs (argv: PPN),
started by one `python -m shmem.run --nnodes ...` per node.  Peers on another node have no
view here (peer_tensor is None) and the collectives reach them with get/put.  Prints
"PASS PE <me> torch" and exits 0 when every result is exact; else raises (exit status 1)."""

import sys

import torch

import shmem.core as core
import shmem_torch as st

PPN = int(sys.argv[1])
# all_reduce: one-shot (<= 256 KiB) and slice-push (larger) sizes, up to > 1 MiB
REDUCE = [(torch.float32, 1), (torch.float32, 1000), (torch.float32, 65536 + 3), (torch.float32, 300001),
          (torch.int64, 7), (torch.int64, 32768 + 1), (torch.int64, 200001)]
GATHER = [(torch.float32, 5), (torch.float32, 100003), (torch.int64, 70001)]

st.init(mem_size=64 << 20)
me, n = core.my_pe(), core.n_pes()
node = me // PPN


def check(ok, what):
    if not ok:
        raise AssertionError(f"PE {me}: {what}")


def contribution(pe, dtype, numel):
    """Integers below 2**24 in float32 (exact sums); large values in int64."""
    i = torch.arange(numel, dtype=torch.int64)
    if dtype == torch.int64:
        return i * (pe + 1) + (pe << 40)
    return ((i % 1000) * (pe + 1)).to(dtype)


for dtype, numel in REDUCE:
    x = st.empty(numel, dtype=dtype)
    x.copy_(contribution(me, dtype, numel))
    for pe in range(n):
        check((st.peer_tensor(x, pe) is None) == (pe // PPN != node), f"peer_tensor(x, {pe})")
    st.all_reduce(x, "sum")
    expected = sum(contribution(pe, dtype, numel) for pe in range(n))
    check(torch.equal(x, expected), f"all_reduce {dtype} x {numel}: {x[:4]} != {expected[:4]}")
    st.aclshmem_free_tensor(x)

for dtype, k in GATHER:
    expected = torch.cat([contribution(pe, dtype, k) for pe in range(n)])
    # symmetric output (every PE puts its part into every copy) ...
    out = st.empty(n * k, dtype=dtype)
    st.all_gather(out, contribution(me, dtype, k))
    check(torch.equal(out, expected), f"all_gather into a symmetric output, {dtype} x {k}")
    # ... and symmetric input (every PE reads every copy)
    inp = st.empty(k, dtype=dtype)
    inp.copy_(contribution(me, dtype, k))
    plain = torch.empty(n * k, dtype=dtype)
    st.all_gather(plain, inp)
    check(torch.equal(plain, expected), f"all_gather from a symmetric input, {dtype} x {k}")
    st.aclshmem_free_tensor(inp)
    st.aclshmem_free_tensor(out)

st.finalize()
print(f"PE {me}/{n} on node {node}: all_reduce and all_gather exact", flush=True)
print(f"PASS PE {me} torch", flush=True)
