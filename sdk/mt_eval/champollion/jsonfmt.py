"""JSON read and written exactly as the Node side does, so both write byte-identical files.

The Node side writes ``JSON.stringify(value, null, 2)`` plus a newline, and reads numbers as doubles.
`format_json` reproduces that: key order as read, two-space indentation, non-ASCII kept, lone surrogates
escaped, and numbers as ECMAScript prints them (``1.0`` → ``1``, ``1e-7`` → ``1e-7``, integers beyond
2^53 rounded to a double) — except a `JsonNumber` (a locale file's number, read as written), which is
written as it was read (``1.50``, ``-0``, ``12345678901234567890``). `bridge/vectors/champollion/json.json`
pins the format for both sides.
"""

from __future__ import annotations

import json
from typing import Any

from mt_eval.js_text import SAFE_INTEGER, js_number, js_string
from mt_eval.json_input import JsonNumber

__all__ = ["format_json", "js_number", "js_string", "parse_json_text", "utf16_key"]


def parse_json_text(text: str) -> Any:
    """Parse JSON as JavaScript would: numbers become doubles (integers stay ``int`` while exact)."""
    return json.loads(text.removeprefix("\ufeff"), parse_int=_parse_int)


def _parse_int(text: str) -> int | float:
    value = int(text)
    return value if abs(value) <= SAFE_INTEGER else float(text)


def format_json(value: Any) -> str:
    """``JSON.stringify(value, null, 2) + "\\n"``, a `JsonNumber` written as it was read."""
    parts: list[str] = []
    _write(value, "", parts)
    parts.append("\n")
    return "".join(parts)


def _write(value: Any, indent: str, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(js_string(value))
    elif isinstance(value, JsonNumber):
        out.append(value.text)
    elif isinstance(value, int | float):
        out.append(js_number(value))
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = indent + "  "
        out.append("{")
        for i, (key, item) in enumerate(value.items()):
            out.append(("," if i else "") + "\n" + inner + js_string(str(key)) + ": ")
            _write(item, inner, out)
        out.append("\n" + indent + "}")
    elif isinstance(value, list | tuple):
        if not value:
            out.append("[]")
            return
        inner = indent + "  "
        out.append("[")
        for i, item in enumerate(value):
            out.append(("," if i else "") + "\n" + inner)
            _write(item, inner, out)
        out.append("\n" + indent + "]")
    else:
        raise TypeError(f"cannot write {type(value).__name__} as JSON")


def utf16_key(text: str) -> bytes:
    """Sort key that orders strings as JavaScript's default sort does (by UTF-16 code units)."""
    return text.encode("utf-16-be", "surrogatepass")
