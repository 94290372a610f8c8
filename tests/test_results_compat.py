"""What methods return, through `mt-eval run`, in every runtime: upstream-harness results are accepted and the
changes reported once per run; a lone surrogate fails its entry only; ids and predictions stay strict."""

from __future__ import annotations

import json
import math
from pathlib import Path

import msgspec
import pytest

from gate_policies import LENIENT
from mt_eval.cli import main
from mt_eval.harness.execution import ResultsLog
from mt_eval.harness.runcard import RunCard

UPSTREAM_PY = '''
class Upstream:
    async def translate(self, entries, config):
        out = []
        for i, e in enumerate(entries):
            out.append({"id": e["id"], "predicted": e["source"].upper(), "raw_predicted": " " + e["source"],
                        "cached": i % 2 == 0, "latency_s": None, "model": "gpt-x",
                        "usage": None if i == 0 else {"prompt_tokens": 10.0, "completion_tokens": 2.5,
                                                      "total_tokens": 13, "prompt_tokens_details": {"cached": 1}}})
        return out
'''
UPSTREAM_JS = '''
export async function translate(entries) {
  return entries.map((e, i) => ({ id: e.id, predicted: e.source.toUpperCase(), raw_predicted: ` ${e.source}`,
    cached: i % 2 === 0, latency_s: null, model: 'gpt-x',
    usage: i === 0 ? null
      : { prompt_tokens: 10, completion_tokens: 2.5, total_tokens: 13, prompt_tokens_details: { cached: 1 } } }));
}
'''
SURROGATE_PY = '''
class Surrogate:
    async def translate(self, entries, config):
        return [{"id": e["id"], "predicted": "bad \\ud800 text" if e["source"].endswith("2.") else e["source"]}
                for e in entries]
'''
SURROGATE_JS = '''
export async function translate(entries) {
  return entries.map((e) => ({ id: e.id, predicted: e.source.endsWith('2.') ? 'bad \\ud800 text' : e.source }));
}
'''
EXPECTED_NOTES = {
    '"latency_s": null treated as absent': 3,
    'unknown field "model" moved into metadata': 3,
    '"usage": null treated as absent': 1,
    '"usage.completion_tokens" not a whole number, rounded': 2,
    'unknown field "usage.prompt_tokens_details" moved into metadata.usage': 2,
}


def corpus(tmp_path: Path, n: int = 3) -> Path:
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps({"id": f"e{i}", "source": f"Sentence {i}.", "reference": f"Frase {i}."})
                            + "\n" for i in range(n)))
    return path


def plugin(tmp_path: Path, name: str, *, python: str | None = None, node: str | None = None) -> Path:
    directory = tmp_path / name
    directory.mkdir()
    manifest = {"name": name, "dependencies": [], "dependency_class": "S", "supported_pairs": ["eng>spa"]}
    if python:
        manifest["entry_point"] = f"pipeline:{python.split('class ')[1].split(':')[0]}"
        (directory / "pipeline.py").write_text(python)
    if node:
        manifest["node_entry"] = "translate.js"
        (directory / "translate.js").write_text(node)
    (directory / "method.json").write_text(json.dumps(manifest))
    return directory


def run_card(tmp_path: Path, directory: Path, *extra: str) -> RunCard:
    main(["run", "--method", str(directory), "--corpus", str(corpus(tmp_path)), "--out", str(tmp_path / "run"),
          "--resamples", "50", "--retries", "0", *LENIENT, *extra])
    return msgspec.json.decode((tmp_path / "run" / "card.json").read_bytes(), type=RunCard)


@pytest.mark.parametrize("runtime", ["python", "python --isolate", "node"])
def test_upstream_results_are_accepted_and_reported_once(tmp_path: Path, runtime: str, capsys):
    code = {"node": UPSTREAM_JS} if runtime == "node" else {"python": UPSTREAM_PY}
    directory = plugin(tmp_path, "upstream", **code)
    card = run_card(tmp_path, directory, *(["--isolate"] if "isolate" in runtime else []))
    assert card.errors == 0
    assert [r.predicted for r in card.results] == ["SENTENCE 0.", "SENTENCE 1.", "SENTENCE 2."]
    assert [r.raw_predicted for r in card.results] == [" Sentence 0.", " Sentence 1.", " Sentence 2."]
    assert [r.cached for r in card.results] == [True, False, True] and card.cached == 2
    assert card.usage.prompt_tokens == 20 and card.usage.completion_tokens == 6 and card.usage.total_tokens == 26
    assert card.results[1].metadata == {"model": "gpt-x", "usage": {"prompt_tokens_details": {"cached": 1}}}
    assert all(r.latency_s > 0 for r in card.results)  # latency_s: null → the call's time, shared
    assert card.normalised == EXPECTED_NOTES
    stdout = capsys.readouterr().out  # the warning qualifies the result, so it is printed with it
    assert stdout.count("results accepted after changes") == 1
    assert '3 × "latency_s": null treated as absent' in stdout


