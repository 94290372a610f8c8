"""`mt-eval verify`: the contamination, static scan, eligibility, gate and method records a run writes follow from
the card's own data, so that one edited and resealed is named at its JSON path with what the data says instead."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gate_policies import LENIENT
from mt_eval.cli import main
from mt_eval.harness.verify import verify_card
from rigor_support import edit_card, family_corpus, params, run
from sandbox_support import needs_sandbox


def demo(out: Path, *args: str) -> Path:
    assert main(["run", "--demo", "--out", str(out), "--quiet", "--resamples", "100", *args]) == 0
    return out / "card.json"


@pytest.fixture(scope="module")
def card_path(tmp_path_factory) -> Path:
    """The demo's card: a contamination check with its planted control, a static scan, not eligible (no sandbox)."""
    return demo(tmp_path_factory.mktemp("demo") / "run")


def problems(path: Path) -> dict[str, str]:
    """Each error's JSON path, with its message."""
    return {p.path: p.message for p in verify_card(path).errors}


def test_the_demo_card_verifies_with_its_fairness_records(card_path: Path):
    checks = {c.name: (c.passed, c.detail) for c in verify_card(card_path).checks}
    assert checks["contamination"] == (True, "clean, recall 1.0")
    assert checks["static scan"] == (True, "0 errors in 0 findings")
    assert checks["eligibility"] == (True, "not eligible, as its sandbox, scan and results say")


def test_the_contamination_record_follows_from_its_hits_control_settings_and_corpus(card_path: Path):
    corpus = json.loads(card_path.read_text())["corpus"]

    def change(data: dict) -> None:
        record = data["contamination"]
        record.update(recall_floor=0.5, seed=7)
        record["planted"][0]["found"] = False
        record["corpora"][0].update(sha256="0" * 64, entries=99)

    assert problems(edit_card(card_path, change)) == {
        "$.contamination.recall": "the card says 1.0, its planted control found 19 of 20 texts "
                                  "($.contamination.planted): 0.95",
        "$.contamination.recall_floor": "the card says 0.5, its settings ($.contamination.settings.recall_floor) say "
                                        "0.9",
        "$.contamination.seed": "the card says 7, its settings ($.contamination.settings.seed) say 12345",
        "$.contamination.corpora[0].sha256": f'the card says "{"0" * 64}", its corpus ($.corpus.sha256) says '
                                             f'"{corpus["sha256"]}": a run checks the corpus it runs',
        "$.contamination.corpora[0].entries": "the card says 99, its corpus ($.corpus.entries) says 36: a run checks "
                                              "the corpus it runs"}
    found = problems(edit_card(card_path, lambda data: data["contamination"].update(hits_total=4)))
    assert found["$.contamination.hits_total"] == ("the card says 4, it lists 0 hits ($.contamination.hits, the first "
                                                   "50 of them)")
    found = problems(edit_card(card_path, lambda data: data["contamination"].update(status="contaminated")))
    assert found["$.contamination.status"] == ("the card says 'contaminated' with 0 hits: a check is \"contaminated\" "
                                               "exactly when it has hits")
    found = problems(edit_card(card_path, lambda data: data["contamination"].update(recall=0.5)))
    assert {"$.contamination.recall", "$.contamination.status"} <= set(found)


@pytest.mark.parametrize("change, where, said", [
    (lambda record: record.update(corpora=[]), "$.contamination.corpora",
     "the card says 'clean' but names no corpus the check read: a run checks the corpus it runs"),
    (lambda record: record.update(settings=None, recall_floor=0.1, recall=0.5,
                                  planted=[dict(record["planted"][0]), dict(record["planted"][1], found=False)]),
     "$.contamination.settings", "the card says 'clean' but has no settings: a check records the thresholds, seed "
     "and recall floor it decided by"),
    (lambda record: record["settings"].update(plant=2), "$.contamination.planted",
     "the card lists 20 planted texts, its settings ($.contamination.settings.plant) plant at most 2"),
])
def test_a_clean_record_stripped_of_its_corpus_or_settings_is_refused_by_verify(card_path: Path, capsys, change,
                                                                                 where, said):
    """Without ``corpora`` a clean card would vouch for no corpus; without ``settings`` its recall floor could be
    lowered to anything."""
    edited = edit_card(card_path, lambda data: change(data["contamination"]))
    capsys.readouterr()
    assert main(["verify", str(edited)]) == 1
    out = capsys.readouterr().out
    assert "✗ contamination" in out and f"{where}: {said}" in out


