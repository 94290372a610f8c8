"""Licence expressions: SPDX (checked with the `license-expression` library), `proprietary` or `none`.

Whether a licence is *open* comes from the ScanCode LicenseDB categories that ship with
`license-expression`: Permissive, Copyleft, Copyleft Limited and Public Domain licences are
open; Source-available, Free Restricted, Proprietary Free, Commercial and the rest are not.
In an expression, ``A AND B`` is open when both are, ``A OR B`` when either is (you may choose).
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

PROPRIETARY = "proprietary"
NONE = "none"
OPEN_CATEGORIES = frozenset({"Permissive", "Copyleft", "Copyleft Limited", "Public Domain"})


@dataclass(frozen=True)
class LicenceCheck:
    """The outcome of checking one licence string."""

    ok: bool
    normalized: str | None = None
    is_open: bool = False
    message: str | None = None
    hint: str | None = None


@cache
def _licensing() -> Any:
    from license_expression import get_spdx_licensing

    return get_spdx_licensing()


@cache
def _categories() -> dict[str, str]:
    """SPDX key (lower case) → ScanCode category, including each licence's other SPDX keys."""
    import license_expression

    index = Path(license_expression.__file__).parent / "data" / "scancode-licensedb-index.json"
    categories: dict[str, str] = {}
    for entry in json.loads(index.read_text(encoding="utf-8")):
        category = entry.get("category") or ""
        for key in [entry.get("spdx_license_key"), *(entry.get("other_spdx_license_keys") or [])]:
            if key:
                categories.setdefault(key.lower(), category)
    return categories


@cache
def _known_keys() -> list[str]:
    symbols = _licensing().known_symbols
    return sorted({str(key) for key in symbols})


def _is_open(expression: Any) -> bool:
    from license_expression import AND, OR, LicenseSymbol, LicenseWithExceptionSymbol

    if isinstance(expression, LicenseWithExceptionSymbol):
        return _is_open(expression.license_symbol)
    if isinstance(expression, LicenseSymbol):
        return _categories().get(expression.key.lower()) in OPEN_CATEGORIES
    if isinstance(expression, AND):
        return all(_is_open(arg) for arg in expression.args)
    if isinstance(expression, OR):
        return any(_is_open(arg) for arg in expression.args)
    return False


def check_licence(text: str) -> LicenceCheck:
    """Check a dependency or method licence: an SPDX expression, ``proprietary`` or ``none``."""
    if text in (PROPRIETARY, NONE):
        return LicenceCheck(ok=True, normalized=text, is_open=False)
    if text.strip().lower() in (PROPRIETARY, NONE):
        return LicenceCheck(
            ok=False,
            message=f'licence "{text}" must be written exactly "{text.strip().lower()}"',
            hint=f'write "{text.strip().lower()}"',
        )
    from license_expression import ExpressionError

    licensing = _licensing()
    try:
        parsed = licensing.parse(text, validate=True, strict=True)
    except ExpressionError as exc:
        return LicenceCheck(ok=False, message=_unknown_message(text, str(exc)), hint=_licence_hint(text))
    if parsed is None:
        return LicenceCheck(ok=False, message="licence is empty", hint=_generic_hint())
    normalized = str(parsed)
    return LicenceCheck(ok=True, normalized=normalized, is_open=_is_open(parsed))


def _unknown_message(text: str, error: str) -> str:
    error = error.rstrip(".")
    if error.startswith("Unknown license key(s)"):
        unknown = error.partition(":")[2].strip()
        return f'"{text}" is not a valid SPDX licence expression: unknown licence identifier {unknown}'
    return f'"{text}" is not a valid SPDX licence expression: {error}'


def _licence_hint(text: str) -> str:
    tokens = [t for t in text.replace("(", " ").replace(")", " ").split() if t.upper() not in ("AND", "OR", "WITH")]
    keys = _known_keys()
    lower = {k.lower(): k for k in keys}
    suggestions: list[str] = []
    for token in tokens:
        if token.lower() in lower:
            continue
        variants = [re.sub(r"v(\d)(\.\d)?", lambda m: f"-{m[1]}{m[2] or '.0'}", token.lower()), token.lower()]
        for variant in dict.fromkeys(variants):
            close = difflib.get_close_matches(variant, list(lower), n=3, cutoff=0.6)
            suggestions.extend(lower[c] for c in close if not lower[c].startswith("LicenseRef"))
    if suggestions:
        return "did you mean " + " or ".join(f'"{s}"' for s in dict.fromkeys(suggestions)) + "? " + _generic_hint()
    return _generic_hint()


def _generic_hint() -> str:
    return (
        'use an SPDX licence expression such as "MIT", "GPL-2.0-or-later" or "Apache-2.0 OR MIT" '
        '(see spdx.org/licenses), or "proprietary", or "none" when there is no licence'
    )
