"""Latency the harness measures: cold with the load, untimed warm-ups and a fixed hot sample as extra calls
(never scored entries), repeated; what a method says about itself kept apart; a hardware label with GPUs."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from gate_policies import LENIENT
from mt_eval.harness.environment import gpu_models, hardware_label
from mt_eval.harness.latency import LatencyPlan
from mt_eval.harness.verify import verify_card
from rigor_support import edit_card, family_corpus, honest, run


def test_a_method_that_lies_about_its_latency_does_not_move_the_measured_figures(tmp_path: Path):
    corpus = family_corpus(tmp_path / "corpus.json", scored=30)
    code, card = run(tmp_path / "run", corpus, *honest(sleep_s=0.05, claimed_latency_s=0.0001),
                     "--latency-sample", "4", "--latency-repetitions", "2", "--latency-warmup", "1")
    assert code == 0 and card is not None
    latency = card.latency
    assert latency.measured_by == "harness"
    assert latency.hot_p50_s is not None and latency.hot_p95_s is not None and latency.hot_p50_s >= 0.045
    assert latency.cold_s is not None and latency.cold_s >= 0.045 + (latency.load_s or 0)
    assert latency.self_reported is not None and latency.self_reported.p50_s == 0.0001  # kept, labelled, unused
    assert all(r.latency_s == 0.0001 for r in card.results)
    assert (latency.hot_entries, latency.repetitions, latency.hot_calls) == (4, 2, 8)
    assert verify_card(tmp_path / "run" / "card.json").ok


def test_warm_ups_and_the_hot_sample_are_extra_calls_on_the_first_scored_entries(tmp_path: Path):
    record = tmp_path / "calls.jsonl"
    corpus = family_corpus(tmp_path / "corpus.json", scored=8, extra=[
        {"id": "c-first", "family": "canary", "pass_rule": "exact", "source": "Canary 0.", "reference": "Canario 0."}])
    code, card = run(tmp_path / "run", corpus, *LENIENT, *honest(record=str(record)), "--batch-size", "4",
                     "--concurrency", "1", "--latency-sample", "3", "--latency-warmup", "2",
                     "--latency-repetitions", "2")
    assert code == 0 and card is not None
    calls = [[e["id"] for e in json.loads(line)] for line in record.read_text().splitlines()]
    latency_calls, scored_run = calls[:1 + 2 + 3 * 2], calls[1 + 2 + 3 * 2:]
    assert latency_calls == [["s00"], ["s00"], ["s01"], ["s00"], ["s01"], ["s02"], ["s00"], ["s01"], ["s02"]]
    assert sorted(i for call in scored_run for i in call) == sorted(str(r.id) for r in card.results)  # each once
    assert len(card.results) == 13  # the latency calls' results are thrown away, never scored
    assert card.latency.sample_ids == ["s00", "s01", "s02"] and card.latency.warmup_entries == 2
    assert card.latency.hot_calls_s is not None and len(card.latency.hot_calls_s) == 6


def test_the_latency_line_counts_the_sample_taken_when_the_corpus_has_fewer_scored_entries(tmp_path: Path, capsys):
    from mt_eval.cli import main

    corpus = family_corpus(tmp_path / "corpus.json", scored=5, canaries=0, negatives=0)
    assert main(["run", "--method", str(Path(__file__).parent / "fixtures" / "methods"), "--corpus", str(corpus),
                 "--out", str(tmp_path / "run"), "--resamples", "20", *LENIENT, *honest(0, 0)]) == 0
    err = capsys.readouterr().err  # (the default sample is 10: 5 are there to take)
    assert "latency: 1 cold, 3 warm-up and 5 × 3 timed one-entry calls before the run" in err


def test_no_latency_calls_with_an_empty_sample_and_a_resume_keeps_the_first_measurement(tmp_path: Path):
    record = tmp_path / "calls.jsonl"
    corpus = family_corpus(tmp_path / "corpus.json", scored=5)
    code, card = run(tmp_path / "none", corpus, *LENIENT, *honest(record=str(record)), "--latency-sample", "0")
    assert code == 0 and card is not None
    assert len(record.read_text().splitlines()) == 2  # the scored run's calls only (batches of 8)
    assert card.latency.cold_s is None and card.latency.hot_calls == 0
    from mt_eval.harness.latency import latency_line

    assert latency_line(card.latency) == "latency: not measured (--latency-sample 0)"
    code, first = run(tmp_path / "kept", corpus, *LENIENT, *honest(), "--latency-sample", "2")
    assert code == 0 and first is not None
    (tmp_path / "kept" / "card.json").unlink()
    code, again = run(tmp_path / "kept", corpus, *LENIENT, *honest(), "--latency-sample", "2", "--resume")
    assert again is not None and again.latency.hot_calls_s == first.latency.hot_calls_s


def test_a_latency_edited_in_a_card_does_not_verify(tmp_path: Path):
    corpus = family_corpus(tmp_path / "corpus.json", scored=30)
    code, _ = run(tmp_path / "run", corpus, *honest())
    assert code == 0
    faster = edit_card(tmp_path / "run" / "card.json", lambda d: d["latency"].update(hot_p50_s=0.000001))
    result = verify_card(faster)
    assert [p.path for p in result.errors] == ["$.latency.hot_p50_s"]
    shorter = edit_card(tmp_path / "run" / "card.json", lambda d: d["latency"].update(
        hot_calls_s=d["latency"]["hot_calls_s"][:3]), name="shorter.json")
    assert "$.latency.hot_calls" in {p.path for p in verify_card(shorter).errors}


@pytest.mark.parametrize(("option", "value", "allowed"), [("--latency-warmup", "-1", "from 0 to 100"),
                                                          ("--latency-sample", "-1", "at least 0"),
                                                          ("--latency-repetitions", "0", "from 1 to 100")])
def test_a_latency_option_out_of_range_is_refused_before_the_run(tmp_path: Path, capsys, option: str, value: str,
                                                                  allowed: str):
    with pytest.raises(SystemExit) as stopped:
        run(tmp_path / "run", family_corpus(tmp_path / "c.json"), option, value)
    assert stopped.value.code == 2 and not (tmp_path / "run").exists()
    assert f"argument {option}: must be {allowed}, got {value}" in capsys.readouterr().err
    with pytest.raises(ValueError, match="--latency-repetitions 0: give 1 or more"):
        LatencyPlan(repetitions=0)


def test_the_hardware_label_names_cpu_cores_memory_and_gpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    assert hardware_label("AMD EPYC", 2, 23.5, []) == "AMD EPYC ×2, 23.5 GiB, no GPU"
    assert hardware_label("Xeon", 64, 512.0, ["NVIDIA A100 80GB", "NVIDIA A100 80GB", "NVIDIA T4"]) == \
        "Xeon ×64, 512 GiB, GPU: NVIDIA A100 80GB ×2, NVIDIA T4"
    fake = tmp_path / "bin" / "nvidia-smi"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nprintf 'NVIDIA A100 80GB\\nNVIDIA A100 80GB\\n'\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    assert gpu_models()[:2] == ["NVIDIA A100 80GB", "NVIDIA A100 80GB"]


def test_the_card_records_the_hardware_label_and_the_environment_digest(tmp_path: Path):
    code, card = run(tmp_path / "run", family_corpus(tmp_path / "c.json"), *honest())
    assert code == 0 and card is not None
    environment = card.environment
    assert environment.gpus is not None and environment.digest is not None and len(environment.digest) == 64
    assert environment.hardware == hardware_label(environment.cpu_model, environment.cpu_count,
                                                  environment.memory_gib, environment.gpus)


def test_the_environment_digest_of_a_node_method_has_the_version_of_the_node_that_ran_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """MT_EVAL_NODE picks the node a Node method runs in: the digest has its version, not that of node on PATH."""
    termbase = Path(__file__).parent.parent / "examples" / "termbase-eng-spa"
    corpus = family_corpus(tmp_path / "c.json", scored=2)
    digests = []
    for version in ("v98.0.0", "v99.0.0"):
        node = tmp_path / version / "node"
        node.parent.mkdir()
        node.write_text(f'#!/bin/sh\n[ "$1" = --version ] && {{ echo {version}; exit 0; }}\nexec node "$@"\n')
        node.chmod(node.stat().st_mode | stat.S_IXUSR)
        monkeypatch.setenv("MT_EVAL_NODE", str(node))
        _, card = run(tmp_path / version / "run", corpus, *LENIENT, "--latency-sample", "0", method=termbase)
        assert card is not None and card.method.runtime == "node" and card.results
        digests.append(card.environment.digest)
    assert digests[0] != digests[1]


def test_a_latency_call_that_times_out_ends_the_latency_calls(tmp_path: Path):
    record = tmp_path / "calls.jsonl"
    corpus = family_corpus(tmp_path / "corpus.json", scored=4)
    _, card = run(tmp_path / "run", corpus, *LENIENT, *honest(sleep_s=0.5, record=str(record)), "--timeout",
                     "0.1", "--retries", "0")
    assert card is not None and card.latency.cold_s is None
    assert card.latency.cold_failed == "timed out after 0.1 s"
    assert card.latency.stopped == "call 1 of 16 timed out after 0.1 s; no further latency call was made"  # 1+3+4×3
    calls = [json.loads(line) for line in record.read_text().splitlines()]
    assert len(calls[0]) == 1 and len(calls[1]) > 1  # one latency call, then the scored run's batches
