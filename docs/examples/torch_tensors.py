"""Symmetric torch tensors and collectives, started by the SHMEM launcher.

    python -m shmem.run -n 2 torch_tensors.py

(Under torchrun, call torch.distributed.init_process_group first and shmem_torch.init
starts SHMEM from that process group instead.)
"""
import torch

import shmem.core as core
import shmem_torch as st

st.init(mem_size=64 << 20)                 # no process group: SHMEM starts from the launcher
me, n = core.my_pe(), core.n_pes()
right = (me + 1) % n

x = st.full((4,), float(me + 1))           # collective; returns once every PE has filled it
before = st.peer_tensor(x, right)[0].item()    # zero-copy view of PE right's copy
st.barrier()                               # nobody changes x while a neighbour may still read
st.all_reduce(x, op="sum")                 # in place, through shared memory

squares = st.zeros(n, dtype=torch.int64)   # symmetric output ...
st.all_gather(squares, torch.tensor([me * me]))   # ... so the input can be any tensor

print(f"PE {me}: read {before:g} from PE {right}; all_reduce -> {x.tolist()}; "
      f"all_gather -> {squares.tolist()}")

st.aclshmem_free_tensor(squares)           # collective, in the same order on every PE
st.aclshmem_free_tensor(x)
st.finalize()
