"""`mt-eval run` over the bundled English→Spanish corpus works for every example translation method (the LLM
example against a loopback stand-in endpoint; the Apertium one where Debian's Apertium is installed). The
decision examples are run by tests/test_decision_examples.py."""

from __future__ import annotations

import contextlib
import json
import shutil
from pathlib import Path

import pytest

from apertium_available import apertium_missing
from llm_standin import StandIn
from mt_eval.cli import main

REPO = Path(__file__).parent.parent
DEMO = REPO / "examples" / "data" / "eng-spa-demo.json"
EXAMPLES = sorted(p.parent for p in (REPO / "examples").glob("*/method.json")
                  if "translate" in json.loads(p.read_text(encoding="utf-8")).get("implements", ["translate"]))
ENTRIES = json.loads(DEMO.read_text(encoding="utf-8"))["entries"]


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_mt_eval_run_over_the_demo_corpus(example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    manifest = json.loads((example / "method.json").read_text(encoding="utf-8"))
    if example.name == "apertium-eng-spa" and (reason := apertium_missing()):
        pytest.skip(reason)
    if manifest.get("node_entry") and not manifest.get("entry_point") and shutil.which("node") is None:
        pytest.skip("node is not installed")
    endpoint: contextlib.AbstractContextManager[StandIn | None] = contextlib.nullcontext()
    if any(d["access"] == "gateway" for d in manifest["dependencies"]):
        monkeypatch.setenv("no_proxy", "127.0.0.1")
        endpoint = StandIn({e["source"]: e["reference"] for e in ENTRIES if "reference" in e})
    with endpoint as server:
        # a served model's covariates: the gate requires the model and the temperature
        model = ["--base-url", server.base_url, "--model", "stand-in", "--temperature", "0"] if server else []
        code = main(["run", "--method", str(example), "--corpus", str(DEMO), "--out", str(tmp_path / "run"),
                     "--quiet", "--resamples", "100", "--concurrency", "8", "--batch-size", "4", *model])
    assert code == 0
    card = json.loads((tmp_path / "run" / "card.json").read_text(encoding="utf-8"))
    assert card["errors"] == 0, [r["error"] for r in card["results"] if r.get("error")]
    assert card["corpus"]["entries"] == len(ENTRIES) and card["corpus"]["pair"] == "eng>spa"
    assert card["method"]["class"] == manifest["class"]
    assert card["method"]["dependency_class"] == manifest["dependency_class"]
    chrf = card["metrics"]["metrics"][0]
    assert chrf["name"] == "chrF++" and chrf["ci_low"] <= chrf["score"] <= chrf["ci_high"]
    assert card["families"]["canary_pass_rate"] == {"numerator": 3, "denominator": 3}
    assert [n["outcome"] for n in card["families"]["negatives"]] == ["abstained"] * 3
    assert card["gate"]["passed"] is True, card["gate"]["failures"]  # every example passes the default gate
