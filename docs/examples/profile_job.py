"""Profiling: time a frame of our own next to the library's frames, and save the profile.

    SHMEM_CYCLE_PROF_PE=0 python -m shmem.run -n 2 profile_job.py profile.json
    shmem-prof profile.json
"""
import sys

import shmem.core as core
from shmem import _pyshmem as low
from shmem_tools import prof

EXCHANGE = 0                                   # frames 0..999 are the program's own

core.init(mem_size=16 << 20)
me, n = core.my_pe(), core.n_pes()
data = core.buffer(4096)
local = core.buffer(4096)

low.aclshmemx_prof_start(EXCHANGE)
for _ in range(10):
    low.aclshmem_putmem(data.addr, local.addr, 4096, (me + 1) % n)   # frame 1000 "put"
    low.aclshmem_getmem(local.addr, data.addr, 4096, (me + 1) % n)   # frame 1001 "get"
low.aclshmem_quiet()                                                 # frame 1006 "quiet"
low.aclshmemx_prof_end(EXCHANGE)
core.barrier_all()                                                   # frame 1005 "barrier"

# Only the PE named by SHMEM_CYCLE_PROF_PE records; capture() returns None elsewhere.
saved = prof.capture(sys.argv[1], frame_names={EXCHANGE: "exchange"})
if saved:
    print(f"PE {me} saved its profile")
core.free(local)
core.free(data)
core.finalize()
