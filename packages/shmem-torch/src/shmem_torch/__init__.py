"""shmem_torch: symmetric torch tensors, tensor RMA and collectives over SHMEM.

A symmetric tensor is a CPU tensor whose storage lives in the SHMEM symmetric heap: every
PE has its own copy at the same place, and a PE reads and writes the copies of the other
PEs of its node directly.  ::

    import torch, torch.distributed as dist
    import shmem_torch as st

    dist.init_process_group("gloo")          # e.g. under torchrun
    st.init(mem_size=256 << 20)              # SHMEM from the process group
    x = st.empty(1024, dtype=torch.float32)  # collective
    x.fill_(dist.get_rank())
    st.all_reduce(x)                         # in place, through shared memory
    peer = st.peer_tensor(x, 1)              # PE 1's copy, zero-copy
    old = st.atomic_fetch_add(x, 1.0, pe=0)  # x[0] += 1 on PE 0, atomically
    st.aclshmem_free_tensor(x)               # collective
    st.finalize()

Bad arguments raise ``shmem.core.AclshmemInvalid`` (a ``ValueError``); failures of the
library raise ``shmem.core.AclshmemError`` (a ``RuntimeError``).  ``shmem`` re-exports
``aclshmem_create_tensor`` and ``aclshmem_free_tensor`` at its top level.
"""

from shmem.core import AclshmemError, AclshmemInvalid, CmpOp, SignalOp

from .amo import (
    atomic_add,
    atomic_and,
    atomic_compare_swap,
    atomic_fetch,
    atomic_fetch_add,
    atomic_fetch_and,
    atomic_fetch_inc,
    atomic_fetch_or,
    atomic_fetch_xor,
    atomic_inc,
    atomic_or,
    atomic_set,
    atomic_swap,
    atomic_xor,
)
from .collectives import ReduceOp

try:  # the collectives as torch custom ops, for torch.compile (torch >= 2.4)
    from ._ops import all_gather, all_reduce, all_to_all, barrier, broadcast, reduce_scatter
except (ImportError, AttributeError):  # pragma: no cover - older torch: the plain functions
    from .collectives import all_gather, all_reduce, all_to_all, barrier, broadcast, reduce_scatter
from .distributed import DEFAULT_MEM_SIZE, finalize, init
from .rma import get, put, put_signal, signal_wait_until
from .tensor import (
    SUPPORTED_DTYPES,
    FreedTensor,
    aclshmem_create_tensor,
    aclshmem_free_tensor,
    empty,
    full,
    is_symmetric,
    like,
    local_device_count,
    ones,
    peer_tensor,
    zeros,
)

try:  # the torch.distributed backend "shmem" (torch builds without distributed have none)
    from . import backend
except ImportError:  # pragma: no cover - depends on the torch build
    backend = None
else:
    backend.register()

__version__ = "0.1.0"

free_tensor = aclshmem_free_tensor

__all__ = [
    # set-up
    "init", "finalize", "DEFAULT_MEM_SIZE",
    # tensors
    "aclshmem_create_tensor", "aclshmem_free_tensor", "free_tensor", "empty", "zeros", "ones", "full",
    "like", "peer_tensor", "is_symmetric", "local_device_count", "FreedTensor", "SUPPORTED_DTYPES",
    # RMA
    "put", "get", "put_signal", "signal_wait_until", "SignalOp", "CmpOp",
    # atomic memory operations
    "atomic_add", "atomic_fetch_add", "atomic_inc", "atomic_fetch_inc", "atomic_set", "atomic_fetch",
    "atomic_swap", "atomic_compare_swap", "atomic_and", "atomic_or", "atomic_xor", "atomic_fetch_and",
    "atomic_fetch_or", "atomic_fetch_xor",
    # collectives
    "all_reduce", "all_gather", "reduce_scatter", "broadcast", "all_to_all", "barrier", "ReduceOp",
    # errors
    "AclshmemError", "AclshmemInvalid",
]
