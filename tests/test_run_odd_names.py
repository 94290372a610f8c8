"""A method directory, corpus file or --out whose name is not UTF-8 (bytes Linux allows): the run says so, and how
to fix it, before it writes anything; the plugin itself loads from there (mt-eval translate)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from mt_eval.cli import main

REPO = Path(__file__).resolve().parent.parent
LEXICON = REPO / "examples" / "lexicon-eng-spa"
DEMO = REPO / "examples" / "data" / "eng-spa-demo.json"


def odd(directory: Path, name: bytes) -> Path:
    return Path(os.fsdecode(os.fsencode(directory) + b"/" + name))


@pytest.mark.parametrize("which", ["corpus", "method", "out"])
def test_a_name_that_is_not_utf8_is_refused_before_anything_is_written(tmp_path: Path, capsys, which: str):
    """Before: "mt-eval run: 'utf-8' codec can't encode character '\\udcff' in position 9: surrogates not allowed",
    after the run directory and its lock were made (for the method's directory, as the plugin was imported)."""
    corpus, method, out = DEMO, LEXICON, tmp_path / "run"
    if which == "corpus":
        corpus = odd(tmp_path, b"c\xffc.json")
        shutil.copy(DEMO, corpus)
    elif which == "method":
        method = odd(tmp_path, b"m\xfe")
        shutil.copytree(LEXICON, method)
    else:
        out = odd(tmp_path, b"o\xfe")
    code = main(["run", "--method", str(method), "--corpus", str(corpus), "--out", str(out), "--quiet"])
    err = capsys.readouterr().err
    shown = {"corpus": "the corpus file", "method": "the method's directory", "out": "--out"}[which]
    assert code == 1 and f"mt-eval run: {shown} " in err and "has a name that is not UTF-8 (byte 0x" in err
    assert "rename it" in err and "Traceback" not in err and "codec" not in err
    assert not out.exists() and not (tmp_path / "run").exists()


def test_a_plugin_in_a_directory_whose_name_is_not_utf8_loads(tmp_path: Path, capsys):
    method = odd(tmp_path, b"m\xfe")
    shutil.copytree(LEXICON, method)
    assert main(["translate", str(method), "--pair", "eng>spa", "Hello world."]) == 0
    assert capsys.readouterr().out.strip() == "Hola mundo."
