"""A method's own card over the bridge: a guest whose method's ``method_card()`` raises, or returns what is not a
card, refuses ``initialize`` (-32603, ``data.type`` MethodCardError, the module's file, what went wrong and the fix),
and a ``method_card`` request that fails is answered alike by both reference guests."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mt_eval.bridge.runtimes import node_command

MANIFEST = {"name": "Fickle", "method_id": "fickle", "entry_point": "pipeline:Fickle", "supported_pairs": ["eng>spa"],
            "dependency_class": "S", "dependencies": []}
# method_card() answers its first `good` calls (the loader's, in `mt-eval serve`, is the first), then `bad`
FICKLE = """\
class Fickle:
    calls = 0

    async def translate(self, entries, config):
        return [{{"id": e["id"], "predicted": e["source"]}} for e in entries]

    def method_card(self):
        Fickle.calls += 1
        if Fickle.calls > {good}:
            {bad}
        return {{}}
"""
RAISES = 'raise RuntimeError("card boom")'
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocol_versions": ["mt-eval-bridge/1"]}}
CARD = {"jsonrpc": "2.0", "id": 2, "method": "method_card", "params": {}}


def fickle_plugin(tmp_path: Path, good: int, bad: str) -> Path:
    directory = tmp_path / "fickle"
    directory.mkdir()
    (directory / "method.json").write_text(json.dumps(MANIFEST))
    (directory / "pipeline.py").write_text(FICKLE.format(good=good, bad=bad))
    return directory


def served(command: list[str], tmp_path: Path, *requests: dict[str, object]) -> tuple[list[dict[str, object]], int]:
    """The guest's answers to ``requests`` (given in a file), and its exit status."""
    given = tmp_path / "requests.jsonl"
    given.write_text("".join(json.dumps(request) + "\n" for request in requests))
    with given.open("rb") as stdin:
        done = subprocess.run(command, stdin=stdin, capture_output=True, timeout=60)
    return [json.loads(line) for line in done.stdout.splitlines()], done.returncode


@pytest.mark.parametrize(("bad", "said"), [
    (RAISES, "raised RuntimeError: card boom (pipeline.py:10)\n  fix: make method_card() return a dict of card fields"),
    ("return [1]", "a method card must be an object, got list\n  fix: return or write a JSON object"),
])
def test_mt_eval_serve_refuses_initialize_when_the_method_card_fails(tmp_path: Path, bad: str, said: str):
    """Before: a method_card() that raised when the guest asked crashed ``mt-eval serve`` with a traceback, and one
    that returned a list sent a null card."""
    directory = fickle_plugin(tmp_path, 1, bad)
    command = [sys.executable, "-m", "mt_eval.cli", "serve", str(directory)]
    answers, status = served(command, tmp_path, INITIALIZE, CARD)
    refused = f"cannot load the method: {directory / 'pipeline.py'} method_card(): {said}"
    assert answers == [
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "data": {"type": "MethodCardError"}, "message": refused}},
        {"jsonrpc": "2.0", "id": 2, "error": {"code": -32006, "message": "not initialized: the method failed to load"}}]
    assert status == 1


def test_an_isolated_run_fails_at_start_saying_why_the_card_cannot_be_made(tmp_path: Path):
    directory = fickle_plugin(tmp_path, 1, RAISES)
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "run", "--method", str(directory), "--isolate",
                           "--demo", "--quiet", "--out", str(tmp_path / "run")], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1, done.stderr
    assert (f"cannot load the method: {directory / 'pipeline.py'} method_card(): raised RuntimeError: card boom "
            "(pipeline.py:10)\n  fix: make method_card() return a dict of card fields") in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_both_guests_answer_a_method_card_request_that_fails_in_the_words_initialize_would_have(tmp_path: Path):
    """Before: the Node guest said ``methodCard() returned a list, expected an object or null`` (or only what was
    thrown), and the Python guest sent the card it made at start."""
    python = fickle_plugin(tmp_path, 2, "return [1]")  # (the loader's call, then initialize's)
    node = tmp_path / "fickle.mjs"
    node.write_text("export async function translate() { return []; }\nlet calls = 0;\n"
                    "export function methodCard() { calls += 1; return calls > 1 ? [1] : {}; }\n")
    answered = {}
    for runtime, command, file, name in [
            ("python", [sys.executable, "-m", "mt_eval.cli", "serve", str(python)], python / "pipeline.py",
             "method_card()"),
            ("node", [*node_command(node)[:-1], "--module", str(node)], node, "methodCard()")]:
        answers, status = served(command, tmp_path, INITIALIZE, CARD)
        assert (answers[0]["result"]["card"], status) == ({}, 0), runtime  # type: ignore[index]
        error = answers[1]["error"]
        answered[runtime] = {**error, "message": error["message"].replace(f"{file} {name}", "FILE")}  # type: ignore
    assert answered["python"] == answered["node"] == {
        "code": -32007, "data": {"type": "MethodCardError"},
        "message": "FILE: a method card must be an object, got list\n  fix: return or write a JSON object"}
