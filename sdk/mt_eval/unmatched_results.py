"""Returned results that match no entry of the call they answer: dropped, and said in the words every host uses, in
process or through a guest, Python or Node (``bridge/node/lib/unmatched.js``).

A guest does not send such an item as it is: it sends its `stray_stand_in`, just enough for its host to say it as
this process would (`strays_dropped`). The warning names what came back — the ids that match no entry, or the
first item that is no object, in the words of `mt_eval.value_words` — and what a method returns instead.
"""

from __future__ import annotations

import json
import math
from typing import Any

STRAY_REPORTS = 3  # calls whose unmatched results a host reports (lib/unmatched.js: STRAY_REPORTS)
LATER_STRAYS = "; later calls' results that match no {item} are dropped without a word"
EXCERPT = 41  # characters of a string a guest sends: `value_in_words` shows 40, or 37 and "..." past them


class NotAResult:
    """A returned item that is no object, as `mt_eval.results.results_for` gives it among the ids of the results
    that match no entry: ``value``, its `stray_stand_in`."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


NOT_A_RESULT = NotAResult(None)  # an item that is no object, not shown (what a decide call returned)


def strays_dropped(unknown: list[Any], item: str = "entry") -> str:
    """The warning for returned results that match no entry sent (`results_for`'s ``unknown``: their ids, or a
    `NotAResult` for an item that is no object), in the words every host uses, in process or through a guest
    (lib/unmatched.js: straysDropped); ``item``: "row" for a decide call's."""
    from mt_eval.js_text import js_number, js_string
    from mt_eval.value_words import value_in_words

    def shown(value: Any) -> str:
        if isinstance(value, str):
            return js_string(value)
        if value is None or isinstance(value, bool):
            return json.dumps(value)
        if isinstance(value, int | float) and math.isfinite(value):
            return js_number(value)
        return "an object" if isinstance(value, dict) else "a list" if isinstance(value, list) else "a value"

    ids = list(dict.fromkeys(shown(u) for u in unknown if not isinstance(u, NotAResult)))
    parts = []
    if ids:
        parts.append("ids " + ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else ""))
    if others := [u for u in unknown if isinstance(u, NotAResult)]:
        first = next((value_in_words(u.value) for u in others if u is not NOT_A_RESULT), None)
        parts.append(f"{len(others)} item{'s that are' if len(others) > 1 else ' that is'} not an object"
                     + ("" if first is None else f"{', e.g.' if len(others) > 1 else ':'} {first}"))
    expected = ('a result is {"id": entry["id"], "predicted": TEXT}, one per entry' if item == "entry" else
                f"a result's id is its {item}'s id, a string")
    return (f"the method returned results that match no {item} it was sent ({'; '.join(parts)}); they were dropped "
            f"({expected})")


def stray_stand_in(item: Any) -> Any:
    """What a guest sends for a returned item without a string id, for its host to say it as `strays_dropped` says
    it in process (lib/unmatched.js: strayStandIn). For an object: its id so shown (an empty list or object for
    one, null for what JSON cannot carry). For an item that is no object, the item: a string cut to `EXCERPT`
    characters, a number, true, false or null as it is, an empty list for a list (or tuple), null for the rest."""
    if isinstance(item, dict):
        value = item.get("id")
        return {"id": value if _scalar(value) else {} if isinstance(value, dict) else [] if isinstance(value, list)
                else None}
    if isinstance(item, str):
        return str.__str__(item)[:EXCERPT]
    return item if _scalar(item) else [] if isinstance(item, list | tuple) else None


def _scalar(value: Any) -> bool:
    """A string, a number JSON holds, true, false or null."""
    number = (isinstance(value, float) and math.isfinite(value)) or (isinstance(value, int) and abs(value) < 2**63)
    return isinstance(value, str | bool | None) or number