def test_the_static_scan_errors_are_its_findings(card_path: Path):
    def change(data: dict) -> None:
        data["static_scan"]["findings"] = [{"file": "pipeline.py", "line": 3, "kind": "network", "what": "urllib",
                                            "covered_by": None}]

    found = problems(edit_card(card_path, change))
    assert found["$.static_scan.errors"] == ("the card says 0, its findings say 1 (1 not covered by a declared "
                                             "dependency, 0 unscannable files)")


def test_a_not_eligible_cards_reasons_and_official_follow_from_its_facts(card_path: Path):
    def change(data: dict) -> None:
        data["eligibility"].update(reasons=["class X is never eligible"], official=True)

    assert problems(edit_card(card_path, change)) == {
        "$.eligibility.reasons": 'the card says ["class X is never eligible"], its own facts say ["the method did not '
                                 'run in the sandbox (run with --sandbox, or --official)"]',
        "$.eligibility.official": "the card says an official run, but it records no sandbox ($.sandbox is null): an "
                                  "official run is sandboxed, declares its class and starts only with a clean static "
                                  "scan"}


def test_each_gate_checks_figure_and_threshold_are_the_cards(card_path: Path):
    def change(data: dict) -> None:
        scored = next(c for c in data["gate"]["checks"] if c["rule"] == "scored")
        scored.update(figure="300 scored entries", threshold="at least 3 scored entries")

    index = [c["rule"] for c in json.loads(card_path.read_text())["gate"]["checks"]].index("scored")
    assert problems(edit_card(card_path, change)) == {
        f"$.gate.checks[{index}].figure": 'scored: the card says "300 scored entries", its own figures and thresholds '
                                          'give "30 scored entries"',
        f"$.gate.checks[{index}].threshold": 'scored: the card says "at least 3 scored entries", its own figures and '
                                             'thresholds give "at least 30 scored entries"'}


def test_the_methods_identity_is_its_method_cards_and_retries_stay_within_the_budget(card_path: Path):
    def change(data: dict) -> None:
        data["method"].update({"method_id": "other", "class": "llm", "dependency_class": "O"})
        data["covariates"]["retries_used"] = 25

    found = problems(edit_card(card_path, change))
    assert found["$.method.method_id"] == ('the card says "other", its method card ($.method.card.method_id) says '
                                           '"lexicon-eng-spa": only method.json sets it')
    assert found["$.method.class"] == ('the card says "llm", its method card ($.method.card.class) says "pipeline": '
                                       "only method.json sets it")
    assert found["$.method.dependency_class"].startswith('the card says "O", its method card')
    assert found["$.covariates.retries_used"] == ("the card says 25 retries, but its budget "
                                                  "($.covariates.retry_budget) is 10: a run retries no more")
    # a method card may rename the method
    assert problems(edit_card(card_path, lambda data: data["method"]["card"].update(name="Another name"))) == {}


def test_a_run_retries_within_its_budget_across_language_pairs(tmp_path: Path):
    """A negative control of another pair is translated in a call of its own: the budget is the run's, not each
    call's (the run retried both flaky entries with a budget of 1, and its card did not verify)."""
    corpus = family_corpus(tmp_path / "corpus.json", scored=3, extra=[
        {"id": "de", "family": "negative", "pair": "eng>deu", "source": "Good morning."}])
    _, card = run(tmp_path / "run", corpus, *LENIENT, "--latency-sample", "0", "--retry-budget", "1",
                  "--batch-size", "1", "--concurrency", "1", *params(flaky=["s00", "de"], abstain=["n0", "n1"]))
    assert card is not None and (card.covariates.retries_used, card.covariates.retry_budget) == (1, 1)
    assert problems(tmp_path / "run" / "card.json") == {}


