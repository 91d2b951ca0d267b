"""Functions for shmem.testing.run_pes: module-level, so that the PEs can import them."""
import shmem.core as core


def neighbour(scale):
    """Each PE publishes scale * its number and returns what its right neighbour published."""
    me, n = core.my_pe(), core.n_pes()
    box = core.buffer(8)
    box.numpy("int64")[0] = scale * me
    core.barrier_all()
    value = int(core.get_peer_buffer(box, (me + 1) % n).numpy("int64")[0])
    core.barrier_all()
    core.free(box)
    return value
