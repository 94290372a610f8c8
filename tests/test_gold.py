"""References never reach a method: in-process, over the bridge (Python and Node guests), and the fields a
corpus marks as gold in dataset.gold_fields too."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from gate_policies import LENIENT
from mt_eval.bridge.method import BridgeMethod
from mt_eval.bridge.runtimes import node_command, python_command
from mt_eval.cli import main
from mt_eval.gold import GOLD_FIELDS, corpus_gold_fields, method_view
from mt_eval.harness.runcard import RunCard

REPO = Path(__file__).parent.parent
PEEKING = Path(__file__).parent / "fixtures" / "peeking"
VECTORS = json.loads((REPO / "bridge" / "vectors" / "gold-fields.json").read_text())


def test_default_gold_fields_match_the_shared_vectors():
    assert sorted(GOLD_FIELDS) == sorted(VECTORS["default_gold_fields"])


@pytest.mark.parametrize("case", VECTORS["cases"], ids=[c["name"] for c in VECTORS["cases"]])
def test_method_view_passes_the_shared_vectors(case):
    entries = json.loads(json.dumps(case["entries"]))
    view = method_view(entries, GOLD_FIELDS | set(case["gold_fields"]))
    assert view == case["expected"]
    assert entries == case["entries"]  # the corpus's own entries are not changed


def test_a_corpus_marks_more_gold_fields_and_bad_declarations_are_refused():
    assert corpus_gold_fields({}) == GOLD_FIELDS
    assert corpus_gold_fields({"gold_fields": ["post_edit"]}) == GOLD_FIELDS | {"post_edit"}
    for bad in ("post_edit", [1], [""], ["source"]):
        with pytest.raises(ValueError, match="gold_fields"):
            corpus_gold_fields({"gold_fields": bad})


def write_corpus(tmp_path: Path, gold_fields: list[str] | None = None) -> Path:
    entries = [{"id": f"g{i}", "source": f"Sentence {i}.", "reference": f"Frase {i}.", "post_edit": f"Frase {i}.",
                "domain": "news"} for i in range(6)]
    dataset: dict[str, object] = {"name": "gold"}
    if gold_fields is not None:
        dataset["gold_fields"] = gold_fields
    path = tmp_path / "gold.json"
    path.write_text(json.dumps({"dataset": dataset, "language_pair": {"source": "eng", "target": "spa"},
                                "entries": entries}))
    return path


@pytest.mark.parametrize("how", ["in-process", "isolated", "node"])
def test_a_method_that_returns_the_reference_never_gets_it(tmp_path: Path, how: str):
    plugin = PEEKING
    extra: list[str] = []
    if how == "isolated":
        extra = ["--isolate"]
    elif how == "node":
        plugin = tmp_path / "peeking-js"
        plugin.mkdir()
        (plugin / "translate.js").write_text((PEEKING / "translate.js").read_text())
        (plugin / "method.json").write_text(json.dumps({"name": "Peeking JS", "node_entry": "translate.js",
                                                        "dependency_class": "S", "dependencies": []}))
    code = main(["run", "--method", str(plugin), "--corpus", str(write_corpus(tmp_path, ["post_edit"])),
                 "--out", str(tmp_path / "run"), "--quiet", "--resamples", "100", *LENIENT, *extra])
    assert code == 0
    card = msgspec.json.decode((tmp_path / "run" / "card.json").read_bytes(), type=RunCard)
    assert {tuple(r.metadata["fields"]) for r in card.results} == {("domain", "id", "source")}
    assert {r.predicted for r in card.results} == {"(no reference)"}
    assert card.metrics is not None and card.metrics.metrics[0].score < 30  # chrF++ of cheating would be 100


def test_without_a_gold_declaration_other_fields_still_reach_the_method(tmp_path: Path):
    code = main(["run", "--method", str(PEEKING), "--corpus", str(write_corpus(tmp_path)),
                 "--out", str(tmp_path / "run"), "--quiet", "--resamples", "100", *LENIENT])
    assert code == 0
    card = msgspec.json.decode((tmp_path / "run" / "card.json").read_bytes(), type=RunCard)
    assert {tuple(r.metadata["fields"]) for r in card.results} == {("domain", "id", "post_edit", "source")}


def test_a_corpus_with_a_malformed_gold_declaration_is_not_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    corpus = write_corpus(tmp_path)
    data = json.loads(corpus.read_text())
    data["dataset"]["gold_fields"] = "post_edit"
    corpus.write_text(json.dumps(data))
    code = main(["run", "--method", str(PEEKING), "--corpus", str(corpus), "--out", str(tmp_path / "run"), "--quiet"])
    assert code == 1
    assert "gold_fields must be a list" in capsys.readouterr().err
    assert not (tmp_path / "run" / "results.jsonl").exists()


@pytest.mark.parametrize("runtime", ["python", "node"])
async def test_the_python_bridge_host_strips_the_reference_whoever_calls_it(runtime: str):
    command = python_command(PEEKING) if runtime == "python" else node_command(PEEKING)
    method = BridgeMethod(command, label="peeking")
    try:
        results = await method.translate([{"id": "1", "source": "Hi.", "reference": "Hola.", "references": ["Hola."],
                                           "note": "x"}], {"source_lang": "eng", "target_lang": "spa"})
    finally:
        await method.aclose()
    assert results[0]["predicted"] == "(no reference)"
    assert results[0]["metadata"]["fields"] == ["id", "note", "source"]
