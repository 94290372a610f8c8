"""How a field explains itself when a value does not fit, carried into the generated JSON Schemas.

Problem messages need words a JSON Schema does not have: what a value is ("method class"), what a pattern
means ("kebab-case"), how to fix it, and a suggested correction. `described` puts them in the schema as
``x-`` keywords, so the Python walker (`mt_eval.strict`) and the Node validator built from the schemas
(``bridge/node/lib/contract/``) word every problem the same way:

==================  ===========================================================================
``x-what``          the noun for a value outside a list of choices ("… is not a valid access")
``x-pattern-means`` what a string must look like ("… is not kebab-case")
``x-hint``          how to fix a wrong value
``x-suggest``       a named correction computed from the wrong value (`SUGGESTIONS`)
``x-set-by``        a card field that only ``method.json`` sets (a card may repeat it, not change it)
``x-unknown-fields`` on an object: ``"warning"`` when unknown fields are reported as warnings
==================  ===========================================================================
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from typing import Any

import msgspec
import msgspec.inspect as mi

from mt_eval.js_text import js_number, js_string

WHAT = "x-what"
PATTERN_MEANS = "x-pattern-means"
HINT = "x-hint"
SUGGEST = "x-suggest"
SET_BY = "x-set-by"
UNKNOWN_FIELDS = "x-unknown-fields"


def described(*, what: str | None = None, pattern_means: str | None = None, hint: str | None = None,
              suggest: str | None = None, set_by: str | None = None, **meta: Any) -> msgspec.Meta:
    """A ``msgspec.Meta`` with the constraints in ``meta`` and the words for problem messages."""
    words = {WHAT: what, PATTERN_MEANS: pattern_means, HINT: hint, SUGGEST: suggest, SET_BY: set_by}
    if suggest is not None and suggest not in SUGGESTIONS:
        raise ValueError(f"unknown suggestion {suggest!r}; known: {', '.join(SUGGESTIONS)}")
    return msgspec.Meta(**meta, extra_json_schema={k: v for k, v in words.items() if v is not None})


def kebab_case(text: str) -> str:
    """A best-effort kebab-case form of ``text`` ("My Método v2" → "my-metodo-v2").

    `bridge/vectors/method-ids.json` pins this down for every implementation.
    """
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", text)
    return "-".join(re.findall(r"[a-z0-9]+", text.lower()))


def language_pair(text: str) -> str:
    """``"eng-spa"``, ``"ENG:spa"``, ``"eng -> spa"`` → ``"eng>spa"``."""
    return re.sub(r"\s*(?:->|→|:|-|>|/|_)\s*", ">", text.strip().lower(), count=1)


SUGGESTIONS: dict[str, Callable[[str], str]] = {"kebab-case": kebab_case, "language-pair": language_pair}


# ---- fixes worded as instructions, from a field's type and constraints (`mt_eval.strict`) -----------------

def describe(t: mi.Type) -> str:
    """The expected type in words."""
    if isinstance(t, mi.Metadata):
        return describe(t.type)
    if isinstance(t, mi.StrType):
        return "a string"
    if isinstance(t, mi.BoolType):
        return "true or false"
    if isinstance(t, mi.IntType):
        return "an integer"
    if isinstance(t, mi.FloatType):
        return "a number"
    if isinstance(t, mi.NoneType):
        return "null"
    if isinstance(t, mi.ListType):
        return f"an array of {_plural(describe(t.item_type))}"
    if isinstance(t, mi.StructType | mi.DictType):
        return "an object"
    if isinstance(t, mi.LiteralType):
        return "one of " + ", ".join(js_value(v) for v in t.values)
    if isinstance(t, mi.UnionType):
        return " or ".join(describe(x) for x in t.types if not isinstance(x, mi.NoneType))
    return "a value"


def _plural(noun: str) -> str:
    return {"a string": "strings", "an integer": "integers", "a number": "numbers", "an object": "objects",
            "true or false": "booleans"}.get(noun, noun)


def js_value(value: Any) -> str:
    return js_string(value) if isinstance(value, str) else js_number(value) if isinstance(value, int | float) \
        else "null" if value is None else str(value).lower()


def give(t: mi.Type, key: str | None) -> str:
    """How to fix a value of the wrong type: 'give "min_scored" as an integer, e.g. "min_scored": 1'."""
    expected = describe(t)
    field = f'"{key}"' if key is not None else None
    give = f"give {field} as {expected}" if field else f"give {expected}"
    sample = example(t)
    if sample is not None:
        return f"{give}, e.g. {field + ': ' if field else ''}{sample}"
    return give + (", in double quotes" if expected == "a string" else "")


def bounds_words(t: mi.IntType | mi.FloatType) -> str:
    """A number type's range in words: "from 0 to 1", "of at least 1", "greater than 0 and at most 2"."""
    low = f"at least {js_number(t.ge)}" if t.ge is not None else \
        f"greater than {js_number(t.gt)}" if t.gt is not None else None
    high = f"at most {js_number(t.le)}" if t.le is not None else \
        f"less than {js_number(t.lt)}" if t.lt is not None else None
    if t.ge is not None and t.le is not None:
        return f"from {js_number(t.ge)} to {js_number(t.le)}"
    text = " and ".join(w for w in (low, high) if w)
    return f"of {text}" if text.startswith("at ") else text


def example(t: mi.Type) -> str | None:
    """A short valid value of the type ``t`` (``msgspec.inspect``) as JSON, or None when none says more than
    the type's name does (a string's text, an object's fields)."""
    if isinstance(t, mi.Metadata):
        return example(t.type)
    if isinstance(t, mi.BoolType):
        return "true"
    if isinstance(t, mi.IntType | mi.FloatType):
        whole = isinstance(t, mi.IntType)
        candidates = (1, 0, t.ge, t.le) if whole else (1, 0.5, 0, t.ge, t.le)
        fits = [c for c in candidates if c is not None and _within(c, t)]
        return js_number(fits[0]) if fits else None
    if isinstance(t, mi.LiteralType):
        return js_value(t.values[0])
    if isinstance(t, mi.ListType):
        item = example(t.item_type)
        return f"[{item}]" if item is not None else "[]" if not t.min_length else None
    if isinstance(t, mi.UnionType):
        return next((e for e in map(example, t.types) if e is not None), None)
    return None


def _within(value: float, t: mi.IntType | mi.FloatType) -> bool:
    return ((t.ge is None or value >= t.ge) and (t.gt is None or value > t.gt) and (t.le is None or value <= t.le)
            and (t.lt is None or value < t.lt))
