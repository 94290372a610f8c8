"""`mt-eval compare` (its covariates: test_compare_covariates.py): latencies only on one hardware label, a
truncated card never against a full one, how many outputs differ, and a case-level bootstrap interval of the score
difference."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gate_policies import LENIENT
from mt_eval.cli import main
from mt_eval.harness.environment import hardware_label
from mt_eval.harness.outcome import EXIT_FAILED
from rigor_support import edit_card, family_corpus, honest, run


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return family_corpus(tmp_path / "corpus.json")


def compare(a: Path, b: Path, *args: str) -> int:
    return main(["compare", str(a), str(b), "--bootstrap", "200", "--trials", "500", *args])


def test_two_runs_of_the_same_method_repeat_run_stability(tmp_path: Path, corpus: Path, capsys):
    assert run(tmp_path / "a", corpus, *honest())[0] == 0
    assert run(tmp_path / "b", corpus, *honest())[0] == 0
    capsys.readouterr()
    assert compare(tmp_path / "a" / "card.json", tmp_path / "b" / "card.json", "--json") == 0
    report = json.loads(capsys.readouterr().out)
    assert report["outputs"]["all"] == {"differ": 0, "of": 34} and report["outputs"]["same_method_code"] is True
    assert report["outputs"]["same_run"] is None
    assert {row["metric"]: (row["delta"], row["p_randomization"]) for row in report["rows"]} == {
        "chrF++": (0.0, 1.0), "BLEU": (0.0, 1.0), "TER": (0.0, 1.0)}  # identical outputs: nothing to test
    assert report["latency"]["compared"] is True and report["allowed_differences"] == []
    card = json.loads((tmp_path / "a" / "card.json").read_text())  # the scores: the verified card's own
    stated = {m["name"]: m["score"] for m in card["metrics"]["metrics"]}
    assert {row["metric"]: (row["a"], row["b"]) for row in report["rows"]} == {
        name: (stated[name], stated[name]) for name in ("chrF++", "BLEU", "TER")}
    assert compare(tmp_path / "a" / "card.json", tmp_path / "b" / "card.json") == 0
    out = capsys.readouterr().out
    assert "outputs that differ: 0 of 34 entries (0 of 30 scored, 0 of 2 canaries, 0 of 2 negative controls)" in out
    assert "two runs of the same method code: repeat-run stability" in out and "not significant" in out


def test_a_run_compared_with_itself_is_said_to_be_one_run_not_its_stability(tmp_path: Path, corpus: Path, capsys):
    """Before, a card compared with itself (or its copy) reported "0 of 34 entries … two runs of the same method
    code: repeat-run stability", a stability no second run had shown."""
    assert run(tmp_path / "a", corpus, *honest())[0] == 0
    card = tmp_path / "a" / "card.json"
    copy = tmp_path / "copy.json"
    copy.write_bytes(card.read_bytes())
    run_id = json.loads(card.read_text())["run_id"]
    capsys.readouterr()
    for other in (card, tmp_path / "a", copy):
        assert compare(card, other) == 0
        out = capsys.readouterr().out
        assert f"0 of 30 scored, 0 of 2 canaries, 0 of 2 negative controls) — A and B are the same run ({run_id}), " \
            "so its outputs cannot differ: compare the card of another run of the method for its repeat-run " \
            "stability" in out, out
        assert "two runs of the same method code" not in out
    assert compare(card, copy, "--json") == 0
    assert json.loads(capsys.readouterr().out)["outputs"]["same_run"] == run_id


def test_json_of_a_card_whose_name_is_not_utf8_is_utf8(tmp_path: Path, corpus: Path, capsys):
    """Before, the comparison ended with "'utf-8' codec can't encode character '\\udcff' …" and no report."""
    import shutil

    assert run(tmp_path / "a", corpus, *honest())[0] == 0
    assert run(tmp_path / "b", corpus, *honest())[0] == 0
    shutil.copytree(tmp_path / "b", tmp_path / "b-\udcff")  # (the byte 0xff in the directory's name)
    capsys.readouterr()
    assert compare(tmp_path / "a" / "card.json", tmp_path / "b-\udcff" / "card.json", "--json", "--quiet") == 0
    out = capsys.readouterr().out
    out.encode("utf-8")
    assert json.loads(out)["b"] == str(tmp_path / "b-\\udcff" / "card.json")


