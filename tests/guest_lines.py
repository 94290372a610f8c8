"""Speaking to a guest as a person does by hand: request lines in a file on its stdin, its answer lines read back
(`mt-eval serve DIR < requests.jsonl` answers every request before it exits; so does `mt-eval-guest`)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any


def guest_replies(command: list[str], messages: list[dict[str, Any] | str], scratch: Path) -> list[dict[str, Any]]:
    """Every line the guest ``command`` writes for ``messages`` (objects, or lines as they are), parsed, in the
    order written; the requests go through a file in ``scratch``."""
    requests = scratch / "requests.jsonl"
    requests.write_text("".join((m if isinstance(m, str) else json.dumps(m)) + "\n" for m in messages))
    with requests.open("rb") as given:
        done = subprocess.run(command, stdin=given, capture_output=True, timeout=60, check=True)
    return [json.loads(line) for line in done.stdout.splitlines()]


def by_id(answers: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    """The answers by request id (each id answered once)."""
    found = {answer["id"]: answer for answer in answers}
    assert len(found) == len(answers), answers
    return found
