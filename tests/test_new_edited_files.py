"""A plugin from ``mt-eval new`` keeps working after an editor saves its files its own way: a UTF-8 byte-order
mark at the start of method.json or prompt.txt (Windows editors write one) is read by the generated code as the
SDK reads it — dropped — in pipeline.py and translate.js alike."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mt_eval.cli import main
from new_plugins import new

BOM = b"\xef\xbb\xbf"


def generated(tmp_path: Path, profile: str) -> Path:
    directory = tmp_path / profile
    assert new(str(directory), "--no-input", "--set", "runtime=both", "--set", f"dependency_profile={profile}") == 0
    return directory


def saved_with_a_bom(file: Path) -> None:
    file.write_bytes(BOM + file.read_bytes())


@pytest.mark.parametrize("profile", ["self-contained", "open-artifact"])
def test_a_manifest_saved_with_a_byte_order_mark_still_builds_in_both_runtimes(tmp_path, capsys, profile):
    directory = generated(tmp_path, profile)
    saved_with_a_bom(directory / "method.json")
    capsys.readouterr()
    status = main(["validate", "--strict", "--json", str(directory)])  # builds pipeline.py, loads translate.js
    report = json.loads(capsys.readouterr().out)["plugins"][0]
    assert (status, report["problems"]) == (0, [])
    node = subprocess.run(["node", "--test"], cwd=directory, capture_output=True, text=True, timeout=120)
    assert node.returncode == 0, node.stdout + node.stderr
    python = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=directory,
                            capture_output=True, text=True, timeout=120)
    assert python.returncode == 0, python.stdout + python.stderr


def test_a_prompt_saved_with_a_byte_order_mark_is_sent_alike_by_both_runtimes(tmp_path):
    directory = generated(tmp_path, "llm-gateway")
    saved_with_a_bom(directory / "prompt.txt")
    config = {"source_lang": "eng", "target_lang": "spa", "model": "m", "temperature": None, "max_tokens": None,
              "seed": None}
    python = subprocess.run(
        [sys.executable, "-c", "import json, sys, types, pipeline; config = types.SimpleNamespace(**json.loads("
         "sys.argv[1])); print(json.dumps(pipeline.ChatCompletionsMethod('.').request_body('Hi', config)))",
         json.dumps(config)], cwd=directory, capture_output=True, text=True, timeout=60)
    node = subprocess.run(
        ["node", "--input-type=module", "-e", "const m = await import('./translate.js'); "
         "console.log(JSON.stringify(m.requestBody('Hi', JSON.parse(process.argv[1]))));", json.dumps(config)],
        cwd=directory, capture_output=True, text=True, timeout=60)
    assert python.returncode == 0 and node.returncode == 0, python.stderr + node.stderr
    system = json.loads(python.stdout)["messages"][0]["content"]
    assert not system.startswith("\ufeff")
    assert json.loads(python.stdout) == json.loads(node.stdout)