def test_outputs_that_differ_and_the_interval_of_the_difference(tmp_path: Path, corpus: Path, capsys):
    sources = {f"Sentence number {i}.": f"Frase número {i}." for i in range(30)}
    assert run(tmp_path / "copy", corpus, *honest())[0] == 0
    better = {**sources, "Canary 0.": "Canario 0.", "Canary 1.": "Canario 1."}
    assert run(tmp_path / "good", corpus, *honest(translate=better))[0] == 0
    capsys.readouterr()
    assert compare(tmp_path / "copy" / "card.json", tmp_path / "good" / "card.json", "--json",
                   "--allow-diff", "params") == 0
    report = json.loads(capsys.readouterr().out)
    chrf = next(row for row in report["rows"] if row["metric"] == "chrF++")
    assert chrf["delta"] > 50 and 0 < chrf["delta_ci_low"] <= chrf["delta"] <= chrf["delta_ci_high"]
    assert report["outputs"]["scored"] == {"differ": 30, "of": 30} and report["outputs"]["canary"]["differ"] == 0
    assert report["outputs"]["all"]["differ"] == 30 and len(report["outputs"]["examples"]) == 10


def test_runs_into_different_languages_are_not_compared(tmp_path: Path, corpus: Path, capsys):
    assert run(tmp_path / "spa", corpus, *honest())[0] == 0
    assert run(tmp_path / "cat", corpus, *honest(), "--pair", "eng>cat", "--accept-doubt", "pair-mismatch")[0] == 0
    capsys.readouterr()
    assert compare(tmp_path / "spa" / "card.json", tmp_path / "cat" / "card.json") == 1
    assert capsys.readouterr().err.endswith(
        "the cards translate different pairs (A: eng>spa; B: eng>cat); paired tests compare translations into the "
        "same language, scored against the same references\n")


def test_a_refusal_with_json_prints_why_as_json_as_well_as_on_stderr(tmp_path: Path, corpus: Path, capsys):
    assert run(tmp_path / "spa", corpus, *honest())[0] == 0
    assert run(tmp_path / "cat", corpus, *honest(), "--pair", "eng>cat", "--accept-doubt", "pair-mismatch")[0] == 0
    spa, cat = tmp_path / "spa" / "card.json", tmp_path / "cat" / "card.json"
    capsys.readouterr()
    assert compare(spa, cat, "--json") == 1
    shown = capsys.readouterr()
    why = ("the cards translate different pairs (A: eng>spa; B: eng>cat); paired tests compare translations into the "
           "same language, scored against the same references")
    assert json.loads(shown.out) == {"a": str(spa), "b": str(cat), "compared": False, "reason": why}
    assert shown.err.endswith(f"mt-eval compare: {why}\n")
    edited = edit_card(spa, lambda data: data.update(run_id="another"), reseal=False)
    assert compare(spa, edited, "--json", "--quiet") == 1
    shown = capsys.readouterr()
    refusal = json.loads(shown.out)
    assert refusal["compared"] is False and refusal["reason"].startswith(f"{edited} does not verify, so it cannot "
                                                                         "be compared:")
    assert f"mt-eval compare: {edited} does not verify, so it cannot be compared:" in shown.err
    assert main(["verify", str(edited), "--json"]) == 1
    verified = json.loads(capsys.readouterr().out)[0]  # the card's check, as verify --json shows it
    assert refusal["verification"].keys() == verified.keys() and refusal["verification"]["verified"] is False
    assert refusal["verification"]["problems"] == verified["problems"]


