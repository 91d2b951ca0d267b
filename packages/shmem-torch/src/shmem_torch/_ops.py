"""The shmem_torch collectives as torch custom ops, for torch.compile.

``shmem_torch.all_reduce`` and the other collectives that ``shmem_torch`` exports are thin
wrappers: run eagerly they call the functions of ``shmem_torch.collectives`` directly
(nothing added but one check); traced by torch.compile they call
``torch.ops.shmem_torch.<name>``, custom ops (``torch.library.custom_op``) that mutate
their output tensor in place and have fake implementations, so a compiled function that
calls them is one graph, without a break for them.

=====================================  ==============================================
op                                     eager function
=====================================  ==============================================
shmem_torch::all_reduce(t!, op, team)  collectives.all_reduce(t, op, team)
shmem_torch::broadcast(t!, root, team) collectives.broadcast(t, root, team)
shmem_torch::all_gather(out!, in, team) collectives.all_gather(out, in, team)
shmem_torch::reduce_scatter(out!, in,  collectives.reduce_scatter(out, in, op, team)
op, team)
shmem_torch::all_to_all(out!, in,      collectives.all_to_all(out, in, team)
team)
shmem_torch::barrier(t!, team)         collectives.barrier(team) (``t``: a token the
                                       op "mutates", so the barrier stays in order)
=====================================  ==============================================
"""

import functools

import torch

from . import collectives as _c
from shmem.core import AclshmemInvalid


def _run(name, team, direct, *tensors, **kw):
    """The op's implementation: the collective itself when the tensors are as it needs
    (symmetric); otherwise (torch.compile passes copies of mutated tensors, or the caller
    passed ordinary tensors) staged through the "shmem" process group or temporary
    symmetric tensors (shmem_torch.backend.staged)."""
    try:
        direct()
        return
    except AclshmemInvalid as exc:
        if "not a symmetric tensor" not in str(exc) and "must be symmetric" not in str(exc) and \
                "must be a symmetric" not in str(exc):
            raise
    from . import backend

    backend.staged(name, team, *tensors, **kw)

__all__ = ["all_reduce", "broadcast", "all_gather", "reduce_scatter", "all_to_all", "barrier"]


@torch.library.custom_op("shmem_torch::all_reduce", mutates_args=("tensor",))
def _all_reduce(tensor: torch.Tensor, op: str, team: int) -> None:
    _run("all_reduce", team, lambda: _c.all_reduce(tensor, op, team), tensor, op=op)


@_all_reduce.register_fake
def _(tensor, op, team):
    return None


@torch.library.custom_op("shmem_torch::broadcast", mutates_args=("tensor",))
def _broadcast(tensor: torch.Tensor, root: int, team: int) -> None:
    _run("broadcast", team, lambda: _c.broadcast(tensor, root, team), tensor, root=root)


@_broadcast.register_fake
def _(tensor, root, team):
    return None


@torch.library.custom_op("shmem_torch::all_gather", mutates_args=("output",))
def _all_gather(output: torch.Tensor, input: torch.Tensor, team: int) -> None:
    _run("all_gather", team, lambda: _c.all_gather(output, input, team), output, input)


@_all_gather.register_fake
def _(output, input, team):
    return None


@torch.library.custom_op("shmem_torch::reduce_scatter", mutates_args=("output",))
def _reduce_scatter(output: torch.Tensor, input: torch.Tensor, op: str, team: int) -> None:
    _run("reduce_scatter", team, lambda: _c.reduce_scatter(output, input, op, team), output, input, op=op)


@_reduce_scatter.register_fake
def _(output, input, op, team):
    return None


@torch.library.custom_op("shmem_torch::all_to_all", mutates_args=("output",))
def _all_to_all(output: torch.Tensor, input: torch.Tensor, team: int) -> None:
    _run("all_to_all", team, lambda: _c.all_to_all(output, input, team), output, input)


@_all_to_all.register_fake
def _(output, input, team):
    return None


@torch.library.custom_op("shmem_torch::barrier", mutates_args=("token",))
def _barrier(token: torch.Tensor, team: int) -> None:
    _c.barrier(team)


@_barrier.register_fake
def _(token, team):
    return None


def _op(op):
    return _c.op_name(op)


def _compiling():
    return torch.compiler.is_compiling()


@functools.wraps(_c.all_reduce)
def all_reduce(tensor, op="sum", team=0):
    if _compiling():
        torch.ops.shmem_torch.all_reduce(tensor, _op(op), team)
        return tensor
    return _c.all_reduce(tensor, op, team)


@functools.wraps(_c.broadcast)
def broadcast(tensor, root=0, team=0):
    if _compiling():
        torch.ops.shmem_torch.broadcast(tensor, root, team)
        return tensor
    return _c.broadcast(tensor, root, team)


@functools.wraps(_c.all_gather)
def all_gather(output, input, team=0):
    if _compiling():
        torch.ops.shmem_torch.all_gather(output, input, team)
        return output
    return _c.all_gather(output, input, team)


@functools.wraps(_c.reduce_scatter)
def reduce_scatter(output, input, op="sum", team=0):
    if _compiling():
        torch.ops.shmem_torch.reduce_scatter(output, input, _op(op), team)
        return output
    return _c.reduce_scatter(output, input, op, team)


@functools.wraps(_c.all_to_all)
def all_to_all(output, input, team=0):
    if _compiling():
        torch.ops.shmem_torch.all_to_all(output, input, team)
        return output
    return _c.all_to_all(output, input, team)


_token = None


@functools.wraps(_c.barrier)
def barrier(team=0):
    if _compiling():
        global _token
        if _token is None:
            _token = torch.zeros(1)
        torch.ops.shmem_torch.barrier(_token, team)
        return None
    return _c.barrier(team)
