"""Checks of the collectives' thread policy, run inside a multi-PE job (test_threads.py).

The reductions run in the library's engine; the collectives' own torch operations (the
division of avg, copies of strided tensors) run with ``collectives.compute_threads``
intra-op threads, and the collectives give the caller's torch.get_num_threads() (and grad
mode) back; results do not depend on the thread count.  No check times anything.

Imported by the PEs through ``run`` (which registers the group "threads" of torch_checks).
"""

import os

import torch

from torch_checks import assert_same, check, data, me, npes, reduce_ref, same_bytes

GROUP = "threads"
# torch's default: one intra-op thread per core; and a few other settings a user may make.
USER_THREADS = sorted({1, 2, 3, os.cpu_count() or 1})


def run(group=GROUP):
    import torch_checks

    return torch_checks.run_group(group)


def _every_collective(big=False):
    """Runs every collective (every path) once; yields after each, so the caller can look
    at the thread setting in between."""
    import shmem_torch as st

    rank, n = me(), npes()
    numel = (1 << 18) if big else 1000
    numel -= numel % n
    k = numel // n
    t = st.empty(numel, dtype=torch.float32)
    t.copy_(data("thr", rank, numel, torch.float32))
    st.all_reduce(t)
    yield "all_reduce"
    st.all_reduce(t, op="avg")  # the division runs in torch
    yield "all_reduce avg"
    st.all_reduce(t[:7], op="max")  # a slice: another peer list
    yield "all_reduce of a slice"
    h = st.empty(numel, dtype=torch.bfloat16)  # accumulates in float32: conversions
    h.fill_(rank)
    st.all_reduce(h)
    yield "all_reduce bfloat16"
    out = torch.empty(k, dtype=torch.float32)
    st.reduce_scatter(out, t)
    yield "reduce_scatter"
    st.all_gather(t, torch.full((k,), float(rank)))
    yield "all_gather (symmetric output)"
    src = st.full((k,), float(rank))
    local = torch.empty(numel)
    st.all_gather(local, src)
    yield "all_gather (symmetric input)"
    st.broadcast(t, root=n - 1)
    yield "broadcast"
    st.broadcast(t.view(n, k).t(), root=0)  # not contiguous: copy_ from the root's view
    yield "broadcast (strided)"
    st.all_to_all(local, t)
    yield "all_to_all (symmetric input)"
    st.all_to_all(t, local.clone())
    yield "all_to_all (symmetric output)"
    for x in (t, h, src):
        st.aclshmem_free_tensor(x)


@check(GROUP)
def user_thread_setting_unchanged():
    """Every collective leaves torch.get_num_threads() as the caller set it, whatever it is."""
    try:
        for threads in USER_THREADS:
            for big in (False, True):
                torch.set_num_threads(threads)
                for what in _every_collective(big):
                    got = torch.get_num_threads()
                    assert got == threads, f"{what}: torch.get_num_threads() is {got}, was set to {threads}"
    finally:
        torch.set_num_threads(1)


@check(GROUP)
def grad_mode_unchanged():
    import shmem_torch as st

    t = st.ones(64)
    for enabled in (True, False):
        torch.set_grad_enabled(enabled)
        try:
            st.all_reduce(t)
            st.broadcast(t)
            assert torch.is_grad_enabled() == enabled
        finally:
            torch.set_grad_enabled(True)
    g = st.ones(8)
    g.requires_grad_(True)
    st.all_reduce(g)  # in place on a leaf that requires grad: allowed, as before
    assert torch.is_grad_enabled() and bool((g.detach() == npes()).all())
    for x in (t, g):
        st.aclshmem_free_tensor(x)


def _threads_inside(fn):
    """The torch.get_num_threads() seen by the collectives' own torch work (avg's
    division) while fn runs."""
    seen = []
    original = torch.Tensor.div_

    def spy(self, *args, **kwargs):
        seen.append(torch.get_num_threads())
        return original(self, *args, **kwargs)

    torch.Tensor.div_ = spy
    try:
        fn()
    finally:
        torch.Tensor.div_ = original
    return seen


