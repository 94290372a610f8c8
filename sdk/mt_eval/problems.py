"""Problems found in a user's files: where (file + JSON path), what, and how to fix it.

Every validator in the SDK collects `Problem`s instead of stopping at the first one, so a
user sees everything that is wrong with a plugin in a single pass.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

import msgspec

from mt_eval.errors import ExpectedError
from mt_eval.js_text import js_string

Severity = Literal["error", "warning"]


class Problem(msgspec.Struct, frozen=True, kw_only=True):
    """One thing wrong with a file, located by a JSON path such as ``$.dependencies[2].license``."""

    file: str
    path: str
    message: str
    hint: str | None = None
    severity: Severity = "error"
    code: str = "invalid"

    def render(self) -> str:
        """The problem as one or two human-readable lines."""
        where = self.file if self.path == "$" else f"{self.file} {self.path}"
        text = f"{self.severity}: {where}: {self.message}"
        if self.hint:
            text += f"\n    fix: {self.hint}"
        return text


class Finding(msgspec.Struct, frozen=True):
    """A rule violation found inside one object, located relative to that object.

    ``at`` holds the keys and indexes below the object (empty for the object itself);
    `problems_at` turns findings into `Problem`s once the object's own path is known.
    """

    at: tuple[str | int, ...]
    message: str
    hint: str | None = None
    severity: Severity = "error"
    code: str = "rule"


def json_path(parts: Iterable[str | int]) -> str:
    """Render keys and indexes as a JSON path: ``("a", 2, "$b")`` → ``$.a[2]["$b"]``."""
    out = "$"
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part.isidentifier():
            out += f".{part}"
        else:
            out += "[" + js_string(part) + "]"  # (as JSON.stringify: a lone surrogate escaped, "\ud800")
    return out


def problems_at(file: str, base: Sequence[str | int], findings: Iterable[Finding]) -> list[Problem]:
    """Locate findings made inside the object found at ``base`` in ``file``."""
    return [
        Problem(
            file=file,
            path=json_path([*base, *f.at]),
            message=f.message,
            hint=f.hint,
            severity=f.severity,
            code=f.code,
        )
        for f in findings
    ]


class ProblemsError(ExpectedError, ValueError):
    """Raised when a file or plugin has errors; carries every problem, not just the first."""

    def __init__(self, problems: Sequence[Problem], summary: str | None = None) -> None:
        self.problems = list(problems)
        errors = [p for p in self.problems if p.severity == "error"]
        head = summary or f"{len(errors)} problem{'s' if len(errors) != 1 else ''} found"
        super().__init__("\n".join([head, *(p.render() for p in errors)]))
