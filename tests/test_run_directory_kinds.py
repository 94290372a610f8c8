"""A run directory of one command given to the other (`mt-eval run --out` a decide run's directory, `mt-eval decide
run --out` a translation run's): refused in one line that says what the directory is and what to do, with or
without --resume; --force replaces it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mt_eval.cli import main
from test_decide_run import rows, write_corpus
from test_run import LENIENT, REVERSE, corpus

FIX = "choose another --out, or replace it with --force{} (which deletes that run)"


def translate(out: Path, corpus_path: Path, *extra: str) -> int:
    return main(["run", "--method", str(REVERSE), "--corpus", str(corpus_path), "--out", str(out), "--quiet",
                 "--resamples", "50", *LENIENT, *extra])


def decide(out: Path, corpus_path: Path, *extra: str) -> int:
    return main(["decide", "run", "--method", str(REVERSE), "--corpus", str(corpus_path), "--out", str(out), "--quiet",
                 "--resamples", "50", *extra])


@pytest.mark.parametrize("resume", [False, True], ids=["out", "resume"])
def test_run_on_a_decide_runs_directory_says_what_it_is(tmp_path, capsys, resume):
    """Before: "DIR holds an earlier run of other inputs (the corpus, the run configuration, ... differ), which
    --resume cannot continue", and with --resume "cannot resume DIR: the corpus, ... changed since the run started":
    neither said that DIR is another command's run."""
    out = tmp_path / "decided"
    assert decide(out, write_corpus(tmp_path / "c.jsonl", rows(3))) == 0
    before = {name: (out / name).read_bytes() for name in ("run.json", "results.jsonl", "card.json")}
    capsys.readouterr()
    assert translate(out, corpus(tmp_path), *(["--resume"] if resume else [])) == 1
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"mt-eval run: {out} is the directory of a decide run (mt-eval decide run), which mt-eval run cannot "
        f"continue: {FIX.format(' instead of --resume' if resume else '')}")
    assert {name: (out / name).read_bytes() for name in before} == before  # left as it was


@pytest.mark.parametrize("resume", [False, True], ids=["out", "resume"])
def test_decide_run_on_a_translation_runs_directory_says_what_it_is(tmp_path, capsys, resume):
    out = tmp_path / "translated"
    assert translate(out, corpus(tmp_path)) == 0
    before = {name: (out / name).read_bytes() for name in ("run.json", "results.jsonl", "card.json")}
    capsys.readouterr()
    assert decide(out, write_corpus(tmp_path / "c.jsonl", rows(3)), *(["--resume"] if resume else [])) == 1
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"mt-eval decide: {out} is the directory of a translation run (mt-eval run), which mt-eval decide run cannot "
        f"continue: {FIX.format(' instead of --resume' if resume else '')}")
    assert {name: (out / name).read_bytes() for name in before} == before


def test_force_replaces_a_run_of_the_other_kind(tmp_path):
    out = tmp_path / "shared"
    decisions = write_corpus(tmp_path / "c.jsonl", rows(3))
    assert decide(out, decisions) == 0
    assert translate(out, corpus(tmp_path), "--force") == 0
    assert "kind" not in json.loads((out / "run.json").read_text()) and (out / "predictions.txt").exists()
    assert decide(out, decisions, "--force") == 0
    assert json.loads((out / "run.json").read_text())["kind"] == "decide"
    assert not (out / "predictions.txt").exists()  # the translation run's files went with it
