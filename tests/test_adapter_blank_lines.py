"""A wrapped program that writes nothing for an empty or blank line (many skip them): the entry says which line of
its text got no answer, what the program probably does, and the fix; a failing line of a text is named."""

from __future__ import annotations

import sys

import pytest

from mt_eval.adapters import ProcessOptions, ProcessTranslator

FAST = ProcessOptions(timeout_s=2.0, shutdown_grace_s=0.5)

SKIPS_BLANK_LINES = ("import sys\nfor line in sys.stdin:\n    if not line.strip():\n        continue\n"
                     "    print('T:' + line.strip(), flush=True)\n")

CRASHES_ON_BANG = ("import sys\nfor line in sys.stdin:\n    if line.startswith('!'):\n"
                   "        sys.stderr.write('crashing on purpose\\n')\n        sys.exit(3)\n"
                   "    print('T:' + line.strip(), flush=True)\n")

FIX = ("a program that writes nothing for {blank} lines? Fix: make it answer every line (with an empty line for "
       "{a_blank} one), or decline texts without words in translate() (README: \"Recipe: a program as a method\")")


async def outcomes(tmp_path, source: str, texts: list[str], persistent: bool) -> list[tuple[str | None, str | None]]:
    script = tmp_path / "skip-mt.py"
    script.write_text(source, encoding="utf-8")
    translator = ProcessTranslator([sys.executable, str(script)], persistent=persistent, options=FAST)
    try:
        return [(r.text, r.error) for r in await translator.translate_texts(texts)]
    finally:
        await translator.aclose()


@pytest.mark.parametrize("persistent", [True, False])
async def test_a_program_that_skips_blank_lines_is_told_which_line_and_the_fix(tmp_path, persistent):
    """Before: "skip-mt.py: the program wrote no answer for it" (or "gave 0 answers for 1 record(s)"), for a text
    of three lines whose first and last were answered, and nothing of the empty line or the fix."""
    texts = ["Hello\n\nWorld", "", "  \t", "fine"]
    results = await outcomes(tmp_path, SKIPS_BLANK_LINES, texts, persistent)
    said = ("skip-mt.py: the program wrote no answer for it" if persistent else
            "skip-mt.py gave 0 answers for 1 record(s) (line framing)")
    assert results == [
        (None, f"{said}, an empty line (line 2 of the text's 3): " + FIX.format(blank="empty", a_blank="an empty")),
        (None, f"{said}, an empty text: " + FIX.format(blank="empty", a_blank="an empty")),
        (None, f"{said}, a blank text: " + FIX.format(blank="blank", a_blank="a blank")),
        ("T:fine", None)]


@pytest.mark.parametrize("persistent", [True, False])
async def test_the_line_of_a_text_a_program_fails_on_is_named(tmp_path, persistent):
    """Before: "skip-mt.py exited with code 3 | stderr: …", not saying which of the text's lines it failed on."""
    results = await outcomes(tmp_path, CRASHES_ON_BANG, ["one\n!two\nthree", "four"], persistent)
    assert results == [(None, "skip-mt.py exited with code 3 (line 2 of the text's 3) | stderr: crashing on purpose"),
                       ("T:four", None)]
