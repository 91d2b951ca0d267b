"""shmem_tools: command-line tools for SHMEM (libaclshmem and the ``shmem`` package).

* ``shmem-config``: install paths and compiler flags of the C library (``--include``,
  ``--lib``, ``--ldflags``, ...), ``--diagnose`` (JSON: versions, the loaded library,
  compatibility, next steps) and ``--check`` (PASS / WARN / FAIL environment checks and
  a live 2-PE self-test).  Module: ``shmem_tools.config``.
* ``shmem-perf``: OSU-style benchmarks on N PEs (put/get latency and bandwidth,
  put_signal round trip, barrier, torch all_reduce) against baselines measured in the
  same run, as tables, CSV, JSON and a plot.  Module: ``shmem_tools.perf``.
* ``shmem-prof``: the hottest frames and a blocks x frames heatmap of a cycle profile
  saved with ``shmem_tools.prof.save(core.get_prof(), path)`` or
  ``shmem_tools.prof.capture(path)``.  Module: ``shmem_tools.prof``.

Plots need matplotlib: ``pip install 'shmem-tools[plot]'``.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
