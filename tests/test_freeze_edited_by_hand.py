"""A freeze manifest edited by hand, or given as what is not a manifest file: `mt-eval freeze validate` and
`freeze show` name what is wrong and where (the JSON path) with the fix, never a traceback nor a wait for a
pipe's writer; and their errors are said as theirs, not as `freeze init`'s."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mt_eval.cli import main
from rigor_support import SCRIPTED, family_corpus, honest


@pytest.fixture
def frozen(tmp_path: Path) -> Path:
    plugin = tmp_path / "method"
    shutil.copytree(SCRIPTED, plugin, ignore=shutil.ignore_patterns("__pycache__"))
    corpus = family_corpus(tmp_path / "corpus.json")
    out = tmp_path / "freeze.json"
    assert main(["freeze", "init", "--method", str(plugin), "--corpus", str(corpus), "--out", str(out), *honest(),
                 "--resamples", "20"]) == 0
    return out


def edited(path: Path, section: str, key: str, value: object) -> Path:
    manifest = json.loads(path.read_text())
    manifest[section][key] = value
    path.write_text(json.dumps(manifest))
    return path


@pytest.mark.parametrize(("selection", "where", "says"), [
    ({"ids": 5}, "$.corpus.selection.ids", "expected an array"),
    ({"limit": "5"}, "$.corpus.selection.limit", 'expected an integer, got the string "5"'),
    ({"limit": 0}, "$.corpus.selection.limit", "must be >= 1, got 0"),
    ({"segment": [3]}, "$.corpus.selection.segment[0]", "expected a string"),
    ({"idz": ["1"]}, "$.corpus.selection.idz", 'unknown field "idz"'),
])
def test_a_selection_of_the_wrong_shape_is_named_where_it_is(frozen: Path, capsys, selection: dict, where: str,
                                                             says: str):
    edited(frozen, "corpus", "selection", selection)
    capsys.readouterr()
    assert main(["freeze", "validate", str(frozen)]) == 1
    out = capsys.readouterr().out
    assert "not valid (1 problem)" in out and f"{frozen} {where}: {says}" in out
    assert main(["freeze", "show", str(frozen)]) == 1
    captured = capsys.readouterr()
    assert f"{frozen} is not a freeze manifest" in captured.err and where in captured.err and not captured.out


@pytest.mark.parametrize(("section", "key"), [("corpus", "path"), ("method", "path"), ("scoring", "policy_path")])
def test_a_path_holding_a_nul_is_named_where_it_is(frozen: Path, capsys, section: str, key: str):
    edited(frozen, section, key, "corpus\0.json")
    capsys.readouterr()
    assert main(["freeze", "validate", str(frozen)]) == 1
    captured = capsys.readouterr()
    assert f"{frozen} $.{section}.{key}: holds a NUL character, which no path can" in captured.out
    assert captured.err == ""


def test_a_method_path_too_long_for_the_system_is_named_where_it_is(frozen: Path, capsys):
    edited(frozen, "method", "path", "m" * 5000)
    capsys.readouterr()
    assert main(["freeze", "validate", str(frozen)]) == 1
    captured = capsys.readouterr()
    assert f"{frozen} $.method.path: cannot read {frozen.parent / ('m' * 5000)}: File name too long" in captured.out
    assert captured.err == ""


def test_a_method_path_naming_its_method_json_is_the_method(frozen: Path, capsys):
    manifest = json.loads(frozen.read_text())
    edited(frozen, "method", "path", str(Path(manifest["method"]["path"]) / "method.json"))
    capsys.readouterr()
    assert main(["freeze", "validate", str(frozen)]) == 0, capsys.readouterr().out


def test_an_accepted_doubt_no_run_could_accept_is_invalid(frozen: Path, capsys):
    edited(frozen, "corpus", "accepted_doubts", ["script-mismatch", "nope"])
    capsys.readouterr()
    assert main(["freeze", "validate", str(frozen)]) == 1
    out = capsys.readouterr().out
    assert "not valid (1 problem)" in out
    assert f"{frozen} $.corpus.accepted_doubts[1]: no doubt is called 'nope'" in out and "script-mismatch," in out


def test_show_prints_control_characters_escaped(frozen: Path, capsys):
    edited(frozen, "corpus", "name", "\x1b[2Jdemo\x9b")
    edited(frozen, "config", "params", {"style": "\x1b]0;title\x07"})
    capsys.readouterr()
    assert main(["freeze", "show", str(frozen)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x9b" not in out and "\x07" not in out
    assert '  name: "\\u001b[2Jdemo\\x9b"' in out and "--param 'style=\\x1b]0;title\\x07'" in out


def test_a_format_the_corpus_is_not_read_as_is_named_alone(frozen: Path, capsys):
    """Before: "tsv" for a JSON corpus validated; the counts it changes were the only sign of another."""
    capsys.readouterr()
    assert main(["freeze", "validate", str(edited(frozen, "corpus", "format", "tsv"))]) == 1
    out = capsys.readouterr().out
    assert "$.corpus.format: the corpus is read as json, not tsv" in out and "1 problem" in out


def test_parallel_text_for_a_json_corpus_is_named_as_its_format(frozen: Path, capsys):
    """Before: only the counts reading the JSON file line by line changes were named, not the format."""
    capsys.readouterr()
    assert main(["freeze", "validate", str(edited(frozen, "corpus", "format", "parallel"))]) == 1
    out = capsys.readouterr().out
    assert ("$.corpus.format: the corpus corpus.json is a JSON file, not parallel text: read one sentence per line, "
            "its entries and labels differ from the freeze's") in out and "1 problem" in out
    assert 'fix: give "format": "json" (what mt-eval freeze init wrote for it), or freeze again' in out


def mt_eval(*words: str, stdout: int | None = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mt_eval.cli", *words], stdout=stdout, stderr=subprocess.PIPE,
                          text=True, timeout=60)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_a_named_pipe_is_refused_not_waited_on(tmp_path: Path):
    pipe = tmp_path / "freeze.json"
    os.mkfifo(pipe)  # (no writer: reading it would wait for ever)
    for action in ("validate", "show"):
        done = mt_eval("freeze", action, str(pipe))
        assert done.returncode == 1
        assert f"{pipe}: is not a regular file (a pipe, socket or device)" in done.stdout + done.stderr


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="a device that is always full")
def test_validate_and_show_errors_are_said_as_theirs(frozen: Path):
    for action in ("validate", "show"):
        with open("/dev/full", "w") as full:
            done = mt_eval("freeze", action, str(frozen), stdout=full.fileno())
        assert done.returncode == 1
        assert done.stderr == f"mt-eval freeze {action}: cannot write to standard output: No space left on device\n"
