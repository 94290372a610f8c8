"""Light perturbations of a planted text: what a copy into a bundle might do to it by accident or design.

Each is something the check claims to see through: case (upper, title, swapped), full-width letters
(Unicode compatibility forms), spacing (doubled spaces, tabs, no-break spaces), punctuation (removed or
added), and, for entries long enough to stay a near-duplicate, one word dropped from the middle. Where a
text is split across lines or literals is up to the carrier that plants it (`carriers`).
"""

from __future__ import annotations

import random
import re

from mt_eval.contamination.normalize import words
from mt_eval.contamination.settings import CheckSettings

_PUNCTUATION = re.compile(r"[^\w\s]")


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if c.isascii() and c.isalnum() else c for c in text)


def _spacing(text: str, rng: random.Random) -> str:
    spaced = re.sub(" ", lambda _m: rng.choice(["  ", "\t", " \u00a0", "   "]), text)
    return rng.choice(["  ", "\t", ""]) + spaced + rng.choice(["  ", ""])


def _punctuation(text: str, rng: random.Random) -> str:
    if rng.random() < 0.5:
        return _PUNCTUATION.sub("", text)
    return rng.choice(["«", "“", "-- "]) + text.replace(" ", ", ", 1) + rng.choice(["!!", "…", " ;"])


CASES = {"upper": str.upper, "title": str.title, "swapcase": str.swapcase, "fullwidth": _fullwidth}


def perturb(text: str, rng: random.Random, settings: CheckSettings) -> tuple[str, list[str]]:
    """``text`` changed in one or more light ways, and their names."""
    applied = []
    dropped = drop_word(text, rng, settings) if rng.random() < 0.3 else None
    if dropped is not None:
        text = dropped
        applied.append("word dropped")
    case = rng.choice(sorted(CASES))
    text = CASES[case](text)
    applied.append(case)
    if rng.random() < 0.6:
        text = _spacing(text, rng)
        applied.append("spacing")
    if rng.random() < 0.6:
        text = _punctuation(text, rng)
        applied.append("punctuation")
    return text, applied


def drop_word(text: str, rng: random.Random, settings: CheckSettings) -> str | None:
    """``text`` without one word, chosen so that it stays a near-duplicate: at least ``ngram`` words on
    either side, and enough words left for the coverage threshold. None when no word qualifies."""
    total = len(words(text))
    if total < settings.standalone_below or (total - 1) < settings.near_duplicate * total:
        return None
    tokens = text.split(" ")
    counts = [len(words(token)) for token in tokens]  # (a word never spans a space: the words before token i are
    # the sum of the counts before it; counted once, not once a token, which took minutes for one long line)
    before, after = 0, sum(counts)
    candidates = []
    for i, token in enumerate(tokens):
        after -= counts[i]
        if token.isalnum() and counts[i] == 1 and before >= settings.ngram and after >= settings.ngram:
            candidates.append(i)
        before += counts[i]
    if not candidates:
        return None
    position = rng.choice(candidates)
    return " ".join(tokens[:position] + tokens[position + 1:])


def split_in_two(text: str) -> tuple[str, str]:
    """``text`` cut at the space nearest its middle (the second part keeps nothing of the cut)."""
    middle = len(text) // 2
    spaces = [i for i, c in enumerate(text) if c == " "]
    if not spaces:
        return text, ""
    cut = min(spaces, key=lambda i: abs(i - middle))
    return text[:cut + 1], text[cut + 1:]
