"""`mt-eval verify` and `publish` of a card whose run read its corpus from standard input or a pipe
(``--corpus -``, ``--corpus <(zcat dev.json.gz)``): the card records ``/dev/stdin`` or ``/dev/fd/63``, which
name the command's own descriptors when read again. Without ``--corpus``, such a card is said to need its
corpus given; before, verify read its own standard input in the corpus's place: it waited on a terminal (or an
open pipe), said "standard input: is empty (0 bytes)" under CI, and verified whatever was piped to it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gate_policies import LENIENT
from mt_eval.cli import main
from rigor_support import edit_card as edit
from verify_support import run_card


@pytest.fixture
def streamed(tmp_path: Path) -> tuple[Path, Path]:
    """(a card recording its corpus as read from standard input, the corpus file)"""
    card = run_card(tmp_path)

    def on_standard_input(data: dict) -> None:
        data["corpus"]["path"] = "/dev/stdin"
        for file in data["corpus"]["reading"]["files"]:
            file["path"] = "/dev/stdin"

    return edit(card, on_standard_input, name="card.json"), tmp_path / "corpus.json"


def test_a_card_on_standard_input_is_not_verified_with_the_commands_own(streamed: tuple[Path, Path]):
    card, corpus = streamed
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "verify", str(card)], input=corpus.read_text(),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout
    assert "? corpus        the run read it from standard input, which is gone once read" in done.stdout
    assert ("fix: give the corpus with --corpus FILE: the file the run read from standard input (or pipe it again: "
            "--corpus -)") in done.stdout
    again = subprocess.run([sys.executable, "-m", "mt_eval.cli", "verify", str(card), "--corpus", "-", "--quiet"],
                           input=corpus.read_text(), capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stdout + again.stderr
    assert main(["verify", str(card), "--corpus", str(corpus), "--quiet"]) == 0


def test_verify_of_such_a_card_does_not_wait_on_an_open_standard_input(streamed: tuple[Path, Path]):
    card, _ = streamed
    read, write = os.pipe()  # (standard input left open, as a terminal's is)
    try:
        with subprocess.Popen([sys.executable, "-m", "mt_eval.cli", "verify", str(card), "--json"], stdin=read,
                              stdout=subprocess.PIPE, text=True) as verify:
            try:
                verify.wait(timeout=30)
            finally:
                verify.kill()
            out = verify.stdout.read() if verify.stdout else ""
    finally:
        os.close(read)
        os.close(write)
    assert verify.returncode == 1 and '"code": "corpus"' in out


def test_publish_of_such_a_card_asks_for_its_corpus(streamed: tuple[Path, Path], tmp_path: Path, capsys):
    card, corpus = streamed
    db = f"sqlite:///{tmp_path / 'board.db'}"
    (tmp_path / "run" / "method_card.json").write_text(json.dumps({"paradigm": "rule-based", "open_source": False}))
    assert main(["publish", str(card), "--db", db, "--no-input", *LENIENT]) == 1
    assert "the run read it from standard input" in capsys.readouterr().err
    assert main(["publish", str(card), "--db", db, "--no-input", "--corpus", str(corpus), *LENIENT]) == 0
