"""The board: stored rows grouped into rankings, with eligibility beside each score and the across-corpora
tables. Every output format (text, JSON, HTML, the site, the server) renders this one model.

Policy, applied here and nowhere else:

- class X methods never appear (they are counted, not shown);
- class A2 rows carry the "external dependency" flag and are never prize-eligible;
- a row is prize-eligible only when everything the card records allows it (eligibility, status, gate,
  contamination) and the board's own conditions hold (``--max-p95``, ``--hardware``); when a fact it needs
  is not recorded, the answer is "unknown", never "yes";
- rows are ranked only within their ranking group (`mt_eval.leaderboard.rows.ranking_key`); a group whose rows'
  intervals were drawn differently (other ``--resamples`` or ``--bootstrap``), which decide its ranks and ties,
  says so (`intervals_note`);
- across corpora, each method is represented on each whole-corpus group by its latest published run card.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mt_eval.leaderboard.ranking import Scored, borda, rank_group, task_average

EXTERNAL = "external dependency"


@dataclass(frozen=True)
class Conditions:
    """What this board requires for prize eligibility beyond the card's own facts."""

    max_hot_p95_s: float | None = None
    hardware: str | None = None


def prize(row: dict[str, Any], conditions: Conditions) -> dict[str, Any]:
    """``{"eligible": True | False | None, "reasons": [...]}``: why not, or what is unknown."""
    facts = row["eligibility"]
    against: list[str] = []
    unknown: list[str] = []
    if row["dependency_class"] == "A2":
        against.append("external dependency (class A2)")
    elif row["dependency_class"] is None:
        against.append("dependency class undeclared")
    if facts["eligible"] is False:
        against += facts["reasons"] or ["the card says not eligible"]
    elif facts["eligible"] is None:
        unknown.append("eligibility not recorded")
    if facts["status"] is None:
        unknown.append("run status not recorded")
    elif facts["status"] != "complete":
        against.append(f"run {facts['status']}")
    if facts["gate_passed"] is False:
        against.append("headline gate failed")
    elif facts["gate_passed"] is None:
        unknown.append("gate not recorded")
    if facts["contamination"] == "contaminated":
        against.append("contaminated")
    if row["headline"] is None:
        against.append("no headline")
    if conditions.max_hot_p95_s is not None:
        p95 = row["hot_p95_s"]
        if p95 is None:
            unknown.append("hot p95 latency not recorded")
        elif p95 > conditions.max_hot_p95_s:
            against.append(f"hot p95 {p95:.3g} s > {conditions.max_hot_p95_s:g} s")
    if conditions.hardware is not None and conditions.hardware.lower() not in row["hardware"].lower():
        against.append(f"hardware is not {conditions.hardware}")
    if against:
        return {"eligible": False, "reasons": against}
    return {"eligible": None if unknown else True, "reasons": unknown}


def filters_given(board: dict[str, Any]) -> str:
    """The board's filters as they are typed again, each value quoted where a shell needs it (``--pair 'eng>spa'
    --corpus 'WMT 24' --class pipeline``; an unquoted ``>`` is a redirection); "" for the whole board. A pair is
    in the one form cards record it, whichever spelling was given (``en:es`` and ``'en>es'``: ``'en>es'``)."""
    import shlex

    return " ".join(f"--{name} {shlex.quote(value)}" for name, values in (board.get("filters") or {}).items()
                    for value in values)


def build_board(rows: Sequence[dict[str, Any]], conditions: Conditions = Conditions(),
                filters: dict[str, Any] | None = None) -> dict[str, Any]:
    """The board model (JSON-serialisable) of stored rows (already filtered by the store)."""
    shown = [dict(r) for r in rows if r["dependency_class"] != "X"]
    for row in shown:
        row["prize"] = prize(row, conditions)
        row["flags"] = sorted({*row["eligibility"]["flags"], *([EXTERNAL] if row["dependency_class"] == "A2" else [])})
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    unranked = []
    for row in shown:
        if row["headline"] is None:
            unranked.append(row)
        else:  # (the pair too: one corpus without a declared pair may be run as several)
            groups.setdefault((row["ranking_key"], row["pair"]), []).append(row)
    ranked = [_group(members) for members in groups.values()]
    ranked.sort(key=lambda g: (g["pair"], g["corpus_name"], g["subset"], g["metric"]))
    return {
        "generated_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "filters": filters or {},
        "conditions": {"max_hot_p95_s": conditions.max_hot_p95_s, "hardware": conditions.hardware},
        "cards": len(shown),
        "hidden": {"class X": len(rows) - len(shown)},
        "groups": ranked,
        "unranked": unranked,
        "across": across_corpora(ranked),
    }


def _group(members: list[dict[str, Any]]) -> dict[str, Any]:
    by_key = {m["key"]: m for m in members}
    placed = rank_group([Scored(m["key"], m["headline"]["score"], m["headline"]["ci_low"], m["headline"]["ci_high"],
                                m["headline"]["higher_is_better"]) for m in members])
    rows = []
    for place in placed:
        row = by_key[place.key]
        row["rank"] = place.rank
        row["ties"] = place.ties
        rows.append(row)
    first = rows[0]
    headline = first["headline"]
    entries = first.get("entries_run") or headline["denominator"]  # rows stored before entries_run: the denominator
    return {"ranking_key": first["ranking_key"], "pair": first["pair"], "corpus_name": first["corpus_name"],
            "corpus_sha256": first["corpus_sha256"], "metric": headline["metric"],
            "higher_is_better": headline["higher_is_better"], "signature": first["signatures"].get(headline["metric"]),
            "denominator": headline["denominator"], "corpus_size": first["corpus_size"], "entries_run": entries,
            "subset": first["corpus_size"] != entries, "rows": rows, **_intervals(rows), **_gate_policies(rows)}


