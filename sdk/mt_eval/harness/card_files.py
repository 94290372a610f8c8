"""What a path given as a run card turns out to be when it is not one: a run directory without its card.json
(a run not finished, or no run), or a JSON-lines file such as the run's results.jsonl. Each says what to give."""

from __future__ import annotations

from pathlib import Path

import msgspec


def directory_without_card(directory: Path) -> tuple[str, str]:
    """What to say of a directory given as a card that holds no card.json: a run not finished, or not a run."""
    if (directory / "results.jsonl").is_file() or (directory / "run.json").is_file():
        return ("this run directory holds no card.json: the run has not finished (it was stopped, or is running)",
                "finish it with `mt-eval run ... --resume` (its command line, with --resume), then give its card")
    return ("this directory holds no card.json, so it is not a run directory",
            "give a run's card.json, or the run directory holding it (the --out of `mt-eval run`)")


def json_lines_records(raw: bytes) -> int | None:
    """How many records a JSON-lines file holds when ``raw`` is one (two or more lines, the first an object)."""
    lines = [line for line in raw.splitlines() if line.strip()]
    if len(lines) < 2:
        return None
    try:
        first = msgspec.json.decode(lines[0])
    except msgspec.DecodeError:
        return None
    return len(lines) if isinstance(first, dict) else None
