"""PE identity and status: my_pe, n_pes, team_my_pe, team_n_pes, init_status."""

from .. import _pyshmem
from .._pyshmem import CmpOp, InitStatus, SignalOp
from .._errors import AclshmemInvalid

ComparisonType = CmpOp

__all__ = ["my_pe", "n_pes", "team_my_pe", "team_n_pes", "init_status", "InitStatus", "SignalOp",
           "ComparisonType"]


def _team(team: object) -> int:
    if isinstance(team, bool) or not isinstance(team, int):
        raise AclshmemInvalid(f"team must be a non-bool integer team ID, not {type(team).__name__}")
    return team


def my_pe() -> int:
    """This PE's number in the world team."""
    return _pyshmem.my_pe()


def n_pes() -> int:
    """The number of PEs in the world team."""
    return _pyshmem.pe_count()


def team_my_pe(team: int) -> int:
    """This PE's number in ``team``; -1 if the team is invalid."""
    return _pyshmem.team_my_pe(_team(team))


def team_n_pes(team: int) -> int:
    """The number of PEs in ``team``; -1 if the team is invalid."""
    return _pyshmem.team_n_pes(_team(team))


def init_status() -> InitStatus:
    """The InitStatus of the active instance."""
    return _pyshmem.aclshmemx_init_status()