def _gate_policies(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The policies the group's rows passed the headline gate under when published (``gate_policies``, with how
    many rows each), and when they are not all one the note that says so (``gate_note``, else None): a headline a
    lenient policy let through (fewer scored entries, no canary) is not one the shipped policy let through. A row
    stored before the policy was recorded does not alone make the note."""
    counts: dict[str, int] = {}
    for row in rows:
        policy = row["eligibility"].get("gate_policy") or "not recorded (published before the board kept it)"
        counts[policy] = counts.get(policy, 0) + 1
    policies = [{"policy": policy, "rows": count} for policy, count in counts.items()]
    note = None
    if len([p for p in counts if not p.startswith("not recorded")]) > 1:
        note = ("the rows passed the headline gate under different policies (" + "; ".join(
            f"{p['policy']}: {p['rows']} row{'s' if p['rows'] != 1 else ''}" for p in policies)
                + "): their headlines were not held to the same rules; publish every card under one --policy to "
                  "rank them alike")
    return {"gate_policies": policies, "gate_note": note}


def drawn_how(row: dict[str, Any]) -> str:
    """How a row's intervals were drawn, as two rows drawn alike share it: "1000 fast bootstrap resamples"."""
    intervals = row.get("intervals")
    if not intervals:
        return "not recorded (published before the board kept it)"
    confidence = intervals.get("confidence")
    level = "" if confidence in (None, 0.95) else f", {confidence:.0%} intervals"
    return f"{intervals.get('resamples')} {intervals.get('bootstrap') or 'fast'} bootstrap resamples{level}"


def _intervals(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """How the group's intervals were drawn, with how many rows each (``intervals_drawn``), and when they were not
    all drawn alike the note that says so (``intervals_note``, else None): the ranks and ties are read from the
    intervals, and an interval of 100 resamples, or of other draws, is not the one of 1,000. A row stored before its
    intervals were recorded is counted as not recorded and does not alone make the note."""
    counts: dict[str, int] = {}
    for row in rows:
        how = drawn_how(row)
        counts[how] = counts.get(how, 0) + 1
    drawn = [{"how": how, "rows": count} for how, count in counts.items()]
    recorded = [how for how in counts if not how.startswith("not recorded")]
    note = None
    if len(recorded) > 1:
        note = ("the intervals were drawn differently (" + "; ".join(f"{d['how']}: {d['rows']} "
                                                                    f"row{'s' if d['rows'] != 1 else ''}"
                                                                    for d in drawn)
                + "), and the ranks and ties are read from overlapping intervals: they are not ranked alike; run "
                  "the cards again with the same --resamples and --bootstrap to rank them alike")
    return {"intervals_drawn": drawn, "intervals_note": note}


def corpus_label(group: dict[str, Any]) -> str:
    return f"{group['corpus_name']} ({group['pair']}, {group['corpus_sha256'][:8]})"


def _labels(groups: Sequence[dict[str, Any]]) -> list[str]:
    """Each group's column label, told apart by its metric (and then its ranking key) where the corpus and pair
    are the same: one column per group, none written over another."""
    labels = [corpus_label(g) for g in groups]
    for field, width in (("metric", None), ("ranking_key", 8)):
        repeated = {label for label in labels if labels.count(label) > 1}
        labels = [f"{label[:-1]}, {str(g[field])[:width]})" if label in repeated else label
                  for label, g in zip(labels, groups, strict=True)]
    return labels


def across_corpora(groups: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Borda and task average over the whole-corpus groups (`mt_eval.leaderboard.ranking`); a corpus family is
    the language pair."""
    whole = [g for g in groups if not g["subset"]]
    corpora = _labels(whole)
    if len(corpora) < 2:
        return {"corpora": [], "methods": []}
    table: dict[str, dict[str, float]] = {}
    used: dict[str, dict[str, str]] = {}
    shown: dict[str, tuple[str, str]] = {}  # each method's id and name
    for group, label in zip(whole, corpora, strict=True):
        latest: dict[str, dict[str, Any]] = {}
        for row in group["rows"]:
            current = latest.get(method := _method_key(row))
            if current is None or (row["finished_at"], row["id"]) > (current["finished_at"], current["id"]):
                latest[method] = row
        for method, row in latest.items():
            table.setdefault(method, {})[label] = row["headline"]["score"]
            used.setdefault(method, {})[label] = row["key"]
            shown[method] = (row["method_id"], row["method_name"])
    orientation = {label: g["higher_is_better"] for g, label in zip(whole, corpora, strict=True)}
    families = {label: g["pair"] for g, label in zip(whole, corpora, strict=True)}
    points = borda(table, corpora, orientation)
    averages = task_average(table, families, orientation)
    methods: list[dict[str, Any]] = [{"method_id": shown[m][0], "method_name": shown[m][1], "borda": points[m].value,
                "borda_per_corpus": points[m].per_corpus, "task_average": averages[m].value,
                "task_average_per_family": averages[m].per_family, "missing": points[m].missing, "cards": used[m],
                "scores": table[m]} for m in table]
    methods.sort(key=lambda m: (m["borda"] is None, -(m["borda"] or 0), m["method_name"], m["method_id"]))
    return {"corpora": [{"label": label, "family": families[label], "metric": g["metric"]}
                        for g, label in zip(whole, corpora, strict=True)], "methods": methods}


def _method_key(row: dict[str, Any]) -> str:
    """A method across corpora: its id and the name its cards show it by. A fork that kept the id under a name of
    its own is another method, and is not credited with the original's scores (nor they with its)."""
    return f"{row['method_id']}\n{row['method_name']}"
