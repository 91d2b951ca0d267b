"""Shared helpers of the shmem-tools tests (a plain module, so that its name cannot clash
with another package's conftest when several test folders run in one session).

The tools run as separate processes, as a user runs them: the console script when it is
installed next to this interpreter (pip install), else ``python -m shmem_tools.<module>``
(a source tree on PYTHONPATH)."""

import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
MODULES = {"shmem-config": "shmem_tools.config", "shmem-perf": "shmem_tools.perf", "shmem-prof": "shmem_tools.prof"}


def command(name):
    script = os.path.join(os.path.dirname(sys.executable), name)
    if os.path.isfile(script) and os.access(script, os.X_OK):
        return [script]
    return [sys.executable, "-m", MODULES[name]]


def copy_library(src, dest):
    """Copies libaclshmem to ``dest`` so that the copy loads too: a released shmem-native
    wheel's library finds its OpenSSL, which auditwheel put in shmem_native.libs/, through
    the RPATH $ORIGIN/../shmem_native.libs, so that folder goes beside dest's folder."""
    shutil.copy(src, dest)
    grafted = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(src))), "shmem_native.libs")
    target = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(dest))), "shmem_native.libs")
    if os.path.isdir(grafted) and not os.path.isdir(target):
        shutil.copytree(grafted, target)


def clean_env(**extra):
    """The environment of a tool run: ours, without variables that would change which
    library loads or which PE is profiled, plus ``extra``."""
    env = dict(os.environ)
    for key in ("SHMEM_CYCLE_PROF_PE", "SHMEM_RUN_UID", "SHMEM_RUN_PE", "SHMEM_RUN_NPES"):
        env.pop(key, None)
    # A source-tree run: make the children import what this process imports.
    paths = [p for p in sys.path if p and os.path.isdir(p)]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env.update(extra)
    return env


def run_tool(name, *args, env=None, timeout=120, cwd=None):
    return subprocess.run(command(name) + list(args), capture_output=True, text=True, timeout=timeout,
                          env=env if env is not None else clean_env(), cwd=cwd)


def have_matplotlib():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


needs_matplotlib = pytest.mark.skipif(not have_matplotlib(),
                                      reason="matplotlib is not installed (pip install 'shmem-tools[plot]')")


def is_png(path):
    with open(path, "rb") as f:
        return f.read(8) == b"\x89PNG\r\n\x1a\n"
