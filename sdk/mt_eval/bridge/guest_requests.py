"""What a Python guest (`mt_eval.bridge.guest`) checks in a translate or decide request, and the answer it sends:
the params, the RunConfig (a run's repeated config checked once), and the results in the protocol's shape; and the
method's own card it sends (`runtime_card`), or why it cannot. The id it answers under:
`mt_eval.bridge.guest_reading`."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import msgspec

from mt_eval.bridge import messages as m
from mt_eval.js_text import js_whole
from mt_eval.method_card import not_a_card
from mt_eval.plugin_import import describe_exception, describe_exit
from mt_eval.records import RunConfig
from mt_eval.results import ResultNotes, compact, compact_returned, error_result, not_a_list, stray_stand_in
from mt_eval.value_words import value_in_words


def translate_params(params: Any, default_config: dict[str, Any] | None = None
                     ) -> tuple[list[dict[str, Any]], RunConfig]:
    """The entries and RunConfig of a translate request; ``default_config``, initialize's, stands for a config the
    request leaves out."""
    if not isinstance(params, dict):  # (the words of the Node guest)
        raise ValueError(f"params must be an object, got {value_in_words(params)}")
    problem = m.entries_problem(params.get("entries"))
    if problem:
        raise ValueError(problem)
    config = params.get("config")
    if config is None:
        config = default_config
        if config is None:
            raise ValueError("params.config is missing and initialize gave none")
    return params["entries"], run_config(config)


CARD_FIX = "make method_card() return a dict of card fields"


class MethodCardError(Exception):
    """A method's ``method_card()`` raised, or returned what is not a card: what went wrong (``problem``) and how to
    mend it (``fix``), as the loader words it, and the Node guest a ``methodCard()`` (its ``MethodCardError``)."""

    def __init__(self, problem: str, fix: str, file: Path | None = None) -> None:
        super().__init__(f"{f'{file} ' if file else ''}method_card(): {problem}\n  fix: {fix}")
        self.problem, self.fix = problem, fix


def reported_card(method_card: Callable[[], Any], directory: Path | None, file: Path | None = None) -> Any:
    """What a method's ``method_card`` returns; `MethodCardError` (naming ``file`` when given) saying what it raised,
    and where in ``directory``, when it raises or ends the process."""
    try:
        return method_card()
    except KeyboardInterrupt:
        raise
    except SystemExit as exc:  # a method must not end the run
        raise MethodCardError(describe_exit(exc, directory),
                              "a method must not end the process: raise an exception instead", file) from None
    except BaseException as exc:
        raise MethodCardError(f"raised {describe_exception(exc, directory)}", CARD_FIX, file) from None


def runtime_card(method: Any, module_file: Path | None) -> dict[str, Any] | None:
    """What the method itself reports with ``method_card()`` (None without one), which a guest sends (the host merges
    it with the card from the plugin's files); `MethodCardError` naming ``module_file``, the method's module, when it
    raises or returns what is not a card: the guest then refuses to start, as the Node guest does."""
    method_card = getattr(method, "method_card", None)
    if not callable(method_card):
        return None
    card = reported_card(method_card, module_file.parent if module_file else None, module_file)
    if (problem := not_a_card("method_card()", card)) is not None:
        raise MethodCardError(problem.message, problem.hint or "", module_file)
    return card  # type: ignore[no-any-return]  # (a dict, or None: `not_a_card`)


def card_answer(request_id: int | str, method: Any, module_file: Path | None) -> bytes:
    """The answer to a ``method_card`` request: the card the method reports now (it is asked again, as the Node guest
    asks its method), or -32007 in the words it would have refused initialize with."""
    try:
        return m.result_line(request_id, {"card": runtime_card(method, module_file)})
    except MethodCardError as exc:
        return m.error_line(request_id, m.METHOD_FAILED, str(exc), {"type": "MethodCardError"})


def _integer_fields(struct: type) -> frozenset[str]:
    """The fields of ``struct`` that hold an integer (or null)."""
    import msgspec.inspect as mi

    def integer(t: mi.Type) -> bool:
        t = t.type if isinstance(t, mi.Metadata) else t
        return isinstance(t, mi.IntType) or (isinstance(t, mi.UnionType) and any(integer(x) for x in t.types))

    info = mi.type_info(struct)
    return frozenset(f.encode_name for f in info.fields if integer(f.type)) if isinstance(info, mi.StructType) \
        else frozenset()


_INTEGER_FIELDS = _integer_fields(RunConfig)
_last_config: dict[bytes, RunConfig] = {}  # the last config a translate request carried (as JSON) → its RunConfig


def run_config(given: Any) -> RunConfig:
    """The RunConfig of a translate request. The requests of a run all carry the same config, so one equal to the
    last (as JSON: ``1`` and ``true`` differ) is not checked again; each request still gets a RunConfig of its own,
    with its own ``params``."""
    try:
        key = msgspec.json.encode(given)
    except (TypeError, msgspec.EncodeError):
        key = b""
    known = _last_config.get(key)
    if known is not None and type(given) is dict:  # checked when it was first seen: a copy, not checked again
        config = copy.copy(known)
        config.params = given.get("params", {})
        return config
    given = _read_as_node(given)
    try:
        config = msgspec.convert(given, RunConfig)
    except msgspec.ValidationError as exc:
        raise ValueError(config_problem(given)) from exc
    _last_config.clear()
    _last_config[key] = msgspec.convert(given, RunConfig)  # a copy of its own: the method may change `config`
    return config


def _read_as_node(given: Any) -> Any:
    """A config's integers as a Node guest reads them: 2.0 is 2."""
    if type(given) is not dict:
        return given
    return {key: js_whole(value) if key in _INTEGER_FIELDS else value for key, value in given.items()}


def config_refusal(config: Any, *, decides: bool = False) -> str | None:
    """Why a guest refuses ``config`` for a translate request (a decide request with ``decides``), in its words
    (`config_problem`); None when it fits. A host asks before sending it."""
    from mt_eval.decisions.records import DecisionConfig

    kind = DecisionConfig if decides else RunConfig
    given = _read_as_node(dict(config) if isinstance(config, Mapping) else config)
    try:
        msgspec.convert(given, kind)
    except msgspec.ValidationError:
        return config_problem(given, kind)
    return None


def config_problem(config: Any, kind: type[RunConfig] = RunConfig) -> str:
    """Why a RunConfig is refused, in the words the Node guest uses too: ``invalid config: $.path: message``."""
    from mt_eval.strict import decode_value

    if not isinstance(config, dict):
        return f"invalid config: expected an object, got {value_in_words(config)}"
    _value, problems = decode_value(config, kind, file="config")
    first = next((p for p in problems if p.severity == "error"), None)
    return f"invalid config: {first.path}: {first.message}" if first else "invalid config"


def decide_params(params: Any, default_config: dict[str, Any] | None = None) -> tuple[list[dict[str, Any]], Any]:
    """The rows and DecisionConfig of a decide request (initialize's config when it leaves one out, else none)."""
    from mt_eval.decisions.records import DecisionConfig, rows_problem

    if not isinstance(params, dict):
        raise ValueError(f"params must be an object, got {value_in_words(params)}")
    rows = params.get("rows")
    problem = rows_problem(rows, "params.rows")
    if problem or not isinstance(rows, list):
        raise ValueError(problem)
    given = params.get("config")
    given = _read_as_node((default_config or {}) if given is None else given)  # (64.0 is 64, as for translate)
    try:
        config = msgspec.convert(given, DecisionConfig)
    except msgspec.ValidationError as exc:
        raise ValueError(config_problem(given, DecisionConfig)) from exc
    return rows, config


def decision_answer(raw: Any, rows: list[dict[str, Any]], elapsed: float) -> dict[str, Any]:
    """The result of a decide request."""
    return {"results": decision_results(raw, rows, elapsed)}


def decision_results(raw: Any, rows: list[dict[str, Any]], elapsed: float) -> list[Any]:
    """The method's decisions as they go on the wire: passed through (the host checks every answer against the
    questions), with each row's share of the call's time when the method gave none; what holds a number JSON cannot
    carry is checked first (`mt_eval.decisions.answers.sendable_results`), for the host to say it as in process."""
    if not isinstance(raw, list):  # (the words of an in-process method's host: `mt_eval.decisions.answers`)
        from mt_eval.decisions.records import not_a_list

        return [{"id": row["id"], "error": not_a_list("the method", raw)} for row in rows]
    share = elapsed / max(1, len(raw))
    out = []
    for item in raw:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            out.append(stray_stand_in(item))  # (its host says it, as an in-process call's host does)
        else:
            out.append(item if "latency_s" in item else {**item, "latency_s": share})
    from mt_eval.decisions.answers import sendable_results

    return sendable_results(rows, out)


def translate_answer(raw: Any, entries: list[dict[str, Any]], elapsed: float, *, shared: bool = False
                     ) -> dict[str, Any]:
    """The result of a translate request: the method's results in the protocol's compact shape (`mt_eval.results`
    normalises them; an item without a string id is sent as its `stray_stand_in`, for the host to report),
    and ``normalised``, what had to be changed to accept them, when anything had. Each result without a latency of
    its own gets its share of the call's time; with ``shared`` (a host that asked for it at initialize) the share
    is sent once, as the answer's ``latency_s``, instead of in every result."""
    notes = ResultNotes()
    if not isinstance(raw, list):
        error = not_a_list("the method", raw)
        return {"results": [compact(error_result(str(e["id"]), error)) for e in entries]}
    share = elapsed / max(1, len(entries))
    # Shared by several results only (for one it saves nothing). A host gives the answer's latency_s to every
    # result at 0 (left out, as a default is): a result that states 0 itself keeps it only when each result
    # carries its own.
    once = shared and share != 0 and len(raw) > 1 and not any(map(_states_zero_latency, raw))
    results = compact_returned(raw, notes=notes, default_latency_s=0.0 if once else share)
    answer: dict[str, Any] = {"results": msgspec.Raw(results)}
    if notes:
        answer["normalised"] = notes.counts
    if once:
        answer["latency_s"] = share
    return answer


def _states_zero_latency(item: Any) -> bool:
    if not isinstance(item, dict):
        return False
    latency = item.get("latency_s")
    return type(latency) in (int, float) and latency == 0
