"""A rules-based grader: judges a candidate translation by its overlap with a reference and by the source words
it leaves untranslated, and answers with calibrated-looking distributions (decide.js beside it behaves
identically).

The quality q of a candidate, from 0 to 1:

- with a reference: the mean of the character-trigram F1 and the word F1 between candidate and reference
  (lowercased, punctuation ignored), minus half the share of candidate words copied untranslated from the source;
- without one: 1 minus 1.5 × the untranslated share, times the length agreement min(c, s) / max(c, s) of the
  candidate's and the source's word counts.

Answers: **score** — a discretised Gaussian (σ = 0.6 levels) around the position q × (L − 1) on the rubric's L
levels; **noul** — P(true) = q; **choice** — options naming a state field that holds text (e.g. ``"a"`` for
``state.a``) get their candidate's q, other options (e.g. ``"tie"``) the mean of those, and the distribution is a
softmax of 8 × q. A row without a candidate text fails with the reason.
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter
from typing import Any

WORD = re.compile(r"[^\W_]+")
SIGMA = 0.6
CHOICE_SHARPNESS = 8.0
MIN_COPIED = 3  # shorter words (numbers, "a", "no") are the same in many languages


def words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def f1(candidate: Counter[str], reference: Counter[str]) -> float:
    overlap = sum((candidate & reference).values())
    if overlap == 0:
        return 0.0
    precision = overlap / sum(candidate.values())
    recall = overlap / sum(reference.values())
    return 2 * precision * recall / (precision + recall)


def trigrams(text: str) -> Counter[str]:
    joined = " ".join(words(text))
    return Counter(joined[i:i + 3] for i in range(len(joined) - 2))


def untranslated_share(source: str, candidate: str, reference: str | None) -> float:
    """The share of the candidate's words copied from the source (and not also in the reference)."""
    found = words(candidate)
    if not found:
        return 0.0
    source_words = {w for w in words(source) if len(w) >= MIN_COPIED}
    allowed = set(words(reference)) if reference is not None else set()
    return sum(1 for w in found if w in source_words and w not in allowed) / len(found)


def quality(source: str, candidate: str, reference: str | None) -> float:
    copied = untranslated_share(source, candidate, reference)
    if reference is not None:
        overlap = (f1(trigrams(candidate), trigrams(reference)) + f1(Counter(words(candidate)),
                                                                       Counter(words(reference)))) / 2
        return min(1.0, max(0.0, overlap - copied / 2))
    counts = (len(words(candidate)), len(words(source)))
    agreement = min(counts) / max(counts) if max(counts) else 1.0
    return min(1.0, max(0.0, (1 - 1.5 * copied) * agreement))


def level_names(question: dict[str, Any]) -> list[str]:
    return [level.get("label") or number_text(level["value"]) for level in question["levels"]]


def number_text(value: float) -> str:
    text = f"{value:.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def normalised(weights: list[float]) -> list[float]:
    total = sum(weights)
    return [w / total for w in weights]


def score_answer(question: dict[str, Any], q: float) -> dict[str, Any]:
    names = level_names(question)
    position = q * (len(names) - 1)
    weights = [math.exp(-((i - position) ** 2) / (2 * SIGMA * SIGMA)) for i in range(len(names))]
    return {"probabilities": dict(zip(names, normalised(weights), strict=True))}


def choice_answer(question: dict[str, Any], state: dict[str, Any], source: str, reference: str | None
                  ) -> dict[str, Any]:
    options = question["options"]
    texts = {o: state[o] for o in options if isinstance(state.get(o), str)}
    if not texts:
        return {"error": "none of the options names a candidate text in the state"}
    scores = {o: quality(source, text, reference) for o, text in texts.items()}
    neutral = sum(scores.values()) / len(scores)
    weights = [math.exp(CHOICE_SHARPNESS * scores.get(o, neutral)) for o in options]
    return {"probabilities": dict(zip(options, normalised(weights), strict=True))}


def decide_row(row: dict[str, Any]) -> dict[str, Any]:
    state = row["state"]
    source = state.get("source") if isinstance(state.get("source"), str) else ""
    reference = state.get("reference") if isinstance(state.get("reference"), str) else None
    candidate = state.get("candidate")
    answers: dict[str, Any] = {}
    for name, question in row["questions"].items():
        if question["type"] == "choice":
            answers[name] = choice_answer(question, state, source, reference)
        elif not isinstance(candidate, str):
            answers[name] = {"error": 'the state has no "candidate" text to judge'}
        elif question["type"] == "noul":
            q = quality(source, candidate, reference)
            answers[name] = {"probabilities": {"true": q, "false": 1 - q}}
        else:
            answers[name] = score_answer(question, quality(source, candidate, reference))
    return {"id": row["id"], "answers": answers}


class RulesGrader:
    async def decide(self, rows: list[dict[str, Any]], config: Any) -> list[dict[str, Any]]:
        results = []
        for row in rows:
            started = time.perf_counter()
            result = decide_row(row)
            result["latency_s"] = time.perf_counter() - started
            results.append(result)
        return results
