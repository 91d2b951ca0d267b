"""Initialisation and finalisation: get_version, get_unique_id, init, finalize."""

import warnings

from .. import _bootstrap, _pyshmem
from .._pyshmem import InitMode, UniqueId
from .utils import (
    AclshmemError,
    AclshmemInvalid,
    AclshmemWarning,
    _instance_lock,
    _take_leftovers,
    active_instance_id,
    check_instance_id,
    check_int,
    native_error,
)

__all__ = ["get_version", "get_unique_id", "init", "finalize", "register_finalize_hook", "UniqueId",
           "UniqueID"]

# Called with the instance id before that instance is finalized, so that packages built on
# shmem.core (shmem_torch) can detach what points into its heaps before they are unmapped.
_finalize_hooks = []


def register_finalize_hook(hook):
    """Registers ``hook(instance_id)``, called before every finalize of an instance (by this
    module's :func:`finalize`), while its symmetric heaps are still mapped.  Registering the
    same hook twice has no effect."""
    if not callable(hook):
        raise AclshmemInvalid(f"register_finalize_hook: {hook!r} is not callable")
    if hook not in _finalize_hooks:
        _finalize_hooks.append(hook)


def _before_finalize(instance_id):
    for hook in list(_finalize_hooks):
        hook(instance_id)
    _release_leftovers(instance_id)

UniqueID = UniqueId
UID_SIZE = _pyshmem.ACLSHMEM_UNIQUE_ID_SIZE


def get_version():
    """The library version as ``"libaclshmem_version=X.Y"``."""
    major, minor = _pyshmem.aclshmem_info_get_version()
    return f"libaclshmem_version={major}.{minor}"


def get_unique_id(empty=False):
    """A new unique ID as 136 bytes.  Call it in one process (e.g. rank 0) and hand the
    bytes to every PE.  ``empty`` is reserved.  Raises AclshmemError on failure."""
    uid = UniqueId()
    rc = _pyshmem.aclshmemx_get_uniqueid(uid)
    if rc != _pyshmem.ACLSHMEM_SUCCESS:
        raise native_error("get_unique_id (aclshmemx_get_uniqueid)", rc)
    return uid.to_bytes()


def _uid_bytes(uid):
    if isinstance(uid, UniqueId):
        return uid.to_bytes()
    if isinstance(uid, (bytes, bytearray, memoryview)):
        data = bytes(uid)
        if len(data) != UID_SIZE:
            raise AclshmemInvalid(f"uid must be exactly {UID_SIZE} bytes, not {len(data)}")
        return data
    raise AclshmemInvalid(f"uid must be a UniqueID or its {UID_SIZE} bytes, not {type(uid).__name__}")


