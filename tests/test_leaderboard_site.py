"""The leaderboard's outputs and what it leaves out: reading what is not a store, the static site (its pages, its
title, a failed write, a directory of other files) and rows or cards too damaged to show."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from leaderboard_support import GOOD, db_fixture, publish_all, rows_by_method  # noqa: F401 (db)
from mt_eval.cli import main
from mt_eval.leaderboard.store import open_store
from mt_eval.leaderboard.synthetic import write_card


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


def test_the_page_printed_alone_links_to_no_detail_page_the_site_and_the_server_link_to_theirs(
        cards, tmp_path: Path, db: str, capsys):
    """Before, --format html linked each method to cards/KEY.html, which nothing wrote beside it: a dead link."""
    publish_all(db, [cards.card("alpha", quality=0.8), cards.card("beta", quality=0.5)], tmp_path)
    assert main(["leaderboard", "--db", db, "--format", "html"]) == 0
    page = capsys.readouterr().out
    assert "<b><bdi>Alpha</bdi></b>" in page and "<b><bdi>Beta</bdi></b>" in page and 'href="cards/' not in page
    assert main(["leaderboard", "--db", db, "--out", str(tmp_path / "site"), "--quiet"]) == 0
    index = (tmp_path / "site" / "index.html").read_text()
    linked = re.findall(r'<a href="(cards/[0-9a-f]{16}\.html)"><b>', index)
    assert len(linked) == 2 and all((tmp_path / "site" / link).is_file() for link in linked)


@pytest.mark.parametrize(("title", "words"), [
    ("Board \udcff", "argument --title: 'Board \\udcff' is not valid UTF-8 (at character 7): give the title as UTF-8"),
    ("Board\x1b[31m", "argument --title: 'Board\\x1b[31m' holds the control character U+001B: give a title without "
                      "it"),
    ("", "argument --title: '' is blank: give a title, or leave --title out for the default (mt-eval leaderboard)"),
    (" \u3000", "argument --title: ' \\u3000' is blank: give a title, or leave --title out for the default"),
])
def test_a_title_that_is_blank_not_utf8_or_holds_a_control_character_is_refused(cards, tmp_path: Path, db: str,
                                                                                    capsys, title: str, words: str):
    """Before, a title with bytes that are not UTF-8 was a traceback from writing index.html (UnicodeEncodeError)
    with --out, and an invalid page with --format html; a blank one made pages with an empty title and heading."""
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
    # a leaderboard.json that is not a board is a stranger's file, and so is the index.html beside it
    other = tmp_path / "other"
    other.mkdir()
    (other / "leaderboard.json").write_text('{"players": ["ann", "bob"]}')
    assert main(["leaderboard", "--db", db, "--out", str(other)]) == 1
    assert f"{other} holds leaderboard.json, which is not part of a leaderboard site" in capsys.readouterr().err
    (other / "index.html").write_text("their page")
    (other / "leaderboard.json").write_text("not JSON")
    assert main(["leaderboard", "--db", db, "--out", str(other)]) == 1
    assert "which is not part of a leaderboard site" in capsys.readouterr().err
    assert (other / "index.html").read_text() == "their page" and (other / "leaderboard.json").read_text() == "not JSON"
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
    assert "(2 run cards, 1 detail page)" in out and "row #1" in err
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
    assert "(1 run card, 0 detail pages)" in out
    assert "shown without its card's details: row #3 (run " in err
    assert "its card_json cannot be read (not a run card: " \
        "Object missing required field" in err
    assert main(["leaderboard", "--db", db]) == 0
    out, err = capsys.readouterr()
    assert "30 scored entries" in out and "row #1 (run " in err and "row #2 (run " in err
