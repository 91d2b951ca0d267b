"""PE functions for test_testing.py (module level, so run_pes can pickle them)."""

import os
import time

from shmem import core, testing


def rank_times(k):
    print(f"hello from {core.my_pe()}")
    return core.my_pe() * k


def fails_on_one():
    if core.my_pe() == 1:
        raise ValueError("PE 1 does not like this")
    time.sleep(60)


def hangs():
    if core.my_pe() == 0:
        time.sleep(600)
    return "done"


def not_initialised():
    from shmem import _pyshmem

    assert _pyshmem.aclshmemx_init_status() is _pyshmem.InitStatus.NOT_INITIALIZED
    value = testing.broadcast({"from": testing.pe()} if testing.pe() == 1 else None, root=1)
    return (testing.pe(), testing.npes(), value)


def ends_early(everywhere):
    core.barrier_all()  # every PE is done with init before any leaves
    if everywhere or core.my_pe() == 1:
        testing.exit_pe(f"bye {core.my_pe()}")
    return "normal"  # then finalize, which needs PE 1


def unpicklable_result():
    return lambda: 1


def crashes():
    if core.my_pe() == 0:
        os._exit(9)
    time.sleep(60)
