"""`mt-eval publish` of many cards that do not all go in ends saying how many did and which did not: what was
said of each may be far above, among hundreds of lines."""

from __future__ import annotations

import json
from pathlib import Path

from mt_eval.cli import main
from mt_eval.leaderboard.synthetic import write_card


def test_the_last_line_says_how_many_were_published_and_names_those_that_were_not(cards, tmp_path: Path, capsys):
    """Before, the last line was the store's name and the exit status 1: the one tampered card among the good ones
    was said only where it was found, above every published card."""
    db = str(tmp_path / "board.db")
    paths = [write_card(cards.card(f"m{i}", variant=i % 6, run_id=f"run-{i}"), tmp_path / "cards" / f"{i:02d}.json")
             for i in range(12)]
    tampered = json.loads(paths[5].read_text())
    tampered["method"]["name"] = "Tampered"
    paths[5].write_text(json.dumps(tampered))
    conflict = write_card(cards.card("other", quality=0.9, run_id="run-3"), tmp_path / "conflict.json")
    given = [str(p) for p in [*paths, conflict, paths[0]]]
    assert main(["publish", *given, "--db", db, "--no-input"]) == 1
    last = capsys.readouterr().err.rstrip("\n").splitlines()[-1]
    assert last == (f"mt-eval publish: 11 of 14 cards published; not published (each said above): {paths[5]} "
                    f"(refused), {conflict} (conflict), {paths[0]} (duplicate)")
    assert main(["publish", *given, "--db", db, "--no-input", "--json"]) == 1
    out, err = capsys.readouterr()
    assert len(json.loads(out)) == 14 and "cards published" not in err  # (the JSON says it all)


def test_many_refused_are_counted_not_all_named(cards, tmp_path: Path, capsys):
    db = str(tmp_path / "board.db")
    paths = [write_card(cards.card(f"m{i}", variant=i % 6, run_id=f"run-{i}"), tmp_path / "cards" / f"{i:02d}.json")
             for i in range(13)]
    assert main(["publish", *map(str, paths), "--db", db, "--no-input"]) == 0
    assert "cards published" not in capsys.readouterr().err  # (all of them: nothing more to say)
    assert main(["publish", *map(str, paths), "--db", db, "--no-input"]) == 1
    last = capsys.readouterr().err.rstrip("\n").splitlines()[-1]
    assert last.startswith("mt-eval publish: 0 of 13 cards published; not published (each said above): ")
    assert last.endswith(f"{paths[9]} (duplicate) and 3 more")
