"""What a method returns, turned into results: the one place every path uses.

The harness's in-process path (`mt_eval.harness.execution`), the bridge host (`mt_eval.bridge.method`), the Python
guest (`mt_eval.bridge.guest`), the translator-program adapters, ``mt-eval translate`` and ``mt-eval locales`` all go
through here; the Node side (``bridge/node/lib/results.js``) does the same from the same schema, and
``bridge/vectors/contract/results.json`` holds both to it.

- Each entry of a call gets exactly one result, in entry order. A result is matched to its entry by ``id`` — a string,
  and the id of an entry of that call — and nothing else; an entry with no result, or with several, gets an error
  result instead. ``predicted`` must be a string (or null when ``error`` says why the entry failed). Scoring depends
  on both, so neither is ever guessed.
- Results written for the upstream harness are accepted: a null field counts as absent, ``usage.total_tokens``,
  ``raw_predicted`` and ``cached`` are kept (the run card carries them), usage counts that are not whole numbers are
  rounded, and any other field moves into ``metadata`` (other usage fields into ``metadata.usage``). `ResultNotes`
  counts each kind of change, so a run reports them once, not once per entry.
- A str subclass (numpy's ``str_``) and a numpy number or array are taken as the plain value; a value JSON cannot hold
  fails its entry, as does text that is not valid Unicode (a lone surrogate) and a ``latency_s`` that is not a finite
  number (JSON would write an Infinity as null). Without ``latency_s``, the call's time is shared out.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from mt_eval.js_text import js_whole
from mt_eval.lone_surrogates import capped, writable
from mt_eval.records import NotJson, TranslationResult, Usage, not_json, plain_fields, result_problem, with_capped_error
from mt_eval.unmatched_results import LATER_STRAYS, NotAResult, strays_dropped
from mt_eval.unmatched_results import NOT_A_RESULT as NOT_A_RESULT  # (these three re-exported: the hosts' imports)
from mt_eval.unmatched_results import STRAY_REPORTS as STRAY_REPORTS
from mt_eval.unmatched_results import stray_stand_in as stray_stand_in

_FIELDS = frozenset(TranslationResult.__struct_encode_fields__)
_USAGE_FIELDS = frozenset(Usage.__struct_encode_fields__)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_DEFAULTS = msgspec.to_builtins(TranslationResult(id="-"))
_encode = msgspec.json.Encoder().encode
_to_result = msgspec.convert


class ResultNotes:
    """What was changed to accept a method's results, and for how many results (reported once per run)."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.stray_calls = 0  # calls whose results include some that match no entry, said (`stray_warning`)
        self.stray_seen = 0  # such calls, said or not (a latency call among them measured nothing)
        self.strays_said: set[str] = set()  # (a retried call that returns the same strays is not said again)

    def add(self, note: str, count: int = 1) -> None:
        self.counts[note] = self.counts.get(note, 0) + count

    def merge(self, counts: Mapping[str, int] | None) -> None:
        for note, count in (counts or {}).items():
            if isinstance(note, str) and isinstance(count, int) and count > 0:
                self.add(note, count)

    def __bool__(self) -> bool:
        return bool(self.counts)

    def stray_warning(self, unknown: list[Any], item: str = "entry") -> str | None:
        """The warning for one call's results that match no entry, or row (`strays_dropped`), for the first
        `STRAY_REPORTS` calls of a host that return some (the last of them says so); None for the others, and for
        one said already (the retry of a call): a method that does it in every batch is not reported a thousand
        times."""
        self.stray_seen += bool(unknown)
        if not unknown or self.stray_calls >= STRAY_REPORTS:
            return None
        if (said := strays_dropped(unknown, item)) in self.strays_said:
            return None
        self.stray_calls += 1
        self.strays_said.add(said)
        return said + (LATER_STRAYS.format(item=item) if self.stray_calls == STRAY_REPORTS else "")

    def summary(self) -> str:
        """One line: ``12 × "latency_s": null treated as absent; 3 × unknown field "x" moved into metadata``."""
        return "; ".join(f"{count} × {note}" for note, count in self.counts.items())


