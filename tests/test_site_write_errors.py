"""leaderboard --out where a site's file or directory cannot be written (a directory where index.html goes, a file
where cards/ goes, given --force) names that path and why; it had said only 'cannot write the site to DIR: File
exists' or 'Is a directory'."""

from __future__ import annotations

from pathlib import Path

import pytest

from mt_eval.cli import main
from mt_eval.leaderboard.synthetic import write_card


@pytest.fixture
def store(tmp_path: Path, cards) -> Path:
    card = write_card(cards.card("alpha"), tmp_path / "run" / "card.json")
    assert main(["publish", str(card), "--db", str(tmp_path / "board.db"), "--no-input"]) == 0
    return tmp_path / "board.db"


def test_a_directory_where_the_index_goes_is_named(store: Path, tmp_path: Path, capsys):
    site = tmp_path / "site"
    (site / "index.html").mkdir(parents=True)
    (site / "leaderboard.json").write_text('{"generated_at": "2026-12-01T00:00:00+00:00", "groups": [], '
                                           '"unranked": []}\n')  # (an earlier site, as far as it can tell)
    capsys.readouterr()
    assert main(["leaderboard", "--db", str(store), "--out", str(site)]) == 1
    assert capsys.readouterr().err == \
        f"mt-eval leaderboard: cannot write the site to {site}: {site / 'index.html'}: Is a directory\n"


def test_a_file_where_the_cards_directory_goes_is_named(store: Path, tmp_path: Path, capsys):
    site = tmp_path / "site"
    site.mkdir()
    (site / "cards").write_text("notes\n")
    capsys.readouterr()
    assert main(["leaderboard", "--db", str(store), "--out", str(site), "--force"]) == 1
    assert capsys.readouterr().err == \
        f"mt-eval leaderboard: cannot write the site to {site}: {site / 'cards'}: it is not a directory\n"
    assert (site / "cards").read_text() == "notes\n"


def test_an_out_under_a_file_names_the_file(store: Path, tmp_path: Path, capsys):
    """Before, it named a path below the file, which is not there ('notes.txt/site/cards: Not a directory')."""
    notes = tmp_path / "notes.txt"
    notes.write_text("notes\n")
    capsys.readouterr()
    assert main(["leaderboard", "--db", str(store), "--out", str(notes / "site" / "2026")]) == 1
    assert capsys.readouterr().err == \
        f"mt-eval leaderboard: cannot create --out {notes / 'site' / '2026'}: {notes} is a file, not a directory\n"
    assert notes.read_text() == "notes\n"
