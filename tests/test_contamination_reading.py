"""The contamination check reads every piece of text in a bundle, and reports what it cannot read.

Each test plants one corpus sentence somewhere a method might keep it and asserts the hit's file and line.
"""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import os
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
from mt_eval.contamination import extract
from mt_eval.contamination.code_strings import decode_js_escape, javascript_pieces, python_pieces
from mt_eval.contamination.normalize import words
from mt_eval.contamination.settings import CheckSettings


def test_normalisation_sees_through_case_width_accents_and_punctuation():
    assert words("ＴＨＥ  Old\u00a0lighthouse—KEEPER, «counts»\tthe ships!") == \
        ["the", "old", "lighthouse", "keeper", "counts", "the", "ships"]
    assert words("El VIEJO farero ¡cuenta! los barcos") == words("el viejo fareró cuenta los barcos")
    assert words("日本語です") == ["日", "本", "語", "で", "す"]  # scripts without spaces: a word per character
    assert words("STRASSE") == words("straße")


def test_python_string_literals_docstrings_fstrings_and_comments(bundle, corpus):
    (bundle / "pipeline.py").write_text(
        '"""Module docstring."""\n'
        "PAIRS = [\n"
        f'    ("{SOURCE[:30]}"\n'
        f'     "{SOURCE[30:]}",\n'
        f"     {REFERENCE.encode('unicode_escape').decode()!r}),\n"
        "]\n"
        f"# {SHORT}\n"
        "name = 'x'\n"
        f'label = f"{{name}}: {SHORT.upper()}"\n', encoding="utf-8")
    assert located(check(bundle, corpus)) == {("pipeline.py", 3, "t1", "source"), ("pipeline.py", 5, "t1", "reference"),
                                              ("pipeline.py", 7, "t2", "source"), ("pipeline.py", 9, "t2", "source")}


def test_python_escaped_line_ends_keep_line_numbers():
    pieces, problem = python_pieces(b'x = "one\\ntwo"\ny = "three"\n')
    assert problem is None
    assert pieces == [(1, "one\ttwo"), (2, "three")]


def test_javascript_strings_templates_jsx_text_and_comments(bundle, corpus):
    escaped = REFERENCE.replace("a", "\\u0061")
    (bundle / "translate.js").write_text(
        "// helpers\n"
        f"const pairs = [['{SOURCE}', \"{escaped}\"]];\n"
        f"const t = `${{pairs}} {SHORT.split()[0]}\n{' '.join(SHORT.split()[1:])}`;\n"
        f"/* {SHORT} */\n", encoding="utf-8")
    (bundle / "view.jsx").write_text(f"export const V = () => <p>{SOURCE}</p>;\n", encoding="utf-8")
    (bundle / "types.ts").write_text(f"const s: string = '{REFERENCE}';\n", encoding="utf-8")
    assert located(check(bundle, corpus)) == {
        ("translate.js", 2, "t1", "source"), ("translate.js", 2, "t1", "reference"),
        ("translate.js", 3, "t2", "source"), ("translate.js", 5, "t2", "source"),
        ("view.jsx", 1, "t1", "source"), ("types.ts", 1, "t1", "reference")}


def test_javascript_escapes():
    assert [decode_js_escape(e) for e in ("\\n", "\\xe9", "\\u00e9", "\\u{1F600}", "\\'", "\\\n")] == \
        ["\n", "é", "é", "😀", "'", ""]
    pieces, problem = javascript_pieces(b"const a = 'caf\\u00e9';\n")
    assert problem is None and pieces == [(1, "café")]


def test_code_that_does_not_parse_is_read_as_text_and_said(bundle, corpus):
    (bundle / "broken.py").write_text(f"def f(:\n    return '{SOURCE}'\n", encoding="utf-8")
    (bundle / "broken.js").write_text(f"const = ;\nlet x = '{REFERENCE}';\n", encoding="utf-8")
    (bundle / "compiled.py").write_bytes(b"\x00\x01\x02" + SHORT.encode() + b"\x00\xff")
    report = check(bundle, corpus)
    assert located(report) == {("broken.py", 2, "t1", "source"), ("broken.js", 2, "t1", "reference"),
                               ("compiled.py", None, "t2", "source")}
    assert [h.byte for h in report.hits if h.file == "compiled.py"] == [3]
    notes = {f.file: f.message for f in report.findings}
    assert "not valid Python at line 1" in notes["broken.py"] and "read as plain text" in notes["broken.py"]
    assert "JavaScript syntax error" in notes["broken.js"]
    assert report.status == "contaminated"


