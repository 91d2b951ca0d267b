"""The runtime state of ``shmem.core`` that several API modules share, beneath all of them.

It holds the lock that serialises instance switching against the checks that read the
active instance, and the finalize hooks: ``stream`` registers its hooks here and
``init_final`` runs them, so neither has to import the other.
"""

import threading
from typing import Callable, List

from .._errors import AclshmemInvalid

__all__ = ["instance_lock", "register_finalize_hook", "run_finalize_hooks"]

# Serialises instance switching (multi_instance) against the checks that read the active
# instance.
instance_lock = threading.RLock()

# Called with the instance id before that instance is finalized, so that packages built on
# shmem.core (shmem_torch) can detach what points into its heaps before they are unmapped.
_finalize_hooks: List[Callable[[int], object]] = []


def register_finalize_hook(hook: Callable[[int], object]) -> None:
    """Registers ``hook(instance_id)``, called before every finalize of an instance (by
    :func:`shmem.core.finalize`), while its symmetric heaps are still mapped.  Registering
    the same hook twice has no effect."""
    if not callable(hook):
        raise AclshmemInvalid(f"register_finalize_hook: {hook!r} is not callable")
    if hook not in _finalize_hooks:
        _finalize_hooks.append(hook)


def run_finalize_hooks(instance_id: int) -> None:
    """Calls every registered hook with ``instance_id``, in the order they were registered."""
    for hook in list(_finalize_hooks):
        hook(instance_id)