class _Unusable(msgspec.Struct, frozen=True):
    entry_id: str
    problem: str


def unusable(entry_id: str, problem: str) -> Any:
    """A returned item known only by its id, for a reason found before it could be read (e.g. invalid UTF-8)."""
    return _Unusable(entry_id, problem)


def error_result(entry_id: str, error: str, latency_s: float = 0.0) -> TranslationResult:
    """A failed entry's result; ``error`` made writable (`mt_eval.lone_surrogates.writable`: it may quote one)."""
    return TranslationResult(id=entry_id, error=writable(error), latency_s=latency_s)


def compact(result: TranslationResult) -> dict[str, Any]:
    """A result as it goes on the wire: fields at their default left out, in ``usage`` too (hosts fill them in)."""
    out: dict[str, Any] = {}
    for key, value in msgspec.to_builtins(result).items():
        default = _DEFAULTS[key]
        if key == "id" or value != default:
            if isinstance(value, dict) and default:
                value = {k: v for k, v in value.items() if k not in default or v != default[k]}
            out[key] = value
    return out


def _upstream_fields(item: dict[str, Any], notes: ResultNotes) -> dict[str, Any]:
    """The result with null fields dropped, fractional counts rounded and unknown fields moved into metadata."""
    out: dict[str, Any] = {}
    moved: dict[str, Any] = {}
    for key, value in item.items():
        if value is None:
            if key not in ("predicted", "error"):
                notes.add(f'"{key}": null treated as absent')
        elif key == "usage" and isinstance(value, dict):
            out["usage"] = _usage(value, moved, notes)
        elif key in _FIELDS:
            out[key] = js_whole(value) if key == "tool_call_count" else value  # (1.0 is 1, as Node reads it)
        else:
            moved[key] = value
            notes.add(f'unknown field "{writable(key)}" moved into metadata')
    if moved:
        metadata = out.get("metadata", {})
        if isinstance(metadata, dict):
            out["metadata"] = {**moved, **metadata}
    return out


def _usage(value: dict[str, Any], moved: dict[str, Any], notes: ResultNotes) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, count in value.items():
        if count is None:
            notes.add(f'"usage.{key}": null treated as absent')
        elif key not in _USAGE_FIELDS:
            moved.setdefault("usage", {})[key] = count
            notes.add(f'unknown field "usage.{writable(key)}" moved into metadata.usage')
        elif isinstance(count, float) and math.isfinite(count) and not count.is_integer():
            out[key] = math.floor(count + 0.5)
            notes.add(f'"usage.{key}" not a whole number, rounded')
        else:
            out[key] = int(count) if isinstance(count, float) and math.isfinite(count) else count
    return out


def _invalid_text(result: TranslationResult) -> str | None:
    """The first field, in schema order, holding text that is not valid Unicode (a lone surrogate)."""
    try:
        _encode(result)  # (the whole result at once: one that encodes holds none, and most do)
        return None
    except UnicodeEncodeError:
        pass
    for field in TranslationResult.__struct_fields__:
        value = getattr(result, field)
        if isinstance(value, str):
            bad = _LONE_SURROGATE.search(value) is not None
        elif isinstance(value, dict | list) and value:
            try:
                msgspec.json.encode(value)
                bad = False
            except UnicodeEncodeError:
                bad = True
        else:
            bad = False
        if bad:
            return f'"{field}" holds text that is not valid Unicode (a lone surrogate)'
    return None


