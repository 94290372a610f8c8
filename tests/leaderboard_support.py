"""What the leaderboard tests share: a card's fair-by-construction facts, publishing cards into a store, and the
board built from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from mt_eval.leaderboard.board import Conditions, build_board
from mt_eval.leaderboard.publish import prepare
from mt_eval.leaderboard.store import open_store
from mt_eval.leaderboard.synthetic import write_card

# (an eligible card's reasons are what was checked, as `mt_eval.eligibility.decide` words them for class S)
GRANTED_S = ["class S: ran in the sandbox with no network", "the static scan found nothing undeclared",
             "the sandbox denied nothing"]
GOOD = {"status": "complete", "eligibility": {"eligible": True, "reasons": GRANTED_S, "flags": []},
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


@pytest.fixture(name="db")
def db_fixture(tmp_path: Path) -> str:
    return str(tmp_path / "board.db")


def rows_by_method(board: dict) -> dict[str, dict]:
    return {r["method_id"]: r for g in board["groups"] for r in g["rows"]}
