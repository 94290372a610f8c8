"""This plugin's own tests: ``python -m pytest tests``, with the mt-eval SDK and pytest installed (README.md,
"Tests", says how).

The API is a stand-in served by the tests themselves on 127.0.0.1 (conftest.py): nothing leaves this machine.
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


def translate(entries: list[dict[str, Any]], **params: Any) -> list[dict[str, Any]]:
    config = RunConfig(source_lang="eng", target_lang="spa", params=params)
    return asyncio.run(load_method(PLUGIN).method.translate(entries, config))


def test_the_plugin_validates_with_its_declared_class():
    report = validate_plugin(PLUGIN)
    assert report.passed(strict=True), "\n".join(p.render() for p in report.problems)
    declared = json.loads((PLUGIN / "method.json").read_text(encoding="utf-8-sig"))["dependency_class"]
    assert report.derived_class == declared


def test_the_sample_corpus_through_the_api(api):
    api_url, requests = api
    results = translate(CORPUS, api_url=api_url)
    assert [r["predicted"] for r in results] == [entry["reference"] for entry in CORPUS]
    assert all("error" not in r and r["latency_s"] >= 0 for r in results)
    first = next(r for r in requests if r["body"]["q"] == CORPUS[0]["source"])
    assert first == {"path": "/translate", "authorization": None,  # no key given, none sent
                     "body": {"q": CORPUS[0]["source"], "source": "eng", "target": "spa", "format": "text"}}


def test_language_codes_can_be_mapped_and_the_key_comes_from_the_environment(api, monkeypatch):
    api_url, requests = api
    monkeypatch.setenv("MT_EVAL_TRANSLATION_API_KEY", "test-key")
    translate([{"id": "1", "source": "The cat drinks water."}], api_url=api_url, language_codes={"eng": "en"})
    assert requests[0]["body"] == {"q": "The cat drinks water.", "source": "en", "target": "spa", "format": "text",
                                   "api_key": "test-key"}


def test_a_missing_or_bad_api_url_fails_each_entry_with_the_fix():
    entries = [{"id": "1", "source": "Hello"}, {"id": "2", "source": "Bye"}]
    missing = translate(entries)
    assert [r["predicted"] for r in missing] == [None, None]
    assert all(r["error"].startswith('config.params["api_url"] is not set') for r in missing)
    bad = translate(entries, api_url="ftp://127.0.0.1/translate")
    assert all(r["error"] == 'config.params["api_url"] "ftp://127.0.0.1/translate" is not an http:// or https:// '
               "address" for r in bad)


def test_an_http_error_fails_only_its_entry(api):
    api_url, _ = api
    results = translate([{"id": "ok", "source": "The cat drinks water."}, {"id": "bad", "source": "!fail"}],
                        api_url=api_url)
    assert results[0]["predicted"] == "El gato bebe agua."
    assert (results[1]["predicted"], results[1]["error"]) == (
        None, f"HTTP 400 from {api_url}: Invalid request: unsupported text")


def test_an_unreachable_api_fails_each_entry(monkeypatch):
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    results = translate([{"id": "1", "source": "Hello"}], api_url=f"http://127.0.0.1:{port}/translate")
    assert results[0]["predicted"] is None
    assert results[0]["error"].startswith(f"cannot reach http://127.0.0.1:{port}/translate")
