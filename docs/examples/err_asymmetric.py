"""A collective allocation whose size differs between PEs fails on every PE."""
import shmem.core as core

core.init(mem_size=16 << 20)
me = core.my_pe()
try:
    core.buffer(4096 if me == 0 else 8192)     # wrong: PE 1 asks for more
except core.AclshmemError as exc:
    print(f"PE {me}: {exc}")
core.finalize()
