"""This plugin's own tests: ``python -m pytest tests``, with the mt-eval SDK and pytest installed (README.md,
"Tests", says how)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from mt_eval.loader import load_method
from mt_eval.records import RunConfig
from mt_eval.validate import validate_plugin

PLUGIN = Path(__file__).resolve().parent.parent
CORPUS = [json.loads(line) for line in (PLUGIN / "sample" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
          if line.strip()]
EXPECTED = {
    "s1": "Buenas noches, mi amigo!",
    "s2": "El gato bebe agua.",
    "s3": "Gracias por el libro.",
    "s4": "La casa es muy grande.",
    "s5": "Leo un libro nuevo cada día.",
}


def translate(entries: list[dict[str, Any]], pair: str = "eng>spa", **params: Any) -> list[dict[str, Any]]:
    loaded = load_method(PLUGIN)
    source_lang, target_lang = pair.split(">")
    config = RunConfig(source_lang=source_lang, target_lang=target_lang, params=params)
    return asyncio.run(loaded.method.translate(entries, config))


def predictions(*sources: str) -> list[str | None]:
    return [r["predicted"] for r in translate([{"id": str(i), "source": s} for i, s in enumerate(sources)])]


def test_the_plugin_validates_with_its_declared_class():
    report = validate_plugin(PLUGIN)
    assert report.passed(strict=True), "\n".join(p.render() for p in report.problems)
    declared = json.loads((PLUGIN / "method.json").read_text(encoding="utf-8-sig"))["dependency_class"]
    assert report.derived_class == declared


def test_the_sample_corpus():
    results = translate(CORPUS)
    assert {r["id"]: r["predicted"] for r in results} == EXPECTED
    assert all(r["latency_s"] >= 0 and r["metadata"]["glossary_matches"] > 0 for r in results)


def test_the_longest_phrase_wins_and_capitals_and_punctuation_survive():
    assert predictions("The house and the city, please!", "the house") == ["La casa y la ciudad, por favor!", "la casa"]


def test_a_phrase_never_spans_punctuation():
    assert predictions("The... house?") == ["El... casa?"]


def test_unknown_words_are_kept_and_extra_fields_ignored():
    results = translate([{"id": "z", "source": "The zebra is green.", "domain": "zoo"}])
    assert [(r["id"], r["predicted"]) for r in results] == [("z", "El zebra es green.")]


def test_a_source_without_a_word_and_another_pair_are_declined():
    results = translate([{"id": "e", "source": ""}, {"id": "g", "source": "\ufffd\u0007 \ufffd"}])
    assert [(r["id"], r["abstained"], r["abstain_reason"]) for r in results] == [
        ("e", True, "no word to translate"), ("g", True, "no word to translate")]
    [result] = translate([{"id": "d", "source": "Good morning."}], pair="eng>deu")
    assert (result["abstained"], result["abstain_reason"]) == (True, "the glossary translates eng>spa, not eng>deu")
