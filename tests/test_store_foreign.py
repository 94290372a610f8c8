"""A database of another application's, named as the store: what it says to do fits the backend."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy as sa

from mt_eval.cli import main
from mt_eval.leaderboard.store import resolve_url
from mt_eval.leaderboard.synthetic import write_card


def test_another_applications_database_is_told_the_fix_of_its_backend(store_url: str, capsys):
    engine = sa.create_engine(resolve_url(store_url))
    with engine.begin() as connection:
        connection.execute(sa.text("CREATE TABLE users (x INTEGER)"))
    engine.dispose()
    for command in (["leaderboard", "--db", store_url], ["leaderboard", "--db", store_url, "--json"]):
        assert main(command) == 1
        err = capsys.readouterr().err
        assert "not an mt-eval leaderboard store (it has the tables users): give the store's " in err
        if store_url.startswith("postgresql"):  # (it had been told to publish into a new file)
            assert "database in the URL, or publish into a new one (CREATE DATABASE NAME)" in err
            assert "file" not in err
        else:
            assert "path, or publish into a new file" in err



@pytest.mark.parametrize(("columns", "row"), [
    ("installed_rank INTEGER, version VARCHAR(50), description VARCHAR(200)", "1, '1.0.2', 'init'"),  # Flyway's (< 5)
    ("installed_rank INTEGER, description VARCHAR(200)", "1, 'init'"),
    ("version INTEGER, description VARCHAR(400), applied_at VARCHAR(40)", "1, 'init', '2020'"),  # ours, but no cards
])
def test_another_applications_schema_version_table_is_not_taken_for_a_store(columns: str, row: str, store_url: str,
                                                                             cards, tmp_path: Path, capsys):
    """Before: a traceback (ValueError: '1.0.2'), or "column schema_version.version does not exist", or a publish
    that failed at "relation cards does not exist" and asked for it to be run again once the store was fixed."""
    engine = sa.create_engine(resolve_url(store_url))
    with engine.begin() as connection:
        connection.execute(sa.text(f"CREATE TABLE schema_version ({columns})"))
        connection.execute(sa.text(f"INSERT INTO schema_version VALUES ({row})"))
        connection.execute(sa.text("CREATE TABLE users (x INTEGER)"))
    card = write_card(cards.card("alpha"), tmp_path / "run" / "card.json")
    for command in (["leaderboard", "--db", store_url], ["publish", str(card), "--db", store_url, "--no-input"]):
        assert main(command) == 1
        err = capsys.readouterr().err
        assert "not an mt-eval leaderboard store (it has the tables schema_version, users)" in err, err
    with engine.connect() as connection:
        assert sorted(sa.inspect(connection).get_table_names()) == ["schema_version", "users"]
    engine.dispose()


def test_a_store_that_lost_its_version_record_is_said_damaged_not_empty_nor_stamped_again(store_url: str, cards,
                                                                                         tmp_path: Path, capsys):
    """Before: the board said "no leaderboard store ... yet: publish a card first" of a store holding cards, and a
    publish recorded version 1 again and stored its card."""
    published, other = (write_card(cards.card(name), tmp_path / name / "card.json") for name in ("alpha", "beta"))
    assert main(["publish", str(published), "--db", store_url, "--no-input"]) == 0
    engine = sa.create_engine(resolve_url(store_url))
    with engine.begin() as connection:
        connection.execute(sa.text("DELETE FROM schema_version"))
    capsys.readouterr()
    for command in (["leaderboard", "--db", store_url], ["leaderboard", "--db", store_url, "--json"],
                    ["publish", str(other), "--db", store_url, "--no-input"]):
        assert main(command) == 1
        out, err = capsys.readouterr()
        assert "a damaged leaderboard store: it holds 1 card but no record of its schema version (its " \
               "schema_version table is empty)" in err, err
        assert "Restore the store from a backup" in err and "INSERT INTO schema_version" in err
        assert "publish a card first" not in err and out == ""
    with engine.connect() as connection:
        assert connection.execute(sa.text("SELECT count(*) FROM schema_version")).scalar() == 0
        assert connection.execute(sa.text("SELECT count(*) FROM cards")).scalar() == 1
    engine.dispose()


def test_an_empty_schema_version_beside_another_applications_tables_is_not_made_a_store(store_url: str, cards,
                                                                                        tmp_path: Path, capsys):
    engine = sa.create_engine(resolve_url(store_url))
    with engine.begin() as connection:
        connection.execute(sa.text("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, "
                                   "description VARCHAR(400) NOT NULL, applied_at VARCHAR(40) NOT NULL)"))
        connection.execute(sa.text("CREATE TABLE users (x INTEGER)"))
    card = write_card(cards.card("alpha"), tmp_path / "run" / "card.json")
    assert main(["publish", str(card), "--db", store_url, "--no-input"]) == 1
    assert "not an mt-eval leaderboard store (it has the tables schema_version, users)" in capsys.readouterr().err
    with engine.connect() as connection:
        assert sorted(sa.inspect(connection).get_table_names()) == ["schema_version", "users"]
    engine.dispose()


def test_a_store_whose_cards_table_is_gone_is_said_incomplete_and_publishing_makes_it_again(store_url: str, cards,
                                                                                             tmp_path: Path, capsys):
    """Before, a store with mt-eval's own schema_version and no cards table (dropped by hand) was "not an mt-eval
    leaderboard store (it has the tables schema_version)", by the board and by publish alike."""
    first, second = (write_card(cards.card(name), tmp_path / name / "card.json") for name in ("alpha", "beta"))
    assert main(["publish", str(first), "--db", store_url, "--no-input"]) == 0
    engine = sa.create_engine(resolve_url(store_url))
    with engine.begin() as connection:
        connection.execute(sa.text("DROP TABLE cards"))
    engine.dispose()
    capsys.readouterr()
    for command in (["leaderboard", "--db", store_url], ["leaderboard", "--db", store_url, "--json"]):
        assert main(command) == 1
        out, err = capsys.readouterr()
        assert "an mt-eval leaderboard store left incomplete: its schema_version records version 1, but its cards " \
               "table is missing (dropped?), so it holds no card: publishing a card makes the table again, empty " \
               "(restore the store from a backup first to keep the cards it held)" in err, err
        assert "not an mt-eval" not in err and out == ""
    assert main(["publish", str(second), "--db", store_url, "--no-input"]) == 0
    capsys.readouterr()
    assert main(["leaderboard", "--db", store_url, "--json"]) == 0
    assert [row["method_id"] for row in json.loads(capsys.readouterr().out)["groups"][0]["rows"]] == ["beta"]
    with engine.connect() as connection:
        assert connection.execute(sa.text("SELECT version FROM schema_version")).scalars().all() == [1]
    engine.dispose()
