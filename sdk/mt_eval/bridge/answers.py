"""What a host makes of a guest's answer to a batched request: one result per entry (or row), in entry order.

The usual answer — every entry answered once, in order, in the schema's shape — is decoded in one step and taken
as it is; anything else goes through `mt_eval.results`, item by item, so a malformed result fails its own entry
and no other. An answer without a ``results`` list raises `WithoutResults`: the request failed as a whole, and
the host splits it to find the entry it concerns, as for a line it could not read. A translate answer's
``latency_s`` (bridge/PROTOCOL.md, *Results*) is given to each result whose own latency is 0. The batched requests
themselves are here too (`RequestKind`: `TRANSLATE`, `DECIDE`), with what is wrong with a batch a caller gave.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from mt_eval.bridge import messages as m
from mt_eval.bridge.lines import id_in
from mt_eval.gold import GOLD_FIELDS, method_view
from mt_eval.lone_surrogates import MESSAGE_LIMIT
from mt_eval.records import TranslationResult, result_problem, with_capped_error
from mt_eval.results import NOT_A_RESULT, ResultNotes, error_result, parse_returned, results_for, unusable
from mt_eval.value_words import value_in_words

log = logging.getLogger("mt_eval.bridge")


class _Translated(msgspec.Struct):
    """A translate answer in the usual shape, decoded in one step (anything else takes `mt_eval.results`)."""

    results: list[TranslationResult]
    normalised: dict[str, int] | None = None
    latency_s: float | None = None  # the latency of each result at 0 (its default): see `_share_latency`


_results_decoder = msgspec.json.Decoder(_Translated)
_answer_decoder = msgspec.json.Decoder(dict[str, msgspec.Raw])
_items_decoder = msgspec.json.Decoder(list[msgspec.Raw])
_raw_results_decoder = msgspec.json.Decoder(dict[str, list[msgspec.Raw]])


class WithoutResults(m.BridgeError):
    """A guest answered a batched request without a ``results`` list: the request failed as a whole."""

    def __init__(self, label: str, request: str, raw: msgspec.Raw) -> None:
        super().__init__(m.INTERNAL_ERROR, f'the guest answered {request} without a "results" list (got '
                         f'{_got(raw, "results")})')  # (``label`` names it in the log)


def match_results(batch: list[dict[str, Any]], raw: msgspec.Raw, label: str,
                  notes: ResultNotes | None = None) -> list[dict[str, Any]]:
    """One result per entry, in entry order (`mt_eval.results`); what the guest changed to accept its method's
    results, and what this host changed to accept the guest's, is counted in ``notes``. `WithoutResults` when the
    answer holds no results list."""
    notes = notes if notes is not None else ResultNotes()
    try:
        decoded = _results_decoder.decode(raw)
        returned: Any = decoded.results
        if decoded.normalised:
            notes.merge(decoded.normalised)
        if decoded.latency_s is not None:
            _share_latency(returned, decoded.latency_s)
    except (msgspec.ValidationError, msgspec.DecodeError):
        returned = _each_result(raw, label, notes)
    else:
        if _one_each_in_order(batch, returned):  # the usual answer: what `results_for` would return, as it is
            if len(raw) > MESSAGE_LIMIT:  # (only an answer this long can hold an error to cap)
                returned = [with_capped_error(result) for result in returned]
            return msgspec.to_builtins(returned)  # type: ignore[no-any-return]
    paired, unknown = results_for(batch, returned, label="the method", notes=notes)  # (as for an in-process call)
    if unknown and (said := notes.stray_warning(unknown)):  # (as an in-process call's are said, and the Node host's)
        log.warning("%s", said)
    return msgspec.to_builtins(paired)  # type: ignore[no-any-return]


def _one_each_in_order(batch: list[dict[str, Any]], returned: list[TranslationResult]) -> bool:
    """Whether the guest answered every entry once, in entry order, with a usable result (entry ids unique)."""
    if len(returned) != len(batch):
        return False
    if len(batch) == 1:  # (the usual one-entry call: no pairs to walk, no ids to count)
        return returned[0].id == batch[0]["id"] and result_problem(returned[0]) is None
    for entry, result in zip(batch, returned):  # noqa: B905 (same lengths)
        if result.id != entry["id"] or result_problem(result) is not None:
            return False
    return len(batch) == 1 or len({entry["id"] for entry in batch}) == len(batch)


def match_decisions(batch: list[dict[str, Any]], raw: msgspec.Raw, label: str, notes: ResultNotes | None = None
                    ) -> list[dict[str, Any]]:
    """One result per row, in row order, as the guest sent it; missing and repeated results become row errors, and
    results for no row sent are dropped (said for the first calls: ``notes``). `WithoutResults` when the answer holds
    no results list."""
    try:
        items = _raw_results_decoder.decode(raw)["results"]
    except (msgspec.ValidationError, msgspec.DecodeError, KeyError):
        raise WithoutResults(label, "decide", raw) from None
    found: dict[str, list[Any]] = {str(row["id"]): [] for row in batch}
    unknown: list[Any] = []
    for item in items:
        decoded = msgspec.json.decode(item)
        item_id = decoded.get("id") if isinstance(decoded, dict) else NOT_A_RESULT
        if isinstance(item_id, str) and item_id in found:
            found[item_id].append(decoded)
        else:
            unknown.append(item_id)
    if unknown and (said := (notes if notes is not None else ResultNotes()).stray_warning(unknown, "row")):
        log.warning("%s", said)  # (as an in-process decide call's are said: mt_eval.decisions.execution)
    out = []
    for row_id, given in found.items():
        if len(given) == 1:
            out.append(given[0])
        else:
            what = "no result" if not given else f"{len(given)} results"
            out.append({"id": row_id, "error": f"the method returned {what} for this row"})
    return out


def _each_result(raw: msgspec.Raw, label: str, notes: ResultNotes) -> list[Any]:
    """The results of an answer that does not decode in one step, item by item: an item that is not even JSON
    (invalid UTF-8, say) fails its own entry — when its id can be read — and no other. `WithoutResults` when the
    answer holds no results list."""
    try:
        body = _answer_decoder.decode(raw)
        items = _items_decoder.decode(body["results"]) if "results" in body else None
    except (msgspec.ValidationError, msgspec.DecodeError):
        items = None
    if items is None:
        raise WithoutResults(label, "translate", raw)
    if "normalised" in body:
        with contextlib.suppress(ValueError):
            notes.merge(parse_returned(bytes(body["normalised"])))
    shared = None
    if "latency_s" in body:
        with contextlib.suppress(ValueError):
            shared = parse_returned(bytes(body["latency_s"]))
    returned: list[Any] = []
    for item in items:
        try:
            returned.append(parse_returned(bytes(item)))
        except ValueError as exc:
            entry_id = id_in(bytes(item))
            why = (f"not valid UTF-8 (byte 0x{exc.object[exc.start]:02x})" if isinstance(exc, UnicodeDecodeError)
                   else f"not valid JSON: {exc}")
            log.warning("guest %s sent a result for %r that is %s", label, entry_id, why)
            if isinstance(entry_id, str):
                returned.append(unusable(entry_id, why))
    if shared is not None:
        _share_latency(returned, shared)
    return returned


def _got(raw: msgspec.Raw, key: str) -> str:
    """What an answer holds under ``key``, in words ("nothing" when the answer is not an object or lacks it)."""
    try:
        answer = parse_returned(bytes(raw))
    except ValueError:
        return "a line that is not JSON"
    if not isinstance(answer, dict) or key not in answer:
        return "nothing"
    return value_in_words(answer[key])


def _share_latency(returned: list[Any], latency_s: Any) -> None:
    """Give a translate answer's ``latency_s`` (a guest's share of the call's time, sent once when the host asked
    for it at initialize) to each of its results whose own latency is 0, the default a guest leaves out."""
    if type(latency_s) not in (int, float) or not 0 < latency_s < float("inf"):
        return
    for result in returned:
        if isinstance(result, TranslationResult):
            if result.latency_s == 0:
                result.latency_s = latency_s
        elif isinstance(result, dict) and _at_zero(result.get("latency_s")):
            result["latency_s"] = latency_s


def _at_zero(latency_s: Any) -> bool:
    return latency_s is None or (type(latency_s) in (int, float) and latency_s == 0)


def _entry_error(entry_id: str, error: str) -> dict[str, Any]:
    return msgspec.to_builtins(error_result(entry_id, error))  # type: ignore[no-any-return]


@dataclass(frozen=True)
class RequestKind:
    """A request that carries a batch: its name, the params key of the batch, how results come back, and what is
    wrong with a batch a caller gave (in the words a guest refuses it with, named as ``where`` says)."""

    request: str
    key: str
    owner: str  # what an item is called in messages: "entry", "row"
    match: Callable[[list[dict[str, Any]], msgspec.Raw, str, ResultNotes], list[dict[str, Any]]]
    fail: Callable[[str, str], dict[str, Any]]
    problem: Callable[[Any, str], str | None]


def _rows_problem(rows: Any, where: str) -> str | None:
    from mt_eval.decisions.records import rows_problem

    return rows_problem(list(rows) if isinstance(rows, tuple) else rows, where)


TRANSLATE = RequestKind("translate", "entries", "entry", match_results, _entry_error, m.entries_problem)
DECIDE = RequestKind("decide", "rows", "row", match_decisions, lambda row_id, error: {"id": row_id, "error": error},
                     _rows_problem)


def refuse_unshaped(kind: RequestKind, items: Any) -> None:
    """`TypeError` saying how ``items``, the entries or rows a call was given, break the protocol's rules, when they
    do, before anything is sent: a guest's words for them, without its ``params.`` (`messages.entries_problem`,
    `mt_eval.decisions.records.rows_problem`), as the Node host refuses them."""
    problem = kind.problem(items, kind.key)
    if problem is not None:
        raise TypeError(problem)


def entries_to_send(entries: Any) -> list[dict[str, Any]]:
    """The entries a caller gave ``translate``, as they are sent: themselves when they carry no gold (they are only
    encoded, never handed to code in this process), else copies without it (`mt_eval.gold`). Entries no guest takes
    (ids that are non-empty strings, once each, and string sources) are a `TypeError` in a guest's words, ``params.``
    aside, as the Node host refuses them; found in the same one pass over them."""
    if type(entries) is not list:  # (a tuple, say)
        refuse_unshaped(TRANSLATE, entries)
        return method_view(entries)
    gold = False
    ids = set()
    for entry in entries:
        if type(entry) is not dict or type(entry_id := entry.get("id")) is not str or not entry_id \
                or type(entry.get("source")) is not str:
            refuse_unshaped(TRANSLATE, entries)  # (a Mapping, or a str subclass, is checked as a guest checks it)
            return method_view(entries)
        ids.add(entry_id)
        if not gold and not GOLD_FIELDS.isdisjoint(entry):
            gold = True
    if len(ids) != len(entries):
        refuse_unshaped(TRANSLATE, entries)
    return method_view(entries) if gold else entries


class UnmatchedAnswers:
    """Answers whose id names no request in flight (or no request at all: `unattributed`): the first is logged with
    its id, as a warning, later ones at debug. A guest that answers with the wrong id does so every time, and its
    requests time out: the timeout of one that waited meanwhile names such an answer as why it got none (`cause`),
    as the Node host's does; but ``initialize`` answered so fails at once, as no guest answers it twice."""

    def __init__(self) -> None:
        self.count = 0  # answers so far: what a request sent now is stamped with (``unmatched_mark``)
        self.last = ""  # the last of them, in words

    def add(self, label: str, request_id: int | str | None, pending: Mapping[int | str, Any]) -> None:
        """Say an answer with ``request_id``, which names none of ``pending``'s requests."""
        given = msgspec.json.encode(request_id).decode()
        sent = int(request_id) if isinstance(request_id, str) and request_id.isdecimal() else None
        mine = pending.get(sent) if sent is not None else None  # (the request it answers, under the wrong id)
        hint = (f" (request {sent} is, with an integer id: an answer carries its request's id as it was sent)"
                if mine is not None else "")
        self.last = f"the guest answered with id {given}, which names no request in flight{hint}"
        if mine is not None:
            mine.misnamed = self.last
        self.count += 1
        if mine is not None and mine.method == "initialize" and not mine.future.done():  # (no handshake can follow)
            mine.future.set_exception(m.BridgeError(m.INVALID_REQUEST, f"it answered initialize with id {given}, "
                                                    f"not {sent}: an answer carries its request's id as it was sent "
                                                    "(an integer stays an integer)"))
            return
        if self.count > 1:
            log.debug("%s: dropped an answer with id %s, which names no request in flight", label, given)
        else:
            log.warning("%s: %s; dropped (as later such answers are, without a warning)", label, self.last)

    @staticmethod
    def unattributed(label: str, pending: Mapping[int | str, Any], error: m.ErrorObject) -> None:
        """An error with ``"id": null``: the guest could not read a line (or tell which request it was). The one
        request in flight fails with it; with several, none can be blamed, and they are left to their deadlines."""
        waiting = [request for request in pending.values() if not request.future.done()]
        if len(waiting) == 1:
            waiting[0].future.set_exception(m.BridgeError(error.code, error.message, error.data))
            return
        which = (f"which of the {len(waiting)} requests in flight it meant cannot be told (they wait for their "
                 "deadlines)" if waiting else "no request was in flight")
        log.warning("%s: the guest answered error %d without a request id; %s: %s", label, error.code, which,
                    error.message)

    def cause(self, request: Any) -> str:
        """Why ``request`` (stamped ``unmatched_mark``) got no answer: "; " and such an answer; else ""."""
        said = request.misnamed or (self.last if self.count > request.unmatched_mark else "")
        return f"; {said}" if said else ""
