"""init_process_group("shmem") from a launcher's environment (torchrun, python -m shmem.run)."""

import torch.distributed as dist

import dist_checks
import shmem_torch  # noqa: F401  (registers "shmem")

dist.init_process_group("shmem")
print(dist_checks.script_env_check(), flush=True)
dist.destroy_process_group()
