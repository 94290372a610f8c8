"""The contamination check finds corpus text however a bundle hides it: in a directory named like a cache or a
repository, split over literals, outside a JSON file's strings, behind character escapes, in a file of mixed or
unmarked encodings, in zlib, legacy .lzma or a zipapp, in one endless line, in a SQLite database.

Each test plants a corpus sentence where a method could keep it and asserts the hit's file and line.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import lzma
import tarfile
import zipfile
import zlib
from pathlib import Path

import pytest

from contamination_support import (  # noqa: F401 (the bundle and corpus fixtures)
    REFERENCE,
    SHORT,
    SOURCE,
    bundle_fixture,
    check,
    corpus_fixture,
    located,
)


def test_max_archive_depth_0_opens_the_bundles_own_archives_and_none_inside_them(bundle, corpus):
    """Before: 0 opened nothing, not even a top-level .gz ("nested more than 0 levels"), and a .tar.gz took two."""
    (bundle / "refs.txt.gz").write_bytes(gzip.compress(f"{REFERENCE}\n".encode()))
    with tarfile.open(bundle / "assets.tar.gz", "w:gz") as archive:
        data = f"{SOURCE}\n".encode()
        info = tarfile.TarInfo("readme.md")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as archive:
        archive.writestr("deep.txt", SHORT)
    with zipfile.ZipFile(bundle / "outer.zip", "w") as archive:
        archive.writestr("inner.zip", inner.getvalue())
    report = check(bundle, corpus, max_archive_depth=0)
    assert located(report) == {("refs.txt.gz", 1, "t1", "reference"), ("assets.tar.gz:readme.md", 1, "t1", "source")}
    blocking = {f.file: f.message for f in report.findings if f.effect == "unverified"}
    assert blocking == {"outer.zip:inner.zip": "an archive inside 1 other, deeper than --max-archive-depth 0: "
                                               "not opened"}


def test_a_translation_memory_in_sqlite_is_found_though_record_bytes_touch_its_texts(bundle, corpus):
    """SQLite writes a record's header bytes right before its text; when one is a printable letter it was read as
    part of the first word ("SEl viejo…"), and a short reference was never found."""
    import sqlite3

    short = "Cierra la ventana de la cocina."  # (under 8 words: found only whole)
    assert chr(2 * len(short.encode()) + 13) == "K"  # (its record's header byte, right before it)
    (corpus.parent / "short.jsonl").write_text(json.dumps({"id": "k1", "source": "Close the kitchen window.",
                                                           "reference": short}) + "\n", encoding="utf-8")
    with contextlib.closing(sqlite3.connect(bundle / "tm.db")) as db:
        db.execute("create table tm (id integer primary key, target text)")
        db.executemany("insert into tm (target) values (?)", [(REFERENCE,), (short,)])
        db.commit()
    report = check(bundle, corpus.parent / "short.jsonl")
    assert {(h.file, h.entry_id, h.side, h.kind) for h in report.hits} == {("tm.db", "k1", "reference", "exact")}
    from mt_eval.contamination.decoding import binary_runs

    runs = [text for _at, text in binary_runs(io.BytesIO(b"\x00\x01McDonald farm here\x00\x02KCierra la ventana\x00"))]
    assert runs == ["McDonald farm here", "Cierra la ventana"]  # (one record byte set apart, a name kept whole)


@pytest.mark.parametrize("hiding_place", ["__pycache__", ".git", "data/.git", ".hg", ".svn", ".git/objects"])
def test_a_file_is_not_hidden_by_naming_its_directory_like_a_cache_or_a_repository(bundle, corpus, hiding_place):
    """Before: anything under a directory named __pycache__, .git, .hg or .svn was skipped, at any depth, and the
    verdict was clean — though a method opens __pycache__/refs.txt as easily as any file."""
    (bundle / hiding_place).mkdir(parents=True)
    (bundle / hiding_place / "refs.txt").write_text(f"{REFERENCE}\n")
    report = check(bundle, corpus)
    assert located(report) == {(f"{hiding_place}/refs.txt", 1, "t1", "reference")}


@pytest.mark.parametrize(("name", "joined"), [("data.js", " +\n  "), ("data.py", " +\n    "), ("data.json", ",\n  ")])
def test_base64_split_over_literals_joined_with_plus_is_read_whole(bundle, corpus, name: str, joined: str):
    """Each literal alone was a piece of gzip that never decompressed, so the corpus was reported CLEAN."""
    import base64
    import gzip

    packed = base64.b64encode(gzip.compress(f"{REFERENCE}\n{SHORT}\n".encode(), mtime=0)).decode()
    pieces = joined.join(f'"{packed[i:i + 40]}"' for i in range(0, len(packed), 40))
    code = {"data.js": f"const DATA =\n  {pieces};\nmodule.exports = DATA;\n",
            "data.py": f"DATA = (\n    {pieces}\n)\n", "data.json": f'{{"blob": [\n  {pieces}\n]}}\n'}[name]
    (bundle / name).write_text(code, encoding="utf-8")
    report = check(bundle, corpus)
    assert located(report) == {(name, 2, "t1", "reference"), (name, 2, "t2", "source")}


@pytest.mark.parametrize(("name", "text"), [
    ("refs.json", f"{REFERENCE}\n"),  # (a text file with a .json name)
    ("config.json", f'{{\n  // {REFERENCE}\n  "mode": "lexicon"\n}}\n'),  # (JSONC: a comment)
    ("rows.jsonl", f'{{"id": 1}}\n{REFERENCE}\n'),
])
def test_text_in_a_json_file_outside_its_strings_is_read(bundle, corpus, name: str, text: str):
    """Before: the JSON lexer kept its string literals only, so text anywhere else was dropped unread."""
    (bundle / name).write_text(text, encoding="utf-8")
    report = check(bundle, corpus)
    assert located(report) == {(name, text.count("\n", 0, text.index(REFERENCE)) + 1, "t1", "reference")}


ACCENTED = "El niño pequeño corrió hacia el río después de la lección."


@pytest.fixture
def accented(tmp_path: Path) -> Path:
    path = tmp_path / "accented.jsonl"
    path.write_text(json.dumps({"id": "a1", "source": "The little boy ran to the river after the lesson.",
                                "reference": ACCENTED}, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(("name", "content"), [
    ("memory.dat", json.dumps({"t": ACCENTED}) + "\n"),  # (json.dump's ensure_ascii: r\u00edo)
    ("memory.tmx", "<tmx><body><tu><tuv><seg>" + ACCENTED.encode("ascii", "xmlcharrefreplace").decode()
     + "</seg></tuv></tu></body></tmx>\n"),  # (r&#237;o)
    ("page.html", ACCENTED.replace("ñ", "&ntilde;").replace("ó", "&oacute;").replace("í", "&iacute;")
     .replace("é", "&eacute;") + "\n"),
    ("strings.txt", ACCENTED.encode("ascii", "backslashreplace").decode() + "\n"),  # (r\xedo)
])
def test_text_written_with_character_escapes_is_read_as_the_characters(bundle, accented, name: str, content: str):
    """Before: "r\\u00edo" was read as the words "r" and "u00edo", so an accented reference was never found."""
    (bundle / name).write_text(content, encoding="ascii")
    assert located(check(bundle, accented)) == {(name, 1, "a1", "reference")}


def test_legacy_bytes_after_the_first_64_kib_of_a_utf8_file_are_read_as_windows_1252(bundle, accented):
    """Before: the encoding was chosen from the first 64 KiB (ASCII, so UTF-8), and every later Latin-1 byte became
    U+FFFD, so an accented reference was missed (a note said characters were replaced; the verdict was clean)."""
    (bundle / "mixed.tsv").write_bytes(b"# padding\n" * 8000 + f"{ACCENTED}\n".encode("latin-1"))
    report = check(bundle, accented)
    assert located(report) == {("mixed.tsv", 8001, "a1", "reference")}
    [note] = [f.message for f in report.findings if f.file == "mixed.tsv"]
    assert note == "6 byte(s) that are not UTF-8 were read as Windows-1252 (the file mixes encodings)"


@pytest.mark.parametrize("encoding", ["utf-32-le", "utf-32-be"])
def test_utf32_without_a_byte_order_mark_is_read_as_text(bundle, accented, encoding: str):
    (bundle / "refs.txt").write_bytes(f"{ACCENTED}\n".encode(encoding))
    report = check(bundle, accented)
    assert located(report) == {("refs.txt", 1, "a1", "reference")}
    assert [f.message for f in report.findings if f.file == "refs.txt"] == ["UTF-32 without a byte-order mark"]


def test_zlib_and_legacy_lzma_files_and_a_zipapp_are_opened(bundle, corpus, tmp_path):
    """Before: each was read as a binary's runs of text (none), an info note, and the verdict was clean."""
    text = f"{REFERENCE}\n{SHORT}\n".encode()
    (bundle / "refs.zlib").write_bytes(zlib.compress(text))
    (bundle / "refs.lzma").write_bytes(lzma.compress(text, format=lzma.FORMAT_ALONE))
    (bundle / "long.bin").write_bytes(zlib.compress(b"filler words\n" * 200_000 + text, 9))  # (read in pieces)
    app = io.BytesIO()
    with zipfile.ZipFile(app, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("data/refs.txt", text)
    (bundle / "tool.pyz").write_bytes(b"#!/usr/bin/env python3\n" + app.getvalue())
    (bundle / "maths.txt").write_text(f"x^2 + y^2 = z^2\n{SOURCE}\n")  # (starts like a zlib header, is text)
    report = check(bundle, corpus)
    assert located(report) == {(name, line + below, entry, side) for name, line in [
        ("refs.zlib", 1), ("refs.lzma", 1), ("long.bin", 200_001), ("tool.pyz:data/refs.txt", 1)]
        for below, entry, side in [(0, "t1", "reference"), (1, "t2", "source")]} | {("maths.txt", 2, "t1", "source")}
    assert not [f for f in report.findings if f.effect == "unverified"]


def test_a_long_line_without_spaces_is_read_in_pieces_of_a_block_at_most():
    """Before: each mebibyte read cut one piece of half a block, so the text waiting grew with the file (a 200 MB
    line of base64 took 800 MB and ever longer to search)."""
    from mt_eval.contamination.decoding import BLOCK, TextBlocks

    data = b"x" * (8 * BLOCK + 123)
    pieces = [text for _line, text in TextBlocks(io.BytesIO(data), "utf-8")]
    assert "".join(pieces) == data.decode() and max(map(len, pieces)) <= BLOCK
