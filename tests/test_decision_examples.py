"""The decision examples: the rules grader behaves the same in Python and Node (in process and through both
guests), and every decision example runs `mt-eval decide run` on the example corpus — the LLM grader against a
loopback stand-in that answers with log-probabilities."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import msgspec
import pytest

from logprob_standin import LogprobStandIn
from mt_eval.bridge.method import BridgeMethod
from mt_eval.bridge.runtimes import node_command, python_command
from mt_eval.cli import main
from mt_eval.decisions.records import DecisionConfig
from mt_eval.loader import load_method

REPO = Path(__file__).parent.parent
EXAMPLES = REPO / "examples"
CORPUS = EXAMPLES / "data" / "adequacy-decisions.jsonl"
ROWS = [{k: v for k, v in json.loads(line).items() if k != "gold"}
        for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
DECISION_EXAMPLES = sorted(p.parent.name for p in EXAMPLES.glob("*/method.json")
                           if "decide" in json.loads(p.read_text(encoding="utf-8")).get("implements", []))
CONFIG = DecisionConfig()


def extra_rows() -> list[dict[str, Any]]:
    """Rows beyond the corpus: no reference, accents and capitals, an empty candidate, a missing candidate."""
    score = ROWS[0]["questions"]["adequacy"]
    noul = ROWS[0]["questions"]["adequate"]
    states = [{"source": "Good morning, my friend!", "candidate": "¡Buenos días, AMIGO mío!"},
              {"source": "The house is big.", "candidate": "The house is big."},
              {"source": "Ünïcödé wörds.", "candidate": "", "reference": "Palabras."},
              {"source": "x"}]
    return [{"id": f"extra-{i}", "state": s, "questions": {"adequacy": score, "adequate": noul}}
            for i, s in enumerate(states)]


def close(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return abs(a - b) <= 1e-12
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
    return bool(a == b)


def without_latency(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in ("latency_s", "usage", "metadata", "error") or
             (k == "error" and v is not None)} for r in results]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
async def test_the_rules_grader_is_the_same_in_python_and_node():
    rows = ROWS + extra_rows()
    in_process = await load_method(EXAMPLES / "rules-grader").method.decide(rows, CONFIG)
    outputs = {"python (in process)": without_latency(in_process)}
    for label, command in (("node guest", node_command(EXAMPLES / "rules-grader")),
                           ("python guest", python_command(EXAMPLES / "rules-grader"))):
        guest = BridgeMethod(command, label=label)
        try:
            outputs[label] = without_latency(await guest.decide(rows, CONFIG))
        finally:
            await guest.aclose()
    expected = outputs.pop("python (in process)")
    for label, results in outputs.items():
        assert len(results) == len(expected)
        for want, got in zip(expected, results, strict=True):
            assert close(want, got), (label, want, got)


@pytest.mark.parametrize("example", DECISION_EXAMPLES)
def test_every_decision_example_runs_on_the_example_corpus(example, tmp_path, monkeypatch, capsys):
    endpoint: list[str] = []
    server: Any = None
    if example == "llm-logprob-grader":
        server = LogprobStandIn().__enter__()
        endpoint = ["--base-url", server.base_url, "--model", "stand-in"]
    elif example == "systemone-engine":
        from systemone_standin import SystemOneStandIn

        server = SystemOneStandIn().__enter__()
        endpoint = ["--base-url", server.base_url, "--model", "stand-in"]
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    try:
        status = main(["decide", "run", "--method", str(EXAMPLES / example), "--corpus", str(CORPUS), "--out",
                       str(tmp_path / "run"), "--resamples", "200", "--quiet", *endpoint])
    finally:
        if server is not None:
            server.__exit__(None, None, None)
    assert status == 0, capsys.readouterr().err
    card = json.loads((tmp_path / "run" / "card.json").read_text(encoding="utf-8"))
    assert card["errors"] == 0 and card["failures"] == []
    assert card["self_check"]["passed"] is True
    overall = card["metrics"]["groups"]["overall"]
    assert overall["questions"] == card["coverage"]["overall"]["scored"] == 46
    for metric in ("accuracy", "kl", "brier", "ece"):
        value = overall[metric]
        assert value["ci_low"] <= value["value"] <= value["ci_high"]


def test_the_rules_grader_beats_the_uniform_baseline_on_the_example_corpus(tmp_path):
    assert main(["decide", "run", "--method", str(EXAMPLES / "rules-grader"), "--corpus", str(CORPUS), "--out",
                 str(tmp_path / "run"), "--resamples", "0", "--quiet"]) == 0
    card = json.loads((tmp_path / "run" / "card.json").read_text(encoding="utf-8"))
    uniform = {(c["group"], c["metric"]): c["closed_form"] for c in card["self_check"]["checks"]}
    overall = card["metrics"]["groups"]["overall"]
    assert overall["brier"]["value"] < uniform[("overall", "brier")]
    assert overall["accuracy"]["value"] > uniform[("overall", "accuracy")]


async def test_the_llm_grader_reads_option_probabilities():
    method = load_method(EXAMPLES / "llm-logprob-grader").method
    with LogprobStandIn() as server:
        config = msgspec.convert({"base_url": server.base_url, "model": "m", "seed": 3}, DecisionConfig)
        [same, different] = await method.decide(ROWS[:2], config)
    assert same["answers"]["adequacy"]["probabilities"] == {"0": pytest.approx(0.2 / 0.9), "1": 0.0, "2": 0.0,
                                                             "3": 0.0, "4": pytest.approx(0.7 / 0.9)}
    assert same["answers"]["adequate"]["probabilities"]["true"] == pytest.approx(0.7 / 0.9)
    assert different["answers"]["adequate"]["probabilities"]["false"] == pytest.approx(0.7 / 0.9)
    assert same["metadata"]["option_mass"] == {"adequacy": 0.9, "adequate": 0.9}
    body = server.requests[0]["body"]
    assert body["max_tokens"] == 1 and body["logprobs"] is True and body["top_logprobs"] == 20
    assert body["temperature"] == 0 and body["seed"] == 3
    assert same["usage"]["completion_tokens"] == 2


async def test_the_llm_grader_refuses_a_model_that_does_not_answer_the_question():
    method = load_method(EXAMPLES / "llm-logprob-grader").method
    row = {"id": "r", "state": {"source": "!lowmass", "candidate": "x"},
           "questions": {"ok": {"type": "noul", "instructions": "?"}}}
    no_logprobs = {**row, "id": "s", "state": {"source": "!nologprobs", "candidate": "x"}}
    with LogprobStandIn() as server:
        config = msgspec.convert({"base_url": server.base_url, "model": "m"}, DecisionConfig)
        low, missing = await method.decide([row, no_logprobs], config)
    assert low["answers"]["ok"]["error"].startswith("the model put only 5% of its next-token probability on the "
                                                    "options (at least 50% is required; its top tokens: 'The'")
    assert missing["answers"]["ok"]["error"].startswith("the endpoint returned no log-probabilities")
    [unset] = await method.decide([row], DecisionConfig())
    assert unset["error"].startswith("config.base_url and config.model are required")
