#!/usr/bin/env python3
"""All-reduce a symmetric tensor with shmem_torch inside a torch.distributed job.

    torchrun --nproc-per-node=2 examples/torch/allreduce.py

torchrun starts the ranks; the script makes a gloo process group, starts SHMEM from it
with one line (``shmem_torch.init``), and then:

1. allocates a symmetric tensor (collective) and fills it with its rank,
2. reads the next rank's copy directly through ``peer_tensor`` (zero-copy),
3. all-reduces it in place with shmem_torch and checks the sum,
4. checks that torch.distributed (gloo) gets the same answer.
"""

import torch
import torch.distributed as dist

import shmem_torch


def main():
    dist.init_process_group("gloo")
    shmem_torch.init(mem_size=64 << 20)  # SHMEM PE i == process-group rank i

    rank, world = dist.get_rank(), dist.get_world_size()
    x = shmem_torch.empty(1 << 20, dtype=torch.float32)  # 4 MiB in the symmetric heap
    x.fill_(rank + 1)
    shmem_torch.barrier()  # every rank has filled its copy

    nxt = (rank + 1) % world
    peer = shmem_torch.peer_tensor(x, nxt)  # rank nxt's copy, mapped here
    seen = peer[0].item()
    assert seen == nxt + 1, "peer_tensor reads the neighbour's copy"
    shmem_torch.barrier()  # nobody changes x while a neighbour may still read it

    shmem_torch.all_reduce(x, op="sum")
    expected = world * (world + 1) / 2
    assert bool((x == expected).all()), f"all_reduce gave {x[0].item()}, expected {expected}"

    ref = torch.full((1 << 20,), float(rank + 1))
    dist.all_reduce(ref)
    assert torch.equal(ref, x), "gloo and shmem_torch agree"

    print(f"rank {rank}/{world}: all_reduce sum = {x[0].item():g} on {x.numel()} elements "
          f"(read {seen:g} directly from rank {nxt}'s copy before)", flush=True)

    shmem_torch.aclshmem_free_tensor(x)
    shmem_torch.finalize()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
