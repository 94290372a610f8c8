"""A freeze manifest edited by hand, or given as what is not a manifest file: `mt-eval freeze validate` and
`freeze show` name what is wrong and where (the JSON path) with the fix, never a traceback nor a wait for a
pipe's writer; and their errors are said as theirs, not as `freeze init`'s. A manifest that names what is not a
file, holds a key twice or a number too large, or names another method; a manifest whose name holds a line break;
a corpus redirected to standard input: each is named, never a pipe waited on nor a device read for ever, nor what
the file does not hold shown, and the run `freeze show` prints is the run the manifest holds."""

from __future__ import annotations

import json
import os
import re
import shlex
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


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not Path("/dev/zero").exists(), reason="named pipes and devices")
@pytest.mark.parametrize(("section", "key"), [("corpus", "path"), ("scoring", "policy_path")])
@pytest.mark.parametrize("kind", ["pipe", "device"])
def test_a_recorded_path_that_is_a_pipe_or_device_is_named_not_read(frozen: Path, section: str, key: str,
                                                                    kind: str):
    """Before: validate waited for ever on a pipe's writer, and read /dev/zero until memory ran out."""
    target = Path("/dev/zero")
    if kind == "pipe":
        target = frozen.parent / "pipe"
        os.mkfifo(target)
    edited(frozen, section, key, str(target))
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "freeze", "validate", str(frozen)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    said = f"$.{section}.{key}: {target} is not a regular file (a pipe, socket or device): it is not read"
    assert said in done.stdout


def test_show_refuses_a_manifest_that_holds_a_key_twice(frozen: Path, capsys):
    """Before: it showed the last value, and a run command, exit 0, for a manifest run --freeze refuses."""
    text = frozen.read_text().replace('"batch_size": ', '"batch_size": 3, "batch_size": ', 1)
    frozen.write_text(text)
    capsys.readouterr()
    assert main(["freeze", "show", str(frozen)]) == 1
    captured = capsys.readouterr()
    assert not captured.out
    assert f"{frozen} is not a valid freeze manifest, which run --freeze refuses:" in captured.err
    assert 'key "batch_size" appears more than once in an object' in captured.err


def test_show_refuses_a_number_too_large_to_hold(frozen: Path, capsys):
    """Before: 1e400 was shown as inf, and the run command as --timeout inf."""
    timeout = json.loads(frozen.read_text())["budgets"]["timeout_s"]
    frozen.write_text(re.sub(rf'"timeout_s": {timeout}\b', '"timeout_s": 1e400', frozen.read_text(), count=1))
    capsys.readouterr()
    assert main(["freeze", "show", str(frozen)]) == 1
    captured = capsys.readouterr()
    assert not captured.out and f"{frozen} $.budgets.timeout_s: inf is not a number a run takes" in captured.err


def test_show_still_shows_a_manifest_edited_by_hand_that_validate_refuses(frozen: Path, capsys):
    """What is wrong with it is freeze validate's to say: show prints what the file holds."""
    edited(frozen, "hardware", "label", "another machine")
    capsys.readouterr()
    assert main(["freeze", "show", str(frozen)]) == 0
    assert "  label: another machine\n" in capsys.readouterr().out


def test_another_method_is_named_with_the_fix(frozen: Path, tmp_path: Path, capsys):
    other = tmp_path / "other"
    shutil.copytree(frozen.parent / "method", other)
    method = json.loads((other / "method.json").read_text())
    method["method_id"] = "another-method"
    (other / "method.json").write_text(json.dumps(method))
    edited(frozen, "method", "path", "other")
    capsys.readouterr()
    assert main(["freeze", "validate", str(frozen)]) == 1
    out = capsys.readouterr().out
    frozen_id = json.loads(frozen.read_text())["method"]["method_id"]
    assert f"is 'another-method', not the frozen '{frozen_id}'" in out
    assert "fix: give the frozen method's directory as $.method.path, or freeze again" in out


def test_a_manifest_name_with_a_line_break_is_said_on_one_line(frozen: Path, capsys):
    """Before: the name's line break cut `wrote …` and `… valid and frozen` in two."""
    named = frozen.parent / "free\nze.json"
    assert main(["freeze", "init", "--method", str(frozen.parent / "method"), "--corpus",
                 str(frozen.parent / "corpus.json"), "--out", str(named), *honest(), "--resamples", "20"]) == 0
    assert main(["freeze", "validate", str(named)]) == 0
    assert main(["freeze", "show", str(named)]) == 0
    out = capsys.readouterr().out
    escaped = str(frozen.parent / "free\\nze.json")
    assert f"wrote {escaped}: status frozen\n" in out and f"{escaped}: valid and frozen\n" in out
    assert f"{escaped}: freeze/1, status frozen" in out


def test_a_corpus_redirected_to_standard_input_is_frozen_as_its_file_and_its_shown_run_is_held_to_it(
        tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch):
    """Before: `--corpus - < dev.jsonl` recorded the file dev.jsonl but the name "standard input", so the run
    `freeze show` printed (`--corpus dev.jsonl`) was refused: corpus.name differed."""
    plugin = tmp_path / "method"
    shutil.copytree(SCRIPTED, plugin, ignore=shutil.ignore_patterns("__pycache__"))
    entries = json.loads(family_corpus(tmp_path / "family.json").read_text())["entries"]
    corpus = tmp_path / "dev.jsonl"
    corpus.write_text("".join(json.dumps(entry) + "\n" for entry in entries), encoding="utf-8")
    frozen = tmp_path / "freeze.json"
    with corpus.open("rb") as redirected:
        done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "freeze", "init", "--method", str(plugin),
                               "--corpus", "-", "--pair", "eng>spa", "--corpus-source", "tests", "--corpus-license",
                               "CC0-1.0", "--resamples", "20", "--out", str(frozen), *honest()],
                              stdin=redirected, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    manifest = json.loads(frozen.read_text())
    assert (manifest["corpus"]["path"], manifest["corpus"]["name"]) == ("dev.jsonl", "dev")
    monkeypatch.chdir(tmp_path)
    assert main(["freeze", "show", frozen.name]) == 0
    words = shlex.split(capsys.readouterr().out.split("run it with:\n  ", 1)[1])
    assert main([*words[1:], "--out", "run"]) == 0, capsys.readouterr().err
