"""``shmem.core``: the high-level SHMEM API.

A typical program (every PE runs it; ``python -m shmem.run -n 4 prog.py``)::

    import shmem.core as core

    core.init(mem_size=64 << 20)          # or uid=..., rank=..., nranks=...
    me, n = core.my_pe(), core.n_pes()
    buf = core.buffer(4096)               # collective
    ...
    core.free(buf)                        # collective
    core.finalize()

Argument checks raise ``AclshmemInvalid``; failures of the library raise
``AclshmemError`` carrying its last-error message.
"""

from .._pyshmem import (
    ACLSHMEM_MAX_TEAMS,
    ACLSHMEM_TEAM_INVALID,
    ACLSHMEM_TEAM_WORLD,
    CmpOp,
    Handle,
    InitStatus,
    InstanceContext,
    MemType,
    ProfData,
    SignalOp,
    UniqueId,
)
# Submodules (the original's tests use core.direct.X).  The functions multi_instance and
# sync, imported below, take the place of the submodules of the same names.
from . import amo, coll, config, direct, init_final, memory, profiling, rma, stream, utils  # noqa: F401
from .amo import (
    AMO_DTYPES,
    atomic_add,
    atomic_and,
    atomic_compare_swap,
    atomic_dtypes,
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
from .coll import COLL_DTYPES, ReduceOp, alltoall, broadcast, collect, fcollect, reduce, reduce_dtypes, reducescatter
from .config import set_mte_config, set_rdma_config, set_sdma_config, set_udma_config
from .direct import init_status, my_pe, n_pes, team_my_pe, team_n_pes
from .init_final import UniqueID, finalize, get_unique_id, get_version, init, register_finalize_hook
from .memory import align, buffer, calloc, free, get_peer_buffer
from .multi_instance import current_instance, multi_instance, set_instance
from .profiling import get_prof, show_prof
from .rma import get, put, put_signal, quiet, signal_op, signal_wait
from .stream import Stream, keep_alive, synchronize
from .sync import (
    barrier,
    barrier_all,
    barrier_all_on_stream,
    barrier_on_stream,
    handle_wait,
    sync,
    sync_all,
)
from .._errors import AclshmemError, AclshmemInvalid, AclshmemWarning
from .buffer import Buffer

ComparisonType = CmpOp

__all__ = [
    # init / finalize
    "get_version", "get_unique_id", "init", "finalize", "register_finalize_hook", "init_status", "UniqueId",
    "UniqueID",
    # identity
    "my_pe", "n_pes", "team_my_pe", "team_n_pes",
    # memory
    "buffer", "calloc", "align", "free", "get_peer_buffer", "Buffer", "MemType",
    # RMA and signals
    "put", "get", "put_signal", "signal_op", "signal_wait", "quiet", "SignalOp", "ComparisonType",
    # atomic memory operations
    "atomic_add", "atomic_fetch_add", "atomic_inc", "atomic_fetch_inc", "atomic_set", "atomic_fetch",
    "atomic_swap", "atomic_compare_swap", "atomic_and", "atomic_or", "atomic_xor", "atomic_fetch_and",
    "atomic_fetch_or", "atomic_fetch_xor", "atomic_dtypes", "AMO_DTYPES",
    # collectives
    "reduce", "reducescatter", "broadcast", "fcollect", "collect", "alltoall", "ReduceOp", "reduce_dtypes",
    "COLL_DTYPES",
    # barriers and handles
    "barrier", "barrier_all", "sync", "sync_all", "barrier_on_stream", "barrier_all_on_stream",
    "handle_wait", "Handle", "ACLSHMEM_TEAM_WORLD", "ACLSHMEM_TEAM_INVALID", "ACLSHMEM_MAX_TEAMS",
    # instances
    "current_instance", "set_instance", "multi_instance", "InstanceContext",
    # configuration and profiling
    "set_mte_config", "set_sdma_config", "set_rdma_config", "set_udma_config",
    "get_prof", "show_prof", "ProfData",
    # streams
    "Stream", "synchronize", "keep_alive",
    # errors
    "AclshmemError", "AclshmemInvalid", "AclshmemWarning", "InitStatus",
]
