"""A wrapped program's encoding: an answer that is not valid in it fails its own entry with the byte, where it is,
and the fix (never a text of U+FFFD replacement characters scored as a translation), and a program that reads and
writes another encoding than UTF-8 is declared so (``LINES.with_encoding("cp1252")``), in both modes; the stderr
a failing program's entries quote is read in that encoding (UTF-8 unless declared), a byte that is not valid in it as
U+FFFD where it was."""

from __future__ import annotations

import pytest

from mt_eval.adapters import LINES, NULL_FLUSH, FramingError, ProcessOptions
from test_adapter_messages import outcomes, translator
from test_wrapping import mt_eval, wrapper_plugin

# Reads records in argv[1], answers them upper-cased in argv[2] ("?" for what it cannot write); records end with a
# NUL with "null", else a newline.
RECODING_PROGRAM = """import sys
read_as, write_as = sys.argv[1], sys.argv[2]
end = b"\\0" if sys.argv[3:] == ["null"] else b"\\n"
record = b""
while byte := sys.stdin.buffer.read(1):
    if byte != end:
        record += byte
        continue
    sys.stdout.buffer.write(record.decode(read_as).upper().encode(write_as, "replace") + end)
    sys.stdout.buffer.flush()
    record = b""
"""

BOTH_MODES = pytest.mark.parametrize("persistent", [True, False], ids=["persistent", "one-process-per-batch"])
BOTH_FRAMINGS = pytest.mark.parametrize("framing", [LINES, NULL_FLUSH], ids=["lines", "null-flush"])

def recoding(tmp_path, read_as: str, write_as: str, framing, **kwargs: object):
    null = ["null"] if framing.terminator == b"\0" else []
    return translator(tmp_path, "recode.py", RECODING_PROGRAM, read_as, write_as, *null, framing=framing, **kwargs)

def not_utf8(constant: str, where: str = "its answer") -> str:
    return (f"recode.py wrote an answer that is not valid UTF-8: byte 0xC9 at byte 3 of {where} ('CAF\\xc9 "
            "\\xd1AND\\xda'). Fix: make it write UTF-8 (PYTHONIOENCODING=utf-8 in its environment for a Python "
            "program, LC_ALL=C.UTF-8 for most others), or declare the encoding it writes: ProcessTranslator(..., "
            f'framing={constant}.with_encoding(ITS_ENCODING)), such as "cp1252"; README: "Wrapping a translator '
            'program"')

@BOTH_FRAMINGS
@BOTH_MODES
async def test_an_answer_that_is_not_utf8_fails_its_own_entry_with_the_byte_and_the_fix(tmp_path, framing, persistent):
    """Before: "CAF\ufffd \ufffdAND\ufffd", a translation scored as any other."""
    program = recoding(tmp_path, "utf-8", "latin-1", framing, persistent=persistent)
    results = await outcomes(program, ["café ñandú", "plain"])
    assert results == [(None, not_utf8("LINES" if framing is LINES else "NULL_FLUSH")), ("PLAIN", None)]

@BOTH_MODES
async def test_the_line_an_undecodable_answer_came_for_is_named(tmp_path, persistent):
    program = recoding(tmp_path, "utf-8", "latin-1", LINES, persistent=persistent)
    results = await outcomes(program, ["first line\ncafé ñandú"])
    assert results == [(None, not_utf8("LINES", "its answer to line 2 of the text"))]

@BOTH_FRAMINGS
@BOTH_MODES
async def test_a_declared_encoding_is_what_the_program_reads_and_what_its_answers_are_read_in(
        tmp_path, framing, persistent):
    """Before: "€" went as UTF-8 bytes, which a cp1252 program reads as "â‚¬", and no encoding could be declared."""
    program = recoding(tmp_path, "cp1252", "cp1252", framing.with_encoding("cp1252"), persistent=persistent)
    results = await outcomes(program, ["café 5 €", "ñandú\nño", "x\n日本"])
    assert results == [("CAFÉ 5 €", None), ("ÑANDÚ\nÑO", None),
                       (None, 'the text contains "日" (U+65E5) at position 2, which cp1252, the encoding the program '
                              "reads, cannot write")]

async def test_markers_are_sent_in_the_declared_encoding(tmp_path):
    """An ASCII program reading ⟦…⟧ markers would fail on each: its markers become [NONCE:SEQ]."""
    program = recoding(tmp_path, "ascii", "ascii", LINES.with_encoding("ascii"))
    assert await outcomes(program, ["one", "two\nthree"]) == [("ONE", None), ("TWO\nTHREE", None)]

