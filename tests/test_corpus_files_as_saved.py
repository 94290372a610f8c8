"""Corpus files as editors and exports save them: a trailing TAB on the header, CR line ends, UTF-32, a stray NUL
byte, decomposed (NFD) references — read as meant, or refused with the fix."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pytest

from mt_eval.corpus import CorpusError, CorpusSpec, load_corpus
from mt_eval.corpus.doubts import find_doubts
from test_corpus import refusal, write


def test_a_stray_nul_byte_in_utf8_text_is_named_with_the_way_to_remove_it_not_a_utf16_conversion(tmp_path: Path):
    """The fix had been the UTF-16 iconv line, which turns UTF-8 text into CJK gibberish."""
    stray = write(tmp_path, "d.tsv", ("Good morning.\tBuenos días.\n" * 50).encode() + b"Thank you.\x00\tGracias.\n")
    assert str(refusal(stray)).endswith(
        "d.tsv: holds 1 NUL byte (the first at line 51, byte 1410), which no text has: a binary file, or text with "
        "stray NUL bytes; give the corpus file itself; if it is text, remove them, e.g. tr -d '\\000' < d.tsv > "
        "d.clean.tsv")
    assert "iconv" not in str(refusal(write(tmp_path, "f.tsv", b"Hi\tHola\nxx\x00yyyyyyyyyyyy\n")))


def test_utf32_is_refused_by_its_byte_order_mark_not_read_as_utf16(tmp_path: Path):
    message = str(refusal(write(tmp_path, "u.tsv", "Good morning.\nThank you.\n".encode("utf-32"))))
    assert message.endswith("u.tsv: is UTF-32 text (its byte-order mark says so), which is not read; convert it to "
                            "UTF-8, e.g. iconv -f utf-32 -t utf-8 < u.tsv > u.utf8.tsv")
    compressed = write(tmp_path, "u.tsv.gz", gzip.compress("Good morning.\n".encode("utf-32")))  # (iconv had read gzip)
    assert str(refusal(compressed)).endswith("e.g. zcat u.tsv.gz | iconv -f utf-32 -t utf-8 > u.utf8.tsv")
    for encoding in ("utf-32-le", "utf-32-be"):  # without the mark: it had been called UTF-16, and iconv garbled it
        bare = write(tmp_path, "bare.tsv", "Good morning.\tBuenos días.\nThank you.\tGracias.\n".encode(encoding))
        assert str(refusal(bare)).endswith(f"it looks like UTF-32 without its byte-order mark; convert it to UTF-8, "
                                           f"e.g. iconv -f {encoding[:6]}{encoding[7:]} -t utf-8 bare.tsv > "
                                           "bare.utf8.tsv"), encoding
    assert "UTF-16 without" in str(refusal(write(tmp_path, "s.tsv", "Hi.\tHola.\n".encode("utf-16-le"))))
    assert "UTF-32" in str(refusal(write(tmp_path, "b.jsonl", '{"id": "1", "source": "x"}\n'.encode("utf-32-be")
                                         .join([b"\0\0\xfe\xff", b""]))))


def test_lines_ended_by_cr_alone_are_lines_in_every_format(tmp_path: Path):
    """A file saved with the old Mac line end (CR alone) had been read as one entry holding every line."""
    texts = [("Good morning.", "Buenos días."), ("Thank you.", "Gracias."), ("Good night.", "Buenas noches.")]
    tsv = write(tmp_path, "cr.tsv", "".join(f"{s}\t{r}\r" for s, r in texts))
    jsonl = write(tmp_path, "cr.jsonl", "".join(json.dumps({"source": s, "reference": r}) + "\r" for s, r in texts))
    for path in (tsv, jsonl):
        corpus = load_corpus(CorpusSpec(path=path))
        assert [(e["source"], e["reference"]) for e in corpus.entries] == texts
        assert corpus.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    mixed = write(tmp_path, "mixed.tsv", "Hi\rthere\tHola\nBye\tAdiós\n")  # (LF ends its lines: a CR is a guess)
    with pytest.raises(CorpusError, match="line 1 holds a carriage return"):
        load_corpus(CorpusSpec(path=mixed))


def test_a_header_saved_with_a_trailing_tab_is_a_header(tmp_path: Path):
    """A spreadsheet that ends every line with a TAB: the header had been read as the first entry, and with an id
    column every column was shifted (the reference sent to the method as an extra field, the source scored)."""
    rows = "".join(f"news-{i}\tSentence {i}.\tFrase {i}.\t\n" for i in range(1, 4))
    corpus = load_corpus(CorpusSpec(path=write(tmp_path, "h.tsv", "id\tsource\treference\t\n" + rows)))
    assert [(e["id"], e["source"], e["reference"]) for e in corpus.entries] == [
        (f"news-{i}", f"Sentence {i}.", f"Frase {i}.") for i in range(1, 4)]
    plain = load_corpus(CorpusSpec(path=write(tmp_path, "p.tsv", "source\treference\t\nHi.\tHola.\t\n")))
    assert [(e["source"], e["reference"]) for e in plain.entries] == [("Hi.", "Hola.")]
    # the unnamed column's empty cells are no field (before: "column3": "" on every entry, sent to the method)
    assert [sorted(e) for e in corpus.entries + plain.entries] == [["id", "reference", "source"]] * 4
    noted = load_corpus(CorpusSpec(path=write(tmp_path, "n.tsv", "source\treference\t\nHi.\tHola.\tnote\n")))
    assert noted.entries[0]["column3"] == "note"  # (one written there is kept)


def test_references_not_in_nfc_are_a_warning_with_the_way_to_convert_them(tmp_path: Path):
    """"Buenos di\u0301as" scored 67.5 chrF++ against the output "Buenos días" without a word."""
    path = write(tmp_path, "nfd.tsv", "Good morning.\tBuenos di\u0301as.\nThank you.\tGracias.\nHi.\tHola.\n")
    corpus = load_corpus(CorpusSpec(path=path))
    doubts = [d for d in find_doubts(corpus) if d.code == "decomposed-references"]
    assert [(d.message, d.refuse) for d in doubts] == [(
        "1 of the 3 references is not in Unicode NFC (accents written as separate combining marks): a translation in "
        "the usual composed form scores lower against them than the same text should", False)]
    assert doubts[0].hint.endswith("< nfd.tsv > nfd.nfc.tsv")
    composed = write(tmp_path, "nfc.tsv", "Good morning.\tBuenos días.\nThank you.\tGracias.\nHi.\tHola.\n")
    assert not [d for d in find_doubts(load_corpus(CorpusSpec(path=composed))) if d.code == "decomposed-references"]


def test_the_way_to_convert_references_to_nfc_reads_the_file_that_holds_them(tmp_path: Path):
    """It had named the source file of parallel text, and fed a .gz file's gzip bytes to Python."""
    source = write(tmp_path, "src.txt", "Good morning.\nThank you.\n")
    reference = write(tmp_path, "ref.txt", "Buenos di\u0301as.\nGracias.\n")
    parallel = load_corpus(CorpusSpec(source_file=source, reference_file=reference))
    hint = next(d.hint for d in find_doubts(parallel) if d.code == "decomposed-references")
    assert hint.endswith("< ref.txt > ref.nfc.txt") and "src" not in hint
    compressed = write(tmp_path, "nfd.tsv.gz", gzip.compress("Good morning.\tBuenos di\u0301as.\n".encode()))
    hint = next(d.hint for d in find_doubts(load_corpus(CorpusSpec(path=compressed)))
                if d.code == "decomposed-references")
    assert hint.startswith("convert the corpus to NFC, e.g. zcat nfd.tsv.gz | python3 -c ") and hint.endswith(
        "\" > nfd.nfc.tsv")
