"""Text kept in a binary in UTF-16 or UTF-32 (a NumPy array of strings, a SQLite database in UTF-16, a resource
file) is found where it is, and reading a binary for it does not read its numbers as text."""

from __future__ import annotations

import io
import os
import random
import re
import sqlite3

import numpy as np
import pytest

from contamination_support import (  # noqa: F401 (the bundle and corpus fixtures)
    REFERENCE,
    SOURCE,
    bundle_fixture,
    check,
    corpus_fixture,
)
from mt_eval.contamination.decoding import binary_runs

# runs of 8 or more characters of ASCII or UTF-8
UTF8_RUN = re.compile(rb"(?:[\t\n\r\x20-\x7e]|[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}"
                      rb"|[\xf0-\xf4][\x80-\xbf]{3}){8,}")


def test_a_numpy_array_of_strings_is_read_whole(bundle, corpus):
    """Before: NumPy keeps its strings in UTF-32; only the ASCII header was read, and the check said clean. (The
    header's last character glued to the first text too: "…\\nE" took the "E" of "El".)"""
    np.save(bundle / "refs.npy", np.array([REFERENCE, SOURCE]))
    report = check(bundle, corpus)
    found = {(h.file, h.entry_id, h.side, h.kind) for h in report.hits}
    assert found == {("refs.npy", "t1", "reference", "exact"), ("refs.npy", "t1", "source", "exact")}
    assert all(h.byte is not None and h.byte >= 128 for h in report.hits)  # (after the .npy header)


def test_a_sqlite_database_in_utf16_is_read(bundle, corpus):
    with sqlite3.connect(bundle / "memory.sqlite") as db:
        db.execute("PRAGMA encoding = 'UTF-16le'")
        db.execute("CREATE TABLE t (text)")
        db.execute("INSERT INTO t VALUES (?)", (REFERENCE,))
    db.close()
    [hit] = check(bundle, corpus).hits
    assert (hit.file, hit.entry_id, hit.side, hit.kind) == ("memory.sqlite", "t1", "reference", "exact")


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
def test_wide_text_between_random_bytes_is_found_at_its_offset(bundle, corpus, codec):
    noise = random.Random(7).randbytes(300)
    (bundle / "resources.bin").write_bytes(noise + REFERENCE.encode(codec) + noise)
    [hit] = check(bundle, corpus).hits
    assert (hit.file, hit.entry_id, hit.kind) == ("resources.bin", "t1", "exact")
    assert 300 <= hit.byte <= 303  # (big-endian text after a byte that fits reads as little-endian, a byte on)


def test_greek_in_utf16_is_read():
    text = "Ο γέρος φαροφύλακας μετράει τα πλοία κάθε βράδυ."
    runs = [found for _at, found in binary_runs(io.BytesIO(b"\x07\x91" + text.encode("utf-16-le") + b"\xff\xfe"))]
    assert text in runs


def test_utf8_strings_ending_in_zeros_keep_their_last_letter():
    """A C string and its padding ("…world\\0\\0\\0") is not the start of a UTF-32 run."""
    runs = [found for _at, found in binary_runs(io.BytesIO(b"\x01\x02Hello world\0\0\0\0\0\0\0\0\x03\x04"))]
    assert runs == ["Hello world"]


def test_numbers_are_not_read_as_wide_text():
    """Random bytes, float weights and token numbers give their UTF-8 runs only, none read as wide text."""
    rng = np.random.default_rng(3)
    for data in (os.urandom(1 << 18), rng.standard_normal(1 << 16).astype(np.float32).tobytes(),
                 rng.integers(0, 32000, 1 << 16).astype(np.int32).tobytes()):
        utf8 = [(run.start(), run.end()) for run in UTF8_RUN.finditer(data)]
        for at, found in binary_runs(io.BytesIO(data)):
            assert any(start <= at < end for start, end in utf8), (at, found)
