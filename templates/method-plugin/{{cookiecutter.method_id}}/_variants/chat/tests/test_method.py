"""This plugin's own tests: ``python -m pytest tests``, with the mt-eval SDK and pytest installed (README.md,
"Tests", says how).

The endpoint is a stand-in served by the tests themselves on 127.0.0.1 (conftest.py): nothing leaves this machine.
"""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path
from typing import Any

from mt_eval.loader import load_method
from mt_eval.records import RunConfig
from mt_eval.validate import validate_plugin

PLUGIN = Path(__file__).resolve().parent.parent
CORPUS = [json.loads(line) for line in (PLUGIN / "sample" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
          if line.strip()]


def translate(entries: list[dict[str, Any]], **config: Any) -> list[dict[str, Any]]:
    run_config = RunConfig(source_lang="eng", target_lang="spa", **config)
    return asyncio.run(load_method(PLUGIN).method.translate(entries, run_config))


def test_the_plugin_validates_with_its_declared_class():
    report = validate_plugin(PLUGIN)
    assert report.passed(strict=True), "\n".join(p.render() for p in report.problems)
    declared = json.loads((PLUGIN / "method.json").read_text(encoding="utf-8-sig"))["dependency_class"]
    assert report.derived_class == declared


def test_the_sample_corpus_through_the_endpoint(endpoint):
    base_url, requests = endpoint
    results = translate(CORPUS, base_url=base_url + "/", model="stand-in", temperature=0.0, seed=7)
    assert [r["predicted"] for r in results] == [entry["reference"] for entry in CORPUS]
    assert all(r["usage"]["completion_tokens"] == 4 and r["usage"]["prompt_tokens"] > 10 for r in results)
    assert all("error" not in r for r in results)
    assert len(requests) == len(CORPUS)
    request = next(r for r in requests if r["body"]["messages"][-1]["content"] == CORPUS[0]["source"])
    assert request["path"] == "/v1/chat/completions"
    assert request["authorization"] is None
    body = request["body"]
    assert (body["model"], body["temperature"], body["seed"]) == ("stand-in", 0.0, 7)
    assert "max_tokens" not in body
    system, user = body["messages"]
    assert system["role"] == "system" and "eng" in system["content"] and "spa" in system["content"]
    assert "{source_lang}" not in system["content"]
    assert user == {"role": "user", "content": CORPUS[0]["source"]}


def test_a_missing_base_url_or_model_fails_each_entry_with_the_fix():
    entries = [{"id": "1", "source": "Hello"}, {"id": "2", "source": "Bye"}]
    no_url = translate(entries, model="m")
    assert [r["predicted"] for r in no_url] == [None, None]
    assert all(r["error"].startswith("config.base_url is not set") for r in no_url)
    no_model = translate(entries, base_url="http://127.0.0.1:9/v1")
    assert all(r["error"].startswith("config.model is not set") for r in no_model)


def test_an_http_error_fails_only_its_entry(endpoint):
    base_url, _ = endpoint
    results = translate([{"id": "ok", "source": "The cat drinks water."}, {"id": "bad", "source": "!fail"}],
                        base_url=base_url, model="stand-in")
    assert results[0]["predicted"] == "El gato bebe agua."
    assert results[1]["predicted"] is None
    assert results[1]["error"] == f"HTTP 503 from {base_url}/chat/completions: model overloaded"


def test_the_api_key_comes_from_the_environment(endpoint, monkeypatch):
    base_url, requests = endpoint
    monkeypatch.setenv("MT_EVAL_LLM_API_KEY", "test-key")
    translate([{"id": "1", "source": "The cat drinks water."}], base_url=base_url, model="stand-in")
    assert requests[0]["authorization"] == "Bearer test-key"


def test_an_unreachable_endpoint_fails_each_entry(monkeypatch):
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    results = translate([{"id": "1", "source": "Hello"}], base_url=f"http://127.0.0.1:{port}/v1", model="m")
    assert results[0]["predicted"] is None
    assert results[0]["error"].startswith(f"cannot reach http://127.0.0.1:{port}/v1/chat/completions")