def test_latencies_are_compared_only_on_the_same_hardware(tmp_path: Path, corpus: Path, capsys):
    assert run(tmp_path / "a", corpus, *honest())[0] == 0
    a = tmp_path / "a" / "card.json"
    big = {"cpu_model": "Big Box", "cpu_count": 64, "memory_gib": 512.0, "gpus": ["NVIDIA H100"]}  # (and its label)
    elsewhere = edit_card(a, lambda d: d["environment"].update(**big, hardware=hardware_label(*big.values())))
    capsys.readouterr()
    assert compare(a, elsewhere, "--json") == 0  # the scores are compared, the latencies are not
    latency = json.loads(capsys.readouterr().out)["latency"]
    assert latency["compared"] is False and "the hardware differs" in latency["reason"]
    assert compare(a, elsewhere) == 0
    assert "latency: not compared: the hardware differs (A: " in capsys.readouterr().out
    assert compare(a, elsewhere, "--allow-diff", "hardware") == 0
    assert "latency (different hardware, allowed): cold A " in capsys.readouterr().out


def test_latencies_not_measured_are_left_out_with_the_reason(tmp_path: Path, corpus: Path, capsys):
    assert run(tmp_path / "a", corpus, *honest())[0] == 0
    assert run(tmp_path / "b", corpus, *honest(), "--latency-sample", "0")[0] == 0
    capsys.readouterr()
    assert compare(tmp_path / "a" / "card.json", tmp_path / "b" / "card.json") == 0
    out = capsys.readouterr().out
    assert "latency: not compared: B's latency was not measured (a run with --latency-sample 0" in out
    assert "—" not in out.split("latency", 1)[1].splitlines()[0]
    assert compare(tmp_path / "b" / "card.json", tmp_path / "b" / "card.json", "--json") == 0
    latency = json.loads(capsys.readouterr().out)["latency"]
    assert latency["compared"] is False and latency["reason"].startswith("A and B's latency was not measured")


def test_a_truncated_card_is_never_compared_with_a_full_one(tmp_path: Path, corpus: Path, capsys):
    assert run(tmp_path / "full", corpus, *honest())[0] == 0
    code, card = run(tmp_path / "part", corpus, *honest(), "--limit", "31", *LENIENT)
    assert code == 0 and card is not None and card.selection is not None
    assert (card.selection.entries_selected, card.selection.entries_in_corpus, card.selection.limit) == (31, 34, 31)
    assert len(card.selection.subset_sha256) == 64
    capsys.readouterr()
    assert compare(tmp_path / "full" / "card.json", tmp_path / "part" / "card.json") == 1
    assert "the cards ran different parts of the corpus (A: the whole corpus, 34 entries; B: 31 of 34 entries: " \
           "--limit 31, subset sha256 " in capsys.readouterr().err


def test_the_p_values_are_sacrebleus_paired_tests_on_the_two_runs(tmp_path: Path, corpus: Path, capsys, monkeypatch):
    half = {f"Sentence number {i}.": f"Frase número {i}." for i in range(0, 30, 2)}
    assert run(tmp_path / "copy", corpus, *honest(), "--embed-results", "never")[0] == 0  # read from its log
    _, card = run(tmp_path / "half", corpus, *honest(translate=half))
    capsys.readouterr()
    assert compare(tmp_path / "copy" / "card.json", tmp_path / "half" / "card.json", "--json",
                   "--allow-diff", "params") == 0
    shown = capsys.readouterr()
    report = json.loads(shown.out)
    assert report["outputs"]["scored"] == {"differ": 15, "of": 30}
    steps = [line.split("]: ", 1)[1] for line in shown.err.splitlines()]  # each step on stderr as it starts
    assert steps == [f"verifying A, {tmp_path / 'copy' / 'card.json'} (its metrics are recomputed below, from the "
                     "statistics the tests use)",
                     f"verifying B, {tmp_path / 'half' / 'card.json'}", "reading both runs' results in corpus order",
                     "segment statistics of 30 scored entries, both runs, 3 metrics",
                     "recomputing both cards' metrics from them, with each card's own bootstrap",
                     *(f"{name}: paired bootstrap (200 resamples) and approximate randomization (500 trials)"
                       for name in ("chrF++", "BLEU", "TER"))]
    assert shown.err.startswith("mt-eval compare [0.")
    assert compare(tmp_path / "copy" / "card.json", tmp_path / "half" / "card.json", "--quiet",
                   "--allow-diff", "params") == 0
    assert capsys.readouterr().err == ""
    from sacrebleu.significance import PairedTest

    from mt_eval.harness.scoring import make_metrics

    assert card is not None
    scored = [r for r in card.results if r.id.startswith("s")]
    copied = [f"Sentence number {int(r.id[1:])}." for r in scored]
    references = [[f"Frase número {int(r.id[1:])}." for r in scored]]
    systems = [("A", copied), ("B", [r.predicted or "" for r in scored])]
    monkeypatch.setenv("SACREBLEU_SEED", "12345")
    _, bs = PairedTest(systems, make_metrics(), references, test_type="bs", n_samples=200)()
    _, ar = PairedTest(systems, make_metrics(), references, test_type="ar", n_samples=500)()
    keys = [key for key in bs if key != "System"]
    expected = {name: (round(bs[key][0].score, 4), round(bs[key][1].score, 4), bs[key][1].p_value,
                       ar[key][1].p_value) for name, key in zip(make_metrics(), keys, strict=True)}
    assert {row["metric"]: (row["a"], row["b"], row["p_bootstrap"], row["p_randomization"])
            for row in report["rows"]} == expected
    assert all(row["delta_ci_low"] <= row["delta"] <= row["delta_ci_high"] for row in report["rows"])


