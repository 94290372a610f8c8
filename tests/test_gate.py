"""The headline gate: fail-closed, each rule failing on its own, thresholds from a policy file over the shipped
defaults (echoed), covariates recorded or not applicable, applied by `mt-eval run` (exit status 5) and
re-checked by `mt-eval verify`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import msgspec
import pytest

from mt_eval.cli import main
from mt_eval.harness.gate import apply_gate
from mt_eval.harness.policy import load_policy, shipped_policy
from mt_eval.harness.runcard import RunCard
from mt_eval.harness.verify import verify_card
from rigor_support import SCRIPTED, edit_card, family_corpus, honest, run

LLM = {"id": "llm", "kind": "model", "license": "proprietary", "access": "gateway",
       "source": "any OpenAI-compatible endpoint", "substitutable": True, "redistributable": False,
       "transferable": False}


def failed_rules(card: RunCard) -> list[str]:
    assert card.gate is not None
    return [c.rule for c in card.gate.checks if not c.passed]


def scripted_copy(tmp_path: Path, **manifest: object) -> Path:
    """The scripted method with other method.json fields (e.g. a model dependency)."""
    copy = tmp_path / "scripted-copy"
    shutil.copytree(SCRIPTED, copy, ignore=shutil.ignore_patterns("__pycache__"))
    data = {**json.loads((copy / "method.json").read_text()), **manifest}
    (copy / "method.json").write_text(json.dumps({k: v for k, v in data.items() if v is not None}))
    return copy


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return family_corpus(tmp_path / "corpus.json")


@pytest.fixture
def good(tmp_path: Path, corpus: Path) -> Path:
    code, card = run(tmp_path / "good", corpus, *honest())
    assert code == 0 and card is not None and card.gate is not None and card.gate.passed, card and card.gate
    return tmp_path / "good" / "card.json"


def test_a_clean_run_of_a_deterministic_method_that_abstains_on_the_negatives_passes(good: Path, capsys):
    assert main(["gate", str(good)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("policy default (shipped default):\n  canaries: at least 1, pass rate at least 100%\n")
    assert "scored entries: at least 30" in out and "covariates recorded: model, temperature, tool_permissions" in out
    assert f"{good}: headline gate passed" in out
    assert "✓ canaries       2/2 (100.0%) passed" in out and "✓ negatives      0/2 (0.0%) violated" in out
    assert "model: not applicable (method.json lists no model dependency)" in out and "tool_permissions: none" in out
    assert "headline: chrF++ " in out and "over 30 scored entries" in out
    assert main(["gate", str(good), "--json"]) == 0
    [verdict] = json.loads(capsys.readouterr().out)
    assert verdict["passed"] is True and verdict["headline"].startswith("chrF++")
    assert [c["rule"] for c in verdict["checks"]] == ["verified", "canaries", "negatives", "scored", "abstention",
                                                      "covariates", "contamination"]


@pytest.mark.parametrize(("corpus_shape", "method_params", "rule", "says"), [
    ({"canaries": 0}, {}, "canaries", "0 canaries ran; the policy needs at least 1"),
    ({}, {"translate": {"Canary 0.": "Canario 0."}}, "canaries", "canary c1 failed (exact): 'Canary 1.' is not"),
    ({"negatives": 0}, {}, "negatives", "0 negative controls ran; the policy needs at least 1"),
    ({}, {"abstain": ["n0"]}, "negatives", "negative control n1 was translated as ''"),
    ({"scored": 29}, {}, "scored", "29 scored entries: a headline needs at least 30 (the policy's min_scored)"),
], ids=["no canaries", "a canary fails", "no negatives", "a control violated", "too few scored"])
def test_each_rule_fails_on_its_own(tmp_path: Path, corpus_shape: dict, method_params: dict, rule: str, says: str,
                                    capsys):
    corpus = family_corpus(tmp_path / "corpus.json", **corpus_shape)
    negatives = corpus_shape.get("negatives", 2)
    code, card = run(tmp_path / "run", corpus, *honest(negatives=negatives, **method_params))
    assert code == 5 and card is not None  # the run completed; the gate withheld its headline
    assert failed_rules(card) == [rule]
    assert card.gate is not None and any(says in f for f in card.gate.failures), card.gate.failures
    out = capsys.readouterr().out  # the gate's verdict is part of the result: standard output
    assert "headline withheld: the gate failed (policy default):" in out and says in out
    assert f"mt-eval gate {tmp_path / 'run' / 'card.json'} shows every rule" in out
    assert main(["gate", str(tmp_path / "run" / "card.json")]) == 1
    if rule == "scored":  # under a policy of its own, the hint names it: the shipped one may judge otherwise
        policy = tmp_path / "thirty.json"
        policy.write_text(json.dumps({"name": "thirty", "min_scored": 30}))
        capsys.readouterr()
        assert run(tmp_path / "again", corpus, *honest(negatives=negatives, **method_params),
                   "--policy", str(policy))[0] == 5
        assert f"mt-eval gate {tmp_path / 'again' / 'card.json'} --policy {policy} shows every rule" in \
            capsys.readouterr().out
        assert main(["gate", str(tmp_path / "run" / "card.json")]) == 1
    out = capsys.readouterr().out
    assert "headline gate FAILED" in out and "no headline: 1 rule failed" in out and "headline: chrF++" not in out


def test_a_selection_that_left_out_the_canaries_says_so(tmp_path: Path, corpus: Path, capsys):
    _, card = run(tmp_path / "first", corpus, *honest(), "--limit", "30")
    assert ("0 canary entries; the gate policy default needs at least 1, so the headline will be withheld (this run is "
            "a selection (30 of the corpus's 34 entries): run the whole corpus, or select its canaries too; or mark "
            "entries") in capsys.readouterr().err  # (said before the run, as after it)
    assert card is not None and card.gate is not None and "canaries" in failed_rules(card)
    [detail] = next(c.details for c in card.gate.checks if c.rule == "canaries")
    assert detail.startswith("0 canaries ran; the policy needs at least 1: this run is a selection (30 of the "
                             "corpus's 34 entries): run the whole corpus, or select its canaries too (or mark them in ")


def test_the_abstention_rule_and_a_policy_file_over_the_shipped_defaults(tmp_path: Path, corpus: Path, capsys):
    code, card = run(tmp_path / "run", corpus, *honest(abstain=["n0", "n1", "s00", "s01"]))
    assert code == 0 and card is not None  # no limit by default: abstaining on scored entries costs score
    capsys.readouterr()
    policy = tmp_path / "strict.json"
    policy.write_text(json.dumps({"name": "strict", "max_abstention_rate": 0.05}))
    assert main(["gate", str(tmp_path / "run" / "card.json"), "--policy", str(policy)]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"policy strict ({policy}):")
    assert "abstention on scored entries: at most 5%" in out
    assert "canaries: at least 1 (shipped default), pass rate at least 100% (shipped default)" in out
    assert "✗ abstention     2/30 (6.7%) abstained" in out and "the method abstained on 2/30 (6.7%)" in out
    assert "(the run's own gate, under policy default, passed)" in out
    policy.write_text(json.dumps({"name": "strict", "max_abstention_rate": 0.05, "min_canary_pass_rate": 0.5}))
    assert main(["gate", str(tmp_path / "run" / "card.json"), "--policy", str(policy)]) == 1
    assert "canaries: at least 1 (shipped default), pass rate at least 50%\n" in capsys.readouterr().out  # (its own)
    code, card = run(tmp_path / "strict", corpus, *honest(abstain=["n0", "n1", "s00", "s01"]), "--policy", str(policy))
    assert code == 5 and card is not None and failed_rules(card) == ["abstention"]
    assert card.gate is not None and card.gate.policy == "strict" and card.gate.thresholds is not None
    assert card.gate.thresholds["max_abstention_rate"] == 0.05 and card.gate.thresholds["min_scored"] == 30


@pytest.mark.parametrize(("manifest", "given", "missing"), [
    ({"dependencies": [LLM], "dependency_class": "A1"}, ["--temperature", "0"], "model"),
    ({"dependencies": [LLM], "dependency_class": "A1"}, ["--model", "m-1"], "temperature"),
    ({"dependencies": None, "dependency_class": None}, ["--model", "m-1", "--temperature", "0"], "tool_permissions"),
], ids=["model", "temperature", "tool permissions"])
def test_each_required_covariate_missing_fails_the_gate_on_its_own(tmp_path: Path, corpus: Path, manifest: dict,
                                                                   given: list[str], missing: str):
    method = scripted_copy(tmp_path, **manifest)
    code, card = run(tmp_path / "run", corpus, *honest(), *given, method=method)
    assert code == 5 and card is not None and failed_rules(card) == ["covariates"]
    assert card.gate is not None and len(card.gate.failures) == 1
    assert card.gate.failures[0].startswith(f"covariates: {missing} missing: ")
    code, card = run(tmp_path / "full", corpus, *honest(), "--model", "m-1", "--temperature", "0", method=method)
    if missing != "tool_permissions":
        assert code == 0 and card is not None and card.covariates.model == "m-1"
        assert card.covariates.tool_permissions == ["llm (gateway)"]


def test_a_method_without_a_dependencies_list_is_not_said_to_have_a_model(tmp_path: Path, corpus: Path):
    """Nothing says whether it has one: the fix is to list its dependencies (or give --model), not "its model"."""
    method = scripted_copy(tmp_path, dependencies=None, dependency_class=None)
    code, card = run(tmp_path / "run", corpus, *honest(), method=method)
    assert code == 5 and card is not None and card.gate is not None
    assert card.gate.failures[0] == ('covariates: model missing: method.json does not list its dependencies (add '
                                     '"dependencies"), or give --model')


def test_an_environment_without_a_digest_or_sandbox_is_missing(good: Path):
    card = msgspec.json.decode(good.read_bytes(), type=RunCard)
    card.environment.digest = None
    gate = apply_gate(card, shipped_policy())
    assert [c.rule for c in gate.checks if not c.passed] == ["covariates"]
    assert gate.failures == ["covariates: environment missing: no sandbox and no environment digest"]
    sandboxed = apply_gate(card, shipped_policy(), data={"sandbox": {"tool": "bubblewrap", "version": "0.8.0",
                                                                     "policy": {"network": "none"}}})
    assert sandboxed.passed
    covariates = next(c for c in sandboxed.checks if c.rule == "covariates")
    assert "environment: sandbox bubblewrap 0.8.0 (network none)" in covariates.notes


def test_a_tampered_card_fails_the_gate_it_cannot_be_verified(good: Path, capsys):
    tampered = edit_card(good, lambda d: d["results"][0].update(predicted="something else"), reseal=False)
    assert main(["gate", str(tampered)]) == 1
    out = capsys.readouterr().out
    assert "✗ verified" in out and "does not verify" in out and "content_sha256" in out
    resealed = edit_card(good, lambda d: d["results"][0].update(predicted="something else"), name="resealed.json")
    assert main(["gate", str(resealed)]) == 1
    assert "$.metrics.metrics[0].score" in capsys.readouterr().out
    assert main(["gate", str(good.parent / "missing.json")]) == 1
    assert "cannot read the card" in capsys.readouterr().out


def test_a_card_from_an_older_mt_eval_names_what_it_lacks(good: Path, capsys):
    def older(data: dict) -> None:
        for key in ("families", "gate", "freeze"):
            data.pop(key)
        for key in ("tool_permissions", "not_applicable"):
            data["covariates"].pop(key)
        data["environment"].pop("digest")
        data["metrics"]["segments"] = len(data["results"])
        data["metrics"]["metrics"] = []  # as if only extension metrics: nothing to recompute here

    old = edit_card(good, older, name="old.json")
    assert main(["gate", str(old)]) == 1
    out = capsys.readouterr().out
    assert "the card records no corpus families ($.families): it was written by an older mt-eval" in out
    assert "model missing: not recorded (an older card: run the evaluation again)" in out


def test_the_run_refuses_a_bad_policy_file_naming_file_and_field(tmp_path: Path, corpus: Path, capsys):
    policy = tmp_path / "policy.json"
    for content, says in [('{"min_scorde": 10}', f'{policy} $.min_scorde: unknown field "min_scorde"\n'
                                                 '    fix: did you mean "min_scored"?'),
                          ('{"min_canary_pass_rate": 95}', f"{policy} $.min_canary_pass_rate: must be <= 1, got 95"),
                          ('{"required_covariates": ["gpu"]}',
                           f'{policy} $.required_covariates[0]: the string "gpu" is not a valid value'),
                          ('{"min_scored": 10,}', f"{policy}: invalid JSON at line 1, column 19"),
                          ('{"min_scored": 1e400}', f"{policy} $.min_scored: expected an integer, got the number "
                                                    "Infinity"),  # (not "the number null")
                          ("[1]", f"{policy}: a policy is a JSON object"),
                          ('{"name": "red\\u001b[31m"}', f'{policy} $.name: the policy\'s name "red\\x1b[31m" holds '
                                                         "the control character U+001B")]:
        policy.write_text(content)
        code, card = run(tmp_path / "run", corpus, "--policy", str(policy))
        err = capsys.readouterr().err
        assert code == 1 and card is None and says in err, err
        assert not (tmp_path / "run" / "results.jsonl").exists()  # refused before anything ran
        assert main(["gate", str(tmp_path / "x.json"), "--policy", str(policy)]) == 2
        assert says in capsys.readouterr().err
    assert main(["gate", str(tmp_path / "x.json"), "--policy", str(tmp_path / "none.json")]) == 2
    assert f"{tmp_path / 'none.json'}: cannot read the policy" in capsys.readouterr().err


def test_a_corpus_without_the_families_the_policy_needs_is_named_before_the_run(tmp_path: Path, capsys):
    corpus = family_corpus(tmp_path / "plain.json", canaries=0, negatives=0)
    code, _ = run(tmp_path / "run", corpus)
    err = capsys.readouterr().err
    assert code == 5
    assert (f"warning: corpus {corpus} $.entries[*].family: 0 canary entries; the gate policy default needs at least 1"
            in err)
    assert "0 negative entries" in err


def test_a_translation_only_run_has_no_headline_to_gate(tmp_path: Path, capsys):
    corpus = tmp_path / "plain.jsonl"
    corpus.write_text("".join(json.dumps({"id": str(i), "source": f"Text {i}."}) + "\n" for i in range(3)))
    code = main(["run", "--method", str(SCRIPTED), "--corpus", str(corpus), "--pair", "eng>spa", "--out",
                 str(tmp_path / "run")])
    card = msgspec.json.decode((tmp_path / "run" / "card.json").read_bytes(), type=RunCard)
    assert code == 0 and card.gate is None and card.metrics is None
    assert "no headline: translation only" in capsys.readouterr().out
    assert main(["gate", str(tmp_path / "run" / "card.json")]) == 1


def test_verify_re_applies_the_recorded_verdict(good: Path):
    result = verify_card(good)
    assert result.ok and next(c for c in result.checks if c.name == "gate").passed
    claims_failed = edit_card(good, lambda d: d["gate"].update(passed=False), name="claims.json")
    result = verify_card(claims_failed)
    assert not result.ok
    assert [p.path for p in result.errors] == ["$.gate.passed"]
    assert "the card says failed, its own figures pass" in result.errors[0].message
    lower_bar = edit_card(good, lambda d: d["gate"]["thresholds"].update(min_scored=1), name="lower.json")
    assert [p.path for p in verify_card(lower_bar).errors] == ["$.gate.policy_sha256", "$.gate.checks[2].threshold"]
    families = edit_card(good, lambda d: d["families"]["canary_pass_rate"].update(numerator=1), name="fam.json")
    assert [p.path for p in verify_card(families).errors] == ["$.families.canary_pass_rate", "$.gate.checks[0].figure"]


def test_verify_names_a_recorded_rule_whose_outcome_its_figures_do_not_give(good: Path):
    flipped = edit_card(good, lambda d: d["gate"]["checks"][1].update(passed=False), name="flipped.json")
    errors = verify_card(flipped).errors
    assert [(p.path, p.message) for p in errors] == [
        ("$.gate.checks[1].passed", "negatives: the card says false, its own figures and thresholds give true")]


def test_the_shipped_policy_is_valid_and_every_threshold_is_echoed():
    resolved = load_policy(None)
    assert resolved.source == "shipped default" and resolved.policy.name == "default"
    assert resolved.policy.required_covariates == ["model", "temperature", "tool_permissions", "environment",
                                                   "retry_budget"]
    assert len(resolved.sha256) == 64
    from mt_eval.harness.policy import describe

    assert describe(resolved) == [
        "canaries: at least 1, pass rate at least 100%", "negative controls: at least 1, violation rate at most 0%",
        "scored entries: at least 30", "abstention on scored entries: no limit",
        "covariates recorded: model, temperature, tool_permissions, environment, retry_budget",
        "contamination of the bundle: no evaluation data found (a check not run passes)"]


def test_run_exit_status_interplay_is_documented_in_help(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = capsys.readouterr().out
    assert "5 complete but the gate withheld the headline" in out
    with pytest.raises(SystemExit):
        main(["gate", "--help"])
    out = capsys.readouterr().out
    assert "the shipped default policy:" in out and "scored entries: at least 30" in out
    assert "exit status: 0 every card passes, 1 a card fails the gate" in out


def test_the_example_policy_is_valid_and_the_demo_passes_it(tmp_path: Path, capsys):
    example = Path(__file__).parent.parent / "examples" / "policies" / "no-abstention.json"
    resolved = load_policy(example)
    assert resolved.policy.name == "no-abstention" and resolved.policy.max_abstention_rate == 0.0
    assert "max_abstention_rate" not in resolved.inherited and "min_scored" in resolved.inherited
    assert main(["run", "--demo", "--out", str(tmp_path / "demo"), "--resamples", "50", "--policy", str(example)]) == 0
    assert "(gate passed, policy no-abstention)" in capsys.readouterr().out
    assert main(["run", "--demo", "--out", str(tmp_path / "quiet"), "--resamples", "50", "--quiet"]) == 0
    quiet = capsys.readouterr()
    assert quiet.err == ""  # --quiet: no progress, nothing to warn about
    assert "(gate passed, policy default)" in quiet.out and "families:" not in quiet.out  # the result stays


def test_the_runs_own_status_comes_before_the_gate_and_a_refusal_is_no_failure(tmp_path: Path, capsys):
    no_canaries = family_corpus(tmp_path / "no-canaries.json", canaries=0)
    code, card = run(tmp_path / "partial", no_canaries, *honest(fail=["s00"]))
    assert code == 3 and card is not None and card.status == "partial"  # partial, though the gate failed too
    assert card.gate is not None and not card.gate.passed
    code, card = run(tmp_path / "tolerated", no_canaries, *honest(fail=["s00"]), "--max-errors", "1")
    assert code == 5 and card is not None  # within --max-errors: the run completed, its headline is withheld
    assert "status: partial: 1 of 30 entries failed, within --max-errors 1 (exit status 5)" in capsys.readouterr().err
    corpus = family_corpus(tmp_path / "corpus.json")
    code, card = run(tmp_path / "refused", corpus, *honest(abstain=[], fail=["n0", "n1"]))
    assert code == 0 and card is not None and card.status == "complete"
    assert card.errors == 2 and card.failures == []  # a negative control's error is the refusal it asks for
    assert card.families is not None and [n.outcome for n in card.families.negatives] == ["refused", "refused"]
    assert verify_card(tmp_path / "refused" / "card.json").ok


def test_a_card_scored_without_resamples_has_no_headline(tmp_path: Path, corpus: Path, monkeypatch, capsys):
    """The CLI refuses --resamples 0, but a run requested through the Python API may ask for none: its card then
    has no interval, and a headline is never given without one."""
    import msgspec.structs

    from mt_eval.harness import session

    real = session.run_evaluation
    monkeypatch.setattr(session, "run_evaluation",
                        lambda request: real(msgspec.structs.replace(request, resamples=0)))
    code, card = run(tmp_path / "no-interval", corpus, *honest())
    assert card is not None and card.metrics is not None and card.metrics.bootstrap_resamples == 0
    assert card.gate is not None and failed_rules(card) == ["scored"] and not card.gate.passed
    assert code != 0 and "headline withheld: the gate failed" in capsys.readouterr().out
    assert main(["gate", str(tmp_path / "no-interval" / "card.json")]) != 0
    out = capsys.readouterr().out
    assert "✗ scored" in out and "no headline: 1 rule failed" in out and "\n  headline:" not in out
    assert "the headline metric chrF++ has no 95% interval (the card was scored with 0 bootstrap resamples)" in out


def test_a_card_scored_with_too_few_resamples_has_no_headline(tmp_path: Path, corpus: Path, monkeypatch, capsys):
    """One resample makes an "interval" of one point, which may not even hold the score: the CLI refuses fewer
    than 10 (tests/test_cli.py), and the gate withholds the headline of a card the Python API scored with fewer."""
    import msgspec.structs

    from mt_eval.harness import session

    real = session.run_evaluation
    monkeypatch.setattr(session, "run_evaluation",
                        lambda request: real(msgspec.structs.replace(request, resamples=1)))
    code, card = run(tmp_path / "one", corpus, *honest())
    assert card is not None and card.metrics is not None and card.metrics.bootstrap_resamples == 1
    assert card.gate is not None and failed_rules(card) == ["scored"] and code != 0
    capsys.readouterr()
    assert main(["gate", str(tmp_path / "one" / "card.json")]) != 0
    assert "the headline's 95% interval comes from 1 bootstrap resample, too few to mean anything" in \
        capsys.readouterr().out


def test_failures_are_counted_with_the_negative_controls_aside(tmp_path: Path, capsys):
    """The summary says "36 entries, 2 errors"; the failures' count leaves the controls out (a refusal of one is no
    failure), and says so rather than "2 of 34" with nothing to explain the other number."""
    corpus = family_corpus(tmp_path / "corpus.json")
    code, card = run(tmp_path / "run", corpus, *honest(fail=["s01", "s02"]), "--max-errors", "5")
    assert card is not None and card.errors == 2, code
    assert "2 of 32 entries failed (1 distinct error, the 2 negative controls aside):" in capsys.readouterr().err


def test_a_rate_written_as_a_percentage_is_refused_saying_how_rates_are_written(tmp_path: Path, capsys):
    """The policy's hint for rates was never shown: "must be <= 1, got 95" alone."""
    policy = tmp_path / "policy.json"
    for field, value in [("min_canary_pass_rate", "95"), ("max_abstention_rate", "-0.1")]:
        policy.write_text(f'{{"{field}": {value}}}')
        assert main(["gate", str(tmp_path / "card.json"), "--policy", str(policy)]) == 2
        assert f"{policy} $.{field}: must be " in (err := capsys.readouterr().err)
        assert "\n    fix: write the rate as a fraction from 0 to 1: 0.95 for 95%" in err, err


def test_a_problems_fix_is_shown_under_it_in_the_verdict(tmp_path: Path, capsys):
    """It was printed at the left, out of the rule it belongs to."""
    assert main(["gate", str(tmp_path)]) == 1
    assert (f"      ✗ error: {tmp_path}: this directory holds no card.json, so it is not a run directory\n"
            "        fix: give a run's card.json") in capsys.readouterr().out


def test_a_policy_with_an_empty_name_is_refused(tmp_path: Path, capsys):
    """It judged cards as "policy  (FILE)", and a run recorded the policy "" on its card."""
    policy = tmp_path / "policy.json"
    policy.write_text('{"name": " "}')
    assert main(["gate", str(tmp_path / "card.json"), "--policy", str(policy)]) == 2
    assert f"{policy} $.name: the policy's name is empty\n    fix: name the policy" in capsys.readouterr().err
