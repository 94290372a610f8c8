"""A database of another application's, named as the store: what it says to do fits the backend."""

from __future__ import annotations

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
