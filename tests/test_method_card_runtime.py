"""The method card is one thing everywhere: what a method reports when it runs — its method_card(), or the card
a guest sends at initialize — is merged into the run card for in-process, isolated, Node and command methods."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import msgspec
import pytest

from mt_eval.cli import main
from mt_eval.harness.runcard import RunCard

PYTHON_METHOD = '''
class Carded:
    async def translate(self, entries, config):
        return [{"id": e["id"], "predicted": e["source"]} for e in entries]

    def method_card(self):
        return {"paradigm": "rule-based", "tools_used": ["%s"]}
'''
NODE_METHOD = '''
export async function translate(entries) {
  return entries.map((e) => ({ id: e.id, predicted: e.source }));
}
export function methodCard() { return %s; }
'''
FILE_CARD = {"description": "from method_card.json", "homepage": "https://example.org"}


def write(directory: Path, files: dict[str, str | dict]) -> Path:
    directory.mkdir(parents=True)
    for name, content in files.items():
        (directory / name).write_text(content if isinstance(content, str) else json.dumps(content))
    return directory


def python_plugin(directory: Path, tool: str = "python") -> Path:
    return write(directory, {"pipeline.py": PYTHON_METHOD % tool, "method_card.json": FILE_CARD,
                             "method.json": {"name": "Carded", "entry_point": "pipeline:Carded",
                                             "dependencies": [], "dependency_class": "S"}})


def node_plugin(directory: Path, card: str) -> Path:
    return write(directory, {"translate.js": NODE_METHOD % card, "method_card.json": FILE_CARD,
                             "method.json": {"name": "Carded", "node_entry": "translate.js",
                                             "dependencies": [], "dependency_class": "S"}})


def run(tmp_path: Path, directory: Path, *extra: str) -> tuple[int, RunCard | None]:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "a", "source": "Hello.", "reference": "Hola."}) + "\n")
    code = main(["run", "--method", str(directory), "--corpus", str(corpus), "--pair", "eng>spa", "--quiet",
                 "--out", str(tmp_path / "run"), "--resamples", "50", *extra])
    path = tmp_path / "run" / "card.json"
    return code, msgspec.json.decode(path.read_bytes(), type=RunCard) if path.exists() else None


def expect_merged(card: RunCard | None, tool: str) -> None:
    assert card is not None
    assert card.method.card["paradigm"] == "rule-based"  # from the method, at run time
    assert card.method.card["tools_used"] == [tool]
    assert card.method.card["description"] == "from method_card.json"
    assert card.method.card["method_id"] == card.method.method_id


def test_in_process(tmp_path: Path):
    expect_merged(run(tmp_path, python_plugin(tmp_path / "carded"))[1], "python")


def test_isolated_python_method(tmp_path: Path):
    expect_merged(run(tmp_path, python_plugin(tmp_path / "carded"), "--isolate")[1], "python")


def test_node_method(tmp_path: Path):
    card = run(tmp_path, node_plugin(tmp_path / "carded", '{ paradigm: "rule-based", tools_used: ["node"] }'))[1]
    expect_merged(card, "node")


def test_command_method(tmp_path: Path):
    served = python_plugin(tmp_path / "served", tool="command")
    command = write(tmp_path / "command", {"method.json": {
        "name": "Carded", "command": [sys.executable, "-m", "mt_eval.cli", "serve", str(served)],
        "dependencies": [], "dependency_class": "S"}, "method_card.json": FILE_CARD})
    expect_merged(run(tmp_path, command)[1], "command")


@pytest.mark.parametrize("runtime", ["node", "isolated"])
def test_a_runtime_card_that_contradicts_method_json_refuses_the_run(tmp_path: Path, runtime: str, capsys):
    if runtime == "node":
        directory = node_plugin(tmp_path / "carded", '{ class: "human", paradigm: "telepathy" }')
        source = "the card guest carded sent at initialize"
    else:
        directory = python_plugin(tmp_path / "carded")
        (directory / "pipeline.py").write_text(PYTHON_METHOD.replace('"paradigm": "rule-based"', '"class": "human"')
                                               % "x")
    code, card = run(tmp_path, directory, *(["--isolate"] if runtime == "isolated" else []))
    assert code == 1 and card is None
    err = capsys.readouterr().err
    if runtime == "node":  # the host merges the card the guest sent
        assert "the method card is not valid" in err
        assert f'error: {source} $.class: says "human" but' in err
        assert f'error: {source} $.paradigm: the string "telepathy" is not a valid paradigm' in err
    else:  # the Python guest refuses to serve a method whose card is invalid, and says why on stderr
        assert "mt-eval run: carded cannot start: guest carded failed to start" in err
        assert 'pipeline:Carded method_card() $.class: says "human" but' in err
