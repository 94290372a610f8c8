"""A key written twice in one JSON object of a corpus file: refused, since JSON readers keep only the last value
(``{"reference": "Hola.", "reference": "Adiós."}`` was scored against "Adiós." without a word).

msgspec, which reads the entries, does not say: the keys the file writes (``"…":`` outside a string) are counted
with `str.count` and compared with the keys the decoded objects hold, and only a file that writes more keys than
it holds is read again with the standard library's ``json`` to name each duplicate and the JSON path of its object
(``$[3]``, ``$.entries[3].meta``; ``line 3``, ``line 3.meta`` in JSONL) as `mt_eval.json_input.parse_json` does (an
object nested in an entry, or ``":`` inside a text, makes that second reading happen, and it then finds nothing).
"""

from __future__ import annotations

import json
from typing import Any

from mt_eval.corpus.files import split_lines
from mt_eval.corpus.model import CorpusError
from mt_eval.json_input import KeysWrittenTwice
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
        for at, key in _duplicates(line):
            where = at if lines is None else f"line {number}{at[1:]}"  # (``line 3.meta``, as other problems say)
            problems.append(Problem(file=str(path), path=where, code="duplicate-key", hint=HINT,
                                    message=f'key "{key}" appears more than once in an object'))
        if len(problems) >= 50:
            break
    if problems:
        raise CorpusError(problems[:50], summary=f"corpus {path} writes a key twice in an object")


def _duplicates(text: str) -> list[tuple[str, str]]:
    """Each key written twice in an object of ``text``, with the JSON path of the object (`KeysWrittenTwice`)."""
    noted = KeysWrittenTwice()
    try:
        value = json.loads(text, object_pairs_hook=noted.pairs_hook)
    except ValueError:  # (what does not read as JSON is reported by the reader)
        return []
    return noted.located(value)


def keys_held(value: Any) -> int:
    """The keys of every object in ``value`` (entries and the objects inside them)."""
    if isinstance(value, dict):
        return len(value) + sum(keys_held(v) for v in value.values() if isinstance(v, dict | list))
    if isinstance(value, list):
        return sum(keys_held(v) for v in value if isinstance(v, dict | list))
    return 0
