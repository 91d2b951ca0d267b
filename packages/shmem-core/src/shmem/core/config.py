"""Engine workspace settings of the active instance."""

from typing import Tuple

from .. import _pyshmem
from .utils import UINT32_MAX, check_int, check_rc

__all__ = ["set_mte_config", "set_sdma_config", "set_rdma_config", "set_udma_config"]

_UINT64_MAX = 2 ** 64 - 1


def _args(offset: int, ub_size: int, sync_id: int, min_ub: int) -> Tuple[int, int, int]:
    return (check_int(offset, "offset", 0, _UINT64_MAX),
            check_int(ub_size, "ub_size", min_ub, UINT32_MAX),
            check_int(sync_id, "sync_id", 0, UINT32_MAX))


def set_mte_config(offset: int, ub_size: int, sync_id: int) -> None:
    """MTE workspace: offset in [0, 2**64-1], ub_size and sync_id in [0, 2**32-1]."""
    check_rc("set_mte_config", _pyshmem.aclshmemx_set_mte_config(*_args(offset, ub_size, sync_id, 0)))


def set_sdma_config(offset: int, ub_size: int, sync_id: int) -> None:
    """SDMA workspace: offset in [0, 2**64-1], ub_size and sync_id in [0, 2**32-1]."""
    check_rc("set_sdma_config", _pyshmem.aclshmemx_set_sdma_config(*_args(offset, ub_size, sync_id, 0)))


def set_rdma_config(offset: int, ub_size: int, sync_id: int) -> None:
    """RDMA workspace: ub_size in [128, 2**32-1]."""
    check_rc("set_rdma_config", _pyshmem.aclshmemx_set_rdma_config(*_args(offset, ub_size, sync_id, 128)))


def set_udma_config(offset: int, ub_size: int, sync_id: int) -> None:
    """UDMA workspace: ub_size in [128, 2**32-1]."""
    check_rc("set_udma_config", _pyshmem.aclshmemx_set_udma_config(*_args(offset, ub_size, sync_id, 128)))