def test_json_jsonl_tsv_csv_markdown_and_text(bundle, corpus):
    (bundle / "glossary.json").write_text(json.dumps({"items": [{"en": SOURCE, "es": REFERENCE}]}, indent=2))
    (bundle / "data.jsonl").write_text('{"x": 1}\n' + json.dumps({"text": SHORT}) + "\n")
    (bundle / "terms.tsv").write_text(f"term\ttranslation\nlighthouse\t{REFERENCE}\n", encoding="utf-8")
    first, second = SOURCE[:SOURCE.index(" counts")], SOURCE[SOURCE.index(" counts") + 1:]
    (bundle / "rows.csv").write_text(f'id,text\n1,"{first}\n{second}"\n', encoding="utf-8")
    (bundle / "README.md").write_text(f"# Examples\n\n> **{SHORT}**\n")
    (bundle / "prompt.txt").write_text(f"Translate.\nExample: {SOURCE.lower()}\n")
    assert located(check(bundle, corpus)) == {
        ("glossary.json", 4, "t1", "source"), ("glossary.json", 5, "t1", "reference"),
        ("data.jsonl", 2, "t2", "source"), ("terms.tsv", 2, "t1", "reference"), ("rows.csv", 2, "t1", "source"),
        ("README.md", 3, "t2", "source"), ("prompt.txt", 2, "t1", "source")}


def test_a_minified_json_line_larger_than_a_block_streams(bundle, corpus, monkeypatch):
    from mt_eval.contamination import decoding

    monkeypatch.setattr(decoding, "BLOCK", 256)
    filler = [f"filler string number {i}" for i in range(200)]
    (bundle / "big.json").write_text(json.dumps({"a": filler, "b": REFERENCE, "c": filler}), encoding="utf-8")
    assert located(check(bundle, corpus)) == {("big.json", 1, "t1", "reference")}


@pytest.mark.parametrize(("name", "compress"), [
    ("data.txt.gz", gzip.compress), ("data.txt.bz2", bz2.compress), ("data.txt.xz", lzma.compress)])
def test_compressed_files(bundle, corpus, name, compress):
    (bundle / name).write_bytes(compress(f"notes\n{SOURCE}\n".encode()))
    assert located(check(bundle, corpus)) == {(name, 2, "t1", "source")}


def test_lines_ending_in_cr_alone_are_lines(bundle, corpus):
    """Excel's "CSV (Macintosh)" ends its lines in CR alone: the file was one line, so a short entry in a row's
    first cell (set off by nothing but that CR) was not found, and every hit was on line 1."""
    (bundle / "glossary.csv").write_bytes(f"term,translation\rOpen the red door,Abre la puerta roja\r{SOURCE}\r"
                                          .encode())
    report = check(bundle, corpus)
    assert located(report) == {("glossary.csv", 2, "t2", "source"), ("glossary.csv", 2, "t2", "reference"),
                               ("glossary.csv", 3, "t1", "source")}


