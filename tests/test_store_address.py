"""A store's --db as a user mistypes it: a scheme without its "://" is refused (it had been taken for a file
path and a store made under that name), and no message ever shows a password, even in a URL that cannot be read."""

from __future__ import annotations

from pathlib import Path

import pytest

from mt_eval.cli import main
from mt_eval.leaderboard.synthetic import write_card


@pytest.mark.parametrize("db", ["postgresql:board:secret@127.0.0.1", "postgresql:/board:secret@127.0.0.1/lb",
                                "postgres//board:secret@127.0.0.1/lb", "sqlite:board.db"])
def test_a_scheme_without_its_slashes_is_refused_and_no_store_is_made(db: str, tmp_path: Path, monkeypatch, capsys,
                                                                       cards):
    card = write_card(cards.card("alpha"), tmp_path / "run" / "card.json")
    monkeypatch.chdir(tmp_path)
    assert main(["publish", str(card), "--db", db, "--no-input"]) == 1
    err = capsys.readouterr().err
    assert "is not a database URL: its scheme is followed by '://'" in err and "nothing was published" in err
    assert "secret" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.json", "run"]  # (no store named after the URL)
    assert main(["leaderboard", "--db", db]) == 1
    assert "is not a database URL" in capsys.readouterr().err


def test_a_file_named_like_a_scheme_is_given_as_a_path(tmp_path: Path, monkeypatch, capsys, cards):
    card = write_card(cards.card("alpha"), tmp_path / "run" / "card.json")
    monkeypatch.chdir(tmp_path)
    assert main(["publish", str(card), "--db", "./sqlite:board.db", "--no-input"]) == 0, capsys.readouterr().err
    assert (tmp_path / "sqlite:board.db").is_file()


@pytest.mark.parametrize(("db", "said"), [
    ("postgres://board:secret@127.0.0.1:abc/lb", "is not a database URL"),
    (" postgresql://board:secret@127.0.0.1/lb", "is not a database URL"),
    ("postgresql://board:sec@secret@127.0.0.1/lb", "an @ in the user name or password is written %40"),
    ("sqlite://board:secret@host/x.db", "an SQLite URL has no host"),
    ("mysql://board:secret@host/db?password=secret", "the store is SQLite or PostgreSQL"),
    ("postgresql://board@127.0.0.1:{port}/lb?password=secret&sslmode=disable", "cannot open the leaderboard store"),
])
def test_no_message_shows_a_password(db: str, said: str, capsys):
    from postgres_server import free_port

    db = db.replace("{port}", str(free_port()))
    for command in (["leaderboard", "--db", db], ["leaderboard", "serve", "--db", db, "--port", "0"]):
        assert main(command) == 1
        err = capsys.readouterr().err
        assert said in err and "secret" not in err, err
        assert "***" in err


def test_a_db_file_that_is_no_store_says_what_to_give(tmp_path: Path, capsys, cards):
    """Before: "file is not a database", and nothing more (a --db naming the card, say, or a CSV)."""
    card = write_card(cards.card("alpha"), tmp_path / "run" / "card.json")
    other = tmp_path / "board.csv"
    other.write_text("method,score\n" * 300)
    assert main(["publish", str(card), "--db", str(other), "--no-input"]) == 1
    err = capsys.readouterr().err
    assert f"cannot open the leaderboard store {other}: file is not a database; it is no SQLite file" in err, err
    assert "give --db the store's file (a new name makes a new store), or a postgresql:// URL" in err
    assert other.read_text() == "method,score\n" * 300
    assert main(["leaderboard", "--db", str(other)]) == 1
    assert "it is no SQLite file" in capsys.readouterr().err


def test_a_store_file_cut_short_is_said_damaged_with_how_to_restore_it(tmp_path: Path, capsys, cards):
    """Before: "database disk image is malformed", and nothing more."""
    first, second = (write_card(cards.card(name), tmp_path / name / "card.json") for name in ("alpha", "beta"))
    db = tmp_path / "the board.db"
    assert main(["publish", str(first), "--db", str(db), "--no-input"]) == 0
    with db.open("r+b") as store:
        store.truncate(5000)
    capsys.readouterr()
    fix = (f"cannot open the leaderboard store {db}: database disk image is malformed; the file is damaged (cut "
           f"short or overwritten): restore it from a backup, or recover what it holds into a new file: sqlite3 '{db}' "
           f".recover | sqlite3 NEW.db")
    assert main(["publish", str(second), "--db", str(db), "--no-input"]) == 1
    assert fix in capsys.readouterr().err
    assert main(["leaderboard", "--db", str(db)]) == 1
    assert fix in capsys.readouterr().err


URL = "postgresql://board:secret@127.0.0.1:1/lb?password=secret"


@pytest.mark.parametrize("command", [
    [URL], ["leaderboard", URL], ["leaderboard", f"--dbb={URL}"], ["leaderboard", "--port", URL],
    ["leaderboard", "postgresql://board:pass secret@127.0.0.1/lb"], ["publish", "{card}", URL, "--json"],
    ["publish", URL, "--db", URL],
])
def test_a_store_url_typed_where_another_word_goes_shows_no_password(command: list[str], tmp_path: Path, capsys,
                                                                      cards):
    """Before: the usage error, or the card that could not be read, showed the URL as typed, password and all."""
    card = write_card(cards.card("alpha"), tmp_path / "run" / "card.json")
    with pytest.raises(SystemExit) as exited:
        main([str(card) if word == "{card}" else word for word in command])
    assert exited.value.code == 2
    out, err = capsys.readouterr()
    assert "secret" not in out + err and "***" in err, err
    if command[0] == "publish":
        assert "is the store's URL, not a run card: give it as --db URL" in err


def test_a_blank_mt_eval_db_is_refused_as_a_blank_db_is(tmp_path: Path, monkeypatch, capsys):
    """Before: MT_EVAL_DB=" " made a store file named " " in the current directory."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MT_EVAL_DB", " ")
    assert main(["leaderboard"]) == 1
    assert "$MT_EVAL_DB is blank: set it to the store's file or URL, or unset it for the default store" in \
        capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
