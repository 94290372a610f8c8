"""A served decision engine speaking the System One request format, as a decision method.

``SystemOneMethod`` sends one ``POST {base_url}/v1/systemone`` per row — the row's state and its questions — and
turns the engine's answers into a probability for every option. ``bridge/SYSTEMONE.md`` specifies the mapping
(it is the format this adapter speaks, written from public descriptions of the format); in short:

- request: ``{"model", "state", "questions": {"q1": {...}, ...}}``, questions keyed ``q1``… in the row's order;
  noul → ``{"type": "noul", "instructions"[, "criteria": {"true", "false"}]}``; choice → ``{"type": "choice",
  "instructions", "criteria": {option: description or null}}``; score → ``{"type": "score", "instructions",
  "criteria": [level description (or label), lowest first]}`` (2–10 levels);
- response: ``{"model", "answers": {"q1": ...}, "usage"}``; noul ``{"noul": p}`` → true p, false 1 − p; choice
  ``{"probabilities": {option: p}}``; score ``{"probabilities": {"0": p, …}}`` keyed by level index → the
  levels' labels. Nothing is renormalised: the host's answer rules check every distribution.

Configuration: ``config.base_url`` (the server, with or without a trailing ``/v1``) and ``config.model``; the
environment variable ``MT_EVAL_SYSTEMONE_API_KEY``, sent as a bearer token when set; ``config.concurrency`` rows
at a time; ``config.timeout_s`` per request, its retries included; ``config.params["retries"]`` (default 3) on
408/429/5xx/529, timeouts and refused connections, ``Retry-After`` honoured.
"""

from __future__ import annotations

import os
import time
from typing import Any

import anyio

from mt_eval.concurrency import all_of
from mt_eval.decisions.endpoint import EndpointError, JsonEndpoint
from mt_eval.decisions.records import number_text

PATH = "/v1/systemone"
API_KEY_VARIABLE = "MT_EVAL_SYSTEMONE_API_KEY"
SCORE_LEVELS = (2, 10)


def endpoint_url(base_url: str) -> str:
    """``{base_url}/v1/systemone``, whether or not base_url already ends in ``/v1``."""
    base = base_url.rstrip("/")
    return base + ("/systemone" if base.endswith("/v1") else PATH)


def level_names(question: dict[str, Any]) -> list[str]:
    return [level.get("label") or number_text(level["value"]) for level in question.get("levels") or []]


