"""A leaderboard group whose rows' intervals were drawn differently (other ``--resamples`` or ``--bootstrap``).
Its ranks and ties are read from overlapping intervals; before, rows of 100 resamples and of 200 were ranked in
one column with nothing said, in the text, the JSON and the HTML alike."""

from __future__ import annotations

import json
from pathlib import Path

from gate_policies import LENIENT_POLICY
from leaderboard_support import board_of, db_fixture, publish_all  # noqa: F401 (db)
from mt_eval.cli import main
from mt_eval.leaderboard.board import Conditions, build_board
from mt_eval.leaderboard.store import open_store
from mt_eval.leaderboard.synthetic import CardFactory, write_corpus

NOTE = ("the intervals were drawn differently (200 fast bootstrap resamples: 2 rows; 100 fast bootstrap resamples: 1 "
        "row), and the ranks and ties are read from overlapping intervals: they are not ranked alike; run the cards "
        "again with the same --resamples and --bootstrap to rank them alike")


def _publish(tmp_path: Path, db: str, *resamples: int) -> None:
    corpus = write_corpus(tmp_path / "corpus.json", entries=30)
    cards = [CardFactory(corpus, resamples=count).card(f"method-{index}", quality=0.9 - index / 10)
             for index, count in enumerate(resamples)]
    publish_all(db, cards, tmp_path, policy=LENIENT_POLICY)


def test_a_group_of_intervals_drawn_differently_says_so_in_every_format(tmp_path: Path, db: str, capsys):
    _publish(tmp_path, db, 200, 200, 100)
    (group,) = board_of(db)["groups"]
    assert len(group["rows"]) == 3 and group["intervals_note"] == NOTE
    assert group["intervals_drawn"] == [{"how": "200 fast bootstrap resamples", "rows": 2},
                                        {"how": "100 fast bootstrap resamples", "rows": 1}]
    assert {r["method_id"]: r["intervals"]["resamples"] for r in group["rows"]} == {
        "method-0": 200, "method-1": 200, "method-2": 100}
    assert main(["leaderboard", "--db", db, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["groups"][0]["intervals_note"] == NOTE
    assert main(["leaderboard", "--db", db, "--format", "html"]) == 0
    page = capsys.readouterr().out
    assert f"note: {NOTE}" in page and page.count("<small>100 fast bootstrap resamples</small>") == 1
    assert main(["leaderboard", "--db", db]) == 0
    text = " ".join(capsys.readouterr().out.split())  # (rich wraps the note)
    assert "note: the intervals were drawn differently (200 fast bootstrap resamples: 2 rows; 100 fast" in text


def test_intervals_drawn_alike_or_not_recorded_add_no_note(tmp_path: Path, db: str, capsys):
    _publish(tmp_path, db, 200, 200)
    (group,) = board_of(db)["groups"]
    assert group["intervals_note"] is None
    assert group["intervals_drawn"] == [{"how": "200 fast bootstrap resamples", "rows": 2}]
    assert main(["leaderboard", "--db", db]) == 0
    assert "note:" not in capsys.readouterr().out
    with open_store(db) as store:  # a row stored before the board kept how its intervals were drawn
        rows = store.rows()
    rows[0].pop("intervals")
    (group,) = build_board(rows, Conditions())["groups"]
    assert group["intervals_note"] is None and {"how": "not recorded (published before the board kept it)",
                                                "rows": 1} in group["intervals_drawn"]
