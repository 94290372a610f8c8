"""``mt-eval leaderboard --out DIR``: the board as a static site — ``index.html``, ``cards/KEY.html`` per run
card and ``leaderboard.json`` — that works from a file:// URL and on any static host.

Every file is written whole (a temporary file renamed over the old one), and detail pages of cards no
longer on the board are removed, so a site is never a mix of two boards. Only a site's own files are touched:
a directory that holds anything else is refused (`SiteRefused`) unless ``force`` is given, and even then only
the pages named like detail pages (``cards/<16 hex digits>.html``) are ever removed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgspec

from mt_eval.leaderboard.detail import detail_page, unreadable_page
from mt_eval.leaderboard.html import CARDS_DIR, index_page


def board_rows(board: dict[str, Any]) -> list[dict[str, Any]]:
    return [row for group in board["groups"] for row in group["rows"]] + list(board["unranked"])


SITE_FILES = ("index.html", "leaderboard.json")
DETAIL_PAGE = re.compile(r"^[0-9a-f]{16}\.html$")  # cards/KEY.html; KEY: 16 hex digits of the card's hash


class SiteRefused(Exception):
    """The output directory holds files that are not a leaderboard site's; the message names one."""


def foreign_file(out: Path) -> Path | None:
    """A file in ``out`` that a site written there would replace or remove and that is not a site's own, or
    None. A directory whose ``leaderboard.json`` is a board is a site written before: its ``index.html`` is its
    own (a ``leaderboard.json`` of another kind is a stranger's file, as its ``index.html`` is)."""
    if not out.exists():
        return None
    if not out.is_dir():
        return out
    is_site = _a_board(out / "leaderboard.json")
    for path in out.iterdir():
        if path.name == CARDS_DIR and path.is_dir():
            odd = next((page for page in path.iterdir() if not DETAIL_PAGE.match(page.name) and not _temporary(page)),
                       None)
            if odd is not None:
                return odd
        elif not ((path.name in SITE_FILES and is_site) or _temporary(path)):
            return path
    return None


class _Board(msgspec.Struct):
    """What every ``leaderboard.json`` a site holds has (`mt_eval.leaderboard.board.build_board`)."""

    generated_at: str
    groups: list[msgspec.Raw]
    unranked: list[msgspec.Raw]


def _a_board(path: Path) -> bool:
    """Whether ``path`` is a board a site was written with (not some other file of that name)."""
    try:
        msgspec.json.decode(path.read_bytes(), type=_Board)
    except (OSError, msgspec.DecodeError):  # (ValidationError is a DecodeError)
        return False
    return True


def _temporary(path: Path) -> bool:
    """A site's own temporary file (``.NAME.tmp``), left by a write that failed (a full disk)."""
    return path.name.startswith(".") and path.name.endswith(".tmp")


def write_site(board: dict[str, Any], store: Any, out: Path, *, title: str, quiet: bool = False,
               force: bool = False) -> int:
    """Write the site; the number of detail pages written (a row whose card cannot be read gets a page saying
    so, not counted). A directory with other files in it is refused (`SiteRefused`) unless ``force``."""
    from mt_eval.progress import RunProgress

    other = foreign_file(out)
    if other is not None and (not force or other == out):
        what = f"{out} is a file" if other == out else f"{out} holds {other.relative_to(out)}, which is not part of " \
            "a leaderboard site"
        raise SiteRefused(f"{what}: writing the site there would replace or remove what is there. Give --out a new "
                          "or empty directory, or the directory of an earlier site"
                          + ("" if other == out else " (or --force to write beside those files)"))
    cards_dir = out / CARDS_DIR
    cards_dir.mkdir(parents=True, exist_ok=True)
    rows = {row["id"]: row for row in board_rows(board)}
    progress = RunProgress(len(rows), label="detail pages", quiet=quiet or len(rows) < 200)
    written = set()
    try:
        for store_id, card in store.documents(list(rows)):
            row = rows[store_id]
            _write(cards_dir / f"{row['key']}.html", detail_page(card, row))
            written.add(f"{row['key']}.html")
            progress.advance(False)
    finally:
        progress.close()
    pages = len(written)
    for store_id, row in rows.items():  # (a card the store could not read: its link still leads somewhere)
        if f"{row['key']}.html" not in written:
            _write(cards_dir / f"{row['key']}.html", unreadable_page({**row, "id": store_id}))
            written.add(f"{row['key']}.html")
    for stale in cards_dir.glob("*.html"):
        if stale.name not in written and DETAIL_PAGE.match(stale.name):
            stale.unlink()
    _write(out / "leaderboard.json", msgspec.json.format(msgspec.json.encode(board), indent=2).decode() + "\n")
    _write(out / "index.html", index_page(board, title=title, detail_pages=True))
    return pages


def _write(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        temporary.replace(path)
    except OSError:  # (a full disk): nothing half-written is left behind
        temporary.unlink(missing_ok=True)
        raise
