"""Byte sizes as people write them: the one parser and the one formatter of the project.

``parse_size`` reads the sizes of ``python -m shmem.run --mem-size``,
``SHMEM_RUN_MEM_SIZE``, shmem-torch's ``SHMEM_TORCH_POOL_SIZE`` / ``SHMEM_TORCH_CHUNK_SIZE``
and the ``--min-size`` / ``--max-size`` options of shmem-perf and the benchmarks;
``format_size`` writes the sizes of their tables.  Units are binary whatever their
spelling (``K``, ``KB`` and ``KiB`` all mean 1024), as they always were here.

shmem-torch and shmem-tools import this module; it imports nothing of the project, so
the dependencies keep running one way (towards shmem-core).
"""

import re

# Bytes per unit letter; B, KB and KiB spellings map to the same letter.
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
# A decimal number, optional blanks, then a unit: B, or K/M/G/T followed by nothing,
# B or iB (any case).
_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(?:([KMGT])(?:I?B)?|B)?\s*$", re.IGNORECASE)
_HOW = "a number of bytes, optionally with a binary unit: 8, 4K, 64MiB, 1.5G"
# The largest size: sizes are size_t or uint64_t in the C library (and shmem-torch's).
LARGEST = (1 << 64) - 1
# Digits that can matter: a whole part of more than 20 digits is above LARGEST whatever the
# unit, and a fraction of more than 40 digits (trailing zeros dropped) is never a whole
# number of bytes, even in T (2**40).  (Checked before int() meets thousands of digits.)
_MAX_WHOLE_DIGITS, _MAX_FRACTION_DIGITS = 20, 40


def parse_size(text):
    """Bytes (an int, 0 <= bytes <= LARGEST) from an int or from text such as "4096",
    "64M", "64 MiB", "1.5G" or "512kb".  Raises ValueError, naming the text, when it is not
    such a size, is negative, is not a whole number of bytes ("1.5" or "0.3K") or is above
    LARGEST (2**64 - 1)."""
    if isinstance(text, bool):
        raise ValueError(f"not a size: {text!r} ({_HOW})")
    if isinstance(text, int):
        if text < 0:
            raise ValueError(f"a size cannot be negative: {text}")
        return _at_most_largest(text, text)
    match = _SIZE.match(str(text))
    if not match:
        raise ValueError(f"not a size: {text!r} ({_HOW})")
    number, unit = match.group(1), (match.group(2) or "").upper()
    whole, _, fraction = number.partition(".")
    whole, fraction = whole.lstrip("0"), fraction.rstrip("0")
    if len(whole) > _MAX_WHOLE_DIGITS:
        raise _too_large(text)
    if len(fraction) > _MAX_FRACTION_DIGITS:
        raise ValueError(f"not a whole number of bytes: {text!r}")
    # Exact arithmetic: 1.1M must not become 1153433.6000000001 and be rounded down.
    numerator = int(whole or "0") * 10 ** len(fraction) + int(fraction or "0")
    value, rest = divmod(numerator * _UNITS[unit], 10 ** len(fraction))
    if rest:
        raise ValueError(f"not a whole number of bytes: {text!r}")
    return _at_most_largest(value, text)


def _too_large(text):
    return ValueError(f"too large: {text!r} is more than {LARGEST} bytes (2**64 - 1), the most any size can be")


def _at_most_largest(value, text):
    if value > LARGEST:
        raise _too_large(text)
    return value


def format_size(nbytes):
    """The size in the largest binary unit that divides it exactly: "64 MiB" for
    64 << 20, "3 KiB" for 3072, "1000 B" for 1000 (always a whole number, so a table
    shows the exact size)."""
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale and nbytes % scale == 0:
            return f"{nbytes // scale} {unit}"
    return f"{nbytes} B"
