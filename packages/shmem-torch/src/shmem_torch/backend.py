"""The torch.distributed backend ``"shmem"``: ``dist.init_process_group("shmem")``.

Importing ``shmem_torch`` registers the backend for CPU tensors, so that ordinary
torch.distributed code (``dist.all_reduce``, DDP, ...) runs on the library's collectives
engine::

    import torch.distributed as dist
    import shmem_torch  # noqa: F401  (registers "shmem")

    dist.init_process_group("shmem")   # torchrun, torch.multiprocessing or python -m shmem.run
    dist.all_reduce(t)                 # any CPU tensor

The backend is a thin adapter, one module per concern:

* ``shmem_torch._backend_runtime``: starting SHMEM for the process group, the pool
  (``SHMEM_TORCH_POOL_SIZE``, default 256 MiB) and the ranks' agreement before a
  collective of several engine calls (one call is compared by the engine itself;
  ``SHMEM_TORCH_CHECK=0`` drops the agreement for all_reduce, broadcast, all_gather and
  reduce_scatter: then ranks must agree by themselves, and a tensor is used in place when
  this rank's tensor is symmetric).
* ``shmem_torch._backend_coll``: the collectives on the engine; a tensor that is
  symmetric on every rank (``shmem_torch.empty`` ...) is used in place (zero-copy), the
  others pass through the pool's staging area in chunks (``SHMEM_TORCH_CHUNK_SIZE``).
* ``shmem_torch._backend_p2p``: send / recv through mailboxes in the pool
  (``SHMEM_TORCH_P2P_SLOT``).
* ``shmem_torch._backend_group``: the process group (argument checks, Work, sub-groups
  as SHMEM teams, gloo for the rest).
* this module: the registration with torch.distributed.
"""

import torch.distributed as dist

from shmem import _pyshmem
from shmem.core import AclshmemInvalid

from . import _backend_runtime as runtime
from . import collectives
from ._backend_group import BACKEND_NAME, ShmemProcessGroup, gloo_backend, warn_fallback
from ._backend_runtime import DEFAULT_CHUNK_SIZE, DEFAULT_POOL_SIZE, Runtime, Team
from .tensor import aclshmem_free_tensor

__all__ = ["BACKEND_NAME", "register", "is_registered", "serves", "staged", "DEFAULT_POOL_SIZE",
           "DEFAULT_CHUNK_SIZE", "ShmemProcessGroup"]


def _create(common, backend_options=None):
    """torch.distributed's creator of a "shmem" group (extended API)."""
    store = common.store
    rank, size = common.group_rank, common.group_size
    timeout = common.timeout
    global_ranks = list(common.global_ranks_in_group or [])
    with runtime.lock:
        rt = runtime.current()
        if rt is not None and rt.pool is None:
            rt = None
            runtime.set_current(None)
        if rt is None:
            rt = Runtime.start(store, rank, size, timeout, global_ranks)
            runtime.set_current(rt)
            return ShmemProcessGroup(rt, rt.world_team, rank, size, is_world=True)
        members = global_ranks or list(range(size))
        if members == rt.world_global_ranks:
            # the same processes as the SHMEM world, in the same order: a team of all
            tid = _pyshmem.team_split_strided(_pyshmem.ACLSHMEM_TEAM_WORLD, 0, 1, size)
            return ShmemProcessGroup(rt, Team(tid, range(size), rank, owned=True), rank, size)
        warn_fallback(members, "it was not created by every rank of the SHMEM world (use_local_synchronization, "
                      "or a default group of another backend)")
        return gloo_backend(store, rank, size, timeout)


def is_registered():
    return BACKEND_NAME.upper() in getattr(dist.Backend, "_plugins", {})


def register():
    """Registers the backend "shmem" for CPU tensors (done when shmem_torch is imported)."""
    if not dist.is_available() or is_registered():
        return
    dist.Backend.register_backend(BACKEND_NAME, _create, extended_api=True, devices=["cpu"])


def serves(group=None):
    """True when SHMEM runs for the "shmem" process group ``group`` (default: the default
    group) with its ranks as PEs - then shmem_torch.init has nothing to do."""
    rt = runtime.current()
    if rt is None or rt.pool is None:
        return False
    if _pyshmem.aclshmemx_init_status() != _pyshmem.InitStatus.INITIALIZED:
        return False
    if group is None:
        if not (dist.is_available() and dist.is_initialized()):
            return False
        group = dist.distributed_c10d._get_default_group()
    return isinstance(group, ShmemProcessGroup) and group.is_world and group.runtime is rt


# ---------------------------------------------------------------------------
# For the custom ops (shmem_torch._ops): a collective on tensors that are not symmetric
# ---------------------------------------------------------------------------

_OPS = {"sum": dist.ReduceOp.SUM, "avg": dist.ReduceOp.AVG, "prod": dist.ReduceOp.PRODUCT,
        "min": dist.ReduceOp.MIN, "max": dist.ReduceOp.MAX}


def _group_of_team(team):
    rt = runtime.current()
    if rt is None or rt.pool is None:
        return None
    for g in rt.groups:
        if isinstance(g, ShmemProcessGroup) and g.team_id == team and not g.closed:
            return g
    return None


def staged(name, team, *tensors, op="sum", root=0):
    """Runs shmem_torch collective ``name`` on tensors that may be ordinary ones (torch.compile
    hands the custom ops copies): through the "shmem" process group of ``team`` when there
    is one, else through temporary symmetric tensors (world team only).  Same results as
    the collective on symmetric tensors."""
    g = _group_of_team(team)
    if g is not None:
        _through_group(g, name, tensors, op, root)
        return
    if team != _pyshmem.ACLSHMEM_TEAM_WORLD:
        raise AclshmemInvalid(f"{name}: under torch.compile, a tensor that is not symmetric needs the 'shmem' "
                              f"process group of team {team} (or a symmetric tensor)")
    from .tensor import like

    tmp = [like(t.contiguous()) for t in tensors]  # collective, in the same order on every PE
    try:
        if name == "all_reduce":
            collectives.all_reduce(tmp[0], op, team)
        elif name == "broadcast":
            collectives.broadcast(tmp[0], root, team)
        elif name == "all_gather":
            collectives.all_gather(tmp[0], tmp[1], team)
        elif name == "reduce_scatter":
            collectives.reduce_scatter(tmp[0], tmp[1], op, team)
        elif name == "all_to_all":
            collectives.all_to_all(tmp[0], tmp[1], team)
        tensors[0].detach().copy_(tmp[0])
    finally:
        for t in reversed(tmp):
            aclshmem_free_tensor(t)


def _through_group(g, name, tensors, op, root):
    from torch._C._distributed_c10d import AllreduceOptions, BroadcastOptions, ReduceScatterOptions

    if name == "all_reduce":
        opts = AllreduceOptions()
        opts.reduceOp = _OPS[op]
        g.allreduce([tensors[0]], opts)
    elif name == "broadcast":
        opts = BroadcastOptions()
        opts.rootRank = root
        g.broadcast([tensors[0]], opts)
    elif name == "all_gather":
        g.all_gather_single(tensors[0], tensors[1])
    elif name == "reduce_scatter":
        opts = ReduceScatterOptions()
        opts.reduceOp = _OPS[op]
        g.reduce_scatter_single(tensors[0], tensors[1], opts)
    elif name == "all_to_all":
        g.all_to_all_single(tensors[0], tensors[1], [], [])
