"""What a grader sees of a translation run: items that say what was translated and into what, and nothing about
who translated it.

Each translated entry becomes an item with an opaque id (``item-0001`` …, numbered after a shuffle with a
recorded seed) whose state holds only ``source``, ``candidate``, the ``reference`` (unless withheld) and the
language codes. The method's id, name, class, card, runtime, model, route (the champollion pair and plugin) and
the entries' own ids are never sent; `identity_strings` lists what must not reach a grader, and
`identity_leak` finds any of it in what a grader returned.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from mt_eval.corpus.families import family_of
from mt_eval.decisions.records import DecisionCase, DecisionResult
from mt_eval.decisions.rubric import Rubric
from mt_eval.harness.runcard import RunCard

SENT_FIELDS = ("source", "candidate", "reference", "source_lang", "target_lang")
WITHHELD = ("method.method_id", "method.name", "method.class", "method.card", "method.runtime", "method.code_sha256",
            "method.champollion (route: pair, methodPlugin, plugin directory)", "covariates.model", "run_id",
            "entry ids", "result metadata, latency and usage")
_MIN_IDENTITY = 3  # shorter strings (e.g. "S") are too common to mean anything


class GradingError(ValueError):
    """Grading cannot start or finish; the message says why and how to fix it."""


@dataclass(frozen=True)
class Item:
    """One entry as a grader sees it, and where it came from (kept by the grading side only)."""

    item_id: str
    entry_id: str
    case: DecisionCase


@dataclass(frozen=True)
class Blinded:
    items: list[Item]
    not_graded: dict[str, str]  # entry id → why it is not graded (no translation: it failed, or was abstained on)
    identity: list[str]
    seed: int
    with_reference: bool
    controls: set[str] = field(default_factory=set)  # canaries and negative controls: not part of the evaluation


def read_run_card(path: str | Path) -> tuple[RunCard, bytes]:
    """A run card written by ``mt-eval run`` (newer fields are ignored), with its bytes."""
    from mt_eval.harness.verify import canonical_sha256

    path = Path(path)
    try:
        raw = path.read_bytes()
        card = msgspec.json.decode(raw, type=RunCard)
    except OSError as exc:
        raise GradingError(f"cannot read the run card {path}: {exc.strerror or exc}") from exc
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise GradingError(f"{path} is not a run card written by `mt-eval run`: {exc}") from exc
    digest = canonical_sha256(msgspec.json.decode(raw))
    if digest != card.content_sha256:  # (its hash is what a grading card certifies: it must be the content's)
        raise GradingError(f"{path} does not verify: it says its content hashes to {card.content_sha256[:16]}…, but "
                           f"it hashes to {digest[:16]}…: it was changed after the run sealed it; grade the card the "
                           "run wrote (`mt-eval verify` says what differs)")
    return card, raw


def identity_strings(card: RunCard) -> list[str]:
    """Everything that names or routes the graded method: none of it may reach a grader."""
    method = card.method
    found: list[Any] = [method.method_id, method.name, method.card.get("name"), method.card.get("homepage"),
                        method.card.get("open_source_url"), card.covariates.model, method.code_sha256, card.run_id]
    route = method.champollion or {}
    found += [route.get("method_plugin"), route.get("plugin_directory"), route.get("method_fingerprint")]
    if isinstance(route.get("plugin_directory"), str):
        found.append(Path(route["plugin_directory"]).name)
    unique = dict.fromkeys(s.strip() for s in found if isinstance(s, str) and len(s.strip()) >= _MIN_IDENTITY)
    return list(unique)


def blind(card: RunCard, entries: dict[str, dict[str, Any]], rubric: Rubric, *, seed: int,
          with_reference: bool = True) -> Blinded:
    """The run's translated entries as shuffled, anonymous items asking the rubric's question."""
    source_lang, _, target_lang = card.corpus.pair.partition(">")
    question = rubric.question()
    items: list[tuple[str, DecisionCase]] = []
    not_graded: dict[str, str] = {}
    controls: set[str] = set()
    for result in card.results:
        result_id = str(result.id)  # a card keeps integer ids as integers; entries are keyed by their text
        if result_id in entries and family_of(entries[result_id]) != "scored":
            controls.add(result_id)  # only the scored entries are graded, as only they are scored
            continue
        if result.abstained:  # (no translation to grade: the method declined the entry)
            not_graded[result_id] = "the method abstained" + (f": {result.abstain_reason}" if result.abstain_reason
                                                               else "")
            continue
        if result.error is not None or result.predicted is None:
            not_graded[result_id] = f"the translation failed: {result.error or 'no prediction'}"
            continue
        entry = entries.get(result_id)
        if entry is None:
            raise GradingError(f'the run card has a result for entry "{result_id}", which the corpus does not have')
        state = {"source": entry["source"], "candidate": result.predicted}
        if with_reference and isinstance(entry.get("reference"), str):
            state["reference"] = entry["reference"]
        state.update(source_lang=source_lang, target_lang=target_lang)
        items.append((result_id, DecisionCase(id="-", state=state, questions={rubric.name: question})))
    random.Random(seed).shuffle(items)
    width = max(4, len(str(len(items))))
    blinded = [Item(item_id=f"item-{n:0{width}d}", entry_id=entry_id,
                    case=DecisionCase(id=f"item-{n:0{width}d}", state=case.state, questions=case.questions))
               for n, (entry_id, case) in enumerate(items, start=1)]
    return Blinded(items=blinded, not_graded=not_graded, identity=identity_strings(card), seed=seed,
                   with_reference=with_reference, controls=controls)


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def identity_leak(identity: list[str], returned: Any, state: dict[str, Any]) -> str | None:
    """The first identity string found in what a grader returned (ignoring any the item's own texts contain)."""
    texts = " ".join(_strings(state)).casefold()
    returned_text = " ".join(_strings(returned)).casefold()
    for name in identity:
        needle = name.casefold()
        if needle in texts:
            continue
        if re.search(rf"(?<![\w-]){re.escape(needle)}(?![\w-])", returned_text):
            return name
    return None


def refuse_leaks(result: DecisionResult, item: Item, identity: list[str]) -> DecisionResult:
    """The grader's result with every answer refused when it names the graded method."""
    leaked = identity_leak(identity, msgspec.to_builtins(result), item.case.state)
    if leaked is None:
        return result
    from mt_eval.decisions.records import QuestionAnswer

    def refusal(name: str) -> str:
        return (f'the grader returned the graded method\'s identity ("{leaked}") in row {item.item_id}, question '
                f'"{name}": a grader must not know which method it grades, so this answer is refused')

    if result.error is not None:
        result.error = refusal(", ".join(item.case.questions))
    for name in item.case.questions:
        result.answers[name] = QuestionAnswer(error=refusal(name))
    return result
