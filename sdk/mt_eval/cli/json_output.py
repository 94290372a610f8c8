"""A command's ``--json`` report as it is written to standard output: indented JSON that is always UTF-8.

A file name that is not UTF-8 reaches Python as lone surrogates (its odd bytes), which neither JSON nor UTF-8 can
carry; such a name is written with its escapes, ``corpus-\\udcff.jsonl``, as standard error shows it."""

from __future__ import annotations

from typing import Any


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
    return msgspec.json.format(encoded, indent=2).decode() + "\n"
