"""Synthetic but genuine run cards, for the leaderboard's tests, its benchmark and trying the board out.

A card is built as the harness builds one: predictions for the entries of a real corpus file, scored by the
harness's own scorer (so `mt-eval verify` recomputes the same numbers), sealed with its content hash. The
predictions are the references, degraded for a chosen share of the entries, so the score follows ``quality``.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import random
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from mt_eval._version import __version__
from mt_eval.contamination.record import ContaminationRecord
from mt_eval.contamination.report import CorpusSummary, Planted
from mt_eval.contamination.settings import CheckSettings
from mt_eval.corpus.families import family_of, scored_entries
from mt_eval.dependency_classes import DependencyClass
from mt_eval.harness import runcard as rc
from mt_eval.harness.environment import Environment
from mt_eval.harness.families import tally
from mt_eval.harness.gate import apply_gate
from mt_eval.harness.latency import LatencyFacts
from mt_eval.harness.outcome import failures_of, status_of
from mt_eval.harness.policy import shipped_policy
from mt_eval.harness.scoring import Scores, score
from mt_eval.harness.verify import canonical_sha256

WORDS = ("el gato duerme en la casa grande", "mi amiga lee un libro nuevo", "hoy hace sol en la ciudad",
         "los niños juegan en el parque", "gracias por la comida tan rica", "la tienda abre a las nueve")


def write_corpus(path: Path, *, entries: int = 30, name: str | None = None, pair: tuple[str, str] = ("eng", "spa"),
                 seed: int = 1, canaries: int = 2, negatives: int = 2) -> Path:
    """A corpus file of ``entries`` scored sentences with references, then ``canaries`` canaries (exact match)
    and ``negatives`` negative controls (empty sources)."""
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = [{"id": f"s{i:04d}", "source": f"sentence {i} {rng.random():.6f}",
                                   "reference": f"{rng.choice(WORDS)} {i}"} for i in range(entries)]
    rows += [{"id": f"c{i:02d}", "family": "canary", "pass_rule": "exact", "source": f"canary {i}",
              "reference": f"canario {i}"} for i in range(canaries)]
    rows += [{"id": f"n{i:02d}", "family": "negative", "source": ""} for i in range(negatives)]
    path.write_text(json.dumps({"dataset": {"name": name or path.stem, "license": "CC0-1.0"},
                                "language_pair": {"source": pair[0], "target": pair[1]}, "entries": rows},
                               ensure_ascii=False, indent=1), encoding="utf-8")
    return path


class CardFactory:
    """Builds cards on one corpus file; scores of identical predictions are computed once."""

    def __init__(self, corpus_path: Path, *, resamples: int = 200, seed: int = 12345) -> None:
        from mt_eval.harness.corpus import read_corpus

        self.corpus = read_corpus(corpus_path)
        self.resamples = resamples
        self.seed = seed
        self._scores: dict[tuple[str, ...], Scores] = {}

    def predictions(self, quality: float, variant: int = 0) -> list[str]:
        """The scored entries' references, with a share ``1 - quality`` of them degraded (last words dropped,
        order reversed)."""
        rng = random.Random(f"{quality}:{variant}")
        out = []
        for entry in scored_entries(self.corpus.entries):
            reference = entry["reference"]
            if rng.random() < quality:
                out.append(reference)
            else:
                words = reference.split()
                out.append(" ".join(reversed(words[: max(1, len(words) - rng.randint(1, 3))])))
        return out

    def clean_check(self, entries: Sequence[dict[str, Any]]) -> ContaminationRecord:
        """A clean contamination record of this corpus, as a check that planted one of its sources and found it
        records it (`mt_eval.harness.verify_fairness` holds a card to that)."""
        corpus = self.corpus
        summary = CorpusSummary(path=str(corpus.path), name=corpus.name, sha256=corpus.sha256,
                                entries=len(corpus.entries), texts=2 * len(corpus.entries))
        planted = Planted(corpus=corpus.name, entry_id=str(entries[0]["id"]), side="source", carrier="data file",
                          file="data/planted.txt", line=1, perturbations=[], found=True)
        settings = CheckSettings(plant=1)
        return ContaminationRecord(status="clean", recall=1.0, recall_floor=settings.recall_floor, seed=settings.seed,
                                   planted=[planted], corpora=[summary], settings=settings, seconds=0.01)

    def scores(self, predictions: list[str]) -> Scores:
        key = tuple(predictions)
        if key not in self._scores:
            references = [e["reference"] for e in scored_entries(self.corpus.entries)][: len(predictions)]
            self._scores[key] = score(predictions, [references], resamples=self.resamples, seed=self.seed)
        return msgspec.convert(msgspec.to_builtins(self._scores[key]), Scores)

    def card(self, method_id: str, *, quality: float = 0.5, variant: int = 0, method_class: str = "pipeline",
             dependency_class: DependencyClass | None = "S", method_card: dict[str, Any] | None = None,
             bare: bool = False, extra: dict[str, Any] | None = None, finished_at: str | None = None,
             hot_p95_s: float = 0.01,
             run_id: str | None = None, limit: int | None = None, failing: int = 0) -> dict[str, Any]:
        """A sealed card (as parsed JSON). ``method_card`` fields are laid over a small method card (``bare``: one
        with only what method.json gives, as a run without a method card has); ``extra`` adds top-level fields
        (``eligibility``, ``sandbox``, ``gate``, ...); ``limit`` runs only the first entries; ``failing`` fails the
        first scored entries, and the card then records its status and failures, as a run does."""
        selection = None
        entries = self.corpus.entries
        if limit is not None:  # as mt-eval run --limit N records it
            from mt_eval.corpus.selection import SelectionRequest, select

            chosen = select(self.corpus, SelectionRequest(limit=limit))
            entries, selection = chosen.entries, msgspec.convert(chosen.facts, rc.SelectionFacts)
        predicted = iter(self.predictions(quality, variant))
        results = []
        for entry in entries:  # scored entries as predicted, canaries passed, negative controls abstained on
            family = family_of(entry)
            if family == "negative":
                results.append(rc.CardResult(id=entry["id"], abstained=True, abstain_reason="empty source",
                                             latency_s=0.001))
            elif family == "scored" and sum(r.error is not None for r in results) < failing:
                next(predicted)
                results.append(rc.CardResult(id=entry["id"], error="synthetic failure", latency_s=0.001))
            else:
                text = entry["reference"] if family == "canary" else next(predicted)
                results.append(rc.CardResult(id=entry["id"], predicted=text, latency_s=0.001))
        scored = [r.predicted or "" for r, e in zip(results, entries, strict=True) if family_of(e) == "scored"]
        card_fields = {"method_id": method_id, "name": method_id.replace("-", " ").title(), "class": method_class,
                       **({"dependency_class": dependency_class} if dependency_class else {}),
                       **({} if bare else {"description": f"Synthetic method {method_id}.", "paradigm": "rule-based",
                                           "tools_used": ["glossary"], "open_source": False}),
                       **(method_card or {})}
        moment = finished_at or datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        card = rc.RunCard(
            run_id=run_id or f"synthetic-{uuid.uuid4().hex}", started_at=moment, finished_at=moment, sessions=1,
            sdk_version=__version__,
            method=rc.MethodFacts(method_id=method_id, name=card_fields["name"], method_class=method_class,
                                  card=card_fields, dependency_class=dependency_class, contributions=[],
                                  runtime="python", code_sha256=hashlib.sha256(method_id.encode()).hexdigest()),
            corpus=rc.CorpusFacts(name=self.corpus.name, path=str(self.corpus.path), sha256=self.corpus.sha256,
                                  entries=len(self.corpus.entries), pair=self.corpus.pair or "eng>spa"),
            covariates=rc.Covariates(model=None, temperature=None, max_tokens=None, seed=self.seed, batch_size=8,
                                     concurrency=8, timeout_s=120.0, retries_per_entry=1, retry_budget=10,
                                     retries_used=0, tool_permissions=[],
                                     not_applicable={"model": "method.json lists no model dependency",
                                                     "temperature": "method.json lists no model dependency"}),
            environment=Environment(python="3", os="Linux", machine="x86_64", cpu_model="synthetic CPU",
                                    cpu_count=2, memory_gib=24.0, hardware="synthetic CPU ×2, 24 GiB, no GPU", gpus=[],
                                    digest=hashlib.sha256(b"synthetic environment").hexdigest()),
            metrics=self.scores(scored),
            latency=LatencyFacts(cold_s=0.05, warmup_entries=0, hot_entries=len(results), hot_p50_s=0.001,
                                 hot_p95_s=hot_p95_s),
            usage=rc.UsageTotals(prompt_tokens=0, completion_tokens=0), errors=failing, results=results,
            selection=selection, contamination=self.clean_check(entries))
        if failing:
            card.status, card.failures = status_of(results), failures_of(results)
        card.families = tally(entries, {str(r.id): r for r in results})
        card.gate = apply_gate(card, shipped_policy())
        data: dict[str, Any] = msgspec.to_builtins(card)
        for key in ("static_scan", "sandbox", "gateway", "eligibility"):  # absent unless given, as on an older card
            data.pop(key, None)
        data.update(extra or {})
        data["content_sha256"] = canonical_sha256(data)
        return data


def write_card(data: dict[str, Any], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(msgspec.json.format(msgspec.json.encode(data), indent=2))
    return path
