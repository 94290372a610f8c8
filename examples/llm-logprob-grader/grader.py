"""An LLM grader that reads the model's option probabilities instead of parsing what it writes.

For every question of a row it sends one chat-completions request to ``config.base_url`` (any
OpenAI-compatible endpoint) asking for a single token with its top log-probabilities: the system prompt is
``prompt.txt``; the user message holds the question's instructions, the row's state and the options, each
behind a one-token label — ``yes``/``no`` for noul, ``A``, ``B``, … for choice, ``0``, ``1``, … for the levels
of a score rubric (lowest first). The probability of an option is the summed probability of the tokens that spell
its label (case, spaces and trailing punctuation ignored), divided by the *option mass* — the share of the next
token's probability that fell on any label. An option mass under ``params.min_option_mass`` (default 0.5) fails
the question: the model was not answering the question asked. The option mass of each question is reported in
the row's metadata.

``config``: ``base_url``, ``model``, ``temperature`` (default 0), ``seed``, ``concurrency`` (requests at a time),
``timeout_s``; ``params.top_logprobs`` (default 20), ``params.min_option_mass``, ``params.retries`` (default 3);
the environment variable ``MT_EVAL_LLM_API_KEY`` is sent as a bearer token when set.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import string
import time
from pathlib import Path
from typing import Any

from mt_eval.decisions.endpoint import EndpointError, JsonEndpoint

STATE_NAMES = {"source": "Source", "candidate": "Candidate translation", "reference": "Reference translation",
               "a": "Translation A", "b": "Translation B"}


class QuestionError(Exception):
    """This question cannot be answered; the message says why."""


def labelled_options(question: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    """(label, option, description) for each option of a question, in order."""
    criteria = question.get("criteria") or {}
    if question["type"] == "noul":
        return [("yes", "true", criteria.get("true")), ("no", "false", criteria.get("false"))]
    if question["type"] == "choice":
        if len(question["options"]) > len(string.ascii_uppercase):
            raise QuestionError(f"this grader labels at most {len(string.ascii_uppercase)} options with letters")
        return [(string.ascii_uppercase[i], option, criteria.get(option))
                for i, option in enumerate(question["options"])]
    levels = question["levels"]
    if len(levels) > 10:
        raise QuestionError("this grader labels at most 10 levels with the digits 0-9")
    return [(str(i), level.get("label") or _number(level["value"]), level.get("description"))
            for i, level in enumerate(levels)]


def _number(value: float) -> str:
    text = f"{value:.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def user_message(question: dict[str, Any], state: dict[str, Any], options: list[tuple[str, str, str | None]]) -> str:
    lines = [question["instructions"], ""]
    languages = {"source": state.get("source_lang"), "candidate": state.get("target_lang"),
                 "reference": state.get("target_lang")}
    for key, value in state.items():
        if key in ("source_lang", "target_lang"):
            continue
        name = STATE_NAMES.get(key, key)
        if languages.get(key):
            name += f" ({languages[key]})"
        lines.append(f"{name}: {value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}")
    lines += ["", "Options:"]
    lines += [f"{label}) {option}" + (f": {description}" if description else "")
              for label, option, description in options]
    lines += ["", f"Answer with one label: {', '.join(label for label, _, _ in options)}."]
    return "\n".join(lines)


def option_distribution(top: list[dict[str, Any]], options: list[tuple[str, str, str | None]], min_mass: float
                        ) -> tuple[dict[str, float], float]:
    """The options' probabilities from the next token's top log-probabilities, and the option mass."""
    mass = {label.casefold(): 0.0 for label, _, _ in options}
    for candidate in top:
        token = str(candidate.get("token", "")).strip().rstrip(".):").casefold()
        if token in mass and isinstance(candidate.get("logprob"), int | float):
            mass[token] += math.exp(candidate["logprob"])
    total = sum(mass.values())
    if total < min_mass:
        seen = ", ".join(repr(c.get("token")) for c in top[:5])
        raise QuestionError(f"the model put only {total:.0%} of its next-token probability on the options "
                            f"(at least {min_mass:.0%} is required; its top tokens: {seen})")
    return {option: mass[label.casefold()] / total for label, option, _ in options}, total


class LogprobGrader:
    """The method (see the module docstring)."""

    def __init__(self, directory: str | Path) -> None:
        self.system_prompt = (Path(directory) / "prompt.txt").read_text(encoding="utf-8").strip()

    async def decide(self, rows: list[dict[str, Any]], config: Any) -> list[dict[str, Any]]:
        if not config.base_url or not config.model:
            return [{"id": row["id"], "error": "config.base_url and config.model are required: give the "
                                               "OpenAI-compatible endpoint (--base-url) and its model (--model)"}
                    for row in rows]
        key = os.environ.get("MT_EVAL_LLM_API_KEY")
        endpoint = JsonEndpoint(config.base_url.rstrip("/") + "/chat/completions",
                                headers={"Authorization": f"Bearer {key}"} if key else {}, timeout_s=config.timeout_s,
                                retries=int(config.params.get("retries", 3)))
        slots = asyncio.Semaphore(max(1, config.concurrency))

        async def ask(question: dict[str, Any], state: dict[str, Any]
                      ) -> tuple[dict[str, Any], float | None, dict[str, int]]:
            async with slots:
                return await self.ask(endpoint, question, state, config)

        async def one(row: dict[str, Any]) -> dict[str, Any]:
            started = time.perf_counter()
            names = list(row["questions"])
            asked = await asyncio.gather(*(ask(row["questions"][n], row["state"]) for n in names))
            usage = {"prompt_tokens": sum(u.get("prompt_tokens", 0) for _, _, u in asked),
                     "completion_tokens": sum(u.get("completion_tokens", 0) for _, _, u in asked)}
            return {"id": row["id"], "answers": {n: a for n, (a, _, _) in zip(names, asked, strict=True)},
                    "latency_s": time.perf_counter() - started, "usage": usage,
                    "metadata": {"option_mass": {n: m for n, (_, m, _) in zip(names, asked, strict=True)}}}

        return list(await asyncio.gather(*(one(row) for row in rows)))

    async def ask(self, endpoint: JsonEndpoint, question: dict[str, Any], state: dict[str, Any], config: Any
                  ) -> tuple[dict[str, Any], float | None, dict[str, int]]:
        """One question: its answer, the option mass, and the tokens spent."""
        try:
            options = labelled_options(question)
            body = {"model": config.model, "max_tokens": 1, "logprobs": True,
                    "top_logprobs": int(config.params.get("top_logprobs", 20)),
                    "temperature": config.temperature if config.temperature is not None else 0,
                    "messages": [{"role": "system", "content": self.system_prompt},
                                 {"role": "user", "content": user_message(question, state, options)}]}
            if config.seed is not None:
                body["seed"] = config.seed
            data = await endpoint.post(body)
            usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
            counts = {k: usage[k] for k in ("prompt_tokens", "completion_tokens") if isinstance(usage.get(k), int)}
            top = _top_logprobs(data)
            probabilities, mass = option_distribution(top, options, float(config.params.get("min_option_mass", 0.5)))
        except (QuestionError, EndpointError) as exc:
            return {"error": str(exc)}, None, {}
        return {"probabilities": probabilities}, round(mass, 6), counts


def _top_logprobs(data: dict[str, Any]) -> list[dict[str, Any]]:
    try:
        top = data["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
    except (KeyError, IndexError, TypeError):
        raise QuestionError("the endpoint returned no log-probabilities: it must support \"logprobs\" and "
                            "\"top_logprobs\" in chat completions") from None
    if not isinstance(top, list):
        raise QuestionError("the endpoint's top_logprobs is not a list")
    return top
