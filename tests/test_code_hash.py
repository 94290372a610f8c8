"""The code hash covers the method's code and data — not run outputs, tool environments, caches, version
control, editor or OS leftovers — and runs never land inside the plugin: from inside it, ``mt-eval run --method
.`` writes beside it and ``--resume`` continues."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gate_policies import LENIENT
from mt_eval.code_hash import code_sha256, hashed_files

REPO = Path(__file__).parent.parent
LEXICON = REPO / "examples" / "lexicon-eng-spa"
SAMPLE = REPO / "templates" / "method-plugin" / "{{cookiecutter.method_id}}" / "sample" / "corpus.jsonl"


def mt_eval(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mt_eval.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=180)


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    copy = tmp_path / "lexicon"
    shutil.copytree(LEXICON, copy)
    (copy / "sample").mkdir(exist_ok=True)
    shutil.copyfile(SAMPLE, copy / "sample" / "corpus.jsonl")  # a plugin's sample corpus, as mt-eval new writes it
    return copy


NOT_THE_METHOD = ["runs/x__y/results.jsonl", ".venv/bin/python", "__pycache__/pipeline.cpython-311.pyc",
                  "node_modules/x/index.js", ".git/HEAD", ".hg/store", ".svn/entries", ".tox/log", ".nox/log",
                  ".pytest_cache/v", ".mypy_cache/x", ".ruff_cache/x", ".idea/workspace.xml",
                  ".vscode/settings.json", "pipeline.py~", ".pipeline.py.swp", "#pipeline.py#", ".#pipeline.py",
                  "pipeline.py.orig", "glossary.tsv.bak", ".DS_Store", "Thumbs.db", "data/desktop.ini"]


@pytest.mark.parametrize("relative", NOT_THE_METHOD)
def test_what_is_not_the_method_leaves_the_hash_alone(plugin, relative):
    before = code_sha256(plugin)
    (plugin / relative).parent.mkdir(parents=True, exist_ok=True)
    (plugin / relative).write_text("anything", encoding="utf-8")
    assert code_sha256(plugin) == before


@pytest.mark.parametrize("relative", ["pipeline.py", "glossary.tsv", "data/runs/lexicon.tsv", "notes.md",
                                      "method.json"])
def test_the_methods_code_and_data_change_the_hash(plugin, relative):
    before = code_sha256(plugin)
    path = plugin / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text((path.read_text(encoding="utf-8") if path.exists() else "") + "\n# changed\n", encoding="utf-8")
    assert code_sha256(plugin) != before
    assert tuple(relative.split("/")) in hashed_files(plugin)


def test_a_run_from_inside_the_plugin_goes_beside_it_and_resumes(plugin):
    first = mt_eval("run", "--method", ".", "--corpus", "sample/corpus.jsonl", *LENIENT, cwd=plugin)
    assert first.returncode == 0, first.stderr
    run = plugin.parent / "runs" / "lexicon-eng-spa__corpus"
    assert (run / "card.json").is_file() and not (plugin / "runs").exists()
    assert f"run card     {Path('..') / 'runs' / 'lexicon-eng-spa__corpus' / 'card.json'}" in first.stdout
    (plugin / ".pipeline.py.swp").write_text("an editor's swap file", encoding="utf-8")
    again = mt_eval("run", "--method", ".", "--corpus", "sample/corpus.jsonl", "--resume", *LENIENT, cwd=plugin)
    assert again.returncode == 0, again.stderr
    assert "the method's code changed" not in again.stderr
    card = json.loads((run / "card.json").read_text(encoding="utf-8"))
    assert card["method"]["code_sha256"] == code_sha256(plugin)


def test_an_out_inside_the_plugin_is_refused_with_one_outside(plugin):
    done = mt_eval("run", "--method", ".", "--corpus", "sample/corpus.jsonl", "--out", "runs/x", cwd=plugin)
    assert done.returncode == 1
    assert (f"--out runs/x is inside the method's directory {plugin.resolve()}: its results would become part of "
            "the method (its code hash, the contamination check, what is shipped with it); write them outside it, "
            "e.g. --out ../runs/x") in done.stderr
    assert not (plugin / "runs").exists()
    nested = mt_eval("run", "--method", str(plugin), "--corpus", str(plugin / "sample" / "corpus.jsonl"), "--out",
                     str(plugin / "data" / "r"), cwd=plugin.parent)
    assert nested.returncode == 1 and "is inside the method's directory" in nested.stderr


def test_the_sample_corpus_inside_the_plugin_is_explained(plugin):
    done = mt_eval("run", "--method", ".", "--corpus", "sample/corpus.jsonl", *LENIENT, cwd=plugin)
    assert done.returncode == 0, done.stderr
    assert "contamination check: CONTAMINATED" in done.stderr
    assert ("the corpus sample/corpus.jsonl is inside the method's directory, so the method's bundle holds its "
            "texts: fine for a first try, but evaluate on a corpus kept outside the plugin") in done.stderr
    assert "mt-eval contamination --method . --corpus sample/corpus.jsonl lists them all" in done.stderr
