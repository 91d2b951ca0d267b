"""Argument parsers for sphinx-argparse that the packages do not expose as functions.

The tools (``shmem_tools.config``, ``.perf``, ``.prof``) each have a ``_parser()``
function that sphinx-argparse calls directly.  The launcher ``python -m shmem.run``
builds its parser inside ``_parse_args(argv)``, which also parses; ``launcher_parser``
runs that function with ``ArgumentParser.parse_args`` replaced by a stub that hands the
parser back, so the documented options are always the launcher's own.
"""

import argparse


class _Captured(Exception):
    def __init__(self, parser):
        super().__init__("parser captured")
        self.parser = parser


def capture_parser(func, *args):
    """The ArgumentParser that func builds and then parses with."""
    original = argparse.ArgumentParser.parse_args

    def stub(self, *a, **k):
        raise _Captured(self)

    argparse.ArgumentParser.parse_args = stub
    try:
        func(*args)
    except _Captured as c:
        return c.parser
    finally:
        argparse.ArgumentParser.parse_args = original
    raise RuntimeError(f"{func!r} did not parse any arguments")


def launcher_parser():
    """The parser of ``python -m shmem.run``."""
    from shmem import run

    return capture_parser(run._parse_args, [])
