"""Tensor put with signal: PE 0 sends a tensor to every other PE and raises its signal.

    python -m shmem.run -n 3 torch_signal.py
"""
import torch

import shmem.core as core
import shmem_torch as st

st.init(mem_size=64 << 20)
me, n = core.my_pe(), core.n_pes()

inbox = st.zeros(2, 3)                         # symmetric, float32
signal = st.zeros(1, dtype=torch.int32)        # a symmetric signal word
if me == 0:
    data = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    for pe in range(1, n):
        st.put_signal(inbox, data, signal, 1, "set", pe)   # data first, then the signal
else:
    st.signal_wait_until(signal, ">=", 1)      # returns once the data is there too
    print(f"PE {me}: {inbox.tolist()}")
st.barrier()
st.aclshmem_free_tensor(signal)
st.aclshmem_free_tensor(inbox)
st.finalize()
