"""TER on a very long segment: sacrebleu's TER takes memory growing with a segment's hypothesis words × reference
words (a 70,000-word entry was killed at 23.8 GB after its translation, and no card was written). Beyond
`TER_MAX_WORD_PAIRS` a run computes no TER, says so as scoring starts, and its card records why; verify recomputes
it the same way, and compare works on the metrics two cards share. The limit is patched small here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gate_policies import LENIENT
from mt_eval.cli import main
from mt_eval.harness import scoring, verify

LONG = " ".join(f"palabra{i}" for i in range(20))  # 20 words: 400 word pairs against itself
ROWS = [("1", "hola amigo"), ("2", LONG), ("3", "buenos dias a todos")]
SHORT_FOR_LONG = """
class EchoMethod:
    async def translate(self, entries, config):
        return [{"id": e["id"], "predicted": e["source"].lower() if e["id"] != "2" else "palabra0"} for e in entries]
"""
ECHO = """
class EchoMethod:
    async def translate(self, entries, config):
        return [{"id": e["id"], "predicted": e["source"].lower()} for e in entries]
"""


@pytest.fixture
def limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scoring, "TER_MAX_WORD_PAIRS", 300)


def _run(make_plugin, tmp_path: Path, name: str, pipeline: str = ECHO) -> Path:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": key, "source": text.upper(), "reference": text}) + "\n"
                              for key, text in ROWS), encoding="utf-8")
    plugin = make_plugin(files={"pipeline.py": pipeline}, name=f"method-{name}")
    assert main(["run", "--method", str(plugin), "--corpus", str(corpus), "--pair", "spa>spa", "--out",
                 str(tmp_path / name), "--latency-sample", "0", "--resamples", "100", *LENIENT]) == 0
    return tmp_path / name / "card.json"


def test_a_segment_beyond_ters_limit_leaves_ter_out_and_the_card_says_why(limit, make_plugin, tmp_path: Path,
                                                                           capsys):
    card_path = _run(make_plugin, tmp_path, "a")
    err = capsys.readouterr().err
    said = ("warning: TER not computed: '2' (scored entry 2) has 20 hypothesis words and 20 reference words, and "
            "TER's memory grows with their product (400; TER is computed up to 300, ~1 GiB); the other metrics are "
            "computed")
    assert "scoring 3 entries: chrF++, BLEU; 95% intervals" in err and said in err
    assert err.index("scoring 3 entries") < err.index(said)
    card = json.loads(card_path.read_text())
    assert [m["name"] for m in card["metrics"]["metrics"]] == ["chrF++", "BLEU"]
    assert card["metrics"]["not_computed"] == {"TER": said.removeprefix("warning: ")}
    assert main(["verify", str(card_path)]) == 0  # recomputed the same way: no TER, and none missing
    other = _run(make_plugin, tmp_path, "b")
    capsys.readouterr()
    assert main(["compare", str(card_path), str(other), "--json", "--bootstrap", "100", "--trials", "100"]) == 0
    assert [row["metric"] for row in json.loads(capsys.readouterr().out)["rows"]] == ["chrF++", "BLEU"]


def test_a_card_within_the_limit_is_compared_with_one_beyond_it_on_the_metrics_they_share(limit, make_plugin,
                                                                                           tmp_path: Path, capsys):
    within = _run(make_plugin, tmp_path, "within", SHORT_FOR_LONG)
    assert [m["name"] for m in json.loads(within.read_text())["metrics"]["metrics"]] == ["chrF++", "BLEU", "TER"]
    beyond = _run(make_plugin, tmp_path, "beyond")
    capsys.readouterr()
    assert main(["compare", str(within), str(beyond), "--json", "--bootstrap", "100", "--trials", "100"]) == 0
    assert [row["metric"] for row in json.loads(capsys.readouterr().out)["rows"]] == ["chrF++", "BLEU"]


def test_a_card_stating_ter_beyond_the_limit_does_not_verify(make_plugin, tmp_path: Path, monkeypatch, capsys):
    card_path = _run(make_plugin, tmp_path, "a")  # (scored with the limit as shipped: TER computed)
    monkeypatch.setattr(scoring, "TER_MAX_WORD_PAIRS", 300)
    capsys.readouterr()
    assert main(["verify", str(card_path)]) == 1
    assert ("the card states TER, which a run does not compute here: TER not computed: scored entry 2 has 20 "
            "hypothesis words") in capsys.readouterr().out


def test_a_card_that_leaves_ter_out_within_the_limit_does_not_verify(limit, make_plugin, tmp_path: Path, monkeypatch,
                                                                     capsys):
    card_path = _run(make_plugin, tmp_path, "a")
    monkeypatch.setattr(scoring, "TER_MAX_WORD_PAIRS", 400)
    capsys.readouterr()
    assert main(["verify", str(card_path)]) == 1
    assert "the card lacks TER, which every run computes" in capsys.readouterr().out


def test_only_a_segment_whose_word_product_is_beyond_the_limit_leaves_ter_out(monkeypatch):
    monkeypatch.setattr(scoring, "TER_MAX_WORD_PAIRS", 400)
    metrics = scoring.make_metrics()
    assert scoring.out_of_reach(metrics, iter([([LONG], [[LONG]])])) == {}
    assert list(scoring.out_of_reach(metrics, iter([(["a", LONG + " x"], [["a", LONG]])]))) == ["TER"]
    assert "scored entry 2 has 21 hypothesis words" in scoring.out_of_reach(
        metrics, iter([(["a", LONG + " x"], [["a", LONG]])]))["TER"]
    assert scoring.out_of_reach({"BLEU": metrics["BLEU"]}, iter([([LONG * 9], [[LONG * 9]])])) == {}
    assert verify  # (the card's checks live there)
