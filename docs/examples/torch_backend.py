"""torch.distributed on SHMEM: the backend "shmem".

    torchrun --standalone --nproc-per-node=2 torch_backend.py
"""
import torch
import torch.distributed as dist

import shmem_torch  # noqa: F401  (registers the backend "shmem")

dist.init_process_group("shmem")               # SHMEM starts with the group
rank, world = dist.get_rank(), dist.get_world_size()

t = torch.full((1000,), float(rank + 1))       # any CPU tensor
dist.all_reduce(t)
parts = [torch.zeros(2, dtype=torch.int64) for _ in range(world)]
dist.all_gather(parts, torch.tensor([rank, 10 * rank]))
if rank == 0:
    dist.send(torch.tensor([42.0]), dst=1)
else:
    got = torch.zeros(1)
    dist.recv(got, src=0)
# One write per line (end=""), so that the ranks' lines never mix.
print(f"rank {rank}: backend {dist.get_backend()}, all_reduce {t[0].item():g}, "
      f"all_gather {[p.tolist() for p in parts]}\n", end="")
dist.destroy_process_group()
