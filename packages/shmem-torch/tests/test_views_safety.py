"""Views of symmetric tensors kept past free and finalize: no crash, no write into memory
that belongs to something else (issue 11, defect 9).  Each job runs on 2 PEs."""

import pytest

pytest.importorskip("torch", reason="shmem-torch needs torch")

from conftest import PE_ENV  # noqa: E402
from shmem import testing  # noqa: E402


def _raises(fn):
    try:
        fn()
    except (RuntimeError, ValueError) as exc:
        return str(exc)
    raise AssertionError(f"{fn} wrote into a freed tensor's memory")


def views_past_free():
    import warnings

    import torch

    import shmem_torch
    from shmem import core

    me, n = core.my_pe(), core.n_pes()
    right = (me + 1) % n
    t = shmem_torch.full((64,), me + 1, dtype=torch.int32)
    view = t[8:16]
    peer = shmem_torch.peer_tensor(t, right)
    odd = shmem_torch.peer_tensor(t.view(torch.uint8)[2:10].view(torch.int16), right)  # reinterpreted
    assert int(peer[0]) == right + 1
    start, end = t.data_ptr(), t.data_ptr() + t.nbytes
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        shmem_torch.aclshmem_free_tensor(t)
    assert any("view(s)" in str(w.message) for w in caught)
    for write in (lambda: view.add_(1), lambda: peer.fill_(7), lambda: peer[0:4].copy_(torch.zeros(4)),
                  lambda: odd.fill_(1)):
        _raises(write)  # the peer views wrote into the next allocation before
    # The memory is kept out of reuse while the views live: new tensors land elsewhere.
    fresh = [shmem_torch.zeros(64, dtype=torch.int32) for _ in range(3)]
    for f in fresh:
        assert f.data_ptr() + f.nbytes <= start or f.data_ptr() >= end, "freed memory reused under a view"
    assert int(view.sum()) == 8 * (me + 1)  # reading is harmless: the old values
    for f in fresh:
        shmem_torch.aclshmem_free_tensor(f)
    del view, peer, odd
    return True


def test_views_past_free():
    assert testing.run_pes(2, views_past_free, mem_size=16 << 20, timeout=180, env=PE_ENV) == [True, True]


def views_past_finalize():
    import warnings

    import torch

    import shmem_torch
    from shmem import core

    right = (core.my_pe() + 1) % core.n_pes()
    t = shmem_torch.full((1024,), 5, dtype=torch.float32)
    view = t[100:200]
    peer = shmem_torch.peer_tensor(t, right)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        core.finalize()  # t was never freed: finalize releases it
    # Reading kept views of unmapped heaps killed the process (SIGSEGV) before.
    got = (float(view.sum()), float(peer.sum()))
    _raises(lambda: view.fill_(1))
    _raises(lambda: peer.fill_(1))
    return got


def test_views_past_finalize():
    results = testing.run_pes(2, views_past_finalize, mem_size=16 << 20, timeout=180, env=PE_ENV)
    assert results == [(0.0, 0.0)] * 2
