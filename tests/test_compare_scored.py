"""What `mt-eval compare` says of the scores it compares: a card without scores is refused (never a chrF++ of 0
compared), the scored entries abstained on are said as the failed ones are, a metric left out is named with why,
and the report says it compared."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gate_policies import LENIENT
from mt_eval.cli import main
from mt_eval.harness import scoring
from rigor_support import family_corpus, honest, run

SCORED = [f"s{i:02d}" for i in range(30)]


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return family_corpus(tmp_path / "corpus.json")


def compare(a: Path, b: Path, *args: str) -> int:
    return main(["compare", str(a), str(b), "--bootstrap", "100", "--trials", "100", "--quiet", *args])


def test_a_card_whose_every_scored_entry_was_abstained_on_is_refused(tmp_path: Path, corpus: Path, capsys):
    """Before, such a card (no metrics, status complete) was compared as scoring chrF++ 0.00: "A better, significant
    at 0.05", of a run the gate gives no headline."""
    assert run(tmp_path / "a", corpus, *honest())[0] == 0
    code, card = run(tmp_path / "none", corpus, *honest(abstain=[*SCORED, "n0", "n1"]))
    assert code == 5 and card is not None and card.metrics is None and card.status == "complete"
    capsys.readouterr()
    none = tmp_path / "none" / "card.json"
    assert compare(tmp_path / "a" / "card.json", none) == 1
    said = (f"{none} has no scores to compare: no scored entry was translated: of 30, 30 abstained on and 0 failed "
            "(the card's results say why); compare a run of the method that translated scored entries")
    assert capsys.readouterr().err.endswith(f"mt-eval compare: {said}\n")
    assert compare(none, tmp_path / "a" / "card.json", "--json") == 1
    assert json.loads(capsys.readouterr().out) == {"a": str(none), "b": str(tmp_path / "a" / "card.json"),
                                                   "compared": False, "reason": said}


def test_scored_entries_abstained_on_are_said_as_the_failed_ones_are(tmp_path: Path, corpus: Path, capsys):
    """Before, the report said nothing of a run's abstentions, each scored as an empty translation (`mt-eval run`
    says them with its headline); its JSON counted the failed ones only."""
    assert run(tmp_path / "a", corpus, *honest())[0] == 0
    assert run(tmp_path / "b", corpus, *honest(abstain=["s03", "s07", "n0", "n1"], fail=["s09"]), *LENIENT)[1]
    capsys.readouterr()
    a, b = tmp_path / "a" / "card.json", tmp_path / "b" / "card.json"
    assert compare(a, b, "--allow-diff", "params") == 0
    out = capsys.readouterr().out
    assert "note: B is a partial run: 1 of its 30 scored entries failed, each scored as an empty translation\n" \
        "note: B abstained on 2 of its 30 scored entries, each scored as an empty translation\n" in out
    assert "note: A" not in out
    assert compare(a, b, "--allow-diff", "params", "--json") == 0
    report = json.loads(capsys.readouterr().out)
    assert report["compared"] is True and report["not_compared"] == []
    assert report["scored"] == {"entries": 30, "failed": {"a": 0, "b": 1}, "abstained": {"a": 0, "b": 2}}


ECHO = """
class EchoMethod:
    async def translate(self, entries, config):
        return [{"id": e["id"], "predicted": e["source"].lower()} for e in entries]
"""


def test_a_metric_left_out_is_named_with_why(make_plugin, tmp_path: Path, monkeypatch, capsys):
    """Before, TER not computed on a run's outputs (`metrics.not_computed`) vanished from the comparison: its rows
    were chrF++ and BLEU, and nothing said where TER went."""
    monkeypatch.setattr(scoring, "TER_MAX_WORD_PAIRS", 300)
    long = " ".join(f"palabra{i}" for i in range(20))  # 400 word pairs against itself
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": key, "source": text.upper(), "reference": text}) + "\n"
                              for key, text in (("1", "hola amigo"), ("2", long), ("3", "buenos dias"))))
    plugin = make_plugin(files={"pipeline.py": ECHO}, name="echo")
    cards = []
    for name in ("a", "b"):
        assert main(["run", "--method", str(plugin), "--corpus", str(corpus), "--pair", "spa>spa", "--out",
                     str(tmp_path / name), "--latency-sample", "0", "--resamples", "100", *LENIENT]) == 0
        cards.append(tmp_path / name / "card.json")
    why = json.loads(cards[0].read_text())["metrics"]["not_computed"]["TER"]
    assert why.startswith("TER not computed: '2' (scored entry 2) has 20 hypothesis words")
    capsys.readouterr()
    assert compare(*cards) == 0
    assert f"\nTER: not compared: A's and B's outputs: {why}\n" in capsys.readouterr().out
    assert compare(*cards, "--json") == 0
    report = json.loads(capsys.readouterr().out)
    assert [row["metric"] for row in report["rows"]] == ["chrF++", "BLEU"]
    assert report["not_compared"] == [{"metric": "TER", "a": why, "b": why}]


def test_cards_of_different_corpora_are_named_with_their_files_and_the_fix(tmp_path: Path, corpus: Path, capsys):
    (tmp_path / "other").mkdir()
    other = family_corpus(tmp_path / "other" / "corpus.json", scored=31)  # (the same name, another file)
    assert run(tmp_path / "a", corpus, *honest())[0] == 0
    assert run(tmp_path / "b", other, *honest())[0] == 0
    capsys.readouterr()
    assert compare(tmp_path / "a" / "card.json", tmp_path / "b" / "card.json") == 1
    err = capsys.readouterr().err
    assert f"the cards come from different corpora (A: corpus, {corpus}, sha256 " in err
    assert f"; B: corpus, {other}, sha256 " in err
    assert err.endswith("paired tests need the same entries: run both methods on the same corpus file\n")
