"""``mt-eval new`` for a decision method: it validates, passes its own tests, decides its sample, and its Python
and Node entries answer alike."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mt_eval.bridge.method import BridgeMethod
from mt_eval.bridge.runtimes import node_command
from mt_eval.cli import main
from mt_eval.loader import load_method
from new_plugins import (
    new,
)

# --- a decision method ------------------------------------------------------------------------------------

DECISION_RUNTIMES = ["python", "node", "both"]


@pytest.fixture(scope="module")
def judges(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("judges")
    made = {}
    for runtime in DECISION_RUNTIMES:
        directory = root / f"judge-{runtime}"
        assert new(str(directory), "--no-input", "--set", "method_kind=decision", "--set", f"runtime={runtime}") == 0
        made[runtime] = directory
    return made


def judge_rows(directory: Path) -> list[dict[str, Any]]:
    lines = (directory / "sample" / "decisions.jsonl").read_text(encoding="utf-8").splitlines()
    return [{k: v for k, v in json.loads(line).items() if k != "gold"} for line in lines if line.strip()]


@pytest.mark.parametrize("runtime", DECISION_RUNTIMES)
def test_a_decision_method_validates_and_passes_its_own_tests(judges, runtime, capsys):
    directory = judges[runtime]
    capsys.readouterr()
    assert main(["validate", "--strict", "--json", str(directory)]) == 0
    report = json.loads(capsys.readouterr().out)["plugins"][0]
    assert (report["derived_class"], report["problems"]) == ("S", [])
    manifest = json.loads((directory / "method.json").read_text(encoding="utf-8"))
    assert manifest["implements"] == ["decide"] and manifest["dependencies"] == []
    assert manifest.get("node_entry") == ("decide.js" if runtime != "python" else None)
    assert not (directory / "sample" / "corpus.jsonl").exists() and not (directory / "glossary.tsv").exists()
    if runtime != "node":
        run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=directory,
                             capture_output=True, text=True, timeout=120)
        passed = "6 passed" if runtime == "both" else "5 passed"  # both: and the parity test
        assert run.returncode == 0 and passed in run.stdout, run.stdout + run.stderr
    if runtime != "python":
        run = subprocess.run(["node", "--test"], cwd=directory, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0 and "# pass 5" in run.stdout, run.stdout + run.stderr


@pytest.mark.parametrize("runtime", DECISION_RUNTIMES)
def test_a_decision_method_runs_decide_on_its_sample(judges, runtime, tmp_path, capsys):
    directory = judges[runtime]
    assert main(["decide", "run", "--method", str(directory), "--corpus", str(directory / "sample" / "decisions.jsonl"),
                 "--out", str(tmp_path / "run"), "--quiet", "--resamples", "50"]) == 0
    card = json.loads((tmp_path / "run" / "card.json").read_text(encoding="utf-8"))
    assert card["errors"] == 0 and card["failures"] == [] and card["metrics"]["groups"]["overall"]["questions"] == 10


async def test_decide_py_and_decide_js_behave_identically(judges):
    from mt_eval.decisions.records import DecisionConfig

    directory = judges["both"]
    questions = judge_rows(directory)[0]["questions"]
    rows = [*judge_rows(directory),
            {"id": "x1", "state": {"source": "one two", "candidate": "uno"}, "questions": questions},
            {"id": "x2", "state": {"source": "Ünïcode!", "candidate": "ÜNÏCODE", "reference": "ünïcode"},
             "questions": questions},
            {"id": "x3", "state": {}, "questions": questions}]
    python = await load_method(directory).method.decide(rows, DecisionConfig())
    node = BridgeMethod(node_command(directory), label="node")
    try:
        from_node = await node.decide(rows, DecisionConfig())
    finally:
        await node.aclose()
    strip = [[{k: v for k, v in r.items() if k != "latency_s"} for r in results] for results in (python, from_node)]
    assert strip[0] == strip[1]


def test_a_decision_method_is_generated_self_contained_only(tmp_path, capfd):
    assert new(str(tmp_path / "j"), "--no-input", "--set", "method_kind=decision",
               "--set", "dependency_profile=external-api") == 2
    assert "a decision method is generated self-contained" in capfd.readouterr().err
    assert not (tmp_path / "j").exists()


def test_the_next_steps_of_a_decision_method_in_both_runtimes_name_its_decide_js(tmp_path, capsys):
    assert new(str(tmp_path / "j"), "--no-input", "--set", "method_kind=decision", "--set", "runtime=both") == 0
    out = capsys.readouterr().out
    assert "pipeline.py, and its parity with decide.js" in out and "translate.js" not in out
