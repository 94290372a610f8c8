"""The decide protocol: method.json says what a method implements (old manifests still mean translate), the
protocol check and the loader hold a method to it, and both hosts reach decide through both guests."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import msgspec
import pytest

from mt_eval.bridge.method import BridgeMethod
from mt_eval.bridge.runtimes import node_command, python_command
from mt_eval.cli import main
from mt_eval.decisions.answers import match_results
from mt_eval.decisions.records import DecisionConfig, DecisionRow
from mt_eval.loader import PluginLoadError, load_method
from mt_eval.manifest import Manifest
from mt_eval.method_protocol import protocol_deviations
from mt_eval.strict import decode_value
from mt_eval.validate import validate_plugin

REPO = Path(__file__).parent.parent
REVERSE = REPO / "tests" / "fixtures" / "reverse"
JUDGE = '''
class Judge:
    async def decide(self, rows, config):
        return [{"id": r["id"], "answers": {n: {"probabilities": {"true": 0.5, "false": 0.5}}
                                           for n in r["questions"]}} for r in rows]
'''
ROWS = [
    {"id": "r1", "state": {"prefer": "b"}, "questions": {
        "q": {"type": "choice", "instructions": "?", "options": ["a", "b", "c"]},
        "s": {"type": "score", "instructions": "?", "levels": [{"value": 0}, {"value": 1.5, "label": "mid"},
                                                              {"value": 3}]}}},
    {"id": "r2", "state": {"fail": True}, "questions": {"n": {"type": "noul", "instructions": "?"}}},
    {"id": "r3", "state": {"prefer": "true"}, "questions": {"n": {"type": "noul", "instructions": "?"}}},
]


def manifest_problems(data):
    _, problems = decode_value(data, Manifest, file="method.json")
    return [f"{p.path}: {p.message}" for p in problems]


def test_a_manifest_without_implements_translates_and_seed_era_manifests_stay_valid(seed_plugin):
    manifest, problems = decode_value({"name": "x", "entry_point": "pipeline:X", "dependency_class": "S",
                                       "dependencies": []}, Manifest, file="m")
    assert problems == [] and manifest.implements == ["translate"] and manifest.decide is None
    report = validate_plugin(seed_plugin, run_code=False)
    assert not report.errors


@pytest.mark.parametrize(("data", "problem"), [
    ({"implements": []}, "$.implements: needs at least 1 item"),
    ({"implements": ["judge"]}, '$.implements[0]: the string "judge" is not a valid request'),
    ({"decide": {"max_input_chars": 100}}, '$.decide: "decide" settings, but "implements" does not list "decide"'),
    ({"implements": ["decide"], "decide": {"max_input_chars": 0}}, "$.decide.max_input_chars: must be >= 1, got 0"),
    ({"implements": ["decide"], "decide": {"question_types": ["rating"]}},
     '$.decide.question_types[0]: the string "rating" is not a valid question type'),
])
def test_bad_implements_and_decide_settings(data, problem):
    assert problem in manifest_problems({"name": "x", "entry_point": "p:X", "dependencies": [], **data})


def test_the_protocol_check_follows_what_the_manifest_implements():
    class OnlyTranslates:
        async def translate(self, entries, config):
            return []

    class SyncJudge:
        def decide(self, rows, config):
            return []

    assert protocol_deviations(OnlyTranslates()) == []
    assert [d.text for d in protocol_deviations(OnlyTranslates(), ["decide"])] == [
        "OnlyTranslates has no decide method: define `async def decide(self, rows, config)`"]
    assert [d.text for d in protocol_deviations(SyncJudge(), ["decide"])] == [
        "SyncJudge.decide is not async: write `async def decide(self, rows, config)`"]


def test_a_decide_only_plugin_loads_and_a_missing_decide_is_a_load_error(make_plugin):
    judge = make_plugin({"name": "Judge", "entry_point": "pipeline:Judge", "implements": ["decide"],
                         "dependency_class": "S", "dependencies": []}, files={"pipeline.py": JUDGE})
    loaded = load_method(judge, needs="decide")
    assert loaded.manifest.implements == ["decide"] and not hasattr(loaded.method, "translate")
    echo = make_plugin({"name": "Echo", "entry_point": "pipeline:EchoMethod", "implements": ["translate", "decide"],
                        "dependency_class": "S", "dependencies": []})
    with pytest.raises(PluginLoadError) as caught:
        load_method(echo)
    assert "EchoMethod has no decide method" in str(caught.value)
    assert "DecisionMethod protocol" in str(caught.value)


def test_commands_refuse_a_plugin_that_does_not_implement_what_they_need(make_plugin, capsys, tmp_path):
    judge = make_plugin({"name": "Judge", "entry_point": "pipeline:Judge", "implements": ["decide"],
                         "dependency_class": "S", "dependencies": []}, files={"pipeline.py": JUDGE})
    assert main(["translate", str(judge), "--pair", "eng>spa", "Hello"]) == 1
    assert "this needs a method that implements translate; " in capsys.readouterr().err
    assert main(["run", "--method", str(judge), "--corpus", str(REPO / "examples" / "data" / "eng-spa-demo.json"),
                 "--out", str(tmp_path / "run"), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "implements decide" in err and "mt-eval decide run" in err


GUESTS = {"python guest": python_command(REVERSE), "node guest": node_command(REVERSE)}


def checked(raw):
    rows = [msgspec.convert(r, DecisionRow) for r in ROWS]
    results, unknown = match_results(rows, raw, "the guest")
    assert unknown == []
    return results


@pytest.mark.parametrize("guest", list(GUESTS))
async def test_the_python_host_decides_through_both_guests(guest):
    if guest == "node guest" and shutil.which("node") is None:
        pytest.skip("node is not installed")
    method = BridgeMethod(GUESTS[guest], label="reverse")
    try:
        results = checked(await method.decide(ROWS, DecisionConfig()))
        info = method.info
        translated = await method.translate([{"id": "e", "source": "ab"}], {"source_lang": "eng",
                                                                             "target_lang": "spa"})
    finally:
        await method.aclose()
    assert info is not None and info.implements == ["translate", "decide"]
    first, failed, third = results
    assert first.answers["q"].probabilities == {"a": pytest.approx(0.15), "b": 0.7, "c": pytest.approx(0.15)}
    assert first.answers["s"].expected == pytest.approx(1.5)
    assert failed.error == "asked to fail" and failed.answers == {}
    assert third.answers["n"].probabilities == {"true": 0.7, "false": pytest.approx(0.3)}
    assert all(r.latency_s > 0 for r in results)
    assert translated[0]["predicted"] == "spa:ba"


@pytest.mark.parametrize("guest", list(GUESTS))
async def test_a_raising_decide_fails_only_its_request(guest):
    if guest == "node guest" and shutil.which("node") is None:
        pytest.skip("node is not installed")
    method = BridgeMethod(GUESTS[guest], label="reverse")
    rows = [{**ROWS[2], "id": "boom", "state": {"raise": True}}, ROWS[2]]
    try:
        raised = await method.decide(rows[:1], DecisionConfig())
        fine = await method.decide(rows[1:], DecisionConfig())
    finally:
        await method.aclose()
    assert "asked to raise" in raised[0]["error"]
    assert fine[0]["answers"]["n"]["probabilities"]["true"] == 0.7


async def test_a_guest_that_only_translates_fails_decide_rows_with_the_reason():
    method = BridgeMethod(python_command(REPO / "examples" / "lexicon-eng-spa"), label="lexicon")
    try:
        results = await method.decide(ROWS[:1], DecisionConfig())
    finally:
        await method.aclose()
    assert results == [{"id": "r1", "error": "the guest does not implement decide (it implements translate)"}]


def test_the_initialize_result_schema_says_what_a_guest_implements():
    schema = json.loads((REPO / "bridge" / "schemas" / "bridge-initialize-result.schema.json").read_text())
    result = schema["$defs"]["InitializeResult"]
    assert result["properties"]["implements"] == {"type": "array", "items": {"type": "string"}}
    assert "implements" not in result["required"]  # a guest that does not say implements translate


async def test_a_running_guest_that_only_decides_fails_translate_entries_with_the_reason(make_plugin):
    judge = make_plugin({"name": "Judge", "entry_point": "pipeline:Judge", "implements": ["decide"],
                         "dependency_class": "S", "dependencies": []}, files={"pipeline.py": JUDGE})
    method = BridgeMethod(python_command(judge), label="judge")
    try:
        await method.start()  # running: a translate call takes the path of a call to a running guest
        results = await method.translate([{"id": "a", "source": "x"}], {"source_lang": "eng", "target_lang": "spa"})
    finally:
        await method.aclose()
    assert [(r["id"], r["predicted"], r["error"]) for r in results] == [
        ("a", None, "the guest does not implement translate (it implements decide)")]


def test_a_method_with_the_other_request_only_is_told_it_may_say_so_in_implements():
    """A decision method whose method.json leaves "implements" out (so ["translate"]) was only told to define
    translate; the other way round too."""
    class Judge:
        async def decide(self, rows, config):
            return []

    class OnlyTranslates:
        async def translate(self, entries, config):
            return []

    class Neither:
        pass

    [missing] = protocol_deviations(Judge())
    assert missing.fix == ('if Judge only decides, set "implements": ["decide"] in method.json; if it translates too, '
                           'define translate (see the README: the TranslationMethod protocol in "Writing a method '
                           'plugin")')
    [missing] = protocol_deviations(OnlyTranslates(), ["decide"])
    assert missing.fix.startswith('if OnlyTranslates only translates, set "implements": ["translate"] in method.json; '
                                  "if it decides too, define decide (see the README: the DecisionMethod protocol in ")
    assert protocol_deviations(Neither())[0].fix is None  # (the protocol's general pointer)
