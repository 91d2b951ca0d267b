"""The staging area of the shmem_torch collectives (shmem_torch.staging) in small heaps:
it is made with the first symmetric tensor and leaves the heap's room to the program; a
heap without room for it still serves symmetric tensors, and a collective that would
stage says why it cannot.  Each job runs on 2 PEs with a 1 MiB heap."""

import pytest

pytest.importorskip("torch", reason="shmem-torch needs torch")

from conftest import PE_ENV  # noqa: E402
from shmem import testing  # noqa: E402


def collectives_in_a_small_heap():
    """Returns (all_reduce result, reduce_scatter result or the error's text, warnings at
    finalize) of this PE."""
    import warnings

    import torch

    import shmem_torch as st
    from shmem import core
    from shmem.core import AclshmemInvalid

    me, n = core.my_pe(), core.n_pes()
    t = st.full((1000,), me + 1, dtype=torch.float32)  # the first tensor: the area comes with it
    st.all_reduce(t)  # symmetric: needs no area
    reduced = float(t[0])
    inp = st.full((n * 1000,), me + 1, dtype=torch.float32)
    out = torch.empty(1000)
    try:
        st.reduce_scatter(out, inp)  # an ordinary output: through the area
        staged = float(out[0])
    except AclshmemInvalid as exc:
        staged = str(exc)
    st.aclshmem_free_tensor(inp)
    st.aclshmem_free_tensor(t)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        core.finalize()
    return reduced, staged, [str(w.message) for w in caught]


def _run(env):
    return testing.run_pes(2, collectives_in_a_small_heap, mem_size=1 << 20, timeout=180, env={**PE_ENV, **env},
                           echo=False)


def test_default_area_leaves_room_in_a_small_heap():
    for reduced, staged, caught in _run({}):
        assert reduced == 3.0 and staged == 3.0, (reduced, staged)
        assert not caught, caught  # the area is freed at finalize like the program's tensors


def test_no_room_for_the_area_is_a_clear_error():
    for reduced, staged, caught in _run({"SHMEM_TORCH_STAGING_SIZE": "2M"}):
        assert reduced == 3.0, reduced
        assert isinstance(staged, str) and "no staging area" in staged and "SHMEM_TORCH_STAGING_SIZE" in staged, staged
        assert not caught, caught
