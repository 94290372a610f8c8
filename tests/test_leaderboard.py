"""`mt-eval leaderboard`: what rows show, who is ranked with whom, eligibility beside the score, the formats,
the filters and the server (the static site and damaged rows: test_leaderboard_site.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gate_policies import LENIENT_POLICY
from leaderboard_support import GOOD, board_of, db_fixture, publish_all, rows_by_method  # noqa: F401 (db)
from mt_eval.cli import main
from mt_eval.leaderboard.store import open_store
from mt_eval.leaderboard.synthetic import CardFactory, write_card, write_corpus

NEVER_X = "class X (a bundled dependency that may not be redistributed) is never eligible"
SCAN_FAILED = "the static scan found 1 undeclared dependency or unscannable file(s)"


def test_class_x_never_appears_and_a2_is_flagged_and_never_prize_eligible(cards, tmp_path: Path, db: str):
    never = {"eligible": False, "reasons": ["class A2 depends on an external API: the run is scored but is not "
                                            "prize-eligible"], "flags": ["external dependency"]}
    publish_all(db, [cards.card("open-s", quality=0.8, extra=GOOD),
                     cards.card("api-a2", quality=0.9, method_class="api", dependency_class="A2",
                                extra={**GOOD, "eligibility": never}),
                     cards.card("secret-x", quality=1.0, dependency_class="X",
                                extra={**GOOD, "eligibility": {"eligible": False, "reasons": [NEVER_X]}})], tmp_path)
    board = board_of(db)
    rows = rows_by_method(board)
    assert set(rows) == {"open-s", "api-a2"} and board["hidden"] == {"class X": 1}
    assert rows["api-a2"]["flags"] == ["external dependency"]
    assert rows["api-a2"]["prize"] == {"eligible": False,
                                       "reasons": ["external dependency (class A2)", *never["reasons"]]}
    assert rows["open-s"]["prize"] == {"eligible": True, "reasons": []} and rows["open-s"]["flags"] == []


def test_eligibility_absent_from_the_card_is_unknown_and_each_fact_can_rule_a_row_out(cards, tmp_path: Path, db: str):
    publish_all(db, [
        cards.card("unknown-facts", variant=1),
        cards.card("ruled-out", variant=3, extra={**GOOD, "static_scan": {**GOOD["static_scan"], "errors": 1,
                                                                          "unscannable": ["pipeline.py"]},
                                                  "eligibility": {"eligible": False, "reasons": [SCAN_FAILED]}}),
        cards.card("partial", variant=4, extra={k: v for k, v in GOOD.items() if k != "status"}, failing=1),
        cards.card("slow", variant=5, extra=GOOD, hot_p95_s=2.5),
        cards.card("unsandboxed", variant=6, extra={**GOOD, "sandbox": None, "eligibility": {
            "eligible": False,
            "reasons": ["the method did not run in the sandbox (run with --sandbox, or --official)"]}}),
    ], tmp_path)
    rows = rows_by_method(board_of(db, max_hot_p95_s=1.0))
    unknown = rows["unknown-facts"]
    assert unknown["prize"]["eligible"] is None
    assert set(unknown["prize"]["reasons"]) == {"eligibility not recorded", "run status not recorded"}
    assert unknown["eligibility"]["sandbox"] is None and unknown["eligibility"]["sandboxed"] is None
    assert unknown["eligibility"]["gate_passed"] is True  # publishing applied the gate (a failing card is refused)
    assert rows["ruled-out"]["prize"]["reasons"] == [SCAN_FAILED]
    assert rows["ruled-out"]["flags"] == []
    assert rows["partial"]["prize"]["reasons"] == ["run partial"]
    assert rows["slow"]["prize"]["reasons"] == ["hot p95 2.5 s > 1 s"]
    assert rows["unsandboxed"]["eligibility"]["sandbox"] == "not sandboxed"
    assert rows["unsandboxed"]["eligibility"]["sandboxed"] is False
    assert rows_by_method(board_of(db, hardware="TPU"))["slow"]["prize"]["reasons"] == ["hardware is not TPU"]


def test_rows_are_ranked_only_with_the_same_corpus_and_entries_and_overlaps_are_ties(tmp_path: Path, db: str):
    first = CardFactory(write_corpus(tmp_path / "first.json", entries=30, seed=1), resamples=200)
    second = CardFactory(write_corpus(tmp_path / "second.json", entries=30, seed=2), resamples=200)
    cards = [first.card("best", quality=1.0), first.card("close", quality=0.97), first.card("worst", quality=0.0),
             second.card("best", quality=0.5)]
    truncated = first.card("short", quality=0.8, limit=10)
    publish_all(db, [*cards, truncated], tmp_path, policy=LENIENT_POLICY)  # ten scored entries: under the default
    board = board_of(db)
    assert [(g["corpus_name"], g["subset"], len(g["rows"])) for g in board["groups"]] == [
        ("first", False, 3), ("first", True, 1), ("second", False, 1)]
    assert board["groups"][1]["denominator"] == 10 and board["groups"][1]["corpus_size"] == 34
    ranked = {r["method_id"]: r for r in board["groups"][0]["rows"]}
    assert ranked["best"]["rank"] == ranked["close"]["rank"] == 1
    assert ranked["best"]["ties"] == ranked["close"]["ties"] == 1 and ranked["worst"]["rank"] == 3
    assert [r["method_id"] for r in board["groups"][0]["rows"]][-1] == "worst"
    assert board["groups"][0]["signature"].startswith("nrefs:1|case:mixed")


def test_across_corpora_a_method_missing_a_corpus_is_missing(tmp_path: Path, db: str):
    first = CardFactory(write_corpus(tmp_path / "first.json", seed=1), resamples=50)
    second = CardFactory(write_corpus(tmp_path / "second.json", seed=2), resamples=50)
    publish_all(db, [first.card("a", quality=1.0), first.card("b", quality=0.0), second.card("a", quality=0.0),
                     second.card("b", quality=0.5), second.card("c", quality=1.0)], tmp_path)
    across = board_of(db)["across"]
    methods = {m["method_id"]: m for m in across["methods"]}
    assert len(across["corpora"]) == 2
    assert methods["a"]["borda"] == pytest.approx((100 + 0) / 2)  # first on "first", last of three on "second"
    assert methods["b"]["borda"] == pytest.approx((0 + 50) / 2)
    assert methods["c"]["borda"] is None and methods["c"]["task_average"] is None
    assert methods["c"]["missing"] == [across["corpora"][0]["label"]]
    a_scores = methods["a"]["scores"]
    assert methods["a"]["task_average"] == pytest.approx(sum(a_scores.values()) / 2)  # one family: eng>spa


def test_without_a_method_card_the_harness_settings_are_shown(cards, tmp_path: Path, db: str, capsys):
    from mt_eval.harness.verify import canonical_sha256, verify_card
    from mt_eval.leaderboard.rows import build_record, build_row

    data = cards.card("bare", bare=True)
    data["covariates"].update(model="tiny-model-7b", temperature=0.2, not_applicable={})  # (given: they apply)
    data["results"][0].update(tool_calls=[{"name": "dictionary"}], tool_call_count=1)
    data["content_sha256"] = canonical_sha256(data)
    path = write_card(data, tmp_path / "bare" / "card.json")
    verification = verify_card(path)
    assert verification.ok and verification.card is not None and verification.data is not None
    row = build_row(verification.data, verification.card, verification.card.method.card, "run card", 20)
    assert not row.has_method_card
    with open_store(db) as store:  # as a store filled by another publisher would hold it
        store.publish([build_record(row, data["content_sha256"], path.read_bytes())], "2026-01-01T00:00:00+00:00")
    assert main(["leaderboard", "--db", db, "--format", "html"]) == 0
    page = capsys.readouterr().out
    assert "no method card · model tiny-model-7b · version — · temperature 0.2 · tools dictionary" in page
    assert main(["leaderboard", "--db", db]) == 0
    assert "tiny-model-7b" in capsys.readouterr().out


def test_formats_filters_and_classes(cards, tmp_path: Path, db: str, capsys):
    publish_all(db, [cards.card("alpha", quality=0.8, method_class="pipeline"),
                     cards.card("beta", quality=0.6, method_class="raw-llm", dependency_class="A1")], tmp_path)
    assert main(["leaderboard", "--db", db]) == 0
    table = capsys.readouterr().out
    assert "Alpha" in table and "Beta" in table and "chrF++" in table
    assert main(["leaderboard", "--db", db, "--format", "json", "--class", "A1"]) == 0
    board = json.loads(capsys.readouterr().out)
    assert [r["method_id"] for g in board["groups"] for r in g["rows"]] == ["beta"]
    assert main(["leaderboard", "--db", db, "--json", "--class", "A1"]) == 0  # as other commands' --json
    assert {**json.loads(capsys.readouterr().out), "generated_at": None} == {**board, "generated_at": None}
    assert main(["leaderboard", "--db", db, "--format", "json", "--pair", "eng>fra"]) == 0
    assert json.loads(capsys.readouterr().out)["groups"] == []
    for spelling in ("eng:spa", "en:es", "EN-es"):  # (any spelling `run --pair` takes: en:es had matched nothing)
        assert main(["leaderboard", "--db", db, "--format", "json", "--pair", spelling]) == 0
        assert len(json.loads(capsys.readouterr().out)["groups"][0]["rows"]) == 2, spelling
    assert main(["leaderboard", "--db", db, "--format", "json", "--corpus", "synthetic"]) == 0
    assert len(json.loads(capsys.readouterr().out)["groups"][0]["rows"]) == 2
    sha = cards.corpus.sha256
    assert main(["leaderboard", "--db", db, "--corpus", "nosuch", "--pair", "eng>fra"]) == 0  # (it said: publish one)
    assert capsys.readouterr().out == ("No run cards match --pair 'eng>fra' --corpus nosuch; the store holds 2 "
                                       "(corpora: synthetic; pairs: eng>spa): change or drop the filters.\n")
    for prefix, rows in ((sha[:8], 2), (sha[:8].upper(), 2), ("%", 0), ("_", 0), ("synth%", 0)):  # ("": blank, refused)
        assert main(["leaderboard", "--db", db, "--format", "json", "--corpus", prefix]) == 0  # ("%" matched all)
        assert sum(len(g["rows"]) for g in json.loads(capsys.readouterr().out)["groups"]) == rows, prefix
    assert main(["leaderboard", "--db", db, "--format", "html"]) == 0
    page = capsys.readouterr().out
    assert page.startswith("<!doctype html>") and "<script>" in page and "Alpha" in page
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=", page), "the page must not load anything"
    assert main(["leaderboard", "--db", db, "--class", "Z"]) == 2
    assert "not a class" in capsys.readouterr().err
    assert main(["leaderboard", "--db", str(tmp_path / "none.db")]) == 1
    assert "no leaderboard store" in capsys.readouterr().err


def test_a_narrow_terminal_breaks_long_words_but_cuts_nothing_from_the_board(cards, tmp_path: Path, db: str, capsys,
                                                                           monkeypatch):
    """Before: at 60 columns a row's run date was "2026-01-…" and a long method name lost its end to "…"; every
    figure and word is now whole, a word wider than its column broken over lines."""
    publish_all(db, [cards.card("multilingual-denoising-transliterator", quality=0.8,
                                finished_at="2026-01-15T10:00:00+00:00")], tmp_path)
    monkeypatch.setenv("COLUMNS", "60")
    assert main(["leaderboard", "--db", db]) == 0
    table = capsys.readouterr().out
    assert "…" not in table, table
    assert "2026-01-15" in table, table
    method_column = "".join(line.split("│")[2].replace(" ", "") for line in table.splitlines() if line.count("│") == 7)
    assert "MultilingualDenoisingTransliterator" in method_column, table


def test_the_ranking_key_changes_with_the_metric_signatures_not_with_extension_metrics(cards):
    import msgspec

    from mt_eval.harness.metric_statistics import MetricScore
    from mt_eval.harness.runcard import RunCard
    from mt_eval.leaderboard.rows import ranking_key

    card = msgspec.convert(cards.card("alpha"), RunCard)
    key = ranking_key(card, 34)
    assert card.metrics is not None
    card.metrics.metrics.append(MetricScore(name="chars", score=1.0, signature="extension:chars"))
    assert ranking_key(card, 34) == key
    card.metrics.metrics[1].signature = card.metrics.metrics[1].signature.replace("version:", "version:9")
    assert ranking_key(card, 34) != key
    assert ranking_key(msgspec.convert(cards.card("alpha"), RunCard), 35) != key  # not the whole corpus


def test_runs_of_one_corpus_in_other_pairs_are_ranked_apart(tmp_path: Path, db: str):
    """A corpus that declares no pair is run in the pair given with --pair. Before, all its runs were ranked as
    one group under the first row's pair, and filtering by --pair changed the ranks."""
    from mt_eval.harness.verify import canonical_sha256

    corpus = write_corpus(tmp_path / "pairless.json", seed=1)
    data = json.loads(corpus.read_text(encoding="utf-8"))
    del data["language_pair"]
    corpus.write_text(json.dumps(data), encoding="utf-8")
    factory = CardFactory(corpus, resamples=50)
    cards = [factory.card("a", quality=1.0), factory.card("b", quality=0.2), factory.card("c", quality=0.6)]
    for card in cards[1:]:
        card["corpus"]["pair"] = "fra>deu"
        card["content_sha256"] = canonical_sha256(card)
    publish_all(db, cards, tmp_path)
    board = board_of(db)
    assert [(g["pair"], [(r["method_id"], r["rank"]) for r in g["rows"]]) for g in board["groups"]] == [
        ("eng>spa", [("a", 1)]), ("fra>deu", [("c", 1), ("b", 2)])]
    assert len({c["label"] for c in board["across"]["corpora"]}) == 2


