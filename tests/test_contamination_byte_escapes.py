"""Text written as escaped UTF-8 bytes — a C, Go or Rust string (``\\xc3\\xa9``), a URL's query (``%C3%A9``) — is
read as the characters the bytes stand for, not as one Latin-1 character a byte (``Ã©``) or as hexadecimal digits."""

from __future__ import annotations

import json
import urllib.parse

from contamination_support import (  # noqa: F401 (the bundle and corpus fixtures)
    REFERENCE,
    bundle_fixture,
    check,
    corpus_fixture,
)
from mt_eval.contamination.embedded import unescaped

ACCENTED = "Él vió que el farero contaba los barcos cada tarde."


def c_string(text: str) -> str:
    return "".join(c if c.isascii() else "".join(f"\\x{b:02x}" for b in c.encode()) for c in text)


def test_a_c_string_of_utf8_bytes_is_found(bundle, tmp_path):
    """Before: "\\xc3\\x89l vi\\xc3\\xb3" read as "Ã\\x89l viÃ³": two words of the eight lost, and no hit."""
    corpus = tmp_path / "accented.jsonl"
    corpus.write_text(json.dumps({"id": "a1", "source": "x", "reference": ACCENTED}) + "\n", encoding="utf-8")
    (bundle / "table.c").write_text(f'static const char *ref = "{c_string(ACCENTED)}";\n')
    [hit] = check(bundle, corpus).hits
    assert (hit.file, hit.line, hit.entry_id, hit.kind) == ("table.c", 1, "a1", "exact")


def test_a_url_encoded_reference_is_found(bundle, corpus):
    (bundle / "links.txt").write_text(f"see\nhttps://translate.example/?q={urllib.parse.quote(REFERENCE)}&tl=es\n")
    [hit] = check(bundle, corpus).hits
    assert (hit.file, hit.line, hit.entry_id, hit.side, hit.kind) == ("links.txt", 2, "t1", "reference", "exact")


def test_byte_escapes_that_are_not_utf8():
    assert unescaped("r\\xedo") == "río"  # (a Latin-1 byte, as before)
    assert unescaped("r\\xc3\\xado y m\\xc3\\xa1s") == "río y más"
    assert unescaped("100% sure, 50%ff off, %zz") == "100% sure, 50%ff off, %zz"  # (not UTF-8: left as written)
    assert unescaped("a%20b%0Ac") == "a b\tc"
