"""The plain-text tables of shmem-perf, shmem-prof and shmem-config, drawn by tabulate.

tabulate's "simple" format is the look these tables always had: columns two spaces
apart under a rule of dashes, no borders, so they read the same in a terminal, a log
file or a CI page, and they never wrap at the terminal's width.
"""

import sys

from tabulate import tabulate


def render(header, rows, left=()):
    """The table as text: ``header`` the column titles, ``rows`` lists of cell texts
    (shown exactly as given: no number parsing turns "0.50" into "0.5"), every column
    right-aligned but those whose index is in ``left``."""
    align = ["left" if i in left else "right" for i in range(len(header))]
    return tabulate(rows, headers=header, tablefmt="simple", disable_numparse=True, colalign=align)


def write(path, text):
    """Writes a table's text (or its CSV or JSON) to path, or to standard output for "-"."""
    if path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