def test_across_corpora_columns_of_one_corpus_are_told_apart_and_a_fork_is_another_method():
    """Before, two columns of one corpus had one label (one score written over the other), and a fork keeping the
    original's method id under its own name was credited with the original's scores."""
    from mt_eval.leaderboard.board import across_corpora

    def row(method: str, name: str, score: float, finished: str) -> dict:
        return {"method_id": method, "method_name": name, "finished_at": finished, "id": 1, "key": method + finished,
                "headline": {"score": score}}

    def group(metric: str, key: str, rows: list[dict]) -> dict:
        return {"subset": False, "corpus_name": "news", "pair": "eng>spa", "corpus_sha256": "ab" * 32,
                "metric": metric, "ranking_key": key, "higher_is_better": True, "rows": rows}

    across = across_corpora([
        group("chrF++", "1" * 64, [row("m", "Original", 50.0, "2026-01-01"), row("n", "N", 40.0, "2026-01-01")]),
        group("BLEU", "2" * 64, [row("m", "Fork", 30.0, "2026-02-01"), row("n", "N", 20.0, "2026-01-01")])])
    labels = [c["label"] for c in across["corpora"]]
    assert labels == ["news (eng>spa, abababab, chrF++)", "news (eng>spa, abababab, BLEU)"]
    by_name = {m["method_name"]: m for m in across["methods"]}
    assert by_name["N"]["scores"] == dict(zip(labels, [40.0, 20.0], strict=True))
    assert by_name["Original"]["scores"] == {labels[0]: 50.0} and by_name["Original"]["missing"] == [labels[1]]
    assert by_name["Fork"]["scores"] == {labels[1]: 30.0} and by_name["Fork"]["method_id"] == "m"
