"""Rankings: within one corpus with interval ties, and across corpora by Borda count and task average.

Within a ranking group (same corpus sha256, same entries, same metric signatures) — scores oriented so that
higher is better, an entry without an interval taken as the interval [score, score]:

    rank(i) = 1 + #{ j : low(j) > high(i) }          (the rows whose interval lies wholly above i's)
    ties(i) = #{ j ≠ i : low(j) <= high(i) and low(i) <= high(j) }   (overlapping intervals: shown as ties)

Across corpora, each method contributes one score per corpus (the scores of one run card per corpus, never a
mix), and a method that lacks any corpus gets no aggregate: it is shown as missing, never averaged over fewer.

Borda, per corpus c with n(c) methods: the fractional position p (1 for the best score; methods with equal
scores share the mean of their positions) becomes

    points(c) = 100 × (n(c) − p) / (n(c) − 1)        (100 for first, 0 for last; 100 when n(c) = 1)

and Borda = the mean of points(c) over all corpora, each with equal weight.

Task average: each score is normalised to 0–100 with higher better (the score itself for metrics where
higher is better, 100 − score otherwise, clipped to [0, 100]); the normalised scores are averaged within each
family of corpora, and the family averages are averaged with equal weight.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Scored:
    key: str
    score: float
    ci_low: float | None = None
    ci_high: float | None = None
    higher_is_better: bool = True

    def oriented(self) -> tuple[float, float, float]:
        """(score, low, high) with higher better."""
        low = self.score if self.ci_low is None else self.ci_low
        high = self.score if self.ci_high is None else self.ci_high
        if self.higher_is_better:
            return self.score, low, high
        return -self.score, -high, -low


@dataclass(frozen=True)
class Placed:
    key: str
    rank: int
    ties: int  # how many other entries it ties with


def rank_group(entries: Sequence[Scored]) -> list[Placed]:
    """The entries best first, each with its rank and its number of ties (module docstring). O(n log n): the
    counts come from binary searches over the sorted interval ends."""
    from bisect import bisect_left, bisect_right

    oriented = [e.oriented() for e in entries]
    lows = sorted(low for _, low, _ in oriented)
    highs = sorted(high for _, _, high in oriented)
    placed = []
    for index, (entry, (_, low, high)) in enumerate(zip(entries, oriented, strict=True)):
        above = len(lows) - bisect_right(lows, high)  # low(j) > high(i)
        overlapping = bisect_right(lows, high) - bisect_left(highs, low)  # low(j) <= high(i) and high(j) >= low(i)
        placed.append((Placed(entry.key, 1 + above, overlapping - 1), -oriented[index][0], index))
    return [p for p, _, _ in sorted(placed, key=lambda item: (item[0].rank, item[1], item[2]))]


def fractional_positions(scores: Mapping[str, float]) -> dict[str, float]:
    """Position 1 for the highest score; equal scores share the mean of the positions they span."""
    ordered = sorted(scores.items(), key=lambda item: -item[1])
    positions: dict[str, float] = {}
    start = 0
    while start < len(ordered):
        end = start
        while end + 1 < len(ordered) and ordered[end + 1][1] == ordered[start][1]:
            end += 1
        for method, _ in ordered[start:end + 1]:
            positions[method] = (start + end) / 2 + 1
        start = end + 1
    return positions


@dataclass
class Aggregate:
    """One method's score across corpora; ``value`` is None when ``missing`` is not empty."""

    value: float | None
    per_corpus: dict[str, float] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    per_family: dict[str, float] = field(default_factory=dict)


def borda(table: Mapping[str, Mapping[str, float]], corpora: Sequence[str],
          higher_is_better: Mapping[str, bool] | None = None) -> dict[str, Aggregate]:
    """``table[method][corpus]`` = score → each method's Borda points (module docstring)."""
    points: dict[str, dict[str, float]] = {method: {} for method in table}
    for corpus in corpora:
        better_high = (higher_is_better or {}).get(corpus, True)
        scores = {m: (s[corpus] if better_high else -s[corpus]) for m, s in table.items() if corpus in s}
        n = len(scores)
        for method, position in fractional_positions(scores).items():
            points[method][corpus] = 100.0 if n == 1 else 100.0 * (n - position) / (n - 1)
    result = {}
    for method, earned in points.items():
        missing = [c for c in corpora if c not in earned]
        value = None if missing or not corpora else sum(earned[c] for c in corpora) / len(corpora)
        result[method] = Aggregate(value, earned, missing)
    return result


def normalised(score: float, higher_is_better: bool) -> float:
    return min(100.0, max(0.0, score if higher_is_better else 100.0 - score))


def task_average(table: Mapping[str, Mapping[str, float]], families: Mapping[str, str],
                 higher_is_better: Mapping[str, bool] | None = None) -> dict[str, Aggregate]:
    """``table[method][corpus]`` = score, ``families[corpus]`` = family → each method's task average."""
    corpora = list(families)
    result = {}
    for method, scores in table.items():
        normal = {c: normalised(scores[c], (higher_is_better or {}).get(c, True)) for c in corpora if c in scores}
        missing = [c for c in corpora if c not in normal]
        per_family: dict[str, float] = {}
        for family in dict.fromkeys(families.values()):
            members = [normal[c] for c, f in families.items() if f == family and c in normal]
            if members and len(members) == sum(1 for f in families.values() if f == family):
                per_family[family] = sum(members) / len(members)
        value = None if missing or not corpora else sum(per_family.values()) / len(per_family)
        result[method] = Aggregate(value, normal, missing, per_family)
    return result