def test_different_outputs_with_the_same_score_are_no_significant_difference(tmp_path: Path, corpus: Path, capsys):
    """BLEU 0 against BLEU 0 (no n-gram of either run's outputs in the references): a difference of 0, p = 1,
    where sacrebleu's count of samples beyond the observed difference gave 1/(n+1), "significant"."""
    canaries = {f"Canary {i}.": f"Canario {i}." for i in range(2)}
    for name, word in (("a", "zzz"), ("b", "qqq")):
        nonsense = {**{f"Sentence number {i}.": word for i in range(30)}, **canaries}
        assert run(tmp_path / name, corpus, *honest(translate=nonsense), *LENIENT)[1] is not None
    capsys.readouterr()
    compare(tmp_path / "a" / "card.json", tmp_path / "b" / "card.json", "--json", "--allow-diff", "params")
    report = json.loads(capsys.readouterr().out)
    assert report["outputs"]["scored"] == {"differ": 30, "of": 30}
    bleu = next(row for row in report["rows"] if row["metric"] == "BLEU")
    assert (bleu["a"], bleu["b"], bleu["delta"], bleu["p_bootstrap"], bleu["p_randomization"]) == (0, 0, 0, 1, 1)
    compare(tmp_path / "a" / "card.json", tmp_path / "b" / "card.json", "--allow-diff", "params")
    [line] = [line for line in capsys.readouterr().out.splitlines() if line.startswith("BLEU")]
    assert line.endswith("not significant at 0.05")


def test_a_failed_run_is_refused_and_a_partial_one_is_said_to_be(tmp_path: Path, corpus: Path, capsys):
    """A failed run has no scores (never a chrF++ of 0 that looks like a result); a partial one is compared with
    its failed entries scored as empty translations, and the report says so."""
    assert run(tmp_path / "a", corpus, *honest())[0] == 0
    every = [*(f"s{i:02d}" for i in range(30)), "c0", "c1", "n0", "n1"]
    assert run(tmp_path / "failed", corpus, *honest(fail=every), *LENIENT)[0] == EXIT_FAILED
    said = "32 of 32 entries failed (1 distinct error, the 2 negative controls aside)"  # (their refusal: no failure)
    assert f"{said}:\n" in capsys.readouterr().err  # (the run's words; before, compare said 34 of 34)
    assert run(tmp_path / "partial", corpus, *honest(fail=["s03", "s07"]), *LENIENT)[0] not in (0, EXIT_FAILED)
    capsys.readouterr()
    assert compare(tmp_path / "a" / "card.json", tmp_path / "failed" / "card.json") == 1
    err = capsys.readouterr().err
    assert f"{tmp_path / 'failed' / 'card.json'} is a failed run: {said}, e.g. asked to fail; " in err
    assert "it has no scores to compare: fix what failed and run it again" in err
    assert compare(tmp_path / "a" / "card.json", tmp_path / "partial" / "card.json", "--allow-diff", "params") == 0
    said = "note: B is a partial run: 2 of its 30 scored entries failed, each scored as an empty translation"
    assert said in capsys.readouterr().out