def test_an_encoding_that_cannot_frame_records_is_refused_with_the_reason():
    with pytest.raises(ValueError, match="utf-16 does not write ASCII as ASCII, so records cannot be framed"):
        LINES.with_encoding("utf-16")
    with pytest.raises(ValueError, match='unknown encoding "latin-9000": give a Python codec name'):
        NULL_FLUSH.with_encoding("latin-9000")

def test_a_lone_surrogate_is_placed_in_the_whole_text_not_its_line():
    """Before: "at position 0", counted from the start of the second line."""
    with pytest.raises(FramingError, match=r"not valid Unicode \(surrogates not allowed at position 3\)"):
        LINES.records("ab\n\ud800")

@BOTH_MODES
def test_mt_eval_translate_with_a_program_writing_latin1_fails_and_with_it_declared_translates(tmp_path, persistent):
    program = tmp_path / "recode.py"
    program.write_text(RECODING_PROGRAM, encoding="utf-8")
    argv = f"[sys.executable, {str(program)!r}, 'utf-8', 'latin-1']"
    undeclared = wrapper_plugin(tmp_path, argv, adapter=f"framing=LINES, persistent={persistent}")
    failed = mt_eval("translate", str(undeclared), "café ñandú")
    assert failed.returncode == 1, failed.stderr
    assert "recode.py wrote an answer that is not valid UTF-8: byte 0xC9 at byte 3" in failed.stdout + failed.stderr
    assert "\ufffd" not in failed.stdout + failed.stderr

    argv = f"[sys.executable, {str(program)!r}, 'latin-1', 'latin-1']"
    declared = wrapper_plugin(tmp_path, argv, name="declared",
                              adapter=f"framing=LINES.with_encoding('latin-1'), persistent={persistent}")
    translated = mt_eval("translate", str(declared), "café ñandú")
    assert (translated.returncode, translated.stdout) == (0, "CAFÉ ÑANDÚ\n"), translated.stderr

# Reads a record, writes the bytes given in hex to stderr, and exits with code 3.
FAILING_PROGRAM = """import sys
sys.stdin.readline()
sys.stderr.buffer.write(bytes.fromhex(sys.argv[1]))
sys.exit(3)
"""

@BOTH_MODES
@pytest.mark.parametrize(("stderr", "shown"), [
    ("café modèle\n".encode("latin-1"), "caf\ufffd mod\ufffdle"),
    # (the tail's last 16 bytes begin with the second byte of an "é")
    ("é".encode() * 20 + b"\nno model.\n", "éé / no model."),
], ids=["latin-1", "a-character-cut-by-the-tail"])
async def test_a_failing_programs_stderr_shows_bytes_not_utf8_in_place_and_not_a_character_its_tail_cut(
        tmp_path, persistent, stderr, shown):
    """A byte that is not UTF-8 is a U+FFFD where it was; before, a tail cut in a character began with a U+FFFD for
    each byte of it left ("\ufffdéé / no model.")."""
    options = ProcessOptions(timeout_s=2.0, shutdown_grace_s=0.5, stderr_tail_bytes=16)
    program = translator(tmp_path, "failing.py", FAILING_PROGRAM, stderr.hex(), persistent=persistent, options=options)
    assert await outcomes(program, ["a"]) == [(None, f"failing.py exited with code 3 | stderr: {shown}")]

@BOTH_MODES
async def test_a_failing_programs_stderr_is_read_in_its_declared_encoding(tmp_path, persistent):
    """A program declared to write Latin-1 writes its messages in Latin-1 too; before, they were read as UTF-8
    ("caf\ufffd mod\ufffdle")."""
    options = ProcessOptions(timeout_s=2.0, shutdown_grace_s=0.5)
    program = translator(tmp_path, "failing.py", FAILING_PROGRAM, "café modèle\n".encode("latin-1").hex(),
                         persistent=persistent, options=options, framing=LINES.with_encoding("latin-1"))
    assert await outcomes(program, ["a"]) == [(None, "failing.py exited with code 3 | stderr: café modèle")]

@BOTH_MODES
async def test_a_shift_jis_programs_stderr_tail_cut_in_a_character_shows_no_other_character(tmp_path, persistent):
    """The last byte of a Shift_JIS "デ" is an "f": before, a tail that began after its first byte read "fルが…"."""
    stderr = "モデルがありません".encode("shift_jis") * 2 + "\nモデル\n".encode("shift_jis")
    options = ProcessOptions(timeout_s=2.0, shutdown_grace_s=0.5, stderr_tail_bytes=23)  # (cut in the second "デ")
    program = translator(tmp_path, "failing.py", FAILING_PROGRAM, stderr.hex(), persistent=persistent,
                         options=options, framing=LINES.with_encoding("shift_jis"))
    assert await outcomes(program, ["a"]) == [(None, "failing.py exited with code 3 | stderr: ルがありません / モデル")]
