"""Helpers shared by shmem-perf (perf.py) and its sub-benchmarks (_dist_bench, _dist_nodes, _py_bench).

They live beneath all of them so imports run one way: the CLI imports the sub-benchmarks,
and both import this module, never each other.
"""

import argparse
import socket
import time

from shmem import _sizes

from ._table import render


def parse_size(text):
    """A message size of the command line (--min-size 4K): shmem's one size parser, its
    error shown by argparse, and at least one byte."""
    try:
        value = _sizes.parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"size must be positive: {text!r}")
    return value


def free_port():
    """A TCP port of 127.0.0.1 free right now (for a rendezvous such as gloo's)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Table:
    """One result table: its text rows for the terminal and a record per row for CSV / JSON."""

    def __init__(self, name, title, baseline, columns):
        self.name = name
        self.title = title
        self.baseline = baseline
        self.columns = columns  # header texts
        self.rows = []          # lists of cell texts
        self.records = []       # dicts for CSV / JSON

    def add(self, cells, **record):
        self.rows.append(cells)
        self.records.append(record)

    def render(self):
        return f"# {self.title}\n# baseline: {self.baseline}\n" + render(self.columns, self.rows)


def mean_time(fn, iters, barrier):
    """Seconds per call of fn over iters calls, timed from the end of barrier() (the ranks
    start together)."""
    barrier()
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
    return (time.perf_counter() - t0) / iters
