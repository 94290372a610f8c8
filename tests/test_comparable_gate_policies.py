"""A leaderboard group whose rows passed the headline gate under different policies (``mt-eval publish
--policy``). Before, a row a lenient policy let through (no canary, any number of scored entries) was ranked
beside rows held to the shipped policy, and nothing, not even its JSON, said which policy it had passed."""

from __future__ import annotations

import json
from pathlib import Path

from gate_policies import LENIENT_POLICY
from leaderboard_support import board_of, db_fixture, publish_all  # noqa: F401 (db)
from mt_eval.cli import main
from mt_eval.leaderboard.synthetic import CardFactory, write_corpus


def test_rows_gated_under_different_policies_say_so_in_every_format(tmp_path: Path, db: str, capsys):
    factory = CardFactory(write_corpus(tmp_path / "corpus.json", entries=30))
    publish_all(db, [factory.card("shipped-a", quality=0.9), factory.card("shipped-b", quality=0.5)], tmp_path)
    publish_all(db, [factory.card("lenient", quality=0.7)], tmp_path / "more", policy=LENIENT_POLICY)
    (group,) = board_of(db)["groups"]
    policies = {r["method_id"]: r["eligibility"]["gate_policy"].split(" (sha256 ")[0] for r in group["rows"]}
    assert policies == {"shipped-a": "default", "shipped-b": "default", "lenient": "lenient"}
    assert [(p["policy"].split(" (sha256 ")[0], p["rows"]) for p in group["gate_policies"]] == [("default", 2),
                                                                                                ("lenient", 1)]
    note = group["gate_note"]
    assert note.startswith("the rows passed the headline gate under different policies (default (sha256 ")
    assert note.endswith("): their headlines were not held to the same rules; publish every card under one --policy "
                         "to rank them alike")
    assert main(["leaderboard", "--db", db, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["groups"][0]["gate_note"] == note
    assert main(["leaderboard", "--db", db, "--format", "html"]) == 0
    page = capsys.readouterr().out
    assert "note: the rows passed the headline gate under different policies" in page
    assert page.count("<small>gate: lenient (sha256 ") == 1 and page.count("<small>gate: default (sha256 ") == 2
    assert main(["leaderboard", "--db", db]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "note: the rows passed the headline gate under different policies (default" in text


def test_rows_gated_under_one_policy_add_no_note(tmp_path: Path, db: str, capsys):
    factory = CardFactory(write_corpus(tmp_path / "corpus.json", entries=30))
    publish_all(db, [factory.card("a", quality=0.9), factory.card("b", quality=0.5)], tmp_path)
    (group,) = board_of(db)["groups"]
    assert group["gate_note"] is None and [p["rows"] for p in group["gate_policies"]] == [2]
    assert main(["leaderboard", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "note:" not in out and "gate:" not in out
