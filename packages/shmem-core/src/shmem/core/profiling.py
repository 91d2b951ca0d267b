"""Cycle profiling: get_prof, show_prof."""

from typing import Optional

from .. import _pyshmem
from .._pyshmem import ProfData
from .._errors import AclshmemInvalid

__all__ = ["get_prof", "show_prof", "ProfData"]


def get_prof(verbose: bool = False) -> Optional[ProfData]:
    """A deep copy of this PE's profile on the PE named by SHMEM_CYCLE_PROF_PE; None on
    other PEs.  ``verbose`` also prints it."""
    if not isinstance(verbose, bool):
        raise AclshmemInvalid(f"verbose must be a bool, not {type(verbose).__name__}")
    return _pyshmem.aclshmemx_get_prof(verbose)


def show_prof() -> None:
    """Prints the profile of the active instance (get_prof is preferred)."""
    _pyshmem.aclshmemx_show_prof()