def test_a_partial_runs_note_counts_its_failed_scored_entries_not_its_failed_canaries(tmp_path: Path, corpus: Path,
                                                                                    capsys):
    """A failed canary is not scored: the note counts the scored entries scored as empty translations (it had said
    "2 entries failed, each scored as an empty translation" of one scored entry and one canary); a partial run whose
    only failures are canaries has no scored entry scored so."""
    assert run(tmp_path / "a", corpus, *honest())[0] == 0
    for name, failing in (("mixed", ["s03", "c0"]), ("canary", ["c1"])):
        assert run(tmp_path / name, corpus, *honest(fail=failing), *LENIENT)[0] not in (0, EXIT_FAILED)
    capsys.readouterr()
    assert compare(tmp_path / "a" / "card.json", tmp_path / "mixed" / "card.json", "--allow-diff", "params") == 0
    out = capsys.readouterr().out
    assert "note: B is a partial run: 1 of its 30 scored entries failed, each scored as an empty translation" in out
    assert compare(tmp_path / "canary" / "card.json", tmp_path / "a" / "card.json", "--allow-diff", "params") == 0
    out = capsys.readouterr().out
    assert ("note: A is a partial run: none of its scored entries failed (its failed entries are canaries or "
            "negative controls, which are not scored)") in out
    assert compare(tmp_path / "a" / "card.json", tmp_path / "mixed" / "card.json", "--allow-diff", "params",
                   "--json") == 0
    report = json.loads(capsys.readouterr().out)
    assert report["scored"] == {"entries": 30, "failed": {"a": 0, "b": 1}, "abstained": {"a": 0, "b": 0}}


@pytest.mark.parametrize(("flag", "least", "most"), [("--bootstrap", 10, 100000), ("--trials", 1, 1000000)])
def test_resamples_and_trials_have_their_least(flag: str, least: int, most: int, capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["compare", "a.json", "b.json", flag, "0"])
    assert stopped.value.code == 2
    assert f"argument {flag}: must be from {least} to {most}, got 0" in capsys.readouterr().err


@pytest.mark.parametrize("outputs", ["same", "different"])
def test_large_cards_are_verified_from_the_statistics_the_tests_use(tmp_path: Path, outputs: str, capsys):
    """From 500 scored entries each card's statistics are extracted once, in worker processes, and serve both to
    recompute its metrics (as `mt-eval verify` does, with the card's own bootstrap: here a seed and a draw scheme
    apart) and to test; two runs with the same outputs have one extraction. An interval altered and resealed is
    refused on either side, named as `mt-eval verify` names it."""
    from mt_eval.harness.verify import verify_card

    many = family_corpus(tmp_path / "many.json", scored=600)
    half = {} if outputs == "same" else {f"Sentence number {i}.": f"Frase número {i}." for i in range(0, 600, 2)}
    assert run(tmp_path / "a", many, *honest(), *LENIENT, "--embed-results", "never")[0] == 0
    assert run(tmp_path / "b", many, *honest(**({"translate": half} if half else {})), *LENIENT, "--seed", "7",
               "--bootstrap", "upstream")[0] == 0
    a, b = tmp_path / "a" / "card.json", tmp_path / "b" / "card.json"
    allowed = ["--allow-diff", "seed", *(["--allow-diff", "params"] if half else [])]  # (B's --param translate)
    capsys.readouterr()
    assert compare(a, b, "--json", *allowed) == 0
    shown = capsys.readouterr()
    which = "A's run (B's outputs are the same)" if outputs == "same" else "both runs"
    assert f"segment statistics of 600 scored entries, {which}, 3 metrics" in shown.err
    assert json.loads(shown.out)["outputs"]["scored"]["differ"] == (0 if outputs == "same" else 300)

    def widen(data: dict) -> None:
        data["metrics"]["metrics"][1]["ci_high"] = round(data["metrics"]["metrics"][1]["ci_high"] + 0.5, 4)

    for side, card in enumerate((a, b)):
        edited = edit_card(card, widen)  # resealed: only recomputing the metrics tells
        assert [p.path for p in verify_card(edited).errors] == ["$.metrics.metrics[1].ci_high"]
        pair = (edited, b) if side == 0 else (a, edited)
        assert compare(*pair, *allowed) == 1
        err = capsys.readouterr().err
        assert f"{edited} does not verify, so it cannot be compared" in err
        assert "$.metrics.metrics[1].ci_high" in err and "BLEU ci_high: the card says" in err


