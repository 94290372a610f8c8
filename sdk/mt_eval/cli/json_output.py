"""A command's ``--json`` report as it is written to standard output: indented JSON that is always UTF-8.

A file name that is not UTF-8 reaches Python as lone surrogates (its odd bytes), which neither JSON nor UTF-8 can
carry; such a name is written with its escapes, ``corpus-\\udcff.jsonl``, as standard error shows it. Characters
that act on a terminal without being seen (U+202E turns the text after it around, `mt_eval.control_chars`) are
written as JSON's escapes (``\\u202e``): a reader of the JSON gets them as they are, and a terminal shows them."""

from __future__ import annotations

import re
from typing import Any

from mt_eval.control_chars import INVISIBLE

_UNSEEN = re.compile(f"[\x7f-\x9f{INVISIBLE}]")  # (JSON escapes the C0 controls itself)


def json_text(document: Any) -> str:
    """``document`` (builtins or msgspec Structs) as indented JSON with a final newline."""
    import msgspec

    from mt_eval.lone_surrogates import writable

    def valid(value: Any) -> Any:
        if isinstance(value, str):
            return writable(value)
        if isinstance(value, dict):
            return {valid(key): valid(item) for key, item in value.items()}
        return [valid(item) for item in value] if isinstance(value, list) else value

    try:
        encoded = msgspec.json.encode(document)
    except UnicodeEncodeError:
        encoded = msgspec.json.encode(valid(msgspec.to_builtins(document)))
    return unseen_escaped(msgspec.json.format(encoded, indent=2).decode()) + "\n"


def unseen_escaped(json_document: str) -> str:
    """JSON text with DEL, the C1 controls and the invisible characters written as JSON's escapes (``\\u202e``),
    which JSON writers leave as they are."""
    return _UNSEEN.sub(_json_escape, json_document)


def _json_escape(found: re.Match[str]) -> str:
    """A character as JSON writes it escaped: ``\\u202e``, or its two UTF-16 halves beyond U+FFFF."""
    units = found.group().encode("utf-16-be")
    return "".join(f"\\u{int.from_bytes(units[i:i + 2], 'big'):04x}" for i in range(0, len(units), 2))
