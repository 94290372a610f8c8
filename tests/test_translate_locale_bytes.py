"""``mt-eval translate`` under a locale that is not UTF-8 (LC_ALL=C with Python's UTF-8 mode off): an argument's UTF-8
bytes reach it as escapes, and were refused as "not valid UTF-8"; they are read as the UTF-8 they are. Bytes that
are no UTF-8 are still refused, saying where."""

from __future__ import annotations

import os
from pathlib import Path

from mt_eval.cli import main

LEXICON = Path(__file__).resolve().parent.parent / "examples" / "lexicon-eng-spa"


def test_utf8_bytes_given_under_a_c_locale_are_read_as_utf8(capsys):
    escaped = os.fsdecode("Good morning, café.".encode())  # (as argv holds them under LC_ALL=C, PYTHONUTF8=0)
    if escaped == "Good morning, café.":  # (this interpreter decodes its arguments as UTF-8 anyway)
        escaped = "Good morning, caf\udcc3\udca9."
    assert main(["translate", str(LEXICON), escaped]) == 0
    out = capsys.readouterr().out
    assert "café" in out and "\\udc" not in out


def test_bytes_that_are_no_utf8_are_still_refused(capsys):
    assert main(["translate", str(LEXICON), "caf\udce9"]) == 2
    assert "TEXT 1 is not valid UTF-8 (at character 4): give the sentences as UTF-8" in capsys.readouterr().err
