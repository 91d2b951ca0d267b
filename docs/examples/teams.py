"""Teams: the even PEs form a team; each member learns its number in it.

    python -m shmem.run -n 4 teams.py
"""
from shmem import _pyshmem as low
import shmem.core as core

core.init(mem_size=16 << 20)
me, n = core.my_pe(), core.n_pes()

# Collective over the parent team (the world): every PE calls it with the same arguments.
evens = low.team_split_strided(core.ACLSHMEM_TEAM_WORLD, 0, 2, (n + 1) // 2)
if evens == core.ACLSHMEM_TEAM_INVALID:
    print(f"PE {me}: not in the team of even PEs")
else:
    core.barrier(evens)                 # only the members take part
    rank = core.team_my_pe(evens)
    back = low.team_translate_pe(evens, rank, core.ACLSHMEM_TEAM_WORLD)
    print(f"PE {me}: member {rank} of {core.team_n_pes(evens)} in the even team "
          f"(world PE {back})")
    low.team_destroy(evens)
core.barrier_all()
core.finalize()
