"""A decision method: judges candidate translations by their word overlap with a reference.

The quality q of a candidate, from 0 to 1, is its word F1 against ``state["reference"]`` (lowercased words); with
no reference, how well its word count agrees with ``state["source"]``'s. It answers the three question types:

* **score** (an ordered rubric of L levels): q × (L − 1) is a position on the rubric; its probability is split
  between the two nearest levels in proportion to closeness (exactly on a level: all of it);
* **noul**: P(true) = q;
* **choice**: options that name a text in the state (``"a"`` for ``state["a"]``) are candidates; each option's
  probability is proportional to its q plus 0.05 (an option naming no text, e.g. ``"tie"``, gets the candidates'
  mean q).

decide.js beside this file behaves identically.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from typing import Any

WORD = re.compile(r"[^\W_]+")
FLOOR = 0.05


def words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def quality(state: dict[str, Any], candidate: str) -> float:
    reference, source = state.get("reference"), state.get("source")
    mine = Counter(words(candidate))
    if isinstance(reference, str):
        theirs = Counter(words(reference))
        overlap = sum((mine & theirs).values())
        if overlap == 0:
            return 0.0
        precision, recall = overlap / sum(mine.values()), overlap / sum(theirs.values())
        return 2 * precision * recall / (precision + recall)
    sizes = (sum(mine.values()), len(words(source)) if isinstance(source, str) else 0)
    return min(sizes) / max(sizes) if max(sizes) else 1.0


def level_names(levels: list[dict[str, Any]]) -> list[str]:
    names = []
    for level in levels:
        text = f"{level['value']:.6f}".rstrip("0").rstrip(".")
        names.append(level.get("label") or ("0" if text in ("-0", "") else text))
    return names


def score_answer(question: dict[str, Any], q: float) -> dict[str, Any]:
    names = level_names(question["levels"])
    position = q * (len(names) - 1)
    return {"probabilities": {name: max(0.0, 1 - abs(i - position)) for i, name in enumerate(names)}}


def choice_answer(question: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    options = question["options"]
    scores = {o: quality(state, state[o]) for o in options if isinstance(state.get(o), str)}
    if not scores:
        return {"error": "none of the options names a text in the state"}
    neutral = sum(scores.values()) / len(scores)
    weights = [scores.get(o, neutral) + FLOOR for o in options]
    total = sum(weights)
    return {"probabilities": {o: w / total for o, w in zip(options, weights, strict=True)}}


def decide_row(row: dict[str, Any]) -> dict[str, Any]:
    state, answers = row["state"], {}
    candidate = state.get("candidate")
    for name, question in row["questions"].items():
        if question["type"] == "choice":
            answers[name] = choice_answer(question, state)
        elif not isinstance(candidate, str):
            answers[name] = {"error": 'the state has no "candidate" text'}
        elif question["type"] == "noul":
            q = quality(state, candidate)
            answers[name] = {"probabilities": {"true": q, "false": 1 - q}}
        else:
            answers[name] = score_answer(question, quality(state, candidate))
    return {"id": row["id"], "answers": answers}


class OverlapJudge:
    """The method: one result per row, each with a probability for every option of every question."""

    async def decide(self, rows: list[dict[str, Any]], config: Any) -> list[dict[str, Any]]:
        results = []
        for row in rows:
            started = time.perf_counter()
            results.append({**decide_row(row), "latency_s": time.perf_counter() - started})
        return results
