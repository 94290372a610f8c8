"""One line of a JSONL file people fill in or edit by hand (a grading sheet, labels), read strictly: a key written
twice in an object is refused with the line, not read as its last value without a word (as a corpus's is:
`mt_eval.json_input.parse_json`)."""

from __future__ import annotations

import json
from typing import Any

from mt_eval.json_input import KeysWrittenTwice, too_many_digits


def read_line(line: str, where: str, shape: str) -> tuple[Any, str | None]:
    """The line's value, or None and why it cannot be read (``where`` first; ``shape``, what a line holds, said
    when it nests too deep to read)."""
    noted = KeysWrittenTwice()
    try:
        value = json.loads(line, object_pairs_hook=noted.pairs_hook)
    except ValueError as exc:
        return None, f"{where}: {too_many_digits(exc) or f'not JSON: {exc}'}"
    except RecursionError:
        return None, f"{where}: arrays and objects nested too deep to read: {shape}"
    for path, key in noted.located(value):
        inside = "" if path == "$" else f" {path}"
        return None, (f'{where}{inside}: key "{key}" appears more than once in an object: keep one of them (a JSON '
                      "reader keeps the last one without a word)")
    return value, None
