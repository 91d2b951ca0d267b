"""A PE that never arrives: init gives up after shm_init_timeout seconds."""
import os
import time

from shmem import _bootstrap
from shmem import _pyshmem as low

uid, rank, n = _bootstrap.launcher_env()       # what python -m shmem.run handed over
if rank == 1:
    time.sleep(60)                              # PE 1 is late (stuck, or never started)
attr = low.InitAttr()
low.aclshmemx_set_attr_uniqueid_args(rank, n, 16 << 20, uid, attr)
attr.option_attr.shm_init_timeout = 2           # seconds (default 120)
rc = low.aclshmemx_init_attr(low.InitMode.UNIQUEID, attr)
print(f"PE {rank}: init returned {low.ERROR_NAMES[rc]}: {low.aclshmemx_get_last_error()}")
os._exit(1)
