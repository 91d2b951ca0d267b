"""shmem_torch.init from a torch.distributed process group.

    torchrun --standalone --nproc-per-node=2 torch_group.py
"""
import torch
import torch.distributed as dist

import shmem_torch as st

dist.init_process_group("gloo")
st.init(mem_size=64 << 20)                     # PE i == rank i of the default group
rank, world = dist.get_rank(), dist.get_world_size()

x = st.full((1024,), float(rank + 1))
st.all_reduce(x)                               # through shared memory
ref = torch.full((1024,), float(rank + 1))
dist.all_reduce(ref)                           # through gloo
# One write per line (end=""), so that the ranks' lines never mix: torchrun runs them
# with unbuffered output.
print(f"rank {rank}: shmem_torch {x[0].item():g}, gloo {ref[0].item():g}, "
      f"equal: {torch.equal(x, ref)}\n", end="")

st.aclshmem_free_tensor(x)
st.finalize()
dist.destroy_process_group()
