"""Two instances in one job: a second, independent SHMEM world with its own heap.

    python -m shmem.run -n 2 instances.py

The launcher's unique ID serves instance 0.  PE 0 makes another ID for instance 1 and
hands it to the others through instance 0's symmetric memory.
"""
import shmem.core as core

core.init(mem_size=16 << 20)                       # instance 0, from the launcher
me, n = core.my_pe(), core.n_pes()
box = core.buffer(136)
if me == 0:
    box.numpy()[:] = list(core.get_unique_id())    # the 136 bytes of a fresh unique ID
core.barrier_all()
uid = core.buffer(136)
core.get(uid, box, 0)
core.synchronize(0)
core.init(uid=bytes(uid.numpy()), rank=me, nranks=n, mem_size=8 << 20, instance_id=1)

print(f"PE {me}: instance {core.current_instance()} is still the active one")
with core.multi_instance(1):                       # instance 1 inside the block
    a = core.buffer(64)                            # from instance 1's heap
    print(f"PE {me}: inside the block: instance {core.current_instance()}, "
          f"buffer of instance {a.instance_id}")
    core.free(a)
core.finalize(1)                                   # collective, like init
core.free(uid)
core.free(box)
core.finalize(0)
