"""The exceptions of the ``shmem`` package, in a module of their own so that both layers
raise the same classes: ``shmem._pyshmem`` (for the few calls whose failure it reports as
an exception) and ``shmem.core``, which re-exports them."""

from typing import Optional

__all__ = ["AclshmemError", "AclshmemInvalid", "AclshmemWarning"]


class AclshmemError(RuntimeError):
    """A libaclshmem call failed; the message carries the library's own explanation."""

    def __init__(self, msg: str, code: Optional[int] = None) -> None:
        super().__init__(msg)
        self.msg = msg
        self.code = code


class AclshmemInvalid(ValueError):
    """An argument was rejected before anything reached the library."""

    def __init__(self, msg: str) -> None:
        super().__init__(msg)
        self.msg = msg


class AclshmemWarning(UserWarning):
    """Something was wrong but could be repaired (e.g. buffers left at finalize)."""


# Their public home is shmem.core (the seed's names): tracebacks, reprs and pickles say
# shmem.core.AclshmemError, not the private module that defines them.
for _cls in (AclshmemError, AclshmemInvalid, AclshmemWarning):
    _cls.__module__ = "shmem.core"
del _cls
