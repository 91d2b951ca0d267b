"""shmem_tools: command-line tools for SHMEM.

Not implemented yet.  This package will provide ``shmem-config`` (install paths,
compiler and linker flags, ``--diagnose``, ``--check``), ``shmem-perf`` (benchmarks
with tables and plots) and a viewer for cycle profiles.  For now it only carries its
version.
"""

__version__ = "0.1.0"
