"""Shared fixtures of the shmem-core tests.

The tests run real multi-PE jobs (processes, sockets, shared memory) through
``shmem.testing.run_pes``.  They need libaclshmem: installed with the ``shmem-native``
wheel, or built and named by ``ACLSHMEM_LIBRARY``.  The header test needs the include
folder: ``ACLSHMEM_INCLUDE_DIR``, the ``shmem_native`` package, or this repository.
"""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
# The job modules (jobs_*.py) live next to the tests; PEs import them from sys.path.
if HERE not in sys.path:
    sys.path.insert(0, HERE)

# Running from a source checkout without installing: use the package next to the tests.
try:
    import shmem  # noqa: F401  (installed, or found next to the tests)
except ImportError:  # pragma: no cover - depends on the environment
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))


def include_dir():
    """The folder holding aclshmem.h, or None."""
    env = os.environ.get("ACLSHMEM_INCLUDE_DIR")
    if env:
        return env
    try:
        import shmem_native

        d = shmem_native.include_dir()
        if os.path.isfile(os.path.join(d, "aclshmem.h")):
            return d
    except Exception:
        pass
    repo = os.path.normpath(os.path.join(HERE, "..", "..", "shmem-native", "include"))
    if os.path.isfile(os.path.join(repo, "aclshmem.h")):
        return repo
    return None


@pytest.fixture(scope="session")
def lib():
    """The loaded library (fails, never skips, when it cannot be loaded)."""
    from shmem import _native

    return _native.load()[1]