@check(GROUP)
def compute_threads_policy():
    """By default the collectives' own torch work uses min(user's threads, cores / PEs of
    this node) threads; COMPUTE_THREADS overrides that; the caller's setting comes back
    either way."""
    import shmem_torch as st
    from shmem_torch import collectives as C

    cores = len(os.sched_getaffinity(0))
    share = max(1, cores // npes())  # every PE of this job runs on this node
    small, big = st.ones(1000), st.ones(1 << 20)
    try:
        for user in USER_THREADS:
            torch.set_num_threads(user)
            for t in (small, big):
                seen = _threads_inside(lambda: st.all_reduce(t, op="avg"))
                assert seen and set(seen) == {min(user, share)}, (user, share, seen)
                assert C.compute_threads(t.data_ptr(), user) == min(user, share)
                assert torch.get_num_threads() == user
            for forced in (1, 2):
                C.COMPUTE_THREADS = forced
                try:
                    seen = _threads_inside(lambda: st.all_reduce(big, op="avg"))
                finally:
                    C.COMPUTE_THREADS = None
                assert set(seen) == {forced}, (forced, seen)
                assert torch.get_num_threads() == user
    finally:
        torch.set_num_threads(1)
    for x in (small, big):
        st.aclshmem_free_tensor(x)


@check(GROUP)
def settings_restored_after_an_error():
    """A collective that fails on every PE (the PEs' calls do not match: the engine refuses
    them alike) raises and gives the thread setting and grad mode back."""
    import shmem_torch as st
    from shmem.core import AclshmemError, AclshmemInvalid

    t = st.ones(1 << 20)
    torch.set_num_threads(3)
    try:
        try:
            st.all_reduce(t[:1000 + me()])  # another number of elements on every PE
        except (AclshmemError, AclshmemInvalid) as exc:
            assert "all_reduce" in str(exc), exc
        else:
            raise AssertionError("all_reduce did not raise")
        assert torch.get_num_threads() == 3 and torch.is_grad_enabled()
    finally:
        torch.set_num_threads(1)
    st.all_reduce(t)  # the team works on
    assert bool((t == npes()).all())
    st.aclshmem_free_tensor(t)


@check(GROUP)
def results_do_not_depend_on_threads():
    """Bit-identical results with 1 and 2 compute threads (and the reference order)."""
    import shmem_torch as st
    from shmem_torch import collectives as C

    rank, n = me(), npes()
    numel = (1 << 20) + 13
    results = []
    for dtype in (torch.float32, torch.bfloat16):
        want = reduce_ref([data("thr-exact", i, numel, dtype) for i in range(n)], "sum")
        t = st.empty(numel, dtype=dtype)
        for forced in (1, 2):
            torch.set_num_threads(2)
            C.COMPUTE_THREADS = forced
            try:
                t.copy_(data("thr-exact", rank, numel, dtype))
                st.all_reduce(t)
            finally:
                C.COMPUTE_THREADS = None
                torch.set_num_threads(1)
            assert_same(t, want, f"{dtype} with {forced} compute threads")
            results.append(t.clone())
        assert same_bytes(results[-1], results[-2]), dtype
        st.aclshmem_free_tensor(t)


@check(GROUP)
def slices_and_reallocations():
    """Many slices of one allocation, and memory freed and allocated again (maybe at the
    same place, another dtype): every all_reduce sees the memory it is given."""
    import shmem_torch as st

    rank, n = me(), npes()
    t = st.zeros(4096, dtype=torch.int64)
    for length in range(1, 48):
        t[:length].fill_(rank + 1)
        st.all_reduce(t[:length])
        assert bool((t[:length] == n * (n + 1) // 2).all()), length
    st.aclshmem_free_tensor(t)
    for dtype in (torch.float64, torch.int32, torch.float32):
        u = st.empty(4096, dtype=dtype)
        u.fill_(rank + 1)
        st.all_reduce(u, op="max")
        assert bool((u == n).all()), dtype
        st.aclshmem_free_tensor(u)
