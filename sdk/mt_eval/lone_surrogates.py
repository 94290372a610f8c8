"""Text that is not valid Unicode — a lone surrogate, which a string can hold and JSON can escape but UTF-8 cannot
carry — found in what is about to be sent to a method, and said in the same words everywhere.

A guest cannot read a request holding one (its line is not valid JSON text to a strict reader), and a program
cannot be given one on its stdin, so the entry (or decision row) that holds it fails at once, before anything
is sent, and the others go on. The words blame the input: ``the text is not valid Unicode (surrogates not
allowed at position 1)`` for an entry's source, as `mt_eval.adapters` says it, and ``the entry's "note" …``,
``the row's "state.text" …`` or ``the config's "prompt" …`` for anything else. ``bridge/node/lib/
lone-surrogates.js`` is the twin; ``bridge/vectors/contract/lone-surrogates.json`` pins both.

Text a method gives back about itself — an exception's message, the last lines of its stderr — is not refused:
it becomes an ``error``, which a results log, a run card or a guest's answer must be able to hold. `writable`
writes each lone surrogate in it as its escape, six ASCII characters (``caf\udce9``, as ``repr`` and JSON show
it), so nothing is lost and the text is valid Unicode; every place such text becomes an error goes through it
(``writable`` in ``lone-surrogates.js`` for the Node guest).

Such text is also `capped` at `MESSAGE_LIMIT` characters, for a method may put anything in a message (a whole
response, a file): a longer one keeps its start and says how much was cut, wherever it is kept or shown.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

def writable(text: str) -> str:
    """``text`` with each lone surrogate written as its escape (``"caf\udce9"`` → ``"caf\\udce9"``): valid
    Unicode, to be written in UTF-8 or sent as JSON. Text without one is returned as it is."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


# The longest text a method's own message (an exception's, an error it returns) is kept as: in an entry's error, the
# card's failures, the results log and the terminal. ``MESSAGE_LIMIT`` in bridge/node/lib/lone-surrogates.js.
MESSAGE_LIMIT = 2000
_MARKER_ROOM = 40  # room for the marker, "… (9,999,999,999,999 characters more)" at most
_MARKER = re.compile(r"… \(([0-9,]+) characters more\)\Z")


def capped(text: str) -> str:
    """``text`` when it holds at most `MESSAGE_LIMIT` characters (code points); else its start, then how much was
    cut — ``… (9,997,120 characters more)`` — `MESSAGE_LIMIT` characters in all. Text capped before, then worded
    (``the method failed: `` before it), is cut as the whole text would be: ``capped(words + capped(message)) ==
    capped(words + message)``, so a message is kept alike whichever host and guest carried it."""
    if len(text) <= MESSAGE_LIMIT:
        return text
    cut_before = _MARKER.search(text, len(text) - _MARKER_ROOM)
    more = int(cut_before[1].replace(",", "")) if cut_before else 0
    whole = text[:cut_before.start()] if cut_before else text
    kept = MESSAGE_LIMIT - _MARKER_ROOM
    return f"{whole[:kept]}… ({len(whole) - kept + more:,} characters more)"


# The fix for text in a file that holds one (the strict reader's problems).
LONE_SURROGATE_HINT = "write the character itself (one beyond U+FFFF escaped as its pair, as \\ud83d\\ude00)"


def without_lone_keys(data: Any) -> Any:
    """``data`` without the object keys that are not valid Unicode, at any depth."""
    if isinstance(data, dict):
        return {k: without_lone_keys(v) for k, v in data.items() if first_lone(k) is None}
    return [without_lone_keys(v) for v in data] if isinstance(data, list) else data


def not_valid_unicode(where: str, position: int) -> str:
    """``WHERE is not valid Unicode (surrogates not allowed at position N)``, N counted in code points."""
    return f"{where} is not valid Unicode (surrogates not allowed at position {position})"


def first_lone(text: str) -> int | None:
    """The position (in code points) of the first lone surrogate in ``text``, or None."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def _path_text(path: list[str | int]) -> str:
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else step)
    return out


def _found(value: Any, path: list[str | int]) -> tuple[list[str | int], int, bool] | None:
    """Where the first lone surrogate in ``value`` is: (path, position, whether it is in a field name)."""
    if isinstance(value, str):
        position = first_lone(value)
        return None if position is None else (path, position, False)
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str) and (position := first_lone(key)) is not None:
                return path, position, True
            if (found := _found(item, [*path, key])) is not None:
                return found
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            if (found := _found(item, [*path, index])) is not None:
                return found
    return None


def problem_in(value: Any, owner: str) -> str | None:
    """Why ``value`` (an entry, a row or a config: ``owner`` says which) cannot be sent, or None when it can."""
    found = _found(value, [])
    if found is None:
        return None
    path, position, in_name = found
    if in_name:
        where = f'a field name in the {owner}' + (f'\'s "{_path_text(path)}"' if path else "")
    elif owner == "entry" and path == ["source"]:
        where = "the text"
    else:
        where = f'the {owner}\'s "{_path_text(path)}"'
    return not_valid_unicode(where, position)


def without_unsendable(items: list[Item], config: Any, owner: str, fail: Callable[[Item, str], Result]
                       ) -> tuple[list[Item], dict[int, Result]]:
    """The items that can be sent, and the failure of each that cannot, by its index: every item fails when the
    config cannot be sent."""
    problem = problem_in(config, "config")
    if problem is not None:
        return [], {index: fail(item, problem) for index, item in enumerate(items)}
    failed: dict[int, Result] = {}
    sendable: list[Item] = []
    for index, item in enumerate(items):
        if (problem := problem_in(item, owner)) is None:
            sendable.append(item)
        else:
            failed[index] = fail(item, problem)
    return sendable, failed


def merged(results: list[Result], failed: Mapping[int, Result]) -> list[Result]:
    """The results of the items sent, with the failures of the others put back at their places."""
    out: list[Result] = []
    sent = iter(results)
    for index in range(len(results) + len(failed)):
        out.append(failed[index] if index in failed else next(sent))
    return out


_ESCAPE = re.compile(rb"(?<!\\)((?:\\\\)*)(\\u[dD][0-9a-fA-F]{3})")


def escaped_lone_surrogate(line: bytes) -> tuple[str, int] | None:
    """The first lone surrogate escaped in a JSON text (``\\ud800`` with no low half after it, or a low half with no
    high one before it) and its byte offset; None when there is none. A strict reader refuses such a line, and its
    own words for it can mislead ("Input data was truncated")."""
    pending: tuple[str, int] | None = None  # a high half waiting for its low half
    for found in _ESCAPE.finditer(line):
        escape, start = found.group(2).decode(), found.start(2)
        high = escape[3].lower() in "89ab"
        if pending is not None and not high and start == pending[1] + 6:
            pending = None  # (a pair)
            continue
        if pending is not None:
            return pending
        if not high:
            return escape, start
        pending = (escape, start)
    return pending