def normalise_result(item: Any, *, notes: ResultNotes, default_latency_s: float = 0.0
                     ) -> TranslationResult | tuple[str, str] | None:
    """One returned item (what a method returned, or a `TranslationResult` a host decoded from a guest's answer) →
    a usable result, ``(id, why it is unusable)``, or None when it has no string id."""
    if isinstance(item, TranslationResult):
        problem = result_problem(item)
        return with_capped_error(item) if problem is None else (item.id, problem)
    if isinstance(item, _Unusable):
        return item.entry_id, item.problem
    if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not item["id"]:
        return None
    entry_id: str = str.__str__(item["id"])  # (a str subclass, e.g. numpy's str_, as plain text)
    try:
        item = plain_fields(item)
        result = msgspec.convert(item, TranslationResult)
    except NotJson as exc:
        return entry_id, str(exc)
    except (msgspec.ValidationError, UnicodeEncodeError):  # (the latter: msgspec naming a key "\ud800")
        from mt_eval.strict import decode_value

        fields = _upstream_fields(item, notes)
        decoded, problems = decode_value(fields, TranslationResult, file="result")
        if decoded is None:
            first = next(p for p in problems if p.severity == "error")
            return entry_id, f"{first.path}: {first.message}"
        result = decoded
    problem = result_problem(result) or _invalid_text(result)
    if problem is not None:
        return entry_id, problem
    if item.get("latency_s") is None:
        result.latency_s = default_latency_s
    return with_capped_error(result)


# Said of an entry left without a result when the call's results include some that match no entry (an integer id, a
# misspelled one, none at all): the likely reason, in the same words for every such entry, so they count as one error.
STRAYS = ", and results whose id matches no entry of the call (a result's id is its entry's id, a string)"


def not_a_list(label: str, returned: Any) -> str:
    """The error of every entry when ``label`` returned something other than a list: what it was, in the words a
    Python author knows, and how to return a list instead. A coroutine (an ``await`` left out before the call that
    made it) is closed here: Python would warn it was never awaited."""
    import inspect
    from collections.abc import Iterator, Mapping, Set

    from mt_eval.value_words import value_in_words

    fix = ""
    if returned is None:
        what, fix = "None", ": return the list of results (is a return statement missing?)"
    elif inspect.iscoroutine(returned):
        returned.close()
        what = "a coroutine, never awaited (an await missing before a call in translate?)"
    elif inspect.isawaitable(returned):
        what = "an awaitable, never awaited (an await missing before a call in translate?)"
    elif isinstance(returned, Iterator):
        what = "a generator" if inspect.isgenerator(returned) else "an iterator"
        fix = ": return a list, e.g. list(...)"
    elif isinstance(returned, Mapping):
        what, fix = "a dict", ": return a list of result dicts, one per entry"
    elif isinstance(returned, tuple | Set):
        what, fix = ("a tuple" if isinstance(returned, tuple) else "a set"), ": return a list"
    else:
        what = value_in_words(returned)
    return f"{label} returned {what}, not a list of results{fix}"


def results_for(entries: list[dict[str, Any]], returned: Any, *, label: str, notes: ResultNotes,
                elapsed_s: float = 0.0) -> tuple[list[TranslationResult], list[Any]]:
    """One result per entry, in entry order, from what ``label`` (e.g. "the method") returned for them;
    and the ids of returned results that match no entry (a `NotAResult` for an item that is no object)."""
    share = elapsed_s / len(entries) if entries else 0.0
    if not isinstance(returned, list):
        error = not_a_list(label, returned)
        return [error_result(str(e["id"]), error, share) for e in entries], []
    wanted = {str(e["id"]) for e in entries}
    found: dict[str, list[TranslationResult | str]] = {}
    unknown: list[Any] = []
    for item in returned:
        outcome = normalise_result(item, notes=notes, default_latency_s=share)
        if outcome is None:
            unknown.append(item.get("id") if isinstance(item, dict) else NotAResult(stray_stand_in(item)))
            continue
        entry_id = outcome.id if isinstance(outcome, TranslationResult) else outcome[0]
        if entry_id not in wanted:
            unknown.append(entry_id)
            continue
        found.setdefault(entry_id, []).append(outcome if isinstance(outcome, TranslationResult) else outcome[1])
    out: list[TranslationResult] = []
    missing = f"{label} returned no result for this entry" + (STRAYS if unknown else "")
    for entry in entries:
        entry_id = str(entry["id"])
        mine = found.get(entry_id, [])
        if not mine:
            out.append(error_result(entry_id, missing, share))
        elif len(mine) > 1:
            out.append(error_result(entry_id, f"{label} returned {len(mine)} results for this entry", share))
        elif isinstance(mine[0], str):
            out.append(error_result(entry_id, f"{label} returned an unusable result: {mine[0]}", share))
        else:
            out.append(mine[0])
    return out, unknown