@needs_sandbox
def test_an_official_run_verifies_and_its_scan_cannot_hide_a_finding(tmp_path: Path):
    path = demo(tmp_path / "run", "--official")
    assert verify_card(path).ok
    stated = json.loads(path.read_text())["eligibility"]
    assert stated["eligible"]

    def claim(data: dict) -> None:  # what an eligible card says was checked is what its facts say too
        data["eligibility"]["reasons"][0] = "class S: reviewed by hand"

    assert problems(edit_card(path, claim)) == {
        "$.eligibility.reasons": f'the card says {json.dumps(["class S: reviewed by hand", *stated["reasons"][1:]])}'
                                 f', its own facts say {json.dumps(stated["reasons"])}'.replace('", "', '","')}

    def change(data: dict) -> None:
        data["static_scan"]["unscannable"] = ["pipeline.py"]

    assert problems(edit_card(path, change)) == {
        "$.static_scan.errors": "the card says 0, its findings say 1 (0 not covered by a declared dependency, 1 "
                                "unscannable files)"}


def verify_output(path: Path, capsys) -> str:
    """What ``mt-eval verify`` prints of a card it refuses."""
    capsys.readouterr()
    assert main(["verify", str(path)]) == 1
    return capsys.readouterr().out


def test_a_dependency_class_outside_the_classes_is_refused(card_path: Path, capsys):
    edited = edit_card(card_path, lambda data: data["method"]["contributions"][0].update(dependency_class="Sx"))
    out = verify_output(edited, capsys)
    assert '✗ schema        $.method.contributions[0].dependency_class: the string "Sx" is not a valid value' in out


@pytest.mark.parametrize("runtime", ["python", "node", "command", "python (isolated)",
                                     "python (isolated): it blocked the event loop in-process",
                                     "node (sandboxed: unshare)"])
def test_each_runtime_a_run_records_verifies(card_path: Path, runtime: str):
    assert "$.method.runtime" not in problems(edit_card(card_path, lambda data: data["method"].update(runtime=runtime)))


@pytest.mark.parametrize("runtime", ["pythonx", "python (sandboxed: docker)", "node (isolated)"])
def test_a_runtime_no_run_records_is_refused(card_path: Path, capsys, runtime: str):
    out = verify_output(edit_card(card_path, lambda data: data["method"].update(runtime=runtime)), capsys)
    assert f'$.method.runtime: the card says "{runtime}", a runtime no run records: a run records the plugin\'s ' \
           '(python, node, command), "python (isolated)", or the plugin\'s with the tool that confined it ' \
           '("python (sandboxed: bubblewrap)")' in out


@pytest.mark.parametrize("status, reasons", [("clean", ["the planted control was not run"]), ("unverified", [])])
def test_contamination_reasons_are_given_exactly_when_the_check_is_not_clean(card_path: Path, capsys, status, reasons):
    edited = edit_card(card_path, lambda data: data["contamination"].update(status=status, reasons=reasons))
    out = verify_output(edited, capsys)
    assert "✗ contamination" in out and (f'$.contamination.reasons: the card says {json.dumps(reasons)} with status '
                                         f'{status!r}: a check says why exactly when it is not "clean"') in out


def test_a_planted_text_is_an_entry_of_the_cards_corpus(card_path: Path, capsys):
    edited = edit_card(card_path, lambda data: data["contamination"]["planted"][0].update(entry_id="demo-99"))
    out = verify_output(edited, capsys)
    assert "✗ contamination" in out and ('$.contamination.planted[0].entry_id: the card says "demo-99", an id its '
                                         'corpus does not have: the control plants texts of the corpus the run '
                                         'checked') in out