def test_zip_and_tar_members_and_archives_inside_archives(bundle, corpus):
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as archive:
        archive.writestr("deep/prompt.txt", f"x\n{REFERENCE}\n")
    with zipfile.ZipFile(bundle / "resources.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("a/glossary.tsv", f"one\t{SOURCE}\n")
        archive.writestr("nested.zip", inner.getvalue())
    data = f"h\n\n{SHORT}\n".encode()
    with tarfile.open(bundle / "assets.tar.gz", "w:gz") as archive:
        info = tarfile.TarInfo("assets/readme.md")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("assets/link")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        archive.addfile(link)
    report = check(bundle, corpus)
    assert located(report) == {("resources.zip:a/glossary.tsv", 1, "t1", "source"),
                               ("resources.zip:nested.zip:deep/prompt.txt", 2, "t1", "reference"),
                               ("assets.tar.gz:assets/readme.md", 3, "t2", "source")}
    assert any(f.file == "assets.tar.gz:assets/link" and "not followed" in f.message for f in report.findings)


def test_archives_that_cannot_be_opened_are_listed_and_block_clean(bundle, corpus):
    (bundle / "truncated.gz").write_bytes(gzip.compress(SOURCE.encode() * 100)[:40])
    (bundle / "broken.zip").write_bytes(b"PK\x03\x04" + b"\0" * 40)
    (bundle / "data.7z").write_bytes(b"7z\xbc\xaf\x27\x1c" + b"\0" * 40)
    (bundle / "deep.gz").write_bytes(gzip.compress(gzip.compress(gzip.compress(b"x"))))
    report = check(bundle, corpus, max_archive_depth=1)
    blocking = {f.file: f.message for f in report.findings if f.effect == "unverified"}
    assert set(blocking) == {"truncated.gz", "broken.zip", "data.7z", "deep.gz"}
    assert "7-Zip" in blocking["data.7z"]
    assert blocking["deep.gz"] == "an archive inside 2 others, deeper than --max-archive-depth 1: not opened"
    assert report.status == "unverified"


def test_encrypted_zip_members_and_archive_bombs_are_reported(bundle, corpus):
    with zipfile.ZipFile(bundle / "locked.zip", "w") as archive:
        archive.writestr("secret.txt", SOURCE)
    data = bytearray((bundle / "locked.zip").read_bytes())
    data[6] |= 1  # the local header's "encrypted" flag
    central = data.rindex(b"PK\x01\x02")
    data[central + 8] |= 1  # and the central directory's
    (bundle / "locked.zip").write_bytes(bytes(data))
    (bundle / "bomb.gz").write_bytes(gzip.compress(b"a " * 3_000_000))
    report = check(bundle, corpus, max_archive_bytes=1_000_000)
    blocking = {f.file: f.message for f in report.findings if f.effect == "unverified"}
    assert "encrypted" in blocking["locked.zip:secret.txt"]
    assert "decompressed from one archive" in blocking["bomb.gz"]


def test_binary_files_give_their_text_runs_with_byte_offsets(bundle, corpus):
    (bundle / "model.bin").write_bytes(os.urandom(300).replace(b"\n", b"") + b"\0" + SOURCE.encode() + b"\0\1\2")
    report = check(bundle, corpus)
    [hit] = report.hits
    assert (hit.file, hit.line, hit.entry_id) == ("model.bin", None, "t1")
    assert hit.byte is not None and hit.where == f"model.bin @byte {hit.byte}"
    assert any(f.file == "model.bin" and f.kind == "binary" for f in report.findings)


def test_other_encodings_are_detected_and_said(bundle, corpus):
    latin1 = "Línea en español, año, señor y canción.\n" + REFERENCE + "\n"
    (bundle / "latin1.txt").write_bytes(latin1.encode("latin-1"))
    (bundle / "utf16.txt").write_bytes(f"{SOURCE}\n".encode("utf-16"))
    (bundle / "utf16-nobom.txt").write_bytes(f"{SHORT}\n".encode("utf-16-le"))
    report = check(bundle, corpus)
    assert located(report) == {("latin1.txt", 2, "t1", "reference"), ("utf16.txt", 1, "t1", "source"),
                               ("utf16-nobom.txt", 1, "t2", "source")}
    notes = {f.file: f.message for f in report.findings if f.kind == "encoding"}
    assert "not UTF-8: read as" in notes["latin1.txt"]
    assert "UTF-16 without a byte-order mark" in notes["utf16-nobom.txt"]


def test_symbolic_links_are_never_followed(bundle, corpus, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "answers.txt").write_text(SOURCE)
    (bundle / "real.txt").write_text("nothing here\n")
    (bundle / "escape").symlink_to(outside)
    (bundle / "escape.txt").symlink_to(outside / "answers.txt")
    (bundle / "alias.txt").symlink_to("real.txt")
    (bundle / "dangling").symlink_to("missing.txt")
    report = check(bundle, corpus)
    assert report.hits == []
    kinds = {f.file: (f.kind, f.effect) for f in report.findings}
    assert kinds["escape"] == ("symlink-outside", "unverified")
    assert kinds["escape.txt"] == ("symlink-outside", "unverified")
    assert kinds["alias.txt"] == ("symlink", "info") and kinds["dangling"] == ("symlink", "info")
    assert report.status == "unverified" and "outside the bundle" in report.reasons[0]


@pytest.mark.parametrize("archived", [False, True], ids=["file", "zip"])
def test_progress_advances_inside_a_large_file_or_zip_archive(bundle, monkeypatch, archived: bool):
    """Before, progress was told only after each file: a file of hundreds of megabytes read for tens of seconds
    in silence (a zip archive still was: its members are read from the file on disk, not the stream told of)."""
    monkeypatch.setattr(extract, "PROGRESS_EVERY_S", 0.0, raising=False)  # (every block, to see each)
    text = f"{SOURCE}\n" * 100_000  # about 6 MB: six blocks
    if archived:
        with zipfile.ZipFile(bundle / "large.zip", "w", zipfile.ZIP_STORED) as archive:
            archive.writestr("large.txt", text)
    else:
        (bundle / "large.txt").write_text(text)
    name = "large.zip" if archived else "large.txt"
    size = (bundle / name).stat().st_size
    told: list[tuple[int, int]] = []
    reader = extract.BundleReader(bundle, CheckSettings(), lambda files, read: told.append((files, read)))
    while_reading = {}
    for document in reader.documents():
        before = len(told)
        for _piece in document.pieces:
            pass
        while_reading[document.name] = told[before:]
    inside = [read for _files, read in while_reading["large.zip:large.txt" if archived else name]]
    before_it = reader.bytes - size
    assert len(inside) >= 5 and inside == sorted(inside), inside
    assert before_it < inside[0] and inside[-1] <= before_it + size


def test_huge_files_unreadable_files_and_special_files(bundle, corpus, monkeypatch):
    (bundle / "huge.txt").write_text("x" * 5000)
    (bundle / "big.py").write_text(f"x = 1\n# {SOURCE}\n" + "y = 2\n" * 400)
    (bundle / "secret.txt").write_text(SOURCE)
    os.mkfifo(bundle / "pipe")
    real_open = Path.open

    def deny(self, *args, **kwargs):
        if self.name == "secret.txt":
            raise PermissionError(13, "Permission denied")
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", deny)
    report = check(bundle, corpus, max_file_bytes=4000, max_code_bytes=1000)
    findings = {f.file: f for f in report.findings}
    assert findings["huge.txt"].kind == "too-large" and findings["huge.txt"].effect == "unverified"
    assert "read as plain text" in findings["big.py"].message
    assert "Permission denied" in findings["secret.txt"].message and findings["secret.txt"].effect == "unverified"
    assert findings["pipe"].kind == "special"
    assert located(report) == {("big.py", 2, "t1", "source")}


def test_compiled_caches_are_skipped_and_said_and_a_store_that_only_looks_like_git_is_read(bundle, corpus):
    """A real repository's store is read through git (test_contamination_history); one without refs is no
    repository, and its files are read as any (a zlib-compressed one opened)."""
    (bundle / ".git" / "objects" / "ab").mkdir(parents=True)
    (bundle / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (bundle / ".git" / "objects" / "ab" / "cdef").write_bytes(zlib.compress(f"blob 60\0{SOURCE}".encode()))
    (bundle / "__pycache__").mkdir()
    (bundle / "__pycache__" / "pipeline.cpython-311.pyc").write_bytes(b"\x00" * 16 + SOURCE.encode())
    report = check(bundle, corpus)
    assert located(report) == {(".git/objects/ab/cdef", None, "t1", "source")}  # (by byte: "blob 60\\0")
    assert {f.file for f in report.findings if f.kind == "skipped"} == {"__pycache__/pipeline.cpython-311.pyc"}


def test_base64_and_compressed_blobs_in_code_are_decoded(bundle, corpus):
    import base64

    plain = base64.b64encode(f"notes: {SOURCE}".encode()).decode()
    packed = base64.b64encode(zlib.compress(f"{REFERENCE}\n{SHORT}\n".encode())).decode()
    sha = "9f" * 32  # hex that also reads as base64, decoding to bytes that are not text
    (bundle / "pipeline.py").write_text(f"import base64, zlib\n\nA = '{plain}'\nB = zlib.decompress(base64."
                                        f"b64decode('{packed}'))\nC = '{sha}'\n", encoding="utf-8")
    report = check(bundle, corpus)
    assert located(report) == {("pipeline.py", 3, "t1", "source"), ("pipeline.py", 4, "t1", "reference"),
                               ("pipeline.py", 4, "t2", "source")}
    assert any(f.kind == "embedded" and "2 base64 run(s)" in f.message for f in report.findings)


def test_wrapped_base64_is_read_whole(bundle, corpus):
    """base64.encodebytes and the base64 tool break lines at 76 characters: each line alone was a run too short to
    read, or a piece of gzip that never decompressed, so a corpus embedded that way was reported CLEAN."""
    import base64
    import gzip

    packed = base64.encodebytes(gzip.compress(f"{REFERENCE}\n{SHORT}\n".encode())).decode()
    plain = base64.encodebytes(f"notes: {SOURCE}".encode()).decode()
    (bundle / "embedded.py").write_text(f'import base64, gzip\n\nDATA = """{packed}"""\nREFS = gzip.decompress('
                                        f"base64.b64decode(DATA))\n", encoding="utf-8")
    (bundle / "blob.txt").write_text(plain + "return\n", encoding="utf-8")  # a last line that only looks like base64
    report = check(bundle, corpus)
    assert located(report) == {("embedded.py", 3, "t1", "reference"), ("embedded.py", 3, "t2", "source"),
                               ("blob.txt", 1, "t1", "source")}