def init(device=None, uid=None, rank=None, nranks=None, mpi_comm=None, initializer_method="",
         mem_size=None, instance_id=0):
    """Collective: joins the job identified by ``uid`` as PE ``rank`` of ``nranks`` with a
    symmetric heap of ``mem_size`` bytes, as instance ``instance_id`` (0..254).

    ``device`` and ``mpi_comm`` are reserved.  ``initializer_method`` is "uid" (or empty).
    Without ``uid``, the unique ID, rank and PE count come from ``python -m shmem.run`` or
    ``torchrun`` (see ``shmem._bootstrap``); ``mem_size`` may then also come from the
    launcher's ``--mem-size``.  Raises AclshmemInvalid for missing or bad arguments and
    AclshmemError when the library fails.
    """
    instance_id = check_instance_id(instance_id)
    if not isinstance(initializer_method, str) or initializer_method not in ("", "uid"):
        raise AclshmemInvalid(f"initializer_method must be \"uid\", not {initializer_method!r}")

    if mem_size is None:
        try:
            mem_size = _bootstrap.default_mem_size()
        except ValueError as exc:
            raise AclshmemInvalid(f"{_bootstrap.ENV_MEM_SIZE}: {exc}") from None
        if mem_size is None:
            raise AclshmemInvalid("mem_size is required: the symmetric heap size of each PE, in bytes")
    mem_size = check_int(mem_size, "mem_size", 1)
    if rank is not None:
        check_int(rank, "rank", 0)
    if nranks is not None:
        check_int(nranks, "nranks", 1, _pyshmem.ACLSHMEM_MAX_PES)

    server = None
    if uid is not None:
        uid_data = _uid_bytes(uid)
        if rank is None or nranks is None:
            raise AclshmemInvalid("init with a uid also needs rank and nranks")
    else:
        try:
            env = _bootstrap.launcher_env()
        except _bootstrap.BootstrapError as exc:
            raise AclshmemInvalid(f"init: {exc}") from None
        if env is not None:
            if instance_id != 0:
                raise AclshmemInvalid(
                    "init: the launcher's unique ID serves instance 0; pass uid= (one unique ID per "
                    "instance, e.g. made by rank 0 and handed to every PE) for other instances")
            uid_data, env_rank, env_n = env
            rank = env_rank if rank is None else rank
            nranks = env_n if nranks is None else nranks
        else:
            try:
                tr = _bootstrap.torchrun_env()
            except _bootstrap.BootstrapError as exc:
                raise AclshmemInvalid(f"init: {exc}") from None
            if tr is None:
                raise AclshmemInvalid(
                    "init needs uid, rank and nranks (rank 0 makes the uid with get_unique_id() and "
                    "hands the bytes to every PE), or a launcher: python -m shmem.run -n N prog.py, "
                    "or torchrun")
            t_rank, t_world, host, port = tr
            rank = t_rank if rank is None else rank
            nranks = t_world if nranks is None else nranks
            if not 0 <= rank < nranks:
                raise AclshmemInvalid(f"rank must satisfy 0 <= rank < nranks, not rank={rank}, nranks={nranks}")
            try:
                uid_data, server = _bootstrap.torchrun_uid(
                    rank, nranks, host, port, instance_id, lambda: get_unique_id())
            except _bootstrap.BootstrapError as exc:
                raise AclshmemError(f"init: {exc}") from None

    check_int(rank, "rank", 0)
    check_int(nranks, "nranks", 1, _pyshmem.ACLSHMEM_MAX_PES)
    if not rank < nranks:
        raise AclshmemInvalid(f"rank must satisfy 0 <= rank < nranks, not rank={rank}, nranks={nranks}")

    try:
        with _instance_lock:
            attr = _pyshmem.InitAttr()
            rc = _pyshmem.aclshmemx_set_attr_uniqueid_args(rank, nranks, mem_size, uid_data, attr)
            if rc != _pyshmem.ACLSHMEM_SUCCESS:
                raise native_error("init (aclshmemx_set_attr_uniqueid_args)", rc)
            attr.instance_id = instance_id
            rc = _pyshmem.aclshmemx_init_attr(InitMode.UNIQUEID, attr)
            if rc != _pyshmem.ACLSHMEM_SUCCESS:
                raise native_error(f"init of instance {instance_id} as PE {rank} of {nranks}", rc)
            _take_leftovers(instance_id)  # nothing can be left of an earlier life of this ID
    finally:
        if server is not None:
            server.close()


def _release_leftovers(instance_id):
    leftovers = _take_leftovers(instance_id)
    if not leftovers:
        return
    total = 0
    for _addr, (length, _mem_type, ref) in leftovers.items():
        total += length
        buf = ref()
        if buf is not None:
            buf._released = True
    warnings.warn(
        f"finalize: {len(leftovers)} symmetric buffer(s) of instance {instance_id} ({total} bytes) "
        "were not freed; finalize releases them, and Buffer objects that refer to them must not "
        "be used any more",
        AclshmemWarning,
        stacklevel=3,
    )


def finalize(instance_id=None):
    """Collective: finalises the active instance, or ``instance_id`` (0..254).

    Buffers of that instance that were not freed are released (with a warning)."""
    with _instance_lock:
        if instance_id is None:
            target = active_instance_id()
            if target is None:
                raise AclshmemError("finalize: no instance is initialised")
            _before_finalize(target)
            rc = _pyshmem.aclshmem_finalize()
            api = "finalize"
        else:
            target = check_instance_id(instance_id)
            _before_finalize(target)
            rc = _pyshmem.aclshmemx_finalize(target)
            api = f"finalize({target})"
        if rc != _pyshmem.ACLSHMEM_SUCCESS:
            raise native_error(api, rc)