def test_extension_metrics_are_recomputed_by_compare(tmp_path: Path, corpus: Path, monkeypatch, capsys):
    (tmp_path / "length_metric.py").write_text(
        "from mt_eval.hookspecs import hookimpl\n\n"
        "@hookimpl\ndef register_metrics(register):\n"
        "    register('chars', lambda hyps, refs: sum(map(len, hyps)) / len(hyps))\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    better = {f"Sentence number {i}.": f"Frase número {i}." for i in range(30)}
    assert run(tmp_path / "a", corpus, *honest(), "--extension", "length_metric", "--embed-results", "never")[0] == 0
    assert run(tmp_path / "b", corpus, *honest(translate=better), *LENIENT, "--extension", "length_metric")[0] == 0
    a, b = tmp_path / "a" / "card.json", tmp_path / "b" / "card.json"
    assert compare(a, b, "--extension", "length_metric", "--allow-diff", "params") == 0

    def change(data: dict) -> None:
        data["metrics"]["metrics"][-1]["score"] = 1.0

    edited = edit_card(b, change)
    capsys.readouterr()
    assert compare(a, edited, "--extension", "length_metric", "--allow-diff", "params") == 1
    assert "$.metrics.metrics[3].score" in capsys.readouterr().err
    # not recomputed without its extension: a warning, as from `mt-eval verify`
    assert compare(a, edited, "--allow-diff", "params") == 0


@pytest.mark.parametrize("seed", [None, "7"])
def test_two_runs_with_the_same_outputs_and_draws_have_each_interval_drawn_once(tmp_path: Path, corpus: Path,
                                                                               monkeypatch, seed: str | None):
    from mt_eval.harness import scorer_processes

    assert run(tmp_path / "a", corpus, *honest())[0] == 0
    assert run(tmp_path / "b", corpus, *honest(), *(("--seed", seed) if seed else ()))[0] == 0
    drawn: list[int] = []
    score_statistics = scorer_processes.score_statistics

    def counted(jobs, count):
        drawn.append(len(jobs))
        return score_statistics(jobs, count)

    monkeypatch.setattr(scorer_processes, "score_statistics", counted)
    assert compare(tmp_path / "a" / "card.json", tmp_path / "b" / "card.json", "--allow-diff", "seed") == 0
    assert drawn == [3 if seed is None else 6]  # one interval per metric, for both cards, unless their seeds differ


def test_a_card_whose_records_disagree_with_its_results_is_refused(tmp_path: Path, corpus: Path, capsys):
    """The family record recounted from the results (a step of `mt-eval verify` that `compare` runs itself,
    beside recomputing the metrics): altered and resealed, it is refused, named as `verify` names it."""
    assert run(tmp_path / "a", corpus, *honest())[0] == 0
    assert run(tmp_path / "b", corpus, *honest(), "--embed-results", "never")[0] == 0

    def change(data: dict) -> None:
        data["families"]["canary_pass_rate"]["numerator"] = 0

    edited = edit_card(tmp_path / "b" / "card.json", change)
    capsys.readouterr()
    assert compare(tmp_path / "a" / "card.json", edited) == 1
    err = capsys.readouterr().err
    assert f"{edited} does not verify, so it cannot be compared" in err and "$.families.canary_pass_rate" in err
