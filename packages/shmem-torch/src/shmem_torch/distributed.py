"""Starting SHMEM from torch.distributed: init and finalize."""

from shmem import _pyshmem
from shmem import core
from shmem.core import AclshmemError, AclshmemInvalid

from .tensor import check_int

__all__ = ["init", "finalize", "DEFAULT_MEM_SIZE"]

# The default symmetric heap of each PE.  The heap is sparse (pages appear when first
# touched), so a generous size costs address space, not memory.
DEFAULT_MEM_SIZE = 1 << 30


def _group_rank_size(group):
    import torch.distributed as dist

    return dist.get_rank(group), dist.get_world_size(group)


def _broadcast_uid(uid, group):
    import torch.distributed as dist

    box = [uid]
    try:
        dist.broadcast_object_list(box, group=group, group_src=0)
    except TypeError:  # torch without group_src
        src = 0 if group is None else dist.get_global_rank(group, 0)
        dist.broadcast_object_list(box, src=src, group=group)
    return box[0]


def init(group=None, mem_size=None, instance_id=0):
    """Collective: initialises SHMEM with one PE per rank of a torch.distributed process
    group (PE i is the group's rank i), so that a torchrun script needs one line::

        dist.init_process_group("gloo")
        shmem_torch.init(mem_size=256 << 20)

    Rank 0 of ``group`` makes the unique ID and broadcasts it through the group.
    ``group`` defaults to the default process group; when torch.distributed is not
    initialised and no group is given, SHMEM starts from the launcher's environment
    (``python -m shmem.run``, or torchrun's variables) instead.  ``mem_size`` is each
    PE's symmetric heap in bytes (default: the launcher's ``--mem-size`` if any, else
    ``DEFAULT_MEM_SIZE`` = 1 GiB).  ``instance_id`` is the SHMEM instance (0..254)."""
    if mem_size is not None:
        mem_size = check_int(mem_size, "mem_size", 1)
    instance_id = check_int(instance_id, "instance_id", 0, _pyshmem.ACLSHMEM_MAX_INSTANCE_ID)
    try:
        from . import backend
    except ImportError:  # pragma: no cover - torch without distributed
        backend = None
    if instance_id == 0 and backend is not None and backend.serves(group):
        return  # dist.init_process_group("shmem") started SHMEM for this group already
    try:
        import torch.distributed as dist

        dist_ready = dist.is_available() and dist.is_initialized()
    except ImportError:
        dist_ready = False
    if group is None and not dist_ready:
        if mem_size is None:
            import os

            if not os.environ.get("SHMEM_RUN_MEM_SIZE"):
                mem_size = DEFAULT_MEM_SIZE
        core.init(mem_size=mem_size, instance_id=instance_id)
        return
    if not dist_ready:
        raise AclshmemInvalid("init: a process group was given but torch.distributed is not initialised "
                              "(call torch.distributed.init_process_group first)")
    rank, nranks = _group_rank_size(group)
    if rank < 0:
        raise AclshmemInvalid("init: this process is not a member of the given process group")
    if mem_size is None:
        mem_size = DEFAULT_MEM_SIZE
    uid = core.get_unique_id() if rank == 0 else None
    uid = _broadcast_uid(uid, group)
    if not isinstance(uid, bytes):
        raise AclshmemError("init: rank 0 of the process group did not hand out a unique ID")
    core.init(uid=uid, rank=rank, nranks=nranks, mem_size=mem_size, initializer_method="uid",
              instance_id=instance_id)


def finalize(instance_id=None):
    """Collective: finalises the active SHMEM instance (or ``instance_id``).  Symmetric
    tensors still allocated are released first, with a warning (shmem.core.finalize does the
    same through a finalize hook); using them afterwards raises.  Does not touch the
    torch.distributed process group."""
    core.finalize(instance_id)
