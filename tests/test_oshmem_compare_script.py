"""benchmarks/oshmem_compare.py: ``shmem-perf --oshmem`` run from a
checkout with Python's standard library alone (``python -S``: no site packages), for a meson
build that no Python package loads, with the headers of this source tree."""

import os
import sys

from integration_helpers import REPO, run

RUN_PY = os.path.join(REPO, "benchmarks", "oshmem_compare.py")


def test_it_runs_the_tools_module_without_site_packages():
    r = run([sys.executable, "-S", RUN_PY, "--help"])
    assert r.stdout.startswith("usage: oshmem_compare.py") and "--build-dir" in r.stdout and "--include" in r.stdout


def test_a_build_directory_without_the_library_is_refused(tmp_path):
    r = run([sys.executable, "-S", RUN_PY, "--build-dir", str(tmp_path)], check=False)
    assert r.returncode == 1
    assert f"oshmem_compare.py: --build-dir {tmp_path}: no libaclshmem.so" in r.stderr
