"""Where the leaderboard store is: ``--db`` (a URL or a file path), else ``$MT_EVAL_DB``, else
``leaderboard.db`` in the user's data directory (platformdirs: ``~/.local/share/mt-eval`` on Linux); and the
values refused: an empty ``--db``, a backend other than SQLite or PostgreSQL, an SQLite store in memory (it
would keep nothing), SQLite query arguments (they would be ignored) and a URL whose scheme lacks its ``://``
(``postgresql:USER@HOST``: it would have been a file of that name). A password is never shown (`hidden`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import sqlalchemy as sa

from mt_eval.leaderboard import StoreError

ENVIRONMENT_VARIABLE = "MT_EVAL_DB"
STORE_FILE = "leaderboard.db"
# A store's scheme without its "://" (postgresql:board@db, sqlite:board.db, postgres//board@db): a URL mistyped,
# not a file to create. A file named so is given as ./NAME.
MISTYPED_SCHEME = re.compile(r"^(?:postgres(?:ql)?|sqlite)(?:\+\w+)?(?::|//)", re.IGNORECASE)


def default_path() -> Path:
    import platformdirs

    return platformdirs.user_data_path("mt-eval", appauthor=False) / STORE_FILE


def resolve_url(db: str | None) -> sa.URL:
    """The database URL for ``--db`` (a URL or a file path), ``$MT_EVAL_DB``, or the default file. An empty
    ``--db``, an SQLite database in memory (it would keep nothing) and SQLite query arguments are refused."""
    if db is not None and not db.strip():
        raise StoreError("--db is empty: give the store's file or URL (sqlite:///PATH, postgresql://USER@HOST/DB), "
                         f"or leave --db out for ${ENVIRONMENT_VARIABLE} or the default store")
    from_environment = os.environ.get(ENVIRONMENT_VARIABLE)
    if not db and from_environment and not from_environment.strip():
        raise StoreError(f"${ENVIRONMENT_VARIABLE} is blank: set it to the store's file or URL, or unset it for the "
                         "default store")
    value = db or from_environment or str(default_path())
    given = "--db {}" if db else f"${ENVIRONMENT_VARIABLE}={{}}"  # where the value came from, for messages
    if "://" not in value and MISTYPED_SCHEME.match(value):
        raise StoreError(f"{given.format(repr(hidden(value)))} is not a database URL: its scheme is followed by "
                         "'://' (postgresql://USER@HOST[:PORT]/DB, sqlite:///PATH); a file of that name is given as "
                         "./NAME")
    if "://" not in value:
        return sa.URL.create("sqlite", database=str(Path(value).expanduser().absolute()))
    try:
        url = sa.make_url(value)
        url.port  # noqa: B018 (a port that is not a number is found here, not when connecting)
    except (sa.exc.ArgumentError, ValueError) as exc:  # (ValueError: "host:notaport", "[::1" unclosed)
        raise StoreError(f"{given.format(repr(hidden(value)))} is not a database URL: write sqlite:///PATH, "
                         "postgresql://USER@HOST[:PORT]/DB, or a file path") from exc
    if url.drivername in ("postgresql", "postgres"):
        url = url.set(drivername="postgresql+psycopg")
    if url.get_backend_name() not in ("sqlite", "postgresql"):
        raise StoreError(f"{given.format(hidden(value))}: the store is SQLite or PostgreSQL (sqlite:///PATH or "
                         f"postgresql://...), not {url.get_backend_name()}")
    if url.host and "@" in url.host:  # (postgresql://board:p@ss@db: the password ends at its first @)
        raise StoreError(f"{given.format(hidden(value))}: an @ in the user name or password is written %40 "
                         "(postgresql://USER:PASS%40WORD@HOST/DB)")
    if url.get_backend_name() == "sqlite":
        _check_sqlite_url(url, given.format(hidden(value)))
    return url


def hidden(value: str) -> str:
    """A store's URL as given, for messages: a password before its host, or as ``password=`` in its query, as
    ``***``, even in a URL that cannot be read (an @ in a password, a port that is not a number)."""
    scheme = re.match(r"\s*[A-Za-z][\w+.-]*(?:://|:/*|//)", value)
    head, rest = (value[:scheme.end()], value[scheme.end():]) if scheme else ("", value)
    userinfo, at, host = rest.rpartition("@")
    if at and ":" in userinfo:
        rest = f"{userinfo.split(':', 1)[0]}:***@{host}"
    return re.sub(r"(?i)\b(password=)[^&#]*", r"\1***", head + rest)


# A URL in a text: all that is quoted ('postgresql://board:pass word@db/lb'), or a word after a space or an "="
# (--dbb=postgresql://...), that starts with a scheme.
URL_IN_TEXT = re.compile(r"(?<=')[A-Za-z][\w+.-]*:[^']*(?=')|(?<![^\s'\"=])[A-Za-z][\w+.-]*:[^\s'\"]*")


def passwords_hidden(text: str) -> str:
    """``text`` (a usage error, say) with the password of each URL in it `hidden`."""
    return URL_IN_TEXT.sub(lambda url: hidden(url.group()), text)


def _check_sqlite_url(url: sa.URL, given: str) -> None:
    if url.host:  # sqlite://board.db: two slashes make "board.db" a host
        raise StoreError(f"{given}: an SQLite URL has no host: write three slashes before a relative path "
                         f"(sqlite:///{url.host}{'/' + url.database if url.database else ''}) and four before an "
                         "absolute one (sqlite:////srv/board.db)")
    if url.database in (None, "", ":memory:"):
        raise StoreError(f"{given}: an SQLite store needs a file (without one it is in memory and keeps nothing): "
                         "give it as sqlite:///board.db (relative), sqlite:////srv/board.db (absolute) or a path")
    if url.query:
        raise StoreError(f"{given}: the store takes no query arguments: give {url.set(query={}).render_as_string()} "
                         "alone (mt-eval leaderboard only reads the store; mt-eval publish writes it)")


def describe(url: sa.URL) -> str:
    """The URL for messages: the file of a SQLite store, the URL without its password otherwise."""
    if url.get_backend_name() == "sqlite":
        return url.database or ":memory:"
    return hidden(url.set(drivername=url.get_backend_name()).render_as_string(hide_password=True))
