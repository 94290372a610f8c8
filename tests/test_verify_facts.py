"""`mt-eval verify`: a card's facts that its corpus, its results or its other fields prove are checked, so that one
edited and resealed is named at its JSON path with what the data says instead."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from gate_policies import LENIENT
from mt_eval.cli import main
from mt_eval.harness.environment import hardware_label
from mt_eval.harness.verify import verify_card
from rigor_support import edit_card, family_corpus, honest, run
from verify_support import REVERSE, run_card, write_corpus


@pytest.fixture
def card_path(tmp_path: Path) -> Path:
    return run_card(tmp_path)


def problems(path: Path) -> dict[str, str]:
    """Each error's JSON path, with its message."""
    return {p.path: p.message for p in verify_card(path).errors}


def test_the_corpus_facts_are_what_reading_the_corpus_again_gives(card_path: Path):
    def change(data: dict) -> None:
        corpus = data["corpus"]
        corpus.update(name="news", license="CC-BY-4.0")
        corpus["reading"]["files"][0].update(sha256="0" * 64, lines=12)
        corpus["reading"].update(comment_lines=2, references=False)

    corpus_sha256 = hashlib.sha256((card_path.parent.parent / "corpus.json").read_bytes()).hexdigest()
    assert problems(edit_card(card_path, change)) == {
        "$.corpus.name": 'the card says "news", its corpus read again gives "cats"',
        "$.corpus.license": 'the card says "CC-BY-4.0", its corpus read again gives null',
        "$.corpus.reading.files[0].sha256": f'the card says "{"0" * 64}", its corpus read again gives '
                                            f'"{corpus_sha256}"',
        "$.corpus.reading.files[0].lines": "the card says 12, its corpus read again gives null",
        "$.corpus.reading.comment_lines": "the card says 2, its corpus read again gives 0",
        "$.corpus.reading.references": "the card says false, its corpus read again gives true",
    }


def test_a_selections_corpus_entries_are_the_corpus_files(tmp_path: Path):
    corpus = write_corpus(tmp_path / "corpus.json")
    assert main(["run", "--method", str(REVERSE), "--corpus", str(corpus), "--out", str(tmp_path / "run"), "--quiet",
                 "--resamples", "100", "--limit", "3", *LENIENT]) == 0

    def change(data: dict) -> None:
        data["corpus"]["entries"] = data["selection"]["entries_in_corpus"] = 80

    found = problems(edit_card(tmp_path / "run" / "card.json", change))
    assert found["$.corpus.entries"] == "the card says 80, its corpus read again gives 8"


def test_the_total_tokens_and_cached_results_are_the_results(card_path: Path):
    def change(data: dict) -> None:
        data["usage"]["total_tokens"] = 500
        data["results"][0]["cached"] = True

    assert problems(edit_card(card_path, change)) == {"$.usage.total_tokens": "the card says 500, its results say null",
                                                      "$.cached": "the card says null, its results say 1"}


def test_a_result_no_run_accepts_is_named(card_path: Path):
    def change(data: dict) -> None:
        data["results"][1]["abstain_reason"] = "not my language"

    found = problems(edit_card(card_path, change))
    assert found == {"$.results[1]": 'not a result a run accepts: "abstain_reason" is given but "abstained" is not '
                                     "true"}


def test_the_latency_counts_are_the_calls_a_run_makes(card_path: Path):
    """The reverse fixture's run: 1 cold call, 3 warm-up calls and 8 entries timed 3 times, none failed."""
    assert problems(edit_card(card_path, lambda data: data["latency"].update(hot_failed=2))) == {
        "$.latency.hot_failed": "the card says 2 hot calls failed and 24 were timed, but 8 entries × 3 repetitions "
                                "make 24 hot calls (0 failed), none stopped early ($.latency.stopped is null)"}
    assert set(problems(edit_card(card_path, lambda data: data["latency"].update(repetitions=5)))) == {
        "$.latency.hot_failed"}
    assert set(problems(edit_card(card_path, lambda data: data["latency"].update(
        stopped="call 2 of 28 timed out after 120 s; no further latency call was made")))) == {"$.latency.hot_failed"}
    assert set(problems(edit_card(card_path, lambda data: data["latency"].update(cold_failed="it failed")))) == {
        "$.latency.cold_failed"}
    assert problems(edit_card(card_path, lambda data: data["latency"].update(measured_by=None, hot_p50_s=1e-6))) == {
        "$.latency.measured_by": 'the card says null, but it lists the harness\'s timed calls ($.latency.hot_calls_s): '
                                 'a run measures them, "harness"'}


def test_latency_calls_stopped_by_a_timeout_verify_as_the_run_wrote_them(tmp_path: Path):
    corpus = family_corpus(tmp_path / "corpus.json", scored=4)
    _, card = run(tmp_path / "run", corpus, *LENIENT, *honest(sleep_s=0.5), "--timeout", "0.1", "--retries", "0")
    assert card is not None and card.latency.stopped is not None and card.latency.stopped.startswith("call 1 of 16 ")
    card_path = tmp_path / "run" / "card.json"
    assert problems(card_path) == {}
    assert problems(edit_card(card_path, lambda data: data["latency"].update(warmup_entries=5))) == {
        "$.latency.stopped": "the card says call 1 of 16, but 1 cold, 5 warm-up and 4 × 3 hot calls make 18"}


def test_a_metrics_orientation_and_the_hardware_label_follow_from_the_card(card_path: Path):
    def change(data: dict) -> None:
        data["metrics"]["metrics"][2]["higher_is_better"] = True  # TER
        data["environment"]["cpu_count"] = 64

    found = problems(edit_card(card_path, change))
    assert found["$.metrics.metrics[2].higher_is_better"] == ("TER: the card says higher is better; for TER lower is "
                                                              "better (leaderboards rank by it)")
    environment = json.loads(card_path.read_text())["environment"]
    label = hardware_label(environment["cpu_model"], 64, environment["memory_gib"], environment["gpus"])
    assert found["$.environment.hardware"] == (f"the card says {environment['hardware']!r}, its cpu_model, cpu_count, "
                                               f"memory_gib and gpus make {label!r}")
    assert len(found) == 2
