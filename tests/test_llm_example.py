"""The coached LLM example against a loopback stand-in endpoint the test starts: request shape, few-shot
turns, retries with backoff on 429 and 5xx, errors that fail only their entry, and a whole `mt-eval run`."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from llm_standin import StandIn
from mt_eval.cli import main
from mt_eval.loader import load_method
from mt_eval.records import RunConfig

REPO = Path(__file__).parent.parent
EXAMPLE = REPO / "examples" / "coached-llm-eng-spa"
DEMO = REPO / "examples" / "data" / "eng-spa-demo.json"
ALL_ENTRIES = json.loads(DEMO.read_text(encoding="utf-8"))["entries"]
ENTRIES = [e for e in ALL_ENTRIES if e.get("family") != "negative"]  # those with a reference
ANSWERS = {e["source"]: e["reference"] for e in ENTRIES} | {e["reference"]: e["source"] for e in ENTRIES}
FEW_SHOT = [json.loads(line) for line in (EXAMPLE / "examples.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    monkeypatch.delenv("MT_EVAL_LLM_API_KEY", raising=False)


def translate(entries: list[dict[str, Any]], **config: Any) -> list[dict[str, Any]]:
    config.setdefault("source_lang", "eng")
    config.setdefault("target_lang", "spa")
    method = load_method(EXAMPLE).method
    return asyncio.run(method.translate(entries, RunConfig(**config)))


def test_the_request_carries_the_model_settings_prompt_and_few_shot_examples():
    with StandIn(ANSWERS) as server:
        (result,) = translate([ENTRIES[0]], base_url=server.base_url + "/", model="stand-in-model", temperature=0.2,
                              max_tokens=300, seed=11)
    assert result["predicted"] == ENTRIES[0]["reference"] and "error" not in result
    assert result["usage"]["completion_tokens"] == 7 and result["usage"]["prompt_tokens"] > 50
    assert result["metadata"] == {"attempts": 1}
    (request,) = server.requests
    assert request["path"] == "/v1/chat/completions" and request["authorization"] is None
    body = request["body"]
    assert (body["model"], body["temperature"], body["max_tokens"], body["seed"]) == ("stand-in-model", 0.2, 300, 11)
    messages = body["messages"]
    assert messages[0]["role"] == "system"
    assert "from English into Spanish" in messages[0]["content"] and "{source_language}" not in messages[0]["content"]
    shots = messages[1:-1]
    assert [m["role"] for m in shots] == ["user", "assistant"] * len(FEW_SHOT)
    assert [m["content"] for m in shots] == [text for ex in FEW_SHOT for text in (ex["eng"], ex["spa"])]
    assert messages[-1] == {"role": "user", "content": ENTRIES[0]["source"]}


def test_spa_eng_turns_the_examples_around():
    with StandIn(ANSWERS) as server:
        (result,) = translate([{"id": "1", "source": ENTRIES[1]["reference"]}], base_url=server.base_url,
                              model="m", source_lang="spa", target_lang="eng")
    assert result["predicted"] == ENTRIES[1]["source"]
    messages = server.requests[0]["body"]["messages"]
    assert "from Spanish into English" in messages[0]["content"]
    assert [messages[1]["content"], messages[2]["content"]] == [FEW_SHOT[0]["spa"], FEW_SHOT[0]["eng"]]


def test_429_and_5xx_are_retried_with_backoff_until_the_answer_comes():
    with StandIn(ANSWERS, failures=[429, 500, 503, 502]) as server:
        results = translate(ENTRIES[:5], base_url=server.base_url, model="m", concurrency=1,
                            params={"backoff_s": 0.01})
    assert [r["predicted"] for r in results] == [e["reference"] for e in ENTRIES[:5]]
    assert len(server.requests) == 5 + 4
    assert results[0]["metadata"] == {"attempts": 5} and results[1]["metadata"] == {"attempts": 1}


def test_retry_after_is_honoured():
    with StandIn(ANSWERS, failures=[429], retry_after="0.3") as server:
        started = time.perf_counter()
        (result,) = translate([ENTRIES[2]], base_url=server.base_url, model="m", params={"backoff_s": 30})
        elapsed = time.perf_counter() - started
    assert result["predicted"] == ENTRIES[2]["reference"] and 0.3 <= elapsed < 5


def test_errors_fail_only_their_entry_and_other_errors_are_not_retried():
    entries = [ENTRIES[3], {"id": "bad", "source": "!bad input"}, {"id": "busy", "source": "!overloaded"}]
    with StandIn(ANSWERS) as server:
        results = translate(entries, base_url=server.base_url, model="m",
                            params={"backoff_s": 0.01, "max_retries": 2})
    url = f"{server.base_url}/chat/completions"
    assert results[0]["predicted"] == ENTRIES[3]["reference"]
    assert (results[1]["predicted"], results[1]["error"]) == (None, f"HTTP 400 from {url}: bad request")
    assert results[1]["metadata"] == {"attempts": 1}
    assert results[2]["error"] == f"HTTP 503 from {url}: overloaded (after 3 attempts)"
    assert len(server.requests) == 1 + 1 + 3


def test_the_api_key_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MT_EVAL_LLM_API_KEY", "secret-for-test")
    with StandIn(ANSWERS) as server:
        translate([ENTRIES[0]], base_url=server.base_url, model="m")
    assert server.requests[0]["authorization"] == "Bearer secret-for-test"


def test_configuration_problems_fail_each_entry_with_the_fix():
    entries = [{"id": "1", "source": "Hello."}]
    assert translate(entries, model="m")[0]["error"].startswith("config.base_url is not set")
    assert translate(entries, base_url="ftp://x")[0]["error"] == \
        'config.base_url "ftp://x" is not an http:// or https:// address'
    assert translate(entries, base_url="http://127.0.0.1:9/v1")[0]["error"].startswith("config.model is not set")
    wrong = translate(entries, base_url="http://127.0.0.1:9/v1", model="m", target_lang="fra")
    assert wrong[0] == {"id": "1", "abstained": True,
                        "abstain_reason": "unsupported pair eng>fra: this method translates eng>spa and spa>eng"}


def test_an_empty_or_wordless_source_is_abstained_on_without_asking_the_model():
    entries = [{"id": "e", "source": ""}, {"id": "g", "source": "\ufffd\u0007 \ufffd"}]
    with StandIn(ANSWERS) as server:
        results = translate(entries, base_url=server.base_url, model="m")
    assert [r["abstained"] for r in results] == [True, True] and server.requests == []
    assert results[0]["abstain_reason"] == "the source has no letter or digit: nothing to translate"


def test_mt_eval_run_against_the_loopback_endpoint(tmp_path: Path):
    with StandIn(ANSWERS, failures=[503, 429]) as server:
        code = main(["run", "--method", str(EXAMPLE), "--corpus", str(DEMO), "--out", str(tmp_path / "run"),
                     "--quiet", "--resamples", "100", "--base-url", server.base_url, "--model", "stand-in",
                     "--temperature", "0", "--param", "backoff_s=0.01"])
    assert code == 0
    card = json.loads((tmp_path / "run" / "card.json").read_text(encoding="utf-8"))
    assert card["errors"] == 0 and card["method"]["dependency_class"] == "A1"
    assert card["method"]["class"] == "coached-llm" and card["covariates"]["model"] == "stand-in"
    assert card["metrics"]["metrics"][0]["score"] == 100.0 and card["gate"]["passed"] is True
    assert card["usage"]["completion_tokens"] == 7 * len(ENTRIES)  # the latency calls' results are not kept
    latency = card["latency"]
    extra = 1 + latency["warmup_entries"] + latency["hot_entries"] * latency["repetitions"]
    assert (extra, latency["hot_calls"]) == (34, 30)
    assert len(server.requests) == len(ENTRIES) + 2 + extra  # negative controls never reach the model


def test_a_cancelled_call_closes_its_request_at_once():
    async def cancelled_after(seconds: float, config: RunConfig) -> None:
        method = load_method(EXAMPLE).method
        call = asyncio.ensure_future(method.translate([{"id": "1", "source": "!slow"}], config))
        await asyncio.sleep(seconds)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call

    with StandIn(ANSWERS) as server:
        config = RunConfig(source_lang="eng", target_lang="spa", base_url=server.base_url, model="m", timeout_s=5)
        started = time.perf_counter()
        asyncio.run(cancelled_after(0.3, config))  # (which waits for the call's worker thread to end)
        elapsed = time.perf_counter() - started
        (request,) = server.requests
    assert elapsed < 2 and request["left_after_s"] is not None and request["left_after_s"] < 1.5


def test_an_endpoint_that_never_answers_fails_each_entry_within_its_timeout_retries_included(tmp_path: Path):
    corpus = tmp_path / "slow.jsonl"
    corpus.write_text("".join(json.dumps({"id": name, "source": f"!slow {name}", "reference": "x"}) + "\n"
                              for name in ("a", "b")), encoding="utf-8")
    with StandIn(ANSWERS) as server:
        started = time.perf_counter()
        code = main(["run", "--method", str(EXAMPLE), "--corpus", str(corpus), "--out", str(tmp_path / "run"),
                     "--quiet", "--latency-sample", "0", "--base-url", server.base_url, "--model", "m",
                     "--timeout", "1", "--retries", "0", "--param", "max_retries=2", "--param", "backoff_s=0.01"])
        elapsed = time.perf_counter() - started
        requests = list(server.requests)
    assert code == 4 and elapsed < 4  # each entry failed after its 1 s, with no retry past it and nothing waited for
    logged = (tmp_path / "run" / "results.jsonl").read_text(encoding="utf-8")
    results = [json.loads(line) for line in logged.splitlines()]
    assert [r["error"] for r in results] == [f"no answer from {server.base_url}/chat/completions within 1 s"] * 2
    assert len(requests) == 2 and all(r["left_after_s"] is not None and r["left_after_s"] < 1.5 for r in requests)
    assert json.loads((tmp_path / "run" / "card.json").read_text(encoding="utf-8"))["errors"] == 2
