"""What a path given as a run card turns out to be when it is not one: a run directory without its card.json
(a run not finished, or no run), a JSON-lines file such as the run's results.jsonl, or JSON that only Python's
reader takes (a byte-order mark, NaN, a lone surrogate), or a card that writes a key twice in an object. Each says
what to give."""

from __future__ import annotations

import codecs
import math
import re
from pathlib import Path
from typing import Any

import msgspec

from mt_eval.json_input import parse_json
from mt_eval.lone_surrogates import first_lone
from mt_eval.problems import Problem, json_path

_SPACED_KEY_END = re.compile(rb'"[ \t\r\n]+:')  # a key's closing quote, whitespace, then its colon
_ESCAPED_QUOTE_END = re.compile(rb'(\\+)"[ \t\r\n]*:')  # a quote after backslashes (odd: inside a text)
_LONE_SURROGATE = "a lone surrogate (\\ud800 to \\udfff written alone): text that is not Unicode"


def directory_without_card(directory: Path) -> tuple[str, str]:
    """What to say of a directory given as a card that holds no card.json: a run not finished, or not a run."""
    if (directory / "results.jsonl").is_file() or (directory / "run.json").is_file():
        return ("this run directory holds no card.json: the run has not finished (it was stopped, or is running)",
                "finish it with `mt-eval run ... --resume` (its command line, with --resume), then give its card")
    return ("this directory holds no card.json, so it is not a run directory",
            "give a run's card.json, or the run directory holding it (the --out of `mt-eval run`)")


def missing_card(path: Path, message: str) -> tuple[str, str | None]:
    """What to say of a card file that is not there (``message``, and no fix), or, named in a run directory whose
    run has not finished (the path `mt-eval run` prints, given before it has written it), what a directory given in
    its place gets."""
    if path.name == "card.json" and ((path.parent / "results.jsonl").is_file() or (path.parent / "run.json").is_file()):
        return (f"no card yet: the run in {path.parent} has not finished (it was stopped, or is running)",
                directory_without_card(path.parent)[1])
    return message, None


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


def keys_written_twice(raw: bytes, data: Any, file: str) -> list[Problem]:
    """Each key the card ``raw`` (decoded as ``data``) writes twice in one object. The decoded card keeps the last
    value, and its content hash covers only that one, so a value written before it (``"score": 99.99, "score":
    69.09``) would be what the file shows, checked by nothing. A card written as a run writes it (the JSON of what it
    holds) writes each key once; of another, the keys written are counted (`_keys_written`) and compared with the keys
    it holds, counted so in their JSON; only a card that writes more is read again to name each one."""
    held = msgspec.json.encode(data)
    if raw == held or raw == msgspec.json.format(held, indent=2) + b"\n":  # (as a run writes it, or compact)
        return []
    if _keys_written(raw) <= _keys_written(held):  # (the keys it holds, as JSON: counted alike)
        return []
    _, problems = parse_json(raw, file=file)
    return [Problem(file=file, path=problem.path, code=problem.code, message=problem.message,
                    hint="use the card the run wrote: a run writes each key once, and its content hash covers only "
                    "the last value of a key written twice, so the other one is checked by nothing")
            for problem in problems if problem.code == "duplicate-key"]


def _keys_written(text: bytes) -> int:
    """The keys a JSON text writes: each quote that is not escaped, followed (after any whitespace) by a colon. A
    quote inside a text is escaped, so none of them is counted; bytes counted in C, a pattern only where a quote
    follows a backslash."""
    count = text.count(b'":') + len(_SPACED_KEY_END.findall(text))
    if b'\\"' in text:
        count -= sum(len(slashes) % 2 for slashes in _ESCAPED_QUOTE_END.findall(text))
    return count


def not_strict_json(raw: bytes, data: Any, file: str) -> Problem:
    """Why a card that Python's json reads (``data``) is refused all the same, and where: a byte-order mark, NaN
    or Infinity (a number too large to hold reads as Infinity), or a lone surrogate."""
    hint = "use the card the run wrote (a card is edited only by running again)"
    if raw.startswith(codecs.BOM_UTF8):
        return Problem(file=file, path="$", code="encoding", hint=hint, message="starts with a byte-order mark "
                       "(U+FEFF), which no run card holds: an editor saved it again")
    where, what = _first_not_json(data, []) or ("$", "holds a value that is not JSON")
    return Problem(file=file, path=where, code="syntax", message=what, hint=hint)


def _first_not_json(value: Any, at: list[str | int]) -> tuple[str, str] | None:
    """(JSON path, what is wrong) of the first value in ``value`` that strict JSON has not; else None."""
    if isinstance(value, float) and not math.isfinite(value):
        if math.isnan(value):
            return json_path(at), "NaN is not a JSON number"
        return json_path(at), f"{'-' if value < 0 else ''}Infinity is not a JSON number (a number too large to hold " \
            "is read as Infinity)"
    if isinstance(value, str) and first_lone(value) is not None:
        return json_path(at), f"holds {_LONE_SURROGATE}"
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        if isinstance(key, str) and first_lone(key) is not None:
            return json_path(at), f"a key holds {_LONE_SURROGATE}"
        if (found := _first_not_json(item, [*at, key])) is not None:
            return found
    return None
