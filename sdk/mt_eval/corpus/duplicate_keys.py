"""A key written twice in one JSON object of a corpus file: refused, since JSON readers keep only the last value
(``{"reference": "Hola.", "reference": "Adiós."}`` was scored against "Adiós." without a word).

msgspec, which reads the entries, does not say: the keys the file writes (``"…":`` outside a string) are counted
with `str.count` and compared with the keys the decoded objects hold, and only a file that writes more keys than
it holds is read again with the standard library's ``json`` to name each duplicate and where it is (an object
nested in an entry, or ``":`` inside a text, makes that second reading happen, and it then finds nothing).
"""

from __future__ import annotations

import json
from typing import Any

from mt_eval.corpus.files import split_lines
from mt_eval.corpus.model import CorpusError
from mt_eval.problems import Problem

HINT = "keep one of them; JSON readers silently drop all but the last"


def refuse_duplicate_keys(path: Any, text: str, objects_keys: int, *, by_line: bool = False) -> None:
    """`CorpusError` naming each key written twice in an object of ``text`` (with its line, ``by_line``: JSONL),
    given ``objects_keys``, how many keys the decoded objects hold (a lower bound is fine)."""
    written = text.count('":') + text.count('" :')  # (a text's \": counted too: it only makes the check read again)
    if written <= objects_keys:
        return
    lines = split_lines(text) if by_line else None
    problems: list[Problem] = []
    for number, line in enumerate(lines or [text], start=1):
        if lines is not None and line.count('":') + line.count('" :') < 2:
            continue
        for key in _duplicates(line):
            where = f"line {number}" if lines is not None else "$"
            problems.append(Problem(file=str(path), path=where, code="duplicate-key", hint=HINT,
                                    message=f'key "{key}" appears more than once in an object'))
        if len(problems) >= 50:
            break
    if problems:
        raise CorpusError(problems, summary=f"corpus {path} writes a key twice in an object")


def _duplicates(text: str) -> list[str]:
    found: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in items]
        found.extend(key for key in dict.fromkeys(keys) if keys.count(key) > 1)
        return dict(items)

    try:
        json.loads(text, object_pairs_hook=pairs)
    except ValueError:  # (what does not read as JSON is reported by the reader)
        return []
    return list(dict.fromkeys(found))


def keys_held(value: Any) -> int:
    """The keys of every object in ``value`` (entries and the objects inside them)."""
    if isinstance(value, dict):
        return len(value) + sum(keys_held(v) for v in value.values() if isinstance(v, dict | list))
    if isinstance(value, list):
        return sum(keys_held(v) for v in value if isinstance(v, dict | list))
    return 0
