"""SHMEM for every Linux machine: the ``shmem`` package.

* ``shmem.core``: the high-level API (``init``, ``buffer``, ``put``, ``barrier``, ...).
* ``shmem._pyshmem``: the low-level API, one function per C function of libaclshmem.
* ``python -m shmem.run -n 4 prog.py``: starts a 4-PE job on this machine.
* ``shmem.testing.run_pes(n, fn, *args)``: runs ``fn`` on n PEs (for tests).

This module re-exports the low-level names the original package has at top level
(``shmem.set_conf_store_tls``, ``shmem.aclshmem_malloc``, ...) and, when the
``shmem-torch`` package is installed, ``shmem.aclshmem_create_tensor`` and
``shmem.aclshmem_free_tensor``.

Importing ``shmem`` neither loads libaclshmem nor imports torch: the library is
loaded by the first call that needs it (so a missing library is reported then, with
every place that was searched), and the tensor functions import ``shmem_torch`` when
first looked up.
"""

import typing as _typing

from ._pyshmem import (
    InitAttr,
    InitStatus,
    OpEngineType,
    aclshmem_align,
    aclshmem_calloc,
    aclshmem_finalize,
    aclshmem_finialize,
    aclshmem_free,
    aclshmem_get_unique_id,
    aclshmem_getmem,
    aclshmem_getmem_nbi,
    aclshmem_global_exit,
    aclshmem_info_get_name,
    aclshmem_info_get_version,
    aclshmem_init,
    aclshmem_init_using_unique_id,
    aclshmem_malloc,
    aclshmem_ptr,
    aclshmem_putmem,
    aclshmem_putmem_nbi,
    aclshmem_signal_wait_until,
    aclshmem_team_get_config,
    aclshmemx_get_heap_base,
    aclshmemx_init_status,
    aclshmemx_putmem_signal,
    aclshmemx_putmem_signal_nbi,
    get_ffts_config,
    my_pe,
    pe_count,
    set_conf_store_tls,
    set_conf_store_tls_key,
    set_extern_logger,
    set_log_level,
    team_destroy,
    team_my_pe,
    team_n_pes,
    team_split_2d,
    team_split_strided,
    team_translate_pe,
)

__version__ = "0.1.0"

__all__ = [
    # init / finalize
    "aclshmem_init", "aclshmem_get_unique_id", "aclshmem_init_using_unique_id", "aclshmem_finalize",
    "aclshmem_finialize", "aclshmemx_init_status", "InitAttr", "InitStatus", "OpEngineType",
    # memory
    "aclshmem_malloc", "aclshmem_free", "aclshmem_ptr", "aclshmemx_get_heap_base", "aclshmem_calloc",
    "aclshmem_align",
    # PEs and teams
    "my_pe", "pe_count", "team_my_pe", "team_n_pes", "team_split_strided", "team_split_2d",
    "team_translate_pe", "team_destroy", "aclshmem_team_get_config",
    # TLS
    "set_conf_store_tls_key", "set_conf_store_tls",
    # RMA
    "aclshmem_putmem", "aclshmem_putmem_nbi", "aclshmem_getmem", "aclshmem_getmem_nbi",
    "aclshmemx_putmem_signal", "aclshmemx_putmem_signal_nbi", "aclshmem_signal_wait_until",
    # misc
    "get_ffts_config", "aclshmem_global_exit", "aclshmem_info_get_version", "aclshmem_info_get_name",
    "set_log_level", "set_extern_logger",
]

_TENSOR_API = ("aclshmem_create_tensor", "aclshmem_free_tensor")
_SUBMODULES = ("core", "testing", "run", "_native", "_pyshmem")

if _typing.TYPE_CHECKING:
    # What the lazy lookup below provides, spelt out for type checkers (which would take a
    # module __getattr__ to mean "any name exists" and so miss misspelt ones).
    from shmem_torch import aclshmem_create_tensor, aclshmem_free_tensor

    from . import core, run, testing


if not _typing.TYPE_CHECKING:  # a type checker sees the names above instead

    def __getattr__(name: str) -> _typing.Any:
        if name in _TENSOR_API:
            try:
                import shmem_torch
            except ImportError as exc:
                raise AttributeError(
                    f"shmem.{name} needs the shmem-torch package (and torch): pip install shmem-torch "
                    f"({exc})"
                ) from None
            value = getattr(shmem_torch, name)
            globals()[name] = value
            return value
        if name in _SUBMODULES:
            import importlib

            return importlib.import_module(f"{__name__}.{name}")
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> _typing.List[str]:
    return sorted(set(globals()) | set(_TENSOR_API) | set(_SUBMODULES))
