"""Corpus families: every entry is scored (the default), a canary or a negative control.

- **scored** entries make the metrics (chrF++, BLEU, TER); nothing else does;
- a **canary** is small and fully explicit: it must pass whenever the harness, the method's loading and the
  formats work. Each carries its own ``pass_rule``: ``exact`` (the prediction equals the reference, outer
  whitespace aside) or ``chrf>=N`` (sentence chrF++ against the reference of at least N, 0–100);
- a **negative** control is plausible input that must be refused or abstained on: an unsupported pair, an
  empty or garbage source, a missing resource. Its source may be empty, it needs no reference, and it may
  name its own ``pair`` (``"eng>deu"``): it is then translated in a call of its own whose RunConfig has that
  pair.

A method never sees an entry's family, pass rule or pair field: ``mt-eval run`` hides them with the gold
fields (`mt_eval.gold.method_view`), since an entry that announced itself as a control would test nothing.
What a run's results say about each family is `mt_eval.harness.families`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec

from mt_eval.corpus.on_disk import kept
from mt_eval.problems import Problem

FAMILIES = ("scored", "canary", "negative")
FAMILY_FIELDS = frozenset({"family", "pass_rule", "pair"})  # corpus fields the method never sees
_CHRF_RULE = re.compile(r"^\s*chrf(?:\+\+)?\s*>=\s*(\d+(?:\.\d+)?)\s*$", re.IGNORECASE)
_PAIR = re.compile(r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*>[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$")


def family_of(entry: Mapping[str, Any]) -> str:
    family = entry.get("family")
    return family if isinstance(family, str) and family else "scored"


def pair_of(entry: Mapping[str, Any]) -> str | None:
    """The pair a negative control is translated in, when it names its own."""
    pair = entry.get("pair")
    return pair if isinstance(pair, str) and family_of(entry) == "negative" else None


def by_pair(entries: Sequence[dict[str, Any]], config: Any) -> list[tuple[Any, Sequence[dict[str, Any]]]]:
    """The entries in groups to translate, each with its RunConfig: the run's pair first, then each pair a
    negative control names, in corpus order. (Entries of one pair come back as they were given.)"""
    if not any(pair_of(entry) for entry in entries):
        return [(config, entries)] if entries else []
    groups: dict[str | None, list[dict[str, Any]]] = {None: []}
    for entry in entries:
        groups.setdefault(pair_of(entry), []).append(entry)
    out: list[tuple[Any, Sequence[dict[str, Any]]]] = []
    for pair, members in groups.items():
        if not members:
            continue
        if pair is None:
            out.append((config, members))
        else:
            source, _, target = pair.partition(">")
            out.append((msgspec.structs.replace(config, source_lang=source, target_lang=target), members))
    return out


def marking(family: str, corpus_format: str | None) -> str:
    """How an entry is marked as of ``family`` in a corpus of ``corpus_format``: a field, or in a TSV a column
    (which needs a header); for a canary, with its rule."""
    if corpus_format == "tsv":
        rule = ' and a pass_rule column ("exact" or "chrf>=N")' if family == "canary" else ""
        return f"a family column (named in a header line) holding {family}{rule}"
    rule = ' and a "pass_rule" ("exact" or "chrf>=N")' if family == "canary" else ""
    return f'"family": "{family}"{rule}'


def scored_entries(entries: Sequence[dict[str, Any]]) -> Sequence[dict[str, Any]]:
    """The scored entries, in order (entries on disk stay on disk: `mt_eval.corpus.on_disk.kept`)."""
    return kept(entries, lambda entry: family_of(entry) == "scored")


def has_families(entries: Iterable[Any]) -> bool:
    """Whether any entry names a family, a pass rule or a pair (checked at C speed for large corpora)."""
    return any(isinstance(e, dict) and ("family" in e or "pass_rule" in e or "pair" in e) for e in entries)


class PassRule:
    """A canary's pass rule: ``exact`` or ``chrf>=N``."""

    def __init__(self, text: str) -> None:
        self.text = text.strip()
        found = _CHRF_RULE.match(self.text)
        self.chrf_min = float(found.group(1)) if found else None
        if self.text.lower() != "exact" and (self.chrf_min is None or self.chrf_min > 100):
            raise ValueError(f"unknown pass rule {text!r}")

    def judge(self, predicted: str, reference: str) -> tuple[bool, str]:
        if self.chrf_min is None:
            if predicted.strip() == reference.strip():
                return True, "exact match"
            return False, f"{quoted(predicted)} is not {quoted(reference)}"
        from sacrebleu.metrics.chrf import CHRF

        value = CHRF(word_order=2).sentence_score(predicted, [reference]).score
        verdict = ">=" if value >= self.chrf_min else "<"
        return value >= self.chrf_min, f"chrF++ {value:.1f} {verdict} {self.chrf_min:g}"


def quoted(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def check_families(entries: Sequence[Any], *, file: str, where: Any = None) -> list[Problem]:
    """Problems with the entries' ``family`` and ``pass_rule`` fields, each located (``where(i)`` names entry
    i's place, by default ``$.entries[i]``)."""
    place = where or (lambda i: f"$.entries[{i}]")
    problems: list[Problem] = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            continue
        family, rule = entry.get("family"), entry.get("pass_rule")
        if family is not None and family not in FAMILIES:
            problems.append(Problem(file=file, path=f"{place(index)}.family", code="family",
                                    message=f"unknown family {family!r}",
                                    hint="a family is scored (the default), canary or negative"))
            continue
        if family == "canary":
            if rule is None:
                problems.append(Problem(file=file, path=f"{place(index)}.pass_rule", code="pass-rule",
                                        message="a canary needs its own pass rule",
                                        hint='add "pass_rule": "exact" or "pass_rule": "chrf>=80"'))
            elif not isinstance(rule, str) or not _valid_rule(rule):
                problems.append(Problem(file=file, path=f"{place(index)}.pass_rule", code="pass-rule",
                                        message=f"unknown pass rule {rule!r}",
                                        hint='write "exact", or "chrf>=N" with N from 0 to 100'))
            reference = entry.get("reference")
            if not isinstance(reference, str) or not reference.strip():  # (blank: no reference, as for any entry)
                problems.append(Problem(file=file, path=f"{place(index)}.reference", code="pass-rule",
                                        message="a canary needs a reference its pass rule compares with"
                                        + ("" if reference is None else " (a blank one is none)"),
                                        hint="give the canary the translation it must produce"))
        elif rule is not None:
            problems.append(Problem(file=file, path=f"{place(index)}.pass_rule", code="pass-rule",
                                    message=f"only a canary has a pass rule (this entry is {family_of(entry)})",
                                    hint='remove pass_rule, or make the entry "family": "canary"'))
        pair = entry.get("pair")
        if pair is not None and family != "negative":
            problems.append(Problem(file=file, path=f"{place(index)}.pair", code="pair",
                                    message=f"only a negative control names its own pair (this entry is "
                                            f"{family_of(entry)})",
                                    hint="run entries of another pair as a corpus of their own, with --pair"))
        elif pair is not None and (not isinstance(pair, str) or not _PAIR.match(pair)):
            problems.append(Problem(file=file, path=f"{place(index)}.pair", code="pair",
                                    message=f"{pair!r} is not a language pair", hint='write it as "eng>deu"'))
        if len(problems) >= 50:
            break
    return problems


def _valid_rule(text: str) -> bool:
    try:
        PassRule(text)
    except ValueError:
        return False
    return True
