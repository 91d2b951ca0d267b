"""Several instances in one process: current_instance, set_instance, multi_instance."""

from contextlib import contextmanager
from typing import Iterator

from .. import _pyshmem
from .._pyshmem import InstanceContext
from .._errors import AclshmemError
from ._state import instance_lock
from .utils import check_instance_id, check_rc

__all__ = ["current_instance", "set_instance", "multi_instance", "InstanceContext"]


def current_instance() -> int:
    """The active instance ID; AclshmemError when there is none."""
    ctx = _pyshmem.aclshmemx_instance_ctx_get()
    if ctx is None:
        raise AclshmemError("current_instance: no instance is initialised")
    return ctx.id


def set_instance(instance_id: int) -> None:
    """Makes the initialised instance ``instance_id`` (0..254) the active one."""
    iid = check_instance_id(instance_id)
    with instance_lock:
        check_rc(f"set_instance({iid})", _pyshmem.aclshmemx_instance_ctx_set(iid))


@contextmanager
def multi_instance(instance_id: int) -> Iterator[int]:
    """Makes ``instance_id`` active inside the ``with`` block and restores the previously
    active instance afterwards."""
    iid = check_instance_id(instance_id)
    with instance_lock:
        previous = current_instance()
        set_instance(iid)
        try:
            yield iid
        finally:
            ctx = _pyshmem.aclshmemx_instance_ctx_get()
            if ctx is None or ctx.id != previous:
                # The previous instance may have been finalised inside the block.
                rc = _pyshmem.aclshmemx_instance_ctx_set(previous)
                if rc != _pyshmem.ACLSHMEM_SUCCESS and _pyshmem.aclshmemx_instance_ctx_get() is not None:
                    check_rc(f"multi_instance: restoring instance {previous}", rc)
