"""PEs that disagree about TLS cannot talk: here PE 1 turned it off, PE 0 did not."""
import os

import shmem
import shmem.core as core

if os.environ["SHMEM_RUN_PE"] == "1":
    shmem.set_conf_store_tls(False, "")        # must be the same on every PE
core.init(mem_size=16 << 20)
core.finalize()