def request_question(question: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """The System One form of one question, or why it cannot be asked in that format."""
    kind = question["type"]
    out: dict[str, Any] = {"type": kind, "instructions": question["instructions"]}
    criteria = question.get("criteria") or {}
    if kind == "noul":
        if criteria:
            out["criteria"] = {key: criteria[key] for key in ("true", "false") if key in criteria}
    elif kind == "choice":
        out["criteria"] = {option: criteria.get(option) for option in question["options"]}
    else:
        levels = question["levels"]
        low, high = SCORE_LEVELS
        if not low <= len(levels) <= high:
            return None, f"a System One score question has {low} to {high} levels; this one has {len(levels)}"
        out["criteria"] = [level.get("description") or level.get("label") or number_text(level["value"])
                           for level in levels]
    return out, None


def answer_from(question: dict[str, Any], answer: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """Our answer (probabilities per option, or an error) and what the engine added (confidence, its score)."""
    kind = question["type"]
    if not isinstance(answer, dict):
        return {"error": "the engine gave no answer to this question"}, {}
    if answer.get("type") not in (None, kind):
        return {"error": f'the engine answered a {answer.get("type")} question, not {kind}'}, {}
    extra = {key: answer[key] for key in ("confidence", "score", "choice") if key in answer}
    if kind == "noul":
        p = answer.get("noul")
        if not isinstance(p, int | float) or isinstance(p, bool):
            return {"error": 'the engine\'s noul answer has no number "noul"'}, extra
        return {"probabilities": {"true": p, "false": 1 - p}}, extra
    probabilities = answer.get("probabilities")
    if not isinstance(probabilities, dict):
        return {"error": f'the engine\'s {kind} answer has no "probabilities"'}, extra
    if kind == "choice":
        return {"probabilities": probabilities}, extra
    names = level_names(question)
    mapped: dict[str, Any] = {}
    for key, value in probabilities.items():
        index = int(key) if isinstance(key, str) and key.isdigit() else None
        if index is None or index >= len(names):
            return {"error": f'the engine gave a probability for level "{key}"; the levels are 0 to '
                             f"{len(names) - 1}"}, extra
        mapped[names[index]] = value
    return {"probabilities": mapped}, extra


def usage_from(usage: Any) -> dict[str, int]:
    """Token counts under either naming (prompt/completion or input/output)."""
    if not isinstance(usage, dict):
        return {}
    counts = {"prompt_tokens": usage.get("prompt_tokens", usage.get("input_tokens")),
              "completion_tokens": usage.get("completion_tokens", usage.get("output_tokens"))}
    return {key: value for key, value in counts.items() if isinstance(value, int) and value >= 0}


class SystemOneMethod:
    """A decision method whose answers come from a served System One engine (see the module docstring)."""

    def __init__(self, base_url: str | None = None, model: str | None = None) -> None:
        self.base_url = base_url
        self.model = model

    async def decide(self, rows: list[dict[str, Any]], config: Any) -> list[dict[str, Any]]:
        base_url = getattr(config, "base_url", None) or self.base_url
        model = getattr(config, "model", None) or self.model
        if not base_url or not model:
            missing = " and ".join(name for name, value in (("base_url", base_url), ("model", model)) if not value)
            return [{"id": row["id"], "error": f"config.{missing} not set: give the engine's address (--base-url) "
                                               "and the model it serves (--model)"} for row in rows]
        key = os.environ.get(API_KEY_VARIABLE)
        params = getattr(config, "params", None) or {}
        endpoint = JsonEndpoint(endpoint_url(base_url), headers={"Authorization": f"Bearer {key}"} if key else {},
                                timeout_s=getattr(config, "timeout_s", 120.0), retries=int(params.get("retries", 3)))
        slots = anyio.Semaphore(max(1, getattr(config, "concurrency", 8)))

        async def one(row: dict[str, Any]) -> dict[str, Any]:
            async with slots:
                return await self.decide_row(endpoint, model, row)

        return await all_of(one, rows)

    async def decide_row(self, endpoint: JsonEndpoint, model: str, row: dict[str, Any]) -> dict[str, Any]:
        questions: dict[str, Any] = {}
        keys: dict[str, str] = {}
        answers: dict[str, Any] = {}
        for name, question in row["questions"].items():
            asked, problem = request_question(question)
            if asked is None:
                answers[name] = {"error": problem}
                continue
            key = f"q{len(questions) + 1}"
            questions[key], keys[name] = asked, key
        if not questions:
            return {"id": row["id"], "answers": answers}
        started = time.perf_counter()
        try:
            data = await endpoint.post({"model": model, "state": row["state"], "questions": questions})
        except EndpointError as exc:
            return {"id": row["id"], "error": str(exc), "latency_s": time.perf_counter() - started}
        latency = time.perf_counter() - started
        given = data.get("answers")
        if not isinstance(given, dict):
            return {"id": row["id"], "error": 'the engine\'s response has no "answers" object', "latency_s": latency}
        engine: dict[str, Any] = {}
        for name, key in keys.items():
            answers[name], engine[name] = answer_from(row["questions"][name], given.get(key))
        answers = {name: answers[name] for name in row["questions"]}
        metadata = {"engine_model": data.get("model"), "engine_answers": {k: v for k, v in engine.items() if v}}
        return {"id": row["id"], "answers": answers, "latency_s": latency, "usage": usage_from(data.get("usage")),
                "metadata": metadata}
