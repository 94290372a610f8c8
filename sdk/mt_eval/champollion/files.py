"""A champollion project's files on disk, read as the Node side reads them (``lib/champollion/files.js``).

JSON files — locale files, the lock file, a plugin's method.json — are read by the shared reader
(`mt_eval.json_input`, Node's ``lib/json-text.js``): a syntax error names its line and column and the fix, an
invalid byte its offset, in the same words on both sides. OS errors are worded as the C library's
``strerror``, which the Node side reproduces.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mt_eval.json_input import parse_json


class FileProblem(ValueError):
    """A file that cannot be read or written: ``str()`` names it, says what is wrong and, when known, the fix."""

    def __init__(self, path: Path, what: str, fix: str | None = None) -> None:
        self.path = path
        self.what = what
        self.fix = fix
        super().__init__(f"{path}: {what}" + (f"; {fix}" if fix else ""))


def read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise FileProblem(path, f"cannot read it: {exc.strerror or exc}") from exc


def parse_json_file(raw: bytes, path: Path) -> Any:
    """The JSON value of a file's bytes; `FileProblem` for a syntax error or invalid UTF-8. A repeated key keeps
    its first place and its last value, as JSON.parse and Node's reader do."""
    value, problems = parse_json(raw, file=str(path))
    errors = [p for p in problems if p.code != "duplicate-key"]
    if errors:
        raise FileProblem(path, errors[0].message, errors[0].hint)
    return value


def read_json(path: Path) -> Any:
    return parse_json_file(read_bytes(path), path)
