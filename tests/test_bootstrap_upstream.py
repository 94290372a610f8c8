"""``mt-eval run --bootstrap upstream``: the upstream harness's interval draws, reproduced exactly.

``fixtures/upstream-bootstrap.json`` holds what ``compute_all_cis`` of the upstream package (mt-eval-harness
0.4.0, 200 resamples, seed 12345) reported for 40 entries; the optional ``nox -s upstream`` session checks the
same against the installed package on the benchmark's 1,000 entries."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from mt_eval.harness.metric_statistics import upstream_draws
from mt_eval.harness.scoring import score
from mt_eval.harness.verify import verify_card
from rigor_support import SCRIPTED, edit_card, family_corpus, honest, params, run

FIXTURE = Path(__file__).parent / "fixtures" / "upstream-bootstrap.json"


def test_the_upstream_intervals_are_reproduced_to_the_last_place():
    stored = json.loads(FIXTURE.read_text())
    hypotheses = [e["predicted"] for e in stored["entries"]]
    references = [e["reference"] for e in stored["entries"]]
    scores = score(hypotheses, [references], resamples=stored["n_bootstrap"], seed=stored["seed"],
                   bootstrap="upstream")
    ours = {m.name: (m.score, m.ci_low, m.ci_high) for m in scores.metrics}
    for name, key in (("chrF++", "corpus_chrf"), ("BLEU", "corpus_bleu")):
        theirs = stored["intervals"][key]
        assert ours[name] == (theirs["score"], theirs["ci_lower"], theirs["ci_upper"]), name
    fast = {m.name: (m.ci_low, m.ci_high) for m in score(hypotheses, [references], resamples=200).metrics}
    assert fast["BLEU"] != ours["BLEU"][1:]  # the default draws differ: only the scheme makes them equal
    assert scores.bootstrap == "upstream"


def test_the_draws_are_the_upstream_random_sequence():
    rng = random.Random(99)
    expected = [[rng.randint(0, 4) for _ in range(5)] for _ in range(3)]
    assert list(upstream_draws(5, 3, 99)) == expected


def test_an_unknown_bootstrap_is_refused():
    with pytest.raises(ValueError, match="fast, upstream"):
        score(["a"], [["a"]], bootstrap="other")  # type: ignore[arg-type]


def test_a_card_records_the_upstream_bootstrap_and_verifies_with_it(tmp_path: Path):
    corpus = family_corpus(tmp_path / "corpus.json")
    code, card = run(tmp_path / "run", corpus, *honest(), "--bootstrap", "upstream")
    assert code == 0 and card is not None and card.metrics is not None
    assert card.metrics.bootstrap == "upstream"
    card_path = tmp_path / "run" / "card.json"
    assert verify_card(card_path).ok
    fast = run(tmp_path / "fast", corpus, *honest())[1]
    assert fast is not None and fast.metrics is not None and fast.metrics.bootstrap == "fast"

    def claim_fast(data: dict) -> None:
        data["metrics"]["bootstrap"] = "fast"

    relabelled = verify_card(edit_card(card_path, claim_fast, reseal=True))
    assert not relabelled.ok  # the intervals are recomputed with the draws the card names
    assert any("ci_" in p.path for p in relabelled.errors)


def test_one_scored_entry_has_no_upstream_interval_and_the_gate_says_why(tmp_path: Path, capsys):
    """The upstream harness reports no interval over a single entry (every resample is that entry): neither does
    the card, which still verifies, and the gate names the reason rather than asking for resamples."""
    from mt_eval.cli import main

    corpus = tmp_path / "one.tsv"
    corpus.write_text("the cat sat\tthe cat sat on\n")
    out = tmp_path / "run"
    main(["run", "--method", str(SCRIPTED), "--corpus", str(corpus), "--pair", "eng-spa", "--out", str(out),
          "--quiet", "--resamples", "100", "--bootstrap", "upstream", "--latency-sample", "0"])
    card = json.loads((out / "card.json").read_text())
    assert [(m["ci_low"], m["ci_high"]) for m in card["metrics"]["metrics"]] == [(None, None)] * 3
    assert verify_card(out / "card.json").ok
    capsys.readouterr()
    assert main(["gate", str(out / "card.json")]) == 1
    said = capsys.readouterr().out
    assert "the upstream bootstrap gives none when fewer than 2 scored entries were translated (1 of 1; score" in said
    assert "--resamples N" not in said


@pytest.mark.parametrize("embed", ["always", "never"])
def test_entries_that_failed_do_not_make_an_upstream_interval(tmp_path: Path, capsys, embed: str):
    """The upstream harness counts the entries translated without an error, not those scored: with one of five
    translated there is no interval, though the failed four score beside it as empty translations (the default
    bootstrap still draws one). The card verifies, from its results or from its log, compares, and the gate says
    why."""
    from mt_eval.cli import main

    corpus = family_corpus(tmp_path / "corpus.json", scored=5, canaries=0, negatives=0)
    failing = params(fail=["s01", "s02", "s03", "s04"])
    card = run(tmp_path / "up", corpus, *failing, "--bootstrap", "upstream", "--embed-results", embed)[1]
    assert card is not None and card.metrics is not None and card.metrics.segments == 5
    assert [(m.ci_low, m.ci_high) for m in card.metrics.metrics] == [(None, None)] * 3
    assert verify_card(tmp_path / "up" / "card.json").ok
    fast = run(tmp_path / "fast", corpus, *failing, "--embed-results", embed)[1]
    assert fast is not None and fast.metrics is not None
    assert all(m.ci_low is not None for m in fast.metrics.metrics)
    two = params(fail=["s02", "s03", "s04"])  # two translated: upstream draws its interval
    both = run(tmp_path / "two", corpus, *two, "--bootstrap", "upstream", "--embed-results", embed)[1]
    assert both is not None and both.metrics is not None and all(m.ci_low is not None for m in both.metrics.metrics)
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "up" / "card.json"), str(tmp_path / "two" / "card.json"),
                 "--allow-diff", "params"]) in (0, 1)
    assert "does not verify" not in capsys.readouterr().err
    main(["gate", str(tmp_path / "up" / "card.json")])
    assert "fewer than 2 scored entries were translated (1 of 5: the others failed; score" in capsys.readouterr().out


def test_the_gate_says_the_one_other_entry_failed(tmp_path: Path, capsys):
    from mt_eval.cli import main

    corpus = family_corpus(tmp_path / "corpus.json", scored=2, canaries=0, negatives=0)
    run(tmp_path / "up", corpus, *params(fail=["s01"]), "--bootstrap", "upstream")
    capsys.readouterr()
    main(["gate", str(tmp_path / "up" / "card.json")])
    assert "fewer than 2 scored entries were translated (1 of 2: the other failed; score" in capsys.readouterr().out


def test_entries_abstained_on_count_for_an_upstream_interval_as_upstream_counts_them(tmp_path: Path):
    """The upstream harness knows no abstentions: it keeps every result without an error (its ``compute_all_cis``
    drops only those with one), an empty translation too. So one translated entry beside four abstained on has an
    interval, as the upstream harness gives one, where four failed entries leave none; the card verifies."""
    corpus = family_corpus(tmp_path / "corpus.json", scored=5, canaries=0, negatives=0)
    card = run(tmp_path / "up", corpus, *params(abstain=["s01", "s02", "s03", "s04"]), "--bootstrap", "upstream")[1]
    assert card is not None and card.metrics is not None and card.families is not None
    assert card.families.abstention_rate.numerator == 4 and card.metrics.segments == 5
    assert all(m.ci_low is not None and m.ci_high is not None for m in card.metrics.metrics)
    assert verify_card(tmp_path / "up" / "card.json").ok
