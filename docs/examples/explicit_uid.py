"""Starting PEs yourself: one process makes the unique ID and hands it to every PE.

    python explicit_uid.py 3

Any launcher works the same way (mpirun with mpi4py, a job scheduler, a shell script):
make the 136-byte ID once, give every PE the same bytes, its rank and the PE count.
"""
import multiprocessing
import sys

import shmem.core as core


def pe_main(uid, rank, nranks):
    core.init(uid=uid, rank=rank, nranks=nranks, mem_size=16 << 20, initializer_method="uid")
    table = core.calloc(nranks, 8)      # zeroed and symmetric: one int64 slot per PE
    mine = core.buffer(8)
    mine.numpy("int64")[0] = 10 * (rank + 1)
    slot = core.Buffer(table.addr + 8 * rank, 8)   # this PE's slot (a borrowed address)
    core.put(slot, mine, 0)             # every PE writes its slot on PE 0 ...
    core.synchronize(0)
    core.barrier_all()                  # ... and PE 0 reads once everyone has
    if rank == 0:
        print(f"PE 0 of {nranks} collected {table.numpy('int64').tolist()}")
    core.barrier_all()
    core.free(mine)
    core.free(table)
    core.finalize()


if __name__ == "__main__":
    nranks = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    uid = core.get_unique_id()          # 136 bytes: PE 0's address and the job's secret
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=pe_main, args=(uid, rank, nranks)) for rank in range(nranks)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    print("exit codes:", [p.exitcode for p in procs])
    sys.exit(max(p.exitcode for p in procs))
