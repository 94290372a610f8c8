"""`mt-eval leaderboard`: what rows show, who is ranked with whom, eligibility beside the score, the formats,
the filters, the static site and the server."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gate_policies import LENIENT_POLICY
from mt_eval.cli import main
from mt_eval.leaderboard.board import Conditions, build_board
from mt_eval.leaderboard.publish import prepare
from mt_eval.leaderboard.store import open_store
from mt_eval.leaderboard.synthetic import CardFactory, write_card, write_corpus

GOOD = {"status": "complete", "eligibility": {"eligible": True, "reasons": [], "flags": []},
        "static_scan": {"findings": [], "errors": 0, "files_scanned": 1},
        "sandbox": {"tool": "bubblewrap", "version": "0.8.0", "denied": [],
                    "policy": {"network": "none", "network_meaning": "no network", "plugin": "/p", "read_only": []}}}


def publish_all(db: str, cards: list[dict], tmp_path: Path, policy: Path | None = None) -> None:
    from mt_eval.harness.policy import load_policy

    paths = [write_card(card, tmp_path / "cards" / f"{i}.json") for i, card in enumerate(cards)]
    with open_store(db) as store:
        outcomes = store.publish([prepare(p, no_input=True, policy=load_policy(policy)).record for p in paths],
                                 "2026-01-01T00:00:00+00:00")
    assert all(o.status == "published" for o in outcomes)


def board_of(db: str, **conditions) -> dict:
    with open_store(db) as store:
        return build_board(store.rows(), Conditions(**conditions))


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "board.db")


def rows_by_method(board: dict) -> dict[str, dict]:
    return {r["method_id"]: r for g in board["groups"] for r in g["rows"]}


def test_class_x_never_appears_and_a2_is_flagged_and_never_prize_eligible(cards, tmp_path: Path, db: str):
    never = {"eligible": False, "reasons": ["class A2 depends on an external API: the run is scored but is not "
                                            "prize-eligible"], "flags": ["external dependency"]}
    publish_all(db, [cards.card("open-s", quality=0.8, extra=GOOD),
                     cards.card("api-a2", quality=0.9, method_class="api", dependency_class="A2",
                                extra={**GOOD, "eligibility": never}),
                     cards.card("secret-x", quality=1.0, dependency_class="X",
                                extra={**GOOD, "eligibility": {"eligible": False, "reasons": ["class X"]}})], tmp_path)
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
        cards.card("ruled-out", variant=3, extra={**GOOD, "eligibility": {"eligible": False,
                                                                          "reasons": ["undeclared network access"],
                                                                          "flags": ["network"]}}),
        cards.card("partial", variant=4, extra={k: v for k, v in GOOD.items() if k != "status"}, failing=1),
        cards.card("slow", variant=5, extra=GOOD, hot_p95_s=2.5),
        cards.card("unsandboxed", variant=6, extra={**GOOD, "sandbox": None, "eligibility": {
            "eligible": False, "reasons": ["the method did not run in the sandbox"]}}),
    ], tmp_path)
    rows = rows_by_method(board_of(db, max_hot_p95_s=1.0))
    unknown = rows["unknown-facts"]
    assert unknown["prize"]["eligible"] is None
    assert set(unknown["prize"]["reasons"]) == {"eligibility not recorded", "run status not recorded"}
    assert unknown["eligibility"]["sandbox"] is None and unknown["eligibility"]["sandboxed"] is None
    assert unknown["eligibility"]["gate_passed"] is True  # publishing applied the gate (a failing card is refused)
    assert rows["ruled-out"]["prize"]["reasons"] == ["undeclared network access"]
    assert rows["ruled-out"]["flags"] == ["network"]
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
    data["covariates"].update(model="tiny-model-7b", temperature=0.2)
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
    assert capsys.readouterr().out == ("No run cards match --pair eng>fra --corpus nosuch; the store holds 2 "
                                       "(corpora: synthetic; pairs: eng>spa): change or drop the filters.\n")
    for prefix, rows in ((sha[:8], 2), (sha[:8].upper(), 2), ("%", 0), ("_", 0), ("", 0), ("synth%", 0)):
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


def test_reading_refuses_what_is_not_a_store_and_creates_nothing(cards, tmp_path: Path, capsys):
    import sqlite3

    other, empty, missing = tmp_path / "other.db", tmp_path / "empty.db", tmp_path / "missing.db"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE foo (x INTEGER)")
    empty.touch()
    before = other.read_bytes()
    card = write_card(cards.card("alpha"), tmp_path / "run" / "card.json")
    for read in ([], ["--format", "json"], ["--out", str(tmp_path / "site")], ["serve", "--port", "0"]):
        assert main(["leaderboard", "--db", str(other), *read]) == 1
        assert "other.db: not an mt-eval leaderboard store (it has the tables foo): give the store's path, or " \
               "publish into a new file" in capsys.readouterr().err
        for nothing in (empty, missing):
            assert main(["leaderboard", "--db", str(nothing), *read]) == 1
            assert f"no leaderboard store at {nothing} yet" in capsys.readouterr().err
    assert main(["publish", str(card), "--db", str(other), "--no-input"]) == 1
    assert "not an mt-eval leaderboard store" in capsys.readouterr().err
    assert other.read_bytes() == before and empty.read_bytes() == b"" and not missing.exists()
    assert sorted(p.name for p in tmp_path.glob("*.db*")) == ["empty.db", "other.db"]


def test_the_static_site_has_an_index_a_page_per_card_and_the_json(cards, tmp_path: Path, db: str, capsys):
    publish_all(db, [cards.card("alpha", quality=0.8, extra=GOOD), cards.card("beta", quality=0.5),
                     cards.card("secret", dependency_class="X")], tmp_path)
    site = tmp_path / "site"
    (site / "cards").mkdir(parents=True)
    (site / "cards" / "0123456789abcdef.html").write_text("stale")
    assert main(["leaderboard", "--db", db, "--out", str(site)]) == 0
    out = capsys.readouterr().out
    assert (site / "index.html").as_uri() in out
    pages = sorted(p.name for p in (site / "cards").glob("*.html"))
    board = json.loads((site / "leaderboard.json").read_text())
    assert pages == sorted(f"{r['key']}.html" for g in board["groups"] for r in g["rows"])
    index = (site / "index.html").read_text()
    assert "Secret" not in index and "1 hidden" in index
    for name in pages:
        assert f'href="cards/{name}"' in index
    detail = (site / "cards" / pages[0]).read_text()
    assert 'href="../index.html"' in detail and "content sha256" in detail and "s0000" in detail
    assert "<dt>canaries passed</dt><dd>2/2</dd>" in detail and "<dt>negative controls violated</dt><dd>0/2</dd>" in \
        detail and "passed (policy default, as the run applied it)" in detail


@pytest.mark.parametrize(("title", "words"), [
    ("Board \udcff", "argument --title: 'Board \\udcff' is not valid UTF-8 (at character 7): give the title as UTF-8"),
    ("Board\x1b[31m", "argument --title: 'Board\\x1b[31m' holds the control character U+001B: give a title without "
                      "it"),
])
def test_a_title_that_is_not_utf8_or_holds_a_control_character_is_refused(cards, tmp_path: Path, db: str, capsys,
                                                                           title: str, words: str):
    """Before, a title with bytes that are not UTF-8 was a traceback from writing index.html (UnicodeEncodeError)
    with --out, and an invalid page with --format html."""
    publish_all(db, [cards.card("alpha")], tmp_path)
    for output in (["--out", str(tmp_path / "site")], ["--format", "html"]):
        with pytest.raises(SystemExit) as exited:
            main(["leaderboard", "--db", db, "--title", title, *output])
        assert exited.value.code == 2
        assert words in capsys.readouterr().err
    assert not (tmp_path / "site").exists()


def test_a_site_write_that_fails_leaves_no_temporary_file_and_a_retry_writes_it(cards, tmp_path: Path, db: str,
                                                                                 capsys, monkeypatch):
    """Before, a full disk left cards/.KEY.html.tmp, and the retry refused the directory for holding it."""
    from mt_eval.leaderboard import site as site_module

    publish_all(db, [cards.card("alpha", quality=0.8)], tmp_path)
    site = tmp_path / "site"
    written = Path.write_text

    def full_disk(path: Path, text: str, **kwargs) -> int:
        written(path, text[:10], **kwargs)  # (part of it, then the disk is full)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(site_module.Path, "write_text", full_disk)
    assert main(["leaderboard", "--db", db, "--out", str(site)]) == 1
    assert "No space left on device" in capsys.readouterr().err
    assert [p.name for p in site.rglob("*") if p.is_file()] == []
    monkeypatch.undo()
    (site / "cards" / ".0123456789abcdef.html.tmp").write_text("left by an older version")
    assert main(["leaderboard", "--db", db, "--out", str(site)]) == 0  # (a site's own leftover is no stranger's file)
    assert (site / "index.html").is_file()


def test_the_site_is_not_written_over_a_directory_of_other_files(cards, tmp_path: Path, db: str, capsys):
    """A user's own index.html, or pages of theirs under cards/, are neither replaced nor removed."""
    publish_all(db, [cards.card("alpha", quality=0.8)], tmp_path)
    home = tmp_path / "home"
    (home / "cards").mkdir(parents=True)
    (home / "index.html").write_text("my homepage")
    assert main(["leaderboard", "--db", db, "--out", str(home)]) == 1
    err = capsys.readouterr().err
    assert f"{home} holds index.html, which is not part of a leaderboard site" in err and "--force" in err
    assert (home / "index.html").read_text() == "my homepage" and not (home / "leaderboard.json").exists()
    (home / "index.html").unlink()
    (home / "cards" / "my-card.html").write_text("mine")
    assert main(["leaderboard", "--db", db, "--out", str(home)]) == 1
    assert "holds cards/my-card.html" in capsys.readouterr().err
    assert main(["leaderboard", "--db", db, "--out", str(home), "--force"]) == 0
    assert (home / "cards" / "my-card.html").read_text() == "mine" and (home / "leaderboard.json").is_file()
    # written before, it is a site: written again without --force, its stale pages removed
    (home / "cards" / "my-card.html").unlink()
    (home / "cards" / "0123456789abcdef.html").write_text("stale")
    assert main(["leaderboard", "--db", db, "--out", str(home)]) == 0
    assert not (home / "cards" / "0123456789abcdef.html").exists() and len(list((home / "cards").iterdir())) == 1
    a_file = tmp_path / "notes.txt"
    a_file.write_text("notes")
    assert main(["leaderboard", "--db", db, "--out", str(a_file), "--force"]) == 1
    assert f"{a_file} is a file" in capsys.readouterr().err and a_file.read_text() == "notes"


