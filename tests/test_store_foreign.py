"""A database of another application's, named as the store: what it says to do fits the backend."""

from __future__ import annotations

import sqlalchemy as sa

from mt_eval.cli import main
from mt_eval.leaderboard.store import resolve_url


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
