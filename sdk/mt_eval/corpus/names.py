"""The names the reader gives a meaning to, and the names that look like misspellings of them.

An entry field (or TSV column) named ``refrence`` is not the reference: it would be an extra field, handed to
the method under evaluation, while the corpus is read as translation only. So a name that is one slip away
from a name the reader knows is doubtful. A slip is a difference of case, or, for names of five letters or
more, one letter added, dropped or changed, or two neighbours swapped (``sorce``, ``familly``, ``segmnet``,
``sources``); ``translator`` or ``source_lang`` are names of their own.
"""

from __future__ import annotations

from collections.abc import Iterable

from mt_eval.corpus.families import FAMILY_FIELDS
from mt_eval.corpus.model import ROLE_OF_NAME
from mt_eval.gold import GOLD_FIELDS

# Every entry field the reader or the harness reads: roles and their aliases, the gold, families, segments
KNOWN_FIELDS = frozenset({*ROLE_OF_NAME, *GOLD_FIELDS, *FAMILY_FIELDS, "segment"})
_SHORTEST_SPELLED = 5  # shorter ones (id, src, ref, tgt, pair) only match up to case: "ids", "rev", "paid" are others


def misspelling_of(name: str, known: Iterable[str] = KNOWN_FIELDS) -> str | None:
    """The known name ``name`` seems a misspelling of, or None (also when ``name`` is itself known)."""
    names = set(known)
    if name in names:
        return None
    lower = name.lower()
    if lower in names:
        return lower
    close = [k for k in sorted(names) if len(k) >= _SHORTEST_SPELLED and _one_slip(lower, k)]
    return close[0] if close else None


def _one_slip(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by one letter added, dropped or changed, or two neighbours swapped."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    if len(a) == len(b):
        rest_a, rest_b = a[start + 1:], b[start + 1:]
        swapped = a[start:start + 2] == b[start:start + 2][::-1] and a[start + 2:] == b[start + 2:]
        return rest_a == rest_b or swapped
    longer, shorter = (a, b) if len(a) > len(b) else (b, a)
    return longer[start + 1:] == shorter[start:]