def test_a_damaged_row_is_left_off_the_board_with_a_warning_naming_it(cards, tmp_path: Path, db: str, capsys):
    import sqlalchemy as sa

    from mt_eval.leaderboard.store import StoreError

    publish_all(db, [cards.card(name, quality=quality) for name, quality in (("alpha", 0.8), ("beta", 0.5),
                                                                             ("gamma", 0.3))], tmp_path)
    with open_store(db) as store, store.writing() as connection:
        connection.execute(sa.text("UPDATE cards SET row_json = '{not json' WHERE id = 1"))
        connection.execute(sa.text("UPDATE cards SET card_json = '[1]' WHERE id = 2"))
        runs = dict(connection.execute(sa.text("SELECT id, run_id FROM cards")).all())
    assert main(["leaderboard", "--db", db, "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert {r["method_id"] for r in rows_by_method(json.loads(out)).values()} == {"beta", "gamma"}
    assert err == (f"mt-eval leaderboard: warning: left off the board: row #1 (run {runs[1]}) of the leaderboard store "
                   f"{db} is damaged: its row_json cannot be read (JSON is malformed: object keys must be strings "
                   "(byte 1)); delete it (DELETE FROM cards WHERE id = 1) and publish its card again\n")
    assert main(["leaderboard", "--db", db, "--out", str(tmp_path / "site")]) == 0
    out, err = capsys.readouterr()
    assert "(2 run cards, 1 detail pages)" in out and "row #1" in err
    assert f"warning: shown without its card's details: row #2 (run {runs[2]}) of the leaderboard " \
           f"store {db} is damaged: its card_json cannot be read (a JSON list, not an object)" in err
    # The board's link to row #2 leads to that page (it led to no page at all).
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    links = set(re.findall(r'href="(cards/[0-9a-f]{16}\.html)"', index))
    assert len(links) == 2 and all((tmp_path / "site" / link).is_file() for link in links)
    pages = [(tmp_path / "site" / link).read_text(encoding="utf-8") for link in sorted(links)]
    assert sum("cannot be read from the leaderboard store" in text and f"run <code>{runs[2]}</code>" in text
               for text in pages) == 1
    with open_store(db, create=False) as store, pytest.raises(StoreError, match=r"^row #1 \(run .*\) of the "):
        store.rows()  # without on_damaged: refused, naming the row


def test_a_row_or_card_of_the_wrong_shape_is_damaged_too(cards, tmp_path: Path, db: str, capsys):
    """Valid JSON that is not a row (a field missing, a score that is text) or not a run card is left off with the
    same warning, naming the field, on every output: never a traceback."""
    import sqlalchemy as sa

    publish_all(db, [cards.card(name, quality=quality) for name, quality in (("alpha", 0.8), ("beta", 0.5),
                                                                             ("gamma", 0.3))], tmp_path)
    with open_store(db) as store, store.writing() as connection:
        connection.execute(sa.text("""UPDATE cards SET row_json = '{"method_id": "alpha"}' WHERE id = 1"""))
        connection.execute(sa.text("UPDATE cards SET row_json = json_set(row_json, '$.headline.score', 'high') "
                                   "WHERE id = 2"))
        connection.execute(sa.text("""UPDATE cards SET card_json = '{"method": {}}' WHERE id = 3"""))
    assert main(["leaderboard", "--db", db, "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert {r["method_id"] for r in rows_by_method(json.loads(out)).values()} == {"gamma"}
    assert "row #1 (run " in err and "its row_json cannot be read (not a leaderboard row: Object missing required " \
        "field `key`); delete it (DELETE FROM cards WHERE id = 1)" in err
    assert "its row_json cannot be read (not a leaderboard row: Expected `float`, got `str` - at " \
        "`$.headline.score`)" in err
    assert main(["leaderboard", "--db", db, "--out", str(tmp_path / "site")]) == 0
    out, err = capsys.readouterr()
    assert "(1 run cards, 0 detail pages)" in out
    assert "shown without its card's details: row #3 (run " in err
    assert "its card_json cannot be read (not a run card: " \
        "Object missing required field" in err
    assert main(["leaderboard", "--db", db]) == 0
    out, err = capsys.readouterr()
    assert "30 scored entries" in out and "row #1 (run " in err and "row #2 (run " in err


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
