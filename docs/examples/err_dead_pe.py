"""A PE that leaves without finalize: the others' next collective fails, naming it."""
import os

import shmem.core as core

core.init(mem_size=16 << 20)
if core.my_pe() == 1:
    os._exit(0)                                 # gone, without finalize
try:
    core.barrier_all()
except core.AclshmemError as exc:
    print(f"PE 0: {exc}")
