"""Text that is not valid Unicode (a lone surrogate) fails its entry before anything is sent, in the words the
shared vectors give (bridge/vectors/contract/lone-surrogates.json), whichever guest or plugin would have got it;
the other entries go on, and nothing is left waiting. A guest writes such text from its method (an exception's
message) as U+FFFD, so the host gets the rest of it."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
from pathlib import Path

import pytest

from champollion_project import both, make_project, needs_node, pairs_config, run_locales, twins
from mt_eval.adapters import LINES, FramingError
from mt_eval.bridge.connection import HostOptions
from mt_eval.bridge.method import BridgeMethod
from mt_eval.bridge.runtimes import node_command, python_command
from mt_eval.cli import main
from mt_eval.lone_surrogates import problem_in

ROOT = Path(__file__).parent.parent
REVERSE = ROOT / "tests" / "fixtures" / "reverse"
VECTORS = json.loads((ROOT / "bridge" / "vectors" / "contract" / "lone-surrogates.json").read_text(encoding="utf-8"))
CONFIG = {"source_lang": "eng", "target_lang": "spa"}
FAST = HostOptions(start_timeout_s=10, request_timeout_s=5, shutdown_grace_s=1)
GUESTS = {"python": python_command(REVERSE), "node": node_command(REVERSE)}


@pytest.mark.parametrize("case", VECTORS["cases"], ids=lambda case: case["name"])
def test_the_problem_is_worded_as_the_vectors_say(case):
    assert problem_in(case["value"], case["owner"]) == case["problem"]


def test_a_program_is_not_given_such_text_either():
    with pytest.raises(FramingError, match=r"^the text is not valid Unicode \(surrogates not allowed at position 1\)$"):
        LINES.records("x\ud800y")


@pytest.mark.parametrize("runtime", GUESTS)
async def test_the_entry_fails_at_once_and_the_others_are_translated(runtime, caplog):
    caplog.set_level(logging.ERROR, logger="asyncio")
    method = BridgeMethod(GUESTS[runtime], options=FAST, label=runtime)
    try:
        batch = [{"id": "a", "source": "x\ud800y"}, {"id": "b", "source": "abc"},
                 {"id": "c", "source": "fine", "note": "n\udc00"}]
        results = await asyncio.wait_for(method.translate(batch, CONFIG), 4)  # nothing waits for a deadline
        assert [r["error"] for r in results] == [
            "the text is not valid Unicode (surrogates not allowed at position 1)", None,
            "the entry's \"note\" is not valid Unicode (surrogates not allowed at position 1)"]
        assert results[1]["predicted"] == "spa:cba"
        assert method._connection._pending == {}  # no request is left waiting for an answer
        bad_config = {**CONFIG, "model": "\ud800"}
        assert [r["error"] for r in await method.translate(batch[1:2], bad_config)] == [
            "the config's \"model\" is not valid Unicode (surrogates not allowed at position 0)"]
    finally:
        await method.aclose()
    del method
    gc.collect()
    assert "never retrieved" not in caplog.text


async def test_a_decision_row_fails_alone():
    method = BridgeMethod(GUESTS["python"], options=FAST, label="python")
    question = {"fluent": {"type": "noul", "instructions": "Fluent?"}}
    try:
        results = await method.decide([{"id": "r1", "state": {"text": "x\ud800"}, "questions": question},
                                       {"id": "r2", "state": {"text": "ok"}, "questions": question}], CONFIG)
        assert results[0] == {"id": "r1", "error": "the row's \"state.text\" is not valid Unicode (surrogates not "
                                                   "allowed at position 1)"}
        assert results[1]["answers"]["fluent"]["probabilities"] == {"true": 0.5, "false": 0.5}
    finally:
        await method.aclose()


RAISING = {  # a method whose exception's message holds a lone surrogate, for the entry "bad"
    "translate.js": "export async function translate(entries) {\n"
                    "  if (entries.some((e) => e.source === 'bad')) throw new Error('cannot read \\ud83d here');\n"
                    "  return entries.map((e) => ({ id: e.id, predicted: e.source }));\n}\n",
    "pipeline.py": "class Raising:\n    async def translate(self, entries, config):\n"
                   "        if any(e['source'] == 'bad' for e in entries):\n"
                   "            raise Error('cannot read \\ud83d here')\n"
                   "        return [{'id': e['id'], 'predicted': e['source']} for e in entries]\n\n\n"
                   "class Error(Exception):\n    pass\n",
}


@pytest.mark.parametrize("runtime", ["node", "python"])
async def test_a_methods_message_holding_a_lone_surrogate_reaches_the_host(tmp_path: Path, runtime: str):
    for name, text in RAISING.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "method.json").write_text(json.dumps({"name": "Raising", "node_entry": "translate.js",
                                                      "entry_point": "pipeline:Raising"}))
    command = node_command(tmp_path) if runtime == "node" else python_command(tmp_path)
    method = BridgeMethod(command, options=FAST, label=runtime)
    try:
        results = await method.translate([{"id": "a", "source": "ok"}, {"id": "b", "source": "bad"}], CONFIG)
    finally:
        await method.aclose()
    # the message made writable as every method's message is (mt_eval.lone_surrogates.writable): the escape, in words
    assert [(r["predicted"], r["error"]) for r in results] == [
        ("ok", None), (None, "the method failed: Error: cannot read \\ud83d here")]


@pytest.mark.parametrize("plugin", ["rot13", "upper"])  # in this process, and a Node entry through the bridge
def test_locales_blame_the_string_not_the_plugin(tmp_path: Path, monkeypatch, capsys, plugin):
    project = make_project(tmp_path, pairs_config({"en:es": {"methodPlugin": plugin}}),
                           {"locales/en/common.json": '{"bad": "x\\ud800y", "good": "Hello"}\n'}, plugins=(plugin,))
    monkeypatch.setenv("CHAMPOLLION_FIXTURE_LOG", str(project.log))
    assert main(["locales", "--config", str(project.root), "--quiet", "--json"]) == 1
    report = capsys.readouterr().out
    assert "the text is not valid Unicode (surrogates not allowed at position 1)" in report
    assert [call["sources"] for call in project.calls()] == [["Hello"]]  # the plugin never saw the bad string
    assert [(locale["sent"], locale["calls"]) for locale in json.loads(report)["locales"]] == [(1, 1)]  # (it said 2)


@needs_node
def test_mt_eval_locales_neither_sends_nor_counts_a_string_that_is_not_valid_unicode(tmp_path: Path):
    """Node's twin: the string fails before it is sent, in the same words, and "sent" counts only what was sent
    (it said 1 string in 1 call when the only due string could not be sent)."""
    project = make_project(tmp_path, pairs_config({"en:es": {"methodPlugin": "upper"}}),
                           {"locales/en/common.json": '{"bad": "x\\ud800y"}\n'}, plugins=("upper",))
    done = run_locales("node", project, "--json", env={"CHAMPOLLION_FIXTURE_LOG": str(project.log)})
    report = json.loads(done.stdout)
    assert done.returncode == 1 and project.calls() == []
    assert [(locale["sent"], locale["calls"]) for locale in report["locales"]] == [(0, 0)]
    assert report["locales"][0]["files"][0]["failed"] == [
        {"key": "bad", "error": "the text is not valid Unicode (surrogates not allowed at position 1); left out of "
                                "the file"}]


@needs_node
def test_a_locale_key_holding_one_is_reported_alike_by_both_commands(tmp_path: Path):
    """The Python command's text report had ended in exit 1 ("'utf-8' codec can't encode character '\\ud800'"); Node
    wrote U+FFFD."""
    config = pairs_config({"en:es": {"methodPlugin": "reverse"}})
    projects = twins(tmp_path, config, {"locales/en.json": {"a": "Hi"},
                                        "locales/es.json": '{"k\\ud800": "1", "a": "h"}\n'})
    runs = both(projects, "--dry-run")
    assert runs["python"] == runs["node"] and runs["python"][0] == 0, runs
    assert "    - k\ufffd\n" in runs["python"][1]
