"""Ctrl-C to mt-eval publish before it has read a card (while it opens or migrates the store, on a slow server)
says that nothing was published; it had said only "interrupted"."""

from __future__ import annotations

import json
from pathlib import Path

from mt_eval.cli import main
from mt_eval.leaderboard.synthetic import write_card


def test_ctrl_c_while_the_store_is_opened_says_nothing_was_published(tmp_path: Path, monkeypatch, capsys, cards):
    import mt_eval.leaderboard.store as store

    card = write_card(cards.card("alpha"), tmp_path / "run" / "card.json")

    def interrupted(*_args: object, **_options: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(store, "open_store", interrupted)
    assert main(["publish", str(card), "--db", str(tmp_path / "board.db"), "--no-input"]) == 130
    assert capsys.readouterr().err == \
        "mt-eval publish: interrupted before any card was read; nothing was published\n"
    assert not (tmp_path / "board.db").exists()
    assert main(["publish", str(card), "--db", str(tmp_path / "board.db"), "--no-input", "--json"]) == 130
    captured = capsys.readouterr()
    assert [(r["card"], r["status"], r["message"]) for r in json.loads(captured.out)] == [
        (str(card), "not_tried", f"not tried {card}: interrupted before any card was read")]
    assert captured.err.endswith("nothing was published\n")
