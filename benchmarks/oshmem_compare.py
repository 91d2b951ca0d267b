#!/usr/bin/env python3
"""libaclshmem against Open MPI's OSHMEM, side by side in one run, from this checkout.

The comparison is shmem-tools' (``shmem-perf --oshmem``; its program and its tables are in
packages/shmem-tools/src/shmem_tools/_oshmem.py and oshmem_bench.c).  This script runs that
module from the checkout with Python's standard library alone, for a meson build of the
library that no Python package loads, and takes the headers from this source tree:

    python3 benchmarks/oshmem_compare.py --build-dir /tmp/bld --rounds 5
    python3 benchmarks/oshmem_compare.py --help     # every option
"""

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "packages" / "shmem-tools" / "src"))

from shmem_tools import _oshmem  # noqa: E402  (after the path it comes from)


def main(argv):
    if not any(a == "--include" or a.startswith("--include=") for a in argv):
        argv = ["--include", str(REPO / "packages" / "shmem-native" / "include"), *argv]
    return _oshmem.main(argv, prog="oshmem_compare.py")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
