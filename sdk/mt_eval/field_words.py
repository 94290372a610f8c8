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
