"""How a wrapped program's command may be written wrong, and what its author is told: a command line given as one
string or as the program's name, a path as a word, a word that is no string, a script without a #! line."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mt_eval.adapters import ProcessOptions, ProcessTranslator, Stage

FAST = ProcessOptions(timeout_s=2.0, shutdown_grace_s=0.5)


async def outcomes(translator: ProcessTranslator, texts: list[str]) -> list[tuple[str | None, str | None]]:
    """The texts' outcomes, the program stopped after them."""
    try:
        return [(r.text, r.error) for r in await translator.translate_texts(texts)]
    finally:
        await translator.aclose()


def test_a_command_given_as_one_string_is_refused_with_its_words():
    """Before: each character was a word, so "apertium -u eng-spa" ran a program called "a" (cannot start a (a): it
    is not installed …)."""
    said = "give the program and its arguments as a list of words: [\"apertium\", \"-u\", \"eng-spa\"]"
    with pytest.raises(TypeError, match="the command is one string") as raised:
        ProcessTranslator("apertium -u eng-spa")
    assert said in str(raised.value)
    with pytest.raises(TypeError) as raised:
        Stage("apertium -u eng-spa")  # type: ignore[arg-type]
    assert said in str(raised.value)


def test_a_word_that_is_not_a_string_is_refused_when_the_translator_is_made():
    """Before: the first call to translate raised TypeError from deep in the start of the program."""
    with pytest.raises(TypeError) as raised:
        ProcessTranslator(["my-mt", "--beam", 5])  # type: ignore[list-item]
    assert str(raised.value) == ("word 3 of the command ['my-mt', '--beam', 5] is int 5, not a string: give it as "
                                 "one, str(5)")


@pytest.mark.parametrize("persistent", [True, False])
async def test_a_path_is_a_word_of_the_command_and_one_that_cannot_start_fails_its_entries(tmp_path, persistent):
    """Before: a path (`directory / "bin" / NAME`, as the messages advise) that could not be started made
    translate_texts raise TypeError instead of failing the entries with the reason."""
    script = tmp_path / "word-mt.py"
    script.write_text("import sys\nfor line in sys.stdin:\n    print('T:' + line.strip(), flush=True)\n")
    working = ProcessTranslator([Path(sys.executable), script], persistent=persistent, options=FAST)
    assert await outcomes(working, ["a", "b"]) == [("T:a", None), ("T:b", None)]
    missing = tmp_path / "bin" / "word-mt"
    broken = ProcessTranslator([missing], persistent=persistent, options=FAST)
    assert await outcomes(broken, ["a"]) == [(None, f"cannot start word-mt ({missing}): no such file (a program in "
                                                    "the plugin: build its path from the plugin directory, directory "
                                                    "/ \"bin\" / NAME, which holds wherever the run starts)")]


@pytest.mark.parametrize("persistent", [True, False])
async def test_a_command_line_given_as_the_programs_name_is_told_to_be_split(persistent):
    """Before: "it is not installed, or not on PATH", for a program that is."""
    translator = ProcessTranslator([f"{sys.executable} -u 'my mt.py' --beam 5"], persistent=persistent, options=FAST)
    [(text, error)] = await outcomes(translator, ["a"])
    assert text is None and error is not None
    words = f'["{sys.executable}", "-u", "my mt.py", "--beam", "5"]'
    assert error.endswith(f": no program is called that: its name holds spaces. Fix: give the program and its "
                          f"arguments as separate words, {words}")


@pytest.mark.parametrize("persistent", [True, False])
async def test_a_script_without_a_shebang_line_is_told_to_name_its_interpreter(tmp_path, persistent):
    """Before: "Exec format error", and nothing of the cause or the fix."""
    script = tmp_path / "word-mt.sh"
    script.write_text('while read -r line; do echo "T:$line"; done\n')
    script.chmod(0o755)
    [(text, error)] = await outcomes(ProcessTranslator([str(script)], persistent=persistent, options=FAST), ["a"])
    assert text is None
    assert error == (f"cannot start word-mt.sh ({script}): the system cannot run it: a script without a #! line naming "
                     f"its interpreter. Fix: make its first line #!/bin/sh, or run it with its interpreter: "
                     f"[\"sh\", \"{script}\"]")
    fixed = ProcessTranslator(["sh", str(script)], persistent=persistent, options=FAST)
    assert await outcomes(fixed, ["a"]) == [("T:a", None)]


async def test_a_program_whose_path_holds_spaces_is_not_taken_for_a_command_line(tmp_path):
    """A script in a folder with a space whose #! names no installed interpreter is told so, not to split its path."""
    script = tmp_path / "my tools" / "word-mt"
    script.parent.mkdir()
    script.write_text("#!/usr/bin/no-such-interpreter\n")
    script.chmod(0o755)
    [(_, error)] = await outcomes(ProcessTranslator([str(script)], options=FAST), ["a"])
    assert error == (f"cannot start word-mt ({script}): the interpreter its #! line names is not installed (install "
                     "it, or run the file with its interpreter: [interpreter, path])")
    missing = f"{tmp_path}/my tools/missing-mt --beam 5"
    [(_, error)] = await outcomes(ProcessTranslator([missing], options=FAST), ["a"])
    assert error is not None and error.endswith(": no such file (a program in the plugin: build its path from the "
                                                "plugin directory, directory / \"bin\" / NAME, which holds wherever "
                                                "the run starts)")
