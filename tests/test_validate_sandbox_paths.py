"""`mt-eval validate .` inside a plugin, as `mt-eval new` prints it: the problems found in the sandbox name the
plugin's files as the host does, so a problem both sides find is said once, and a fix names no absolute path."""

from __future__ import annotations

from pathlib import Path

import pytest

from mt_eval.cli import main
from mt_eval.validate import validate_plugin
from sandbox_support import needs_sandbox


@needs_sandbox
@pytest.mark.parametrize("card", ['{"paradigm": "rule-based",}', "[]"])
def test_a_broken_card_is_one_error_under_validate_dot(make_plugin, monkeypatch, capsys, card: str):
    plugin = make_plugin(card=card)
    monkeypatch.chdir(plugin)
    report = validate_plugin(Path("."), sandbox=True, scan=False)
    assert [p.file for p in report.errors] == ["method_card.json"], report.errors
    assert main(["validate", "--no-scan", "."]) == 1
    assert "1 error, 0 warnings" in capsys.readouterr().out


@needs_sandbox
def test_a_card_contradicting_method_json_names_both_files_as_given(make_plugin, monkeypatch):
    plugin = make_plugin(card={"method_id": "other"})
    monkeypatch.chdir(plugin)
    [problem] = validate_plugin(Path("."), sandbox=True, scan=False).errors
    assert problem.file == "method_card.json"
    assert problem.message == 'says "other" but method.json says "plugin-0"'
    assert problem.hint == 'remove "method_id" here or make it match; method.json is where it is set'


def test_the_sandbox_path_is_written_as_the_plugin_was_named():
    from mt_eval.validate.in_sandbox import as_given

    inside = "/srv/plugins/my-method"
    text = f"run `python {inside}/pipeline.py`; {inside} has it"
    assert as_given(text, inside, Path(".")) == "run `python pipeline.py`; . has it"
    assert as_given(text, inside, Path("my-method")) == "run `python my-method/pipeline.py`; my-method has it"
