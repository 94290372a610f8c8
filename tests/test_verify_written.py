"""`mt-eval verify`: a card edited and resealed to say what no run writes — a covariate both given and marked not
applicable, a sandbox tool mt-eval never uses, a field every run writes left out — is named at its JSON path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mt_eval.cli import main
from mt_eval.harness.verify import verify_card
from rigor_support import edit_card, family_corpus, honest, run
from sandbox_support import needs_sandbox
from verify_support import run_card

HINT = "use the card the run wrote"


@pytest.fixture(scope="module")
def card_path(tmp_path_factory) -> Path:
    """The reverse fixture's card: no sandbox, no model dependency (model and temperature not applicable)."""
    return run_card(tmp_path_factory.mktemp("reverse"))


def problems(path: Path) -> dict[str, str]:
    """Each error's JSON path, with its message (these checks' own with the fix: the card the run wrote)."""
    found = verify_card(path).errors
    assert all(p.hint == HINT for p in found if p.code == "card")
    return {p.path: p.message for p in found}


def test_the_card_as_the_run_wrote_it_verifies(card_path: Path):
    data = json.loads(card_path.read_text())
    assert set(data["covariates"]["not_applicable"]) == {"model", "temperature"} and data["sandbox"] is None
    assert verify_card(card_path).ok


def test_a_covariate_given_a_value_while_marked_not_applicable_is_named(card_path: Path):
    def change(data: dict) -> None:
        data["covariates"].update(temperature=0.7, model="gpt-x")

    reason = '"method.json lists no model dependency"'
    assert problems(edit_card(card_path, change)) == {
        "$.covariates.temperature": f"the card says 0.7, but it marks temperature not applicable "
                                    f"($.covariates.not_applicable.temperature: {reason}): a run records a covariate's "
                                    "value or why it does not apply, never both",
        "$.covariates.model": f'the card says "gpt-x", but it marks model not applicable ($.covariates.not_applicable.'
                              f"model: {reason}): a run records a covariate's value or why it does not apply, never "
                              "both"}


def test_a_covariate_a_run_never_marks_not_applicable_is_named(card_path: Path):
    """Marked not applicable, a missing covariate would count as present for the headline gate."""
    def change(data: dict) -> None:
        data["covariates"]["not_applicable"].update(environment="no sandbox", retry_budget="none")

    found = problems(edit_card(card_path, change))
    assert set(found) == {"$.covariates.not_applicable.environment", "$.covariates.not_applicable.retry_budget"}
    assert found["$.covariates.not_applicable.environment"] == (
        'the card marks "environment" not applicable, but a run marks only model and temperature so (when the method '
        "has no model, or no served one, and the run was given none); it records every other covariate, or leaves it "
        "missing")


def test_a_sandbox_tool_mt_eval_never_uses_is_named(card_path: Path):
    def change(data: dict) -> None:
        data["sandbox"] = {"tool": "x", "version": "1.0", "denied": [], "policy": {
            "network": "none", "network_meaning": "no network", "plugin": "/p", "read_only": [],
            "gateway_url": "http://127.0.0.1:8080/v1"}}

    found = problems(edit_card(card_path, change))
    assert found["$.sandbox.tool"] == ('the card says "x", a tool mt-eval never confines a method with: a run records '
                                       '"bubblewrap" or "unshare"')
    assert found["$.sandbox.policy.gateway_url"] == (
        'the card says "http://127.0.0.1:8080/v1" with network "none" ($.sandbox.policy.network): a run gives the '
        "gateway's address exactly when the network is the gateway")


@needs_sandbox
def test_a_sandboxed_runs_tool_is_the_one_its_runtime_names(tmp_path: Path):
    path = tmp_path / "run" / "card.json"
    assert main(["run", "--demo", "--out", str(path.parent), "--quiet", "--resamples", "100", "--official"]) == 0
    data = json.loads(path.read_text())
    tool = data["sandbox"]["tool"]
    assert data["method"]["runtime"] == f"python (sandboxed: {tool})" and verify_card(path).ok
    assert problems(edit_card(path, lambda data: data["sandbox"].update(tool="x"))) == {
        "$.sandbox.tool": 'the card says "x", a tool mt-eval never confines a method with: a run records "bubblewrap" '
                          'or "unshare"'}
    other = "unshare" if tool == "bubblewrap" else "bubblewrap"
    assert problems(edit_card(path, lambda data: data["sandbox"].update(tool=other))) == {
        "$.sandbox.tool": f'the card says "{other}", but its method ran sandboxed with "{tool}" ($.method.runtime: '
                          f'"python (sandboxed: {tool})")'}


def test_a_field_every_run_writes_must_be_there(card_path: Path):
    assert problems(edit_card(card_path, lambda data: data.pop("status"))) == {
        "$.status": 'the card has no "status", which a run always writes (every card with $.results_log, as this one '
                    "has, states it)"}

    def both(data: dict) -> None:
        for name in ("status", "failures", "pins"):
            data.pop(name)

    assert set(problems(edit_card(card_path, both))) == {"$.status", "$.failures", "$.pins"}
    assert problems(edit_card(card_path, lambda data: data.update(status=None))) == {
        "$.status": "the card says null, but it lists the run's failures ($.failures): a run that records its failures "
                    "records how it ended too (complete, partial or failed)"}


def test_a_card_without_how_its_run_ended_is_named_as_older_not_as_edited(card_path: Path):
    """mt-eval 0.1.0 wrote run-card/1 cards without status and failures, then without results_log, until 1 December
    2026. Before, such a card verified, so one stripped of them did too (tests/test_verify_outcome.py)."""
    def older(data: dict) -> None:
        for name in ("status", "failures", "results_log"):
            data.pop(name)

    found = verify_card(edit_card(card_path, older)).errors
    assert [(p.path, p.code) for p in found] == [("$.status", "card-version"), ("$.failures", "card-version"),
                                                 ("$.results_log", "card-version")]
    assert found[0].message.startswith('the card has no "status" (complete, partial or failed): every run card '
                                       "mt-eval writes states it, and this one is from an older mt-eval")
    assert all((p.hint or "").startswith("run the evaluation again with this mt-eval") for p in found)
    assert problems(edit_card(card_path, lambda data: data.pop("results_log"))) == {
        "$.results_log": 'the card has no "results_log" (whether its results are in it or in results.jsonl): every run '
                         "card mt-eval writes states it, and this one is from an older mt-eval (0.1.0 before 1 "
                         "December 2026) or had it taken out: without it, how the run ended cannot be checked"}


def test_the_card_records_the_params_the_method_got(tmp_path: Path):
    """--param values change what a method does: the card keeps them beside the other settings, {} for none."""
    import jsonschema

    corpus = family_corpus(tmp_path / "corpus.json")
    assert run(tmp_path / "with", corpus, *honest(note="a, b"), "--param", "level=3")[0] == 0
    card = json.loads((tmp_path / "with" / "card.json").read_text())
    assert card["covariates"]["params"] == {"translate": {"Canary 0.": "Canario 0.", "Canary 1.": "Canario 1."},
                                            "abstain": ["n0", "n1"], "note": "a, b", "level": 3}
    schema = json.loads((Path(__file__).parent.parent / "bridge" / "schemas" / "run-card.schema.json").read_text())
    jsonschema.validate(card, schema)
    assert main(["run", "--demo", "--out", str(tmp_path / "none"), "--quiet", "--latency-sample", "0",
                 "--no-contamination-check"]) == 0
    assert json.loads((tmp_path / "none" / "card.json").read_text())["covariates"]["params"] == {}
