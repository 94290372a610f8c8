"""Values written as JavaScript writes them, so both runtimes produce the same text.

Problem messages (`mt_eval.strict`) and champollion's files (`mt_eval.champollion.jsonfmt`) quote values
the way ``JSON.stringify`` and ``Number.prototype.toString`` do; the Node side prints the same bytes.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

# JavaScript's Number.MAX_SAFE_INTEGER: the largest integer every JSON reader holds exactly, and the largest the
# Node side takes as an integer (Number.isSafeInteger), so both runtimes accept the same integers.
SAFE_INTEGER = 2**53 - 1
INEXACT_INTEGER = f"too large to be exact in JSON (integers run from -{SAFE_INTEGER} to {SAFE_INTEGER})"
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def js_whole(value: Any) -> Any:
    """A number JavaScript holds as an integer (``1.0`` is ``1``) as Python's int; any other value as it is."""
    if isinstance(value, float) and value.is_integer() and abs(value) <= SAFE_INTEGER:
        return int(value)
    return value


def beyond_exact_integers(value: object) -> bool:
    """Whether ``value`` is a whole number too large (or small) for an integer field: past `SAFE_INTEGER`, where
    JSON readers (JavaScript's) hold only an approximation of it."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    whole = isinstance(value, int) or (math.isfinite(value) and value.is_integer())
    return whole and abs(value) > SAFE_INTEGER


def js_number(value: float) -> str:
    """A number as ECMAScript's Number::toString (and so JSON.stringify) writes it."""
    if isinstance(value, int) and abs(value) <= SAFE_INTEGER:
        return str(value)
    number = float(value)
    if not math.isfinite(number):
        return "null"
    if number == 0:
        return "0"
    mantissa, _, exponent = repr(abs(number)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    fraction = fraction.rstrip("0")
    digits = whole + fraction
    significant = digits.lstrip("0")
    # abs(number) == 0.<significant> × 10^n
    n = len(significant) + int(exponent or 0) - len(fraction)
    s = significant.rstrip("0")
    k = len(s)
    sign = "-" if number < 0 else ""
    if k <= n <= 21:
        text = s + "0" * (n - k)
    elif 0 < n <= 21:
        text = s[:n] + "." + s[n:]
    elif -6 < n <= 0:
        text = "0." + "0" * -n + s
    else:
        e = n - 1
        text = (s if k == 1 else s[0] + "." + s[1:]) + "e" + ("+" if e >= 0 else "-") + str(abs(e))
    return sign + text


def js_string(text: str) -> str:
    """A string literal as JSON.stringify writes it."""
    out = json.dumps(text, ensure_ascii=False)
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", out)


def same_json(a: Any, b: Any) -> bool:
    """Whether two JSON values are the same value, as JavaScript's strict equality sees a scalar: unlike Python's
    ``==``, ``true`` is not ``1`` (nor ``false`` ``0``); objects and lists compared member by member."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(value, b[key]) for key, value in a.items())
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)
