"""A run, decide run or grading not given --out names its directory after the method and the corpus: a long method
id (method.json allows any length) or a corpus file name near the file system's 255-byte limit gives a directory
name within it, the same one each time (a resume finds it), and two long names that start alike stay apart."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mt_eval.cli import main
from mt_eval.harness.run_directory import NAME_BYTES

REPO = Path(__file__).resolve().parent.parent
LEXICON = REPO / "examples" / "lexicon-eng-spa"
DEMO = REPO / "examples" / "data" / "eng-spa-demo.json"
GRADER = REPO / "examples" / "rules-grader"
DECISIONS = REPO / "examples" / "data" / "adequacy-decisions.jsonl"
LONG_ID = "-".join(["lexicon"] * 40)  # 319 characters


def renamed(tmp_path: Path, plugin: Path, method_id: str, name: str = "method") -> Path:
    """A copy of ``plugin`` whose method.json gives ``method_id``."""
    copy = tmp_path / name
    shutil.copytree(plugin, copy, ignore=shutil.ignore_patterns("node_modules", "__pycache__"))
    manifest = json.loads((copy / "method.json").read_text(encoding="utf-8"))
    (copy / "method.json").write_text(json.dumps({**manifest, "method_id": method_id}), encoding="utf-8")
    return copy


def long_corpus(tmp_path: Path) -> Path:
    """The demo corpus named with 300 characters, in a file whose name is 255 bytes (the longest there can be)."""
    corpus = tmp_path / ("c" * 250 + ".json")
    data = json.loads(DEMO.read_text(encoding="utf-8"))
    corpus.write_text(json.dumps({**data, "dataset": {**data["dataset"], "name": "c" * 300}}), encoding="utf-8")
    return corpus


def only_directory(parent: Path) -> Path:
    found = [path for path in parent.iterdir() if path.is_dir()]
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize("method_id", [LONG_ID, "lexicon-eng-spa"])
def test_a_long_method_id_or_corpus_name_gives_a_run_directory_within_the_limit_that_a_resume_finds(
        tmp_path: Path, capsys, monkeypatch, method_id: str):
    """Before: "mt-eval run: cannot create the run directory runs/lexicon-…: File name too long"."""
    method, corpus = renamed(tmp_path, LEXICON, method_id), long_corpus(tmp_path)
    monkeypatch.chdir(tmp_path)
    run = ["run", "--method", str(method), "--corpus", str(corpus), "--quiet"]
    assert main(run) == 0, capsys.readouterr().err
    out = only_directory(tmp_path / "runs")
    assert len(out.name.encode()) <= NAME_BYTES and (out / "card.json").is_file()
    assert out.name.startswith(method_id[:60]) and "__ccccc" in out.name
    assert main([*run, "--resume"]) == 0, capsys.readouterr().err
    assert only_directory(tmp_path / "runs") == out
    assert "nothing to resume" not in capsys.readouterr().err


def test_two_long_method_ids_that_start_alike_get_two_run_directories(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for n, method_id in enumerate([f"{LONG_ID}-one", f"{LONG_ID}-two"]):
        method = renamed(tmp_path, LEXICON, method_id, f"method-{n}")
        assert main(["run", "--method", str(method), "--corpus", str(DEMO), "--quiet"]) == 0, capsys.readouterr().err
    names = sorted(path.name for path in (tmp_path / "runs").iterdir())
    assert len(names) == 2 and all(len(name.encode()) <= NAME_BYTES for name in names)
    assert all(name.endswith("__eng-spa-demo") for name in names)


def test_an_out_given_is_used_as_it_is(tmp_path: Path, capsys):
    out = tmp_path / ("o" * 250)
    method = renamed(tmp_path, LEXICON, LONG_ID)
    assert main(["run", "--method", str(method), "--corpus", str(DEMO), "--out", str(out), "--quiet"]) == 0
    assert (out / "card.json").is_file()
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(["method", out.name])  # (no runs/)


def test_a_decide_run_of_a_long_method_id_gets_a_directory_within_the_limit(tmp_path: Path, capsys, monkeypatch):
    """Before: "mt-eval decide: cannot create the run directory runs/decisions/rules-…: File name too long"."""
    grader = renamed(tmp_path, GRADER, LONG_ID)
    monkeypatch.chdir(tmp_path)
    run = ["decide", "run", "--method", str(grader), "--corpus", str(DECISIONS), "--quiet"]
    assert main(run) == 0, capsys.readouterr().err
    out = only_directory(tmp_path / "runs" / "decisions")
    assert len(out.name.encode()) <= NAME_BYTES and out.name.endswith("__adequacy-decisions")
    assert (out / "card.json").is_file()
    assert main([*run, "--resume"]) == 0 and only_directory(tmp_path / "runs" / "decisions") == out


def test_a_grader_of_a_long_method_id_gets_a_grading_directory_within_the_limit(demo_run: Path, tmp_path: Path,
                                                                               capsys):
    """Before: "mt-eval grade: [Errno 36] File name too long: '…/grading/rules-…'"."""
    card = tmp_path / "run" / "card.json"
    shutil.copytree(demo_run.parent, card.parent)
    grader = renamed(tmp_path, GRADER, LONG_ID)
    assert main(["grade", str(card), "--grader", str(grader), "--seed", "3"]) == 0, capsys.readouterr().err
    out = only_directory(card.parent / "grading")
    assert len(out.name.encode()) <= NAME_BYTES and out.name.startswith(LONG_ID[:100])
    assert json.loads((out / "grading-card.json").read_text())["grader"]["method_id"] == LONG_ID