@pytest.mark.parametrize("runtime", ["python", "python --isolate", "node"])
def test_a_lone_surrogate_fails_its_entry_and_nothing_else(tmp_path: Path, runtime: str):
    directory = plugin(tmp_path, "surrogate",
                       **({"node": SURROGATE_JS} if runtime == "node" else {"python": SURROGATE_PY}))
    card = run_card(tmp_path, directory, *(["--isolate"] if "isolate" in runtime else []))
    assert [r.predicted for r in card.results] == ["Sentence 0.", "Sentence 1.", None]
    assert card.results[2].error.endswith('"predicted" holds text that is not valid Unicode (a lone surrogate)')
    assert len(ResultsLog.read(tmp_path / "run" / "results.jsonl")) == 3  # the log stays readable


def test_ids_and_predictions_stay_strict(tmp_path: Path):
    code = ('class Strict:\n    async def translate(self, entries, config):\n'
            '        return [{"id": 0, "predicted": "x"}, {"id": "e1", "predicted": 42},'
            ' {"id": "e2", "predicted": "ok", "latency_s": "fast"}]\n')
    card = run_card(tmp_path, plugin(tmp_path, "strict", python=code))
    assert [r.error for r in card.results] == [
        "the method returned no result for this entry, and results whose id matches no entry of the call (a result's "
        "id is its entry's id, a string)",
        "the method returned an unusable result: $.predicted: expected a string, got the number 42",
        "the method returned an unusable result: $.latency_s: expected a number, got the string \"fast\"",
    ]
    assert card.normalised == {}


def test_a_latency_that_is_not_a_number_is_named_nan_not_null():
    from mt_eval.results import ResultNotes, results_for

    results, _ = results_for([{"id": "a", "source": "x"}], [{"id": "a", "predicted": "A", "latency_s": math.nan}],
                             label="the method", notes=ResultNotes())
    assert results[0].error == "the method returned an unusable result: $.latency_s: must be >= 0, got NaN"


def test_a_result_that_refers_to_itself_or_nests_too_deep_is_unusable_not_a_recursion_error():
    """Before, `results_for` (in process) and a guest's answer died in a RecursionError: the whole call was lost,
    and ``mt-eval serve`` crashed with exit status 0."""
    from mt_eval.results import ResultNotes, compact_returned, results_for

    response: dict = {"status": 200}
    response["self"] = response
    deep: dict = {}
    inner = deep
    for _ in range(600):
        inner["a"] = {}
        inner = inner["a"]
    entries = [{"id": "a", "source": "x"}, {"id": "b", "source": "y"}, {"id": "c", "source": "z"}]
    returned = [{"id": "a", "predicted": "X", "metadata": {"response": response}},
                {"id": "b", "predicted": "Y", "metadata": deep}, {"id": "c", "predicted": "Z"}]
    results, _ = results_for(entries, returned, label="the method", notes=ResultNotes())
    assert [r.error or r.predicted for r in results] == [
        'the method returned an unusable result: "metadata" cannot be sent as JSON: it refers to itself (a circular '
        "structure)",
        'the method returned an unusable result: "metadata" cannot be sent as JSON: it nests deeper than 500 levels',
        "Z"]
    sent = msgspec.json.decode(compact_returned(returned, notes=ResultNotes()))
    assert [item.get("error") or item.get("predicted") for item in sent] == [r.error or r.predicted for r in results]


NUMPY_AND_STR_SUBCLASSES = '''
import datetime

import numpy as np


class Label(str):
    """A str subclass, as tokenizers and enums of text return."""


class M:
    async def translate(self, entries, config):
        out = []
        for e in entries:
            item = {"id": Label(e["id"]), "predicted": np.array([e["source"].upper()])[0], "latency_s": np.float64(0.5),
                    "metadata": {"score": np.float32(0.25), "ranks": np.arange(2), "tag": Label("t")}}
            if e["source"].endswith("2."):
                item["metadata"] = {"when": datetime.date(2024, 1, 2), "handle": object()}
            out.append(item)
        return out
'''


@pytest.mark.parametrize("isolate", [False, True], ids=["in-process", "isolated"])
def test_numpy_values_and_str_subclasses_are_taken_as_plain_json_and_an_unencodable_value_fails_its_entry(
        tmp_path: Path, isolate: bool):
    """numpy's str_ and scalars, a str subclass: a traceback and no card in this process (an error for every entry of
    the call through a guest); an object JSON cannot hold fails only its entry, naming its type."""
    from test_run_method_faults import corpus, mt_eval, plugin

    method = plugin(tmp_path, NUMPY_AND_STR_SUBCLASSES)
    done = mt_eval("run", "--method", str(method), "--corpus", str(corpus(tmp_path, ["One 1.", "Two 2.", "Three 3."])),
                   "--pair", "eng>spa", "--out", str(tmp_path / "run"), "--quiet", "--resamples", "100",
                   "--latency-sample", "0", *(["--isolate"] if isolate else []))
    assert done.returncode == 3 and "Traceback" not in done.stderr, done.stderr
    card = msgspec.json.decode((tmp_path / "run" / "card.json").read_bytes(), type=RunCard)
    first, second, third = card.results
    assert (first.predicted, first.latency_s, first.metadata) == ("ONE 1.", 0.5, {"score": 0.25, "ranks": [0, 1],
                                                                                   "tag": "t"})
    assert third.predicted == "THREE 3."
    assert second.predicted is None and second.error == (
        'the method returned an unusable result: "metadata" cannot be sent as JSON: it holds an object of type '
        "object (give text, numbers, booleans, null, lists or objects)")
