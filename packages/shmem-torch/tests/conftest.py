"""Shared set-up of the shmem-torch tests.

The tests run real multi-PE jobs (processes, sockets, shared memory) through
``shmem.testing.run_pes``; they need torch, the ``shmem`` package (shmem-core) and
libaclshmem (the ``shmem-native`` wheel, or a build named by ``ACLSHMEM_LIBRARY``).
Without torch every test is skipped.
"""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.dirname(HERE)
REPO = os.path.dirname(os.path.dirname(PACKAGE))

# The PEs import torch_checks from the sys.path run_pes hands them.
if HERE not in sys.path:
    sys.path.insert(0, HERE)
# A source checkout that was not installed: use the packages next to the tests.
try:
    import shmem_torch  # noqa: F401
except ImportError:  # pragma: no cover - depends on the environment
    sys.path.insert(0, os.path.join(PACKAGE, "src"))
try:
    import shmem  # noqa: F401
except ImportError:  # pragma: no cover
    sys.path.insert(0, os.path.join(REPO, "packages", "shmem-core", "src"))

# Every PE uses one intra-op thread: a few PEs share the machine's cores, and idle OpenMP
# workers of several PEs would fight over them.
PE_ENV = {"OMP_NUM_THREADS": "1"}


def run_group(n, group, mem_size=256 << 20, timeout=240.0, runner=None):
    """Runs the checks of ``group`` on n PEs; returns {check: [(status, text) per PE]}.
    ``runner`` is what each PE runs (default ``torch_checks.run_group``; a module of checks
    of its own, such as coll_checks, passes its ``run``, whose import registers them)."""
    import torch_checks
    from shmem import testing

    per_pe = testing.run_pes(n, runner or torch_checks.run_group, group, mem_size=mem_size, timeout=timeout,
                             env=PE_ENV, echo=False)
    merged = {}
    for name in torch_checks.names(group):
        merged[name] = [r.get(name, ("missing", "not reached: an earlier check of this PE failed"))
                        for r in per_pe]
    return merged


def assert_check(results, name):
    bad = [(pe, status, text) for pe, (status, text) in enumerate(results[name]) if status != "ok"]
    if bad:
        lines = [f"check {name} failed on PE(s) {[pe for pe, _, _ in bad]}"]
        for pe, status, text in bad[:2]:
            lines.append(f"--- PE {pe} ({status}):\n{text}")
        pytest.fail("\n".join(lines), pytrace=False)
