"""The System One adapter against a loopback stand-in engine: the request it sends, the answers it maps back,
its failures and retries, and a whole decide run through the example plugin."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

from mt_eval.cli import main
from mt_eval.decisions.answers import match_results
from mt_eval.decisions.records import DecisionConfig, DecisionRow
from mt_eval.decisions.systemone import SystemOneMethod, endpoint_url
from systemone_standin import SystemOneStandIn

REPO = Path(__file__).parent.parent
EXAMPLE = REPO / "examples" / "systemone-engine"
LEVELS = [{"value": 0, "description": "none"}, {"value": 1}, {"value": 2, "label": "good", "description": "all"}]
QUESTIONS = {
    "adequate": {"type": "noul", "instructions": "Adequate?", "criteria": {"true": "kept", "false": "lost"}},
    "better": {"type": "choice", "instructions": "Which is better?", "options": ["a", "b", "tie"],
               "criteria": {"tie": "equal"}},
    "adequacy": {"type": "score", "instructions": "How adequate?", "levels": LEVELS},
}


def row(row_id: str = "r1", **state: Any) -> dict[str, Any]:
    return {"id": row_id, "state": {"candidate": "x", "reference": "x", **state}, "questions": QUESTIONS}


async def decide(server: SystemOneStandIn, rows: list[dict[str, Any]], **config: Any) -> list[Any]:
    settings = {"base_url": server.base_url, "model": "engine-m", "timeout_s": 5, **config}
    raw = await SystemOneMethod().decide(rows, msgspec.convert(settings, DecisionConfig))
    checked, unknown = match_results([msgspec.convert(r, DecisionRow) for r in rows], raw, "the engine")
    assert unknown == []
    return checked


async def test_the_request_follows_the_documented_mapping(monkeypatch):
    monkeypatch.setenv("MT_EVAL_SYSTEMONE_API_KEY", "k-123")
    with SystemOneStandIn() as server:
        [result] = await decide(server, [row(prefer="b", level=1)])
    [request] = server.requests
    assert request["path"] == "/v1/systemone"
    assert request["headers"]["Authorization"] == "Bearer k-123"
    assert request["body"] == {"model": "engine-m", "state": {"candidate": "x", "reference": "x", "prefer": "b",
                                                              "level": 1}, "questions": {
        "q1": {"type": "noul", "instructions": "Adequate?", "criteria": {"true": "kept", "false": "lost"}},
        "q2": {"type": "choice", "instructions": "Which is better?",
               "criteria": {"a": None, "b": None, "tie": "equal"}},
        "q3": {"type": "score", "instructions": "How adequate?", "criteria": ["none", "1", "all"]}}}
    assert result.error is None
    assert result.answers["adequate"].probabilities == {"true": 0.9, "false": pytest.approx(0.1)}
    assert result.answers["better"].probabilities == {"a": 0.15, "b": 0.7, "tie": 0.15}
    assert result.answers["adequacy"].probabilities == {"0": 0.2, "1": 0.6, "good": 0.2}
    assert result.answers["adequacy"].expected == pytest.approx(0.6 + 0.4)
    assert result.usage.prompt_tokens == 33 and result.usage.completion_tokens == 3
    assert result.metadata["engine_model"] == "standin-1.0"
    assert result.metadata["engine_answers"]["better"]["confidence"] == 0.5


async def test_no_key_no_authorization_header_and_a_v1_base_url_is_not_doubled(monkeypatch):
    monkeypatch.delenv("MT_EVAL_SYSTEMONE_API_KEY", raising=False)
    with SystemOneStandIn() as server:
        await decide(server, [row()], base_url=server.base_url + "/v1/")
    assert "Authorization" not in server.requests[0]["headers"]
    assert server.requests[0]["path"] == "/v1/systemone"
    assert endpoint_url("http://h:1") == endpoint_url("http://h:1/v1") == "http://h:1/v1/systemone"


async def test_rate_limits_and_server_errors_are_retried():
    with SystemOneStandIn(failures=[503, 429, 500]) as server:
        [result] = await decide(server, [row()], params={"retries": 3})
    assert result.error is None and len(server.requests) == 4


async def test_a_failure_that_retrying_cannot_fix_fails_only_its_row():
    with SystemOneStandIn() as server:
        bad, good = await decide(server, [row("bad", mode="bad-request"), row("good")])
    assert bad.error == f"{server.base_url}/v1/systemone answered HTTP 400: questions must not be empty"
    assert good.error is None


async def test_retries_run_out_with_the_last_answer_in_the_error():
    with SystemOneStandIn(failures=[503, 503]) as server:
        [result] = await decide(server, [row()], params={"retries": 1})
    assert result.error.endswith("answered HTTP 503: stand-in failure 503 (after 2 attempts)")


@pytest.mark.parametrize(("mode", "row_error", "question_errors"), [
    ("wrong-sum", None, {"better": "probabilities sum to 0.9, not 1 (within 0.001): they are never renormalised; "
                                   "return a distribution that sums to 1"}),
    ("missing-answer", None, {"adequate": "the engine gave no answer to this question"}),
    ("wrong-type", None, {"adequate": "the engine answered a choice question, not noul"}),
    ("no-answers", 'the engine\'s response has no "answers" object', {}),
    ("not-json", "answered something that is not JSON", {}),
])
async def test_bad_answers_fail_their_question_or_row_with_the_reason(mode, row_error, question_errors):
    with SystemOneStandIn() as server:
        [result] = await decide(server, [row(mode=mode)])
    if row_error:
        assert row_error in result.error
    else:
        assert result.error is None
        assert {name: a.error for name, a in result.answers.items() if a.error} == question_errors


async def test_an_unreachable_engine_and_a_missing_configuration_are_explained():
    config = msgspec.convert({"base_url": "http://127.0.0.1:9", "model": "m", "timeout_s": 2,
                              "params": {"retries": 0}}, DecisionConfig)
    [result] = await SystemOneMethod().decide([row()], config)
    assert result["error"].startswith("cannot reach http://127.0.0.1:9/v1/systemone")
    [result] = await SystemOneMethod().decide([row()], DecisionConfig())
    assert result["error"].startswith("config.base_url and model not set")


async def test_a_rubric_longer_than_the_format_allows_fails_that_question_only():
    long_rubric = {"type": "score", "instructions": "?", "levels": [{"value": v} for v in range(12)]}
    with SystemOneStandIn() as server:
        raw = await SystemOneMethod().decide(
            [{"id": "r", "state": {"candidate": "x"},
              "questions": {"fine": QUESTIONS["adequate"], "long": long_rubric}}],
            msgspec.convert({"base_url": server.base_url, "model": "m"}, DecisionConfig))
    assert raw[0]["answers"]["long"] == {"error": "a System One score question has 2 to 10 levels; this one has 12"}
    assert list(server.requests[0]["body"]["questions"]) == ["q1"]


def test_a_decide_run_through_the_example_plugin(tmp_path, capsys):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(json.dumps({**row(f"r{i}", prefer="a", level=2), "gold": {
        "adequate": True, "better": "a", "adequacy": "good"}}) for i in range(6)) + "\n")
    with SystemOneStandIn() as server:
        status = main(["decide", "run", "--method", str(EXAMPLE), "--corpus", str(corpus), "--out",
                       str(tmp_path / "run"), "--base-url", server.base_url, "--model", "engine-m", "--resamples", "50",
                       "--quiet"])
    assert status == 0, capsys.readouterr().err
    card = json.loads((tmp_path / "run" / "card.json").read_text())
    assert card["errors"] == 0 and card["metrics"]["groups"]["overall"]["accuracy"]["value"] == 1.0
    assert card["method"]["dependency_class"] == "A1"
    assert len(server.requests) == 6


def test_an_engine_that_never_answers_fails_the_row_with_its_own_reason_within_the_timeout(tmp_path, capsys):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({**row(name, mode="slow"), "gold": {"adequate": True}}) + "\n"
                              for name in ("a", "b")))
    with SystemOneStandIn() as server:
        started = time.perf_counter()
        status = main(["decide", "run", "--method", str(EXAMPLE), "--corpus", str(corpus), "--out",
                       str(tmp_path / "run"), "--base-url", server.base_url, "--model", "engine-m", "--timeout", "1",
                       "--batch-size", "1", "--param", "retries=3", "--quiet"])
        elapsed = time.perf_counter() - started
        requests = list(server.requests)
    assert status == 4, capsys.readouterr().err
    results = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert [r["error"] for r in results] == [f"{server.base_url}/v1/systemone gave no answer within 1 s"] * 2
    assert elapsed < 4  # each row's attempts ended with its second, and no thread was left waiting on the engine
    assert len(requests) == 2 and all(r["left_after_s"] is not None and r["left_after_s"] < 1.5 for r in requests)


async def test_a_cancelled_call_closes_its_request_at_once():
    with SystemOneStandIn() as server:
        started = time.perf_counter()
        with anyio.move_on_after(0.3):
            await decide(server, [row(mode="slow")], timeout_s=5)
        elapsed = time.perf_counter() - started
        await anyio.sleep(0.2)  # (the stand-in sees the connection close)
        [request] = server.requests
    assert elapsed < 1 and request["left_after_s"] is not None and request["left_after_s"] < 1
