"""A JSON value in words, for problem messages: ``the number 5``, ``the string "x"``, ``an array`` (the Node package's
``contract/value-words.js`` words them alike)."""

from __future__ import annotations

import math
from typing import Any

from mt_eval.js_text import js_number, js_string


def value_in_words(value: Any) -> str:
    """The actual JSON value in words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):  # (1e400 reads as Infinity; NaN is no JSON number)
        return f"the number {'NaN' if math.isnan(value) else '-Infinity' if value < 0 else 'Infinity'}"
    if isinstance(value, int | float):
        return f"the number {js_number(value)}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"the string {js_string(shown)}"
    if isinstance(value, list):
        return "an array"
    return "an object"
