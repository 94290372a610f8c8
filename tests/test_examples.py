"""The bundled examples validate strictly with the class they claim, and really translate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mt_eval.loader import load_method
from mt_eval.records import RunConfig
from mt_eval.validate import validate_plugin

EXAMPLES = sorted(p.parent for p in (Path(__file__).parent.parent / "examples").glob("*/method.json"))


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_example_validates_with_its_declared_class(example: Path):
    report = validate_plugin(example)
    assert report.passed(strict=True), "\n".join(p.render() for p in report.problems)
    declared = json.loads((example / "method.json").read_text(encoding="utf-8"))["dependency_class"]
    assert report.derived_class == declared


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_example_has_a_card_a_readme_and_its_code(example: Path):
    assert (example / "method_card.json").is_file() and (example / "README.md").is_file()
    manifest = json.loads((example / "method.json").read_text(encoding="utf-8"))
    if manifest.get("entry_point"):
        assert (example / (manifest["entry_point"].split(":")[0].replace(".", "/") + ".py")).is_file()
    if manifest.get("node_entry"):
        assert (example / manifest["node_entry"]).is_file()
    assert example.name == manifest["method_id"]


CLAIMS = {  # example: (method class, dependency class, runtimes)
    "lexicon-eng-spa": ("pipeline", "S", {"python"}),
    "apertium-eng-spa": ("pipeline", "O", {"python"}),
    "termbase-eng-spa": ("custom-plugin", "S", {"node"}),
    "rules-eng-spa": ("pipeline", "S", {"python", "node"}),
    "coached-llm-eng-spa": ("coached-llm", "A1", {"python"}),
    "rules-grader": ("pipeline", "S", {"python", "node"}),
    "llm-logprob-grader": ("coached-llm", "A1", {"python"}),
    "systemone-engine": ("api", "A1", {"python"}),
}


@pytest.mark.parametrize("name", sorted(CLAIMS))
def test_each_bundled_example_claims_its_class_and_runtimes(name: str):
    manifest = json.loads((EXAMPLES[0].parent / name / "method.json").read_text(encoding="utf-8"))
    runtimes = {runtime for runtime, key in (("python", "entry_point"), ("node", "node_entry")) if manifest.get(key)}
    assert (manifest["class"], manifest["dependency_class"], runtimes) == CLAIMS[name]


async def test_lexicon_translates_phrases_first_and_keeps_punctuation_and_capitals():
    loaded = load_method(Path(__file__).parent.parent / "examples" / "lexicon-eng-spa")
    entries = [{"id": "1", "source": "Good morning, my friend!"},
               {"id": "2", "source": "The cat is very happy; thank you."},
               {"id": "3", "source": "Zebras are green.", "domain": "zoo"}]
    results = await loaded.method.translate(entries, RunConfig(source_lang="eng", target_lang="spa"))
    assert [r["predicted"] for r in results] == [
        "Buenos días, mi amigo!", "El gato es muy feliz; gracias.", "Zebras son verde."]
    assert all(r["latency_s"] >= 0 for r in results)
