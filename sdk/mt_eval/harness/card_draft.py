"""The card a finished run drafts before it is sealed: its metrics, scored over the scored entries a chunk at a
time, and the fields the run's state, method, corpus and settings give it (`mt_eval.harness.session`)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, Protocol

import msgspec

from mt_eval._version import __version__
from mt_eval.corpus.describe import reading_facts
from mt_eval.corpus.families import family_of
from mt_eval.corpus.model import Corpus
from mt_eval.corpus.selection import Selection
from mt_eval.guarded_calls import prints_to_stderr
from mt_eval.harness import runcard as rc
from mt_eval.harness.corpus import card_results
from mt_eval.harness.environment import environment
from mt_eval.harness.execution import RunSettings
from mt_eval.harness.fairness import FairRun
from mt_eval.harness.latency import Measured, latency_facts
from mt_eval.harness.logged_results import LoggedResults, ScoredSegments, translated_count
from mt_eval.harness.method_contract import method_facts
from mt_eval.harness.metric_statistics import MetricScore
from mt_eval.harness.request import RunRequest
from mt_eval.harness.scoring import STATS_CHUNK, Scores, make_metrics, score_segments
from mt_eval.loader import LoadedMethod
from mt_eval.pins import PinCheck
from mt_eval.records import RunConfig
from mt_eval.results import totals


class RecordedRun(Protocol):
    """What the card takes of a run's run.json (`mt_eval.harness.session.RunState`)."""

    run_id: str
    started_at: str
    sessions: int
    code_sha256: str
    load_s: float
    latency: Measured | None
    normalised: dict[str, int]


def run_scores(entries: Sequence[dict[str, Any]], results: LoggedResults, request: RunRequest,
               manager: Any, target_lang: str | None) -> Scores | None:
    """The metrics over the scored entries (canaries and negative controls are not scored), read a chunk at a time;
    None when not every entry has a result, the scored entries have no references, or none was translated: each
    failed or was abstained on (never a chrF++ of 0.00 that looks like a result). Else such an entry scores as empty."""
    if len(results) != len(entries):
        return None
    scored = 0
    for entry in entries:
        if family_of(entry) == "scored":
            if not isinstance(entry.get("reference"), str):
                return None
            scored += 1
    if not scored or all(result is None or result.error is not None or result.abstained
                         for entry, result in results.aligned() if family_of(entry) == "scored"):
        return None

    from mt_eval.extensions import extension_scores, metric_scorers

    segments, metrics = ScoredSegments(results, STATS_CHUNK), make_metrics(target_lang)  # (tokenized for it)
    with prints_to_stderr():  # what an extension's hook or scorer prints is not the run's result
        scorers = metric_scorers(manager, taken=list(metrics))
    scores = score_segments(segments, scored, resamples=request.resamples, seed=request.seed,
                            bootstrap=request.bootstrap, metrics=metrics, also=list(scorers),
                            stream=None if request.quiet else sys.stderr,  # (what is scored said as it starts)
                            translated=translated_count(results) if request.bootstrap == "upstream" else None)
    with prints_to_stderr():
        scores.metrics += [MetricScore(name=name, score=score, signature=f"extension:{name}") for name, score
                           in extension_scores(scorers, segments.listed)]
    return scores


def draft_card(state: RecordedRun, finished_at: str, loaded: LoadedMethod, card: dict[str, Any], corpus: Corpus,
               selection: Selection, config: RunConfig, settings: RunSettings, retries_used: int,
               scores: Scores | None, results: LoggedResults, request: RunRequest, fair: FairRun,
               pins: list[PinCheck], status: rc.Status, runtime: str,
               referenced: rc.ResultsLogReference | None = None) -> rc.RunCard:
    """The run's card, unsealed; ``referenced``: the results log the card references in place of listing them."""
    from mt_eval.harness.covariates import run_covariates
    covariates = run_covariates(loaded.manifest, config)
    usage = totals(results)
    return rc.RunCard(
        run_id=state.run_id, started_at=state.started_at, finished_at=finished_at, sessions=state.sessions,
        sdk_version=__version__,
        method=method_facts(loaded, card, runtime=runtime, code_sha256=state.code_sha256,
                            champollion=request.champollion.record if request.champollion is not None else None),
        corpus=rc.CorpusFacts(name=corpus.name, path=str(corpus.path), sha256=corpus.sha256,
                              entries=len(corpus.entries), pair=config.pair, license=corpus.license,
                              reading=msgspec.convert(reading_facts(corpus), rc.CorpusReading)),
        covariates=rc.Covariates(model=covariates.model, temperature=config.temperature,
                                 max_tokens=config.max_tokens, seed=config.seed, batch_size=settings.batch_size,
                                 concurrency=settings.concurrency, timeout_s=settings.timeout_s,
                                 retries_per_entry=settings.retries,
                                 retry_budget=settings.budget_for(len(selection.entries)), retries_used=retries_used,
                                 tool_permissions=covariates.tool_permissions,
                                 not_applicable=covariates.not_applicable, params=dict(config.params)),
        environment=environment(node=loaded.source.runtime == "node"),
        metrics=scores,
        latency=latency_facts(state.latency, state.load_s, results),
        usage=rc.UsageTotals(prompt_tokens=usage["prompt_tokens"], completion_tokens=usage["completion_tokens"],
                             total_tokens=usage["total_tokens"]),
        errors=sum(r.error is not None for r in results), status=status,
        results=card_results(corpus, list(results)) if referenced is None else [], results_log=referenced,
        selection=None if selection.facts is None else msgspec.convert(selection.facts, rc.SelectionFacts),
        **fair.card_fields(results, complete=len(results) == len(selection.entries)),
        cached=usage["cached"], normalised=dict(state.normalised), pins=pins,
    )
