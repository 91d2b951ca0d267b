"""The one size parser and formatter (shmem._sizes) that the launcher, shmem-torch's
pool variables, shmem-perf and the benchmarks share."""

import pytest

from shmem._sizes import format_size, parse_size


@pytest.mark.parametrize("text, expected", [
    ("0", 0),
    ("4096", 4096),
    (" 8 ", 8),
    ("8B", 8),
    ("4K", 4 << 10),
    ("4k", 4 << 10),
    ("4KB", 4 << 10),
    ("4KiB", 4 << 10),
    ("4 kib", 4 << 10),
    ("64M", 64 << 20),
    ("64 MiB", 64 << 20),
    ("64mb", 64 << 20),
    ("1G", 1 << 30),
    ("2GiB", 2 << 30),
    ("1T", 1 << 40),
    ("1.5K", 1536),
    (".5K", 512),
    ("0.5M", 512 << 10),
    ("1.25G", (1 << 30) + (1 << 28)),
    ("3.", 3),
    (4096, 4096),
    (0, 0),
])
def test_parse_size_reads_bytes_and_binary_units(text, expected):
    value = parse_size(text)
    assert value == expected and type(value) is int


@pytest.mark.parametrize("text", ["", "  ", "lots", "K", "4X", "4 KK", "4iB", "4KiBB", "1e6", "0x10", "4-K",
                                  "4K4", "--4", "1,024", None, True, 1e20])
def test_parse_size_rejects_what_is_not_a_size(text):
    with pytest.raises(ValueError, match="not a size") as info:
        parse_size(text)
    assert repr(text) in str(info.value)  # the message names what was given


@pytest.mark.parametrize("text", ["-1", "-4K"])
def test_parse_size_rejects_negative_text(text):
    with pytest.raises(ValueError, match=f"not a size: '{text}'"):
        parse_size(text)


def test_parse_size_rejects_a_negative_int():
    with pytest.raises(ValueError, match="cannot be negative: -1"):
        parse_size(-1)


@pytest.mark.parametrize("text", ["1" * 40, str(1 << 64), "16777216T", "9" * 5000, 1 << 64, 1 << 200])
def test_parse_size_rejects_what_no_size_can_be(text):
    # A 40-digit size went through and overflowed the C call that got it (OverflowError).
    with pytest.raises(ValueError, match="too large") as info:
        parse_size(text)
    assert repr(text)[:40] in str(info.value)  # the message names what was given


def test_parse_size_reaches_the_largest_size_and_reads_long_fractions():
    assert parse_size(str((1 << 64) - 1)) == parse_size((1 << 64) - 1) == (1 << 64) - 1
    assert parse_size("16777215.9990234375T") == (1 << 64) - (1 << 30)
    assert parse_size("1." + "0" * 5000 + "K") == 1024 and parse_size("0" * 5000 + "7") == 7
    with pytest.raises(ValueError, match="not a whole number of bytes"):
        parse_size("0." + "0" * 5000 + "1K")  # (int() of 5000 digits raised its own error)


@pytest.mark.parametrize("text", ["1.5", "0.3K", "1.1M", "0.1"])
def test_parse_size_rejects_fractions_of_a_byte(text):
    # 1.1M is 1153433.6 bytes: an error, not a silent round-down.
    with pytest.raises(ValueError, match=f"not a whole number of bytes: '{text}'"):
        parse_size(text)


def test_parse_size_takes_a_float_only_when_it_is_whole():
    assert parse_size(65536.0) == 65536
    with pytest.raises(ValueError, match="not a whole number of bytes: 1.5"):
        parse_size(1.5)


@pytest.mark.parametrize("nbytes, expected", [
    (0, "0 B"),
    (8, "8 B"),
    (1000, "1000 B"),
    (1536, "1536 B"),
    (1 << 10, "1 KiB"),
    (3 << 10, "3 KiB"),
    (4 << 10, "4 KiB"),
    (1 << 20, "1 MiB"),
    ((1 << 20) + (1 << 10), "1025 KiB"),
    (64 << 20, "64 MiB"),
    (1 << 30, "1 GiB"),
    (3 << 30, "3 GiB"),
    (1 << 40, "1 TiB"),
])
def test_format_size_uses_the_largest_exact_unit(nbytes, expected):
    assert format_size(nbytes) == expected


@pytest.mark.parametrize("nbytes", [0, 1, 8, 1000, 1536, 4 << 10, 1025 << 10, 64 << 20, 3 << 30, 5 << 40])
def test_format_size_reads_back_to_the_same_bytes(nbytes):
    assert parse_size(format_size(nbytes)) == nbytes
