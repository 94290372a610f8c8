"""What a run is held to, when its options, its policy and its earlier session disagree: a policy file holding
JSON null is refused as any other non-object, and a gateway policy, freeze manifest or run card given as one is
named as what it is; ``--no-contamination-check`` under a policy that needs the check is refused before anything
runs, as is a gateway policy for a method with no network in the sandbox; a resume whose ``--latency-*`` are not
the run's is refused, naming both; a run whose scored entries fall short of the policy's ``min_scored``, or that
will leave a required covariate missing, is warned of before it runs; a translation-only run, which the gate does
not judge, is not warned that its headline will be withheld."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mt_eval.cli import main
from mt_eval.harness.policy import COVARIATES, PolicyError, load_policy
from rigor_support import family_corpus, honest, run
from test_gate import LLM, scripted_copy


@pytest.mark.parametrize(("content", "kind"), [("null", "null"), ("true", "true"), ('"strict"', 'the string "strict"'),
                                               ("3.5", "the number 3.5"), ("[1]", "an array")])
def test_a_policy_that_is_not_an_object_is_refused_naming_what_it_is(tmp_path: Path, content: str, kind: str,
                                                                      capsys):
    """Before: a policy file holding ``null`` ended ``mt-eval run``, ``gate`` and ``freeze init`` with a
    traceback (TypeError: argument of type 'NoneType' is not iterable)."""
    policy = tmp_path / "policy.json"
    policy.write_text(content)
    with pytest.raises(PolicyError) as raised:
        load_policy(policy)
    assert f"{policy}: a policy is a JSON object, not {kind}" in str(raised.value)
    corpus = family_corpus(tmp_path / "c.json")
    code, card = run(tmp_path / "run", corpus, "--policy", str(policy))
    assert code == 1 and card is None
    assert f"a policy is a JSON object, not {kind}" in capsys.readouterr().err
    assert main(["gate", str(tmp_path / "x.json"), "--policy", str(policy)]) == 2


def test_no_contamination_check_under_a_policy_that_needs_it_verified_clean_is_refused(tmp_path: Path, capsys):
    """Before: the run translated every entry, then withheld its headline (exit status 5) for the check it was
    told to skip."""
    policy = tmp_path / "clean.json"
    policy.write_text('{"contamination": "verified-clean"}')
    corpus = family_corpus(tmp_path / "c.json")
    code, card = run(tmp_path / "run", corpus, "--policy", str(policy), "--no-contamination-check", *honest())
    err = capsys.readouterr().err
    assert code == 1 and card is None, err
    assert not (tmp_path / "run" / "results.jsonl").exists()
    assert (f"--no-contamination-check skips the contamination check, and the gate policy clean ({policy}) needs "
            'it to have found the method\'s bundle "verified-clean"') in err
    policy.write_text('{"contamination": "not-contaminated"}')  # (a check not run passes: nothing contradicts)
    code, card = run(tmp_path / "run", corpus, "--policy", str(policy), "--no-contamination-check", *honest())
    assert code == 0 and card is not None


def test_a_resume_with_other_latency_options_is_refused_naming_both(tmp_path: Path, capsys):
    """Before: the resume went on and the card kept the first session's measurement, the resume's --latency-*
    silently not applied (a --freeze naming the new ones passed too)."""
    corpus = family_corpus(tmp_path / "c.json")
    args = ["--latency-sample", "3", *honest(fail=["s01"])]
    code, card = run(tmp_path / "run", corpus, *args)
    assert code == 3 and card is not None and card.latency is not None and card.latency.hot_entries == 3
    capsys.readouterr()
    code, card = run(tmp_path / "run", corpus, "--latency-sample", "8", "--latency-repetitions", "2", "--resume",
                     *honest(fail=["s01"]))
    err = capsys.readouterr().err
    assert code == 1 and card is not None and card.sessions == 1, err
    assert (f"cannot resume {tmp_path / 'run'}: its latency was measured once, by its first session, and this resume "
            "asks for other latency calls (--latency-sample 3 → 8, --latency-repetitions 3 → 2)") in err
    code, card = run(tmp_path / "run", corpus, *args, "--resume")  # the run's own options: resumed
    assert code == 3 and card is not None and card.sessions == 2


def test_a_resume_whose_latency_sample_times_the_same_entries_goes_on(tmp_path: Path):
    corpus = family_corpus(tmp_path / "c.json", scored=30)
    code, card = run(tmp_path / "run", corpus, "--latency-sample", "40", *honest(fail=["s01"]))
    assert code == 3 and card is not None and card.latency is not None and card.latency.hot_entries == 30
    code, card = run(tmp_path / "run", corpus, "--latency-sample", "50", "--resume", *honest(fail=["s01"]))
    assert code == 3 and card is not None and card.sessions == 2


def test_a_run_that_makes_no_latency_call_says_no_warm_up_call_was_made_and_resumes_with_its_options(
        tmp_path: Path):
    """Before: ``--latency-warmup 7 --latency-sample 0`` made no call and its card said 7 warm-up calls."""
    corpus = family_corpus(tmp_path / "c.json")
    args = ["--latency-warmup", "7", "--latency-sample", "0", *honest(fail=["s01"])]
    code, card = run(tmp_path / "run", corpus, *args)
    assert code == 3 and card is not None and card.latency is not None
    assert (card.latency.warmup_entries, card.latency.hot_entries, card.latency.hot_calls) == (0, 0, 0)
    code, card = run(tmp_path / "run", corpus, *args, "--resume")
    assert code == 3 and card is not None and card.sessions == 2 and card.latency.warmup_entries == 0
    code, card = run(tmp_path / "run", corpus, "--latency-sample", "3", "--resume", *honest(fail=["s01"]))
    assert code == 1 and card.sessions == 2  # (a sample now, none measured then: refused, as another sample is)


def test_a_run_with_fewer_scored_entries_than_min_scored_is_warned_before_it_runs(tmp_path: Path, capsys):
    """Before: canaries and negative controls missing were warned of, a denominator short of min_scored was not:
    the run went on, and its headline was withheld at the end."""
    corpus = family_corpus(tmp_path / "c.json", scored=30)
    code, _card = run(tmp_path / "run", corpus, "--ids", "s00..s09,c0,c1,n0,n1", *honest())
    err = capsys.readouterr().err
    assert code == 5
    assert (f"warning: corpus {corpus}: 10 scored entries; the gate policy default needs at least 30 (its "
            "min_scored), so the headline will be withheld (this run is a selection (14 of the corpus's 34 entries): "
            'run the whole corpus, or select more of its scored entries, or give --policy FILE with a lower '
            '"min_scored")') in err
    small = family_corpus(tmp_path / "small.json", scored=12)
    run(tmp_path / "small", small, *honest())
    assert "12 scored entries; the gate policy default needs at least 30 (its min_scored), so the headline will be " \
           "withheld (score a larger corpus, or give --policy FILE" in capsys.readouterr().err
    code, _card = run(tmp_path / "run", corpus, "--force", *honest())  # (30 of 30: no warning)
    assert code == 0 and "min_scored" not in capsys.readouterr().err


def test_a_translation_only_run_is_not_warned_that_its_headline_will_be_withheld(tmp_path: Path, capsys):
    """Before: a corpus without references (translation only: no headline, no gate) was warned three times that
    its headline would be withheld."""
    source = tmp_path / "source.txt"
    source.write_text("Hello.\nGood morning.\n", encoding="utf-8")
    code = main(["run", "--demo", "--source-file", str(source), "--pair", "eng>spa", "--out", str(tmp_path / "run"),
                 "--quiet", "--latency-sample", "0"])
    err = capsys.readouterr().err
    assert code == 0 and (tmp_path / "run" / "card.json").is_file()
    assert "will be withheld" not in err, err


@pytest.mark.parametrize(("manifest", "given", "missing", "why"), [
    ({"dependencies": [LLM], "dependency_class": "A1"}, ["--temperature", "0"], "model",
     "the method has a model dependency; give --model"),
    ({"dependencies": [LLM], "dependency_class": "A1"}, ["--model", "m-1"], "temperature",
     "the method's model is served; give --temperature"),
    ({"dependencies": None, "dependency_class": None}, ["--model", "m-1", "--temperature", "0"], "tool_permissions",
     'method.json does not list its dependencies (add "dependencies")'),
], ids=["model", "temperature", "tool permissions"])
def test_a_covariate_the_run_will_leave_missing_is_warned_of_before_it_runs(tmp_path: Path, manifest: dict,
                                                                            given: list[str], missing: str, why: str,
                                                                            capsys):
    """Before: a run of a served model without --temperature (say) translated every entry, paid for, and then had
    its headline withheld for the covariate, without a word before."""
    corpus = family_corpus(tmp_path / "c.json")
    method = scripted_copy(tmp_path, **manifest)
    code, card = run(tmp_path / "run", corpus, *honest(), *given, method=method)
    err = capsys.readouterr().err
    assert code == 5 and card is not None and card.gate is not None
    assert card.gate.failures == [f"covariates: {missing} missing: {why}"]
    assert (f"warning: the gate policy default requires the covariate {missing}, which this run will leave missing "
            f"({why}), so the headline will be withheld") in err
    policy = tmp_path / "policy.json"  # (a policy that does not require it: no warning)
    policy.write_text(json.dumps({"required_covariates": [c for c in COVARIATES if c != missing]}))
    code, card = run(tmp_path / "run", corpus, *honest(), *given, "--force", "--policy", str(policy), method=method)
    assert code == 0 and "requires the covariate" not in capsys.readouterr().err
    if missing != "tool_permissions":  # (no option records a dependencies list)
        code, card = run(tmp_path / "full", corpus, *honest(), "--model", "m-1", "--temperature", "0", method=method)
        assert code == 0 and "requires the covariate" not in capsys.readouterr().err


@pytest.mark.parametrize("confined", ["--sandbox", "--official"])
def test_a_gateway_policy_for_a_method_without_network_in_the_sandbox_is_refused(tmp_path: Path, confined: str,
                                                                                 capsys):
    """Before: the run went on, served a gateway the method could not reach, made no substitution replay
    (--substitution-sample silently ignored), and its card recorded the gateway's model as the run's ``model``
    covariate for a method with no model at all."""
    corpus = family_corpus(tmp_path / "c.json")
    policy = tmp_path / "gateway-policy.json"
    policy.write_text(json.dumps({"base_url": "http://127.0.0.1:9/v1", "models": [{"id": "m-2024-01-01"},
                                                                                 {"id": "n-2024-01-01"}]}))
    code, card = run(tmp_path / "run", corpus, confined, "--gateway-policy", str(policy), "--substitution-sample",
                     "3", *honest())
    err = capsys.readouterr().err
    assert code == 1 and card is None, err
    assert not (tmp_path / "run" / "results.jsonl").exists()
    assert (f"--gateway-policy {policy} serves an LLM gateway, and the method's dependency class is S, which has no "
            f"network under {confined}: it could not reach the gateway") in err


@pytest.mark.parametrize(("content", "kind", "option"), [
    ({"base_url": "https://api.example.org/v1", "api_key_env": "KEY", "models": [{"id": "m-2024-01-01"}],
      "token_budget": 1000}, "an LLM gateway policy", "mt-eval run --gateway-policy FILE"),
    ({"freeze_version": "freeze/1", "status": "frozen", "scoring": {}}, "a freeze manifest", "mt-eval run --freeze"),
    ({"card_version": "1", "run_id": "r", "contamination": {"status": "clean"}}, "a run card", "mt-eval gate CARD"),
], ids=["gateway policy", "freeze manifest", "run card"])
def test_another_file_of_mt_evals_given_as_the_gate_policy_is_named_as_what_it_is(tmp_path: Path, content: dict,
                                                                                 kind: str, option: str):
    """Before: a gateway policy given to --policy (both are "policies") was refused with one "unknown field" error
    per field, a run card with 30 of them, none saying what the file was."""
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps(content))
    with pytest.raises(PolicyError) as raised:
        load_policy(policy)
    assert len(raised.value.problems) == 1
    said = str(raised.value)
    assert f"{policy}: this is {kind}, not a gate policy" in said and f"fix: give it with {option}" in said
