"""Helpers of the cross-package tests (paths of this checkout, running commands).

Importing this module also makes the packages of this checkout importable when they are
not installed (see conftest.py, which imports it first).
"""

import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = os.path.join(REPO, "packages")
DOCS = os.path.join(REPO, "docs")
SOURCES = {
    "shmem": os.path.join(PACKAGES, "shmem-core", "src"),
    "shmem_torch": os.path.join(PACKAGES, "shmem-torch", "src"),
    "shmem_tools": os.path.join(PACKAGES, "shmem-tools", "src"),
}

for _module, _src in SOURCES.items():
    try:
        __import__(_module)
    except ImportError:
        sys.path.append(_src)
        os.environ["PYTHONPATH"] = os.pathsep.join(
            [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p] + [_src])
if os.path.join(DOCS, "_ext") not in sys.path:
    sys.path.append(os.path.join(DOCS, "_ext"))


def run(cmd, env=None, timeout=300, cwd=None, check=True):
    """Runs a command and returns the CompletedProcess (text); with check, a failure
    fails the test with everything the command printed."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env,
                          timeout=timeout, cwd=cwd)
    if check and proc.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} exited with status {proc.returncode}\n--- stdout\n{proc.stdout}"
                    f"--- stderr\n{proc.stderr}", pytrace=False)
    return proc
