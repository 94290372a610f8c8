"""``mt-eval leaderboard --out DIR``: the board as a static site — ``index.html``, ``cards/KEY.html`` per run
card and ``leaderboard.json`` — that works from a file:// URL and on any static host.

Every file is written whole (a temporary file renamed over the old one), and detail pages of cards no
longer on the board are removed, so a site is never a mix of two boards.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from mt_eval.leaderboard.detail import detail_page
from mt_eval.leaderboard.html import CARDS_DIR, index_page


def board_rows(board: dict[str, Any]) -> list[dict[str, Any]]:
    return [row for group in board["groups"] for row in group["rows"]] + list(board["unranked"])


def write_site(board: dict[str, Any], store: Any, out: Path, *, title: str, quiet: bool = False) -> int:
    """Write the site; the number of detail pages written."""
    from mt_eval.progress import RunProgress

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
    for stale in cards_dir.glob("*.html"):
        if stale.name not in written:
            stale.unlink()
    _write(out / "leaderboard.json", msgspec.json.format(msgspec.json.encode(board), indent=2).decode() + "\n")
    _write(out / "index.html", index_page(board, title=title))
    return len(written)


def _write(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)