def normalise_returned(returned: Any, *, notes: ResultNotes, default_latency_s: float = 0.0
                       ) -> list[TranslationResult]:
    """What a guest sends back: each item with a string id as a usable result or an error result for it."""
    if not isinstance(returned, list):
        return []
    out = []
    for item in returned:
        outcome = normalise_result(item, notes=notes, default_latency_s=default_latency_s)
        if isinstance(outcome, TranslationResult):
            out.append(outcome)
        elif outcome is not None:
            out.append(error_result(outcome[0], f"the method returned an unusable result: {outcome[1]}",
                                    default_latency_s))
    return out


def compact_returned(returned: list[Any], *, notes: ResultNotes, default_latency_s: float = 0.0) -> bytes:
    """What a guest sends for the results a method returned: the JSON list of `normalise_returned`'s results, each
    `compact` (one in the protocol's shape already as it is, its text checked by encoding it), then a
    `stray_stand_in` for each item without a string id, so its host says it as an in-process call's host does."""
    quick = _compact_as_given(returned, default_latency_s)
    if quick is not None:
        try:
            return _encode(quick)
        except (UnicodeEncodeError, TypeError):
            pass  # text that is not valid Unicode, a numpy value: the long way makes it plain or fails its entry
    results = normalise_returned(returned, notes=notes, default_latency_s=default_latency_s)
    strays = [stray_stand_in(item) for item in returned
              if not (isinstance(item, dict) and isinstance(item.get("id"), str) and item["id"])]
    return _encode([compact(result) for result in results] + strays)


def _compact_as_given(returned: list[Any], default_latency_s: float) -> list[dict[str, Any]] | None:
    """`compact` of each result, straight from the dicts the method returned, or None when one is not a dict of
    TranslationResult's fields with their types and no cross-field problem (the long way then applies)."""
    out = []
    for item in returned:
        if type(item) is not dict:
            return None
        try:
            result = _to_result(item, TranslationResult)
        except msgspec.ValidationError:
            return None
        if result_problem(result) is not None:
            return None
        wire: dict[str, Any] = {}
        for key, value in item.items():
            if type(value) in (dict, list) and not_json(value) is not None:
                return None  # (the long way names the field)
            default = _DEFAULTS[key]
            if key == "error" and value is not None:
                value = capped(value)
            if key == "id" or value != default:
                if type(value) is dict and default:
                    value = {k: v for k, v in value.items() if k not in default or v != default[k]}
                    if not value:
                        continue
                wire[key] = value
        if "latency_s" not in item and default_latency_s:
            wire["latency_s"] = default_latency_s
        out.append(wire)
    return out


def parse_returned(raw: bytes) -> Any:
    """A guest's JSON as JavaScript reads it (lone surrogate escapes kept, so they fail their entry only)."""
    from mt_eval.json_input import js_float, js_int

    return json.loads(raw, parse_int=js_int, parse_float=js_float)


def totals(results: Iterable[TranslationResult]) -> dict[str, Any]:
    """Usage totals and the cached count of a run's results (None where no result reports it)."""
    prompt = completion = 0
    total: int | None = None
    cached: int | None = None
    for r in results:
        prompt += r.usage.prompt_tokens
        completion += r.usage.completion_tokens
        if r.usage.total_tokens is not None:
            total = (total or 0) + r.usage.total_tokens
        if r.cached is not None:
            cached = (cached or 0) + int(r.cached)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": total, "cached": cached}
