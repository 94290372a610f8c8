"""Step 6 of re-verifying a run card (`mt_eval.harness.verify`): every metric recomputed from the card's
predictions and the corpus's references, over the scored entries with a result, with the card's own bootstrap
resamples, seed and draws, must equal the card's score, interval and sacrebleu signature.

`recompute_metrics` scores the card as the run did (from its log a chunk at a time when it references one).
`check_scores` compares scores recomputed elsewhere with the card: ``mt-eval compare`` recomputes both cards'
from the very statistics its paired tests use, so each is extracted once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mt_eval.harness.metric_statistics import MetricScore
    from mt_eval.harness.runcard import RunCard
    from mt_eval.harness.verification import Verification

TOLERANCE = 1e-4  # scores are stored rounded to 4 decimals
Listed = Callable[[], tuple[list[str], list[str]]]  # every hypothesis and reference, for extensions' metrics


def recompute_metrics(result: Verification, card: RunCard, source: Any, extensions: Sequence[str]) -> None:
    """Step 6 for a card whose corpus (``source``) checked out."""
    if card.metrics is None:
        result.check("metrics", True, "the card has no metrics to recompute")
        return
    if bootstrap_problem(card) is not None:  # (named when the card was read: `mt_eval.harness.verify`)
        result.check("metrics", False, "its bootstrap cannot be drawn again")
        return
    from mt_eval.corpus.families import scored_entries
    from mt_eval.corpus.model import entry_key
    from mt_eval.harness.metric_settings import MetricSetupError
    from mt_eval.harness.scoring import score

    try:
        _as_scored(card)  # (set up once here, where a failure is a finding rather than a traceback)
    except MetricSetupError as exc:
        result.problem("$.metrics", f"its metrics cannot be recomputed here: {exc}", code="metrics")
        result.check("metrics", False, "cannot be recomputed here")
        return
    scored = scored_entries(source.entries)  # the order the harness scored them in
    if card.results_log is not None:  # scored from the log a chunk at a time, as the run scored it
        recomputed, listed = _scores_from_log(result, card, scored)
        if recomputed is None:
            return
    else:
        ran = {entry_key(r.id): r for r in card.results}
        entries = [e for e in scored if e["id"] in ran]
        if not _results_present(result, len(entries)) or not _references_present(
                result, [e["id"] for e in entries if not isinstance(e.get("reference"), str)]):
            return
        hypotheses = [ran[e["id"]].predicted or "" if ran[e["id"]].error is None else "" for e in entries]
        references = [e["reference"] for e in entries]
        recomputed = score(hypotheses, [references], resamples=card.metrics.bootstrap_resamples,
                           seed=card.metrics.bootstrap_seed, bootstrap=card.metrics.bootstrap, metrics=_as_scored(card),
                           translated=sum(ran[e["id"]].error is None for e in entries))

        def listed() -> tuple[list[str], list[str]]:
            return hypotheses, references
    check_scores(result, card, recomputed.metrics, extensions, listed, not_computed=recomputed.not_computed)


def bootstrap_problem(card: RunCard) -> tuple[str, str] | None:
    """(JSON path, message) when the card's bootstrap seed or resamples are none a run takes (numpy refuses a
    negative seed; more resamples than a run takes would keep verify, gate and compare drawing them for hours), so
    its intervals cannot be drawn again, or when it states a confidence other than the one every run draws its
    intervals at; else None."""
    from mt_eval.harness.metric_statistics import CONFIDENCE, MAX_RESAMPLES
    from mt_eval.js_text import SAFE_INTEGER

    if card.metrics is None:
        return None
    seed, resamples = card.metrics.bootstrap_seed, card.metrics.bootstrap_resamples
    if not 0 <= seed <= SAFE_INTEGER:
        return "$.metrics.bootstrap_seed", (f"the bootstrap's seed {seed} is not one a run takes (0 to {SAFE_INTEGER}, "
                                            "as mt-eval run --seed): the card's intervals cannot be drawn again")
    if not 0 <= resamples <= MAX_RESAMPLES:
        hours = ", and drawing them would take hours" if resamples > MAX_RESAMPLES else ""
        return "$.metrics.bootstrap_resamples", (f"{resamples} bootstrap resamples is not a number a run takes (0 to "
                                                 f"{MAX_RESAMPLES:,}, as mt-eval run --resamples): the card's "
                                                 f"intervals cannot be drawn again{hours}")
    if card.metrics.confidence != CONFIDENCE:  # (the intervals recomputed at 95% would match, and the card lie)
        return "$.metrics.confidence", (f"the card says its intervals are at {card.metrics.confidence:g} confidence; "
                                        f"a run draws them at {CONFIDENCE:g}, as they are recomputed")
    return None


def check_scores(result: Verification, card: RunCard, recomputed: Sequence[MetricScore], extensions: Sequence[str],
                 listed: Listed, not_computed: Mapping[str, str] | None = None,
                 left_out: Mapping[str, str] | None = None) -> None:
    """Each metric the card states against ``recomputed`` (the SDK's own metrics, with the card's bootstrap
    settings), and the metrics of ``extensions`` computed from ``listed()``. ``not_computed``: the metrics a run
    computes none of on the card's outputs, with why (`mt_eval.harness.scoring.out_of_reach`), which the card must
    not state; ``left_out``: those not recomputed for another reason (the other card's outputs, comparing)."""
    from mt_eval.harness.metric_statistics import MetricScore
    from mt_eval.harness.scoring import make_metrics

    assert card.metrics is not None
    from mt_eval.extensions import extension_scores, metric_scorers
    from mt_eval.guarded_calls import prints_to_stderr

    fresh = {m.name: m for m in recomputed}
    builtin = set(make_metrics())
    failed = False
    try:
        with prints_to_stderr():  # what an extension's hook or scorer prints is not the verification's result
            scorers = metric_scorers(_extensions_enabled(extensions), taken=sorted(builtin), then="")
            fresh |= {name: MetricScore(name=name, score=score, signature=f"extension:{name}") for name, score
                      in extension_scores(scorers, listed, then="")}
    except ValueError as exc:  # (a scorer that raises, or gives no finite number, recomputes nothing)
        failed = True
        result.check("extensions", False, "their metrics could not be recomputed")
        result.problem("$.metrics.metrics", str(exc), "fix the extension, or verify without it", code="extension")
    for index, stated in enumerate(card.metrics.metrics):
        where = f"$.metrics.metrics[{index}]"
        again = fresh.pop(stated.name, None)
        if again is None:
            if stated.name in (not_computed or {}):
                result.check(stated.name, False, "stated, but not computable on these outputs")
                result.problem(where, f"the card states {stated.name}, which a run does not compute here: "
                               f"{(not_computed or {})[stated.name]}", code="not-computable")
            elif stated.name in (left_out or {}):
                result.check(stated.name, None, f"not recomputed: {(left_out or {})[stated.name]}")
            elif stated.signature.startswith("extension:"):
                if failed:
                    continue
                result.check(stated.name, None, "not recomputed: enable the extension that registers it with "
                                                "--extension MODULE")
                result.problem(where, f"{stated.name} comes from an extension and was not recomputed",
                               "give --extension MODULE to recompute it", code="not-recomputed", severity="warning")
            else:
                result.check(stated.name, False, "no such metric")
                result.problem(where, f"{stated.name!r} is not a metric this SDK computes", code="unknown-metric")
            continue
        _compare_metric(result, where, stated, again)
    for name in fresh:
        if name in builtin:
            result.check(name, False, "missing from the card")
            result.problem("$.metrics.metrics", f"the card lacks {name}, which every run computes", code="missing")
    if card.metrics.headline not in {m.name for m in card.metrics.metrics}:
        result.problem("$.metrics.headline", f"the headline {card.metrics.headline!r} is not one of the metrics")
    seed = card.covariates.seed
    if seed is not None and seed != card.metrics.bootstrap_seed:  # both are the run's --seed
        result.check("seed", False, f"bootstrap seed {card.metrics.bootstrap_seed}, run seed {seed}")
        result.problem("$.metrics.bootstrap_seed", f"the bootstrap's seed {card.metrics.bootstrap_seed} is not the "
                       f"run's seed {seed} ($.covariates.seed): a run draws its intervals with its own --seed",
                       code="seed")


def _results_present(result: Verification, count: int) -> bool:
    """Whether any scored entry has a result (``count`` of them): metrics over none cannot be recomputed."""
    if not count:
        result.check("metrics", False, "no scored entry has a result")
        result.problem("$.metrics", "the card states metrics, but holds a result for none of its corpus's scored "
                       "entries: they cannot have been computed from it", code="no-results")
    return count > 0


def _references_present(result: Verification, missing: list[Any]) -> bool:
    """Whether no scored entry with a result lacks a reference (``missing``: the ids of those that do); the
    problem is reported when one does."""
    if missing:
        result.check("metrics", False, f"{len(missing)} entries have no reference")
        result.problem("$.metrics", f"the card has metrics but {len(missing)} of its entries have no reference in "
                       f"the corpus (e.g. {missing[0]!r})", code="no-reference")
    return not missing


def _scores_from_log(result: Verification, card: RunCard, scored: Any) -> tuple[Any, Listed]:
    """The metrics of a card that references its log (checked by now: step 4), read from the log a chunk at a
    time, as the run scored them: the scorer processes read the log and the corpus themselves rather than
    copying this process's lists. The hypotheses and references as lists only when asked (extensions' metrics)."""
    from mt_eval.harness.card_results import ResultsOnDisk
    from mt_eval.harness.logged_results import LoggedResults, ScoredSegments
    from mt_eval.harness.scoring import STATS_CHUNK, score_segments

    assert card.metrics is not None and card.results_log is not None
    assert isinstance(card.results, ResultsOnDisk)  # (read from the log by step 4, which found where it is)
    logged = LoggedResults(card.results.path, scored)
    count, translated, missing = 0, 0, []
    for entry, found in logged.aligned():  # one pass; no entry kept
        if found is not None:
            count += 1
            translated += found.error is None
            if not isinstance(entry.get("reference"), str):
                missing.append(entry["id"])
    segments = ScoredSegments(logged, STATS_CHUNK, skip_missing=True)
    if not _results_present(result, count) or not _references_present(result, missing):
        return None, segments.listed
    recomputed = score_segments(segments, count, resamples=card.metrics.bootstrap_resamples,
                                seed=card.metrics.bootstrap_seed, bootstrap=card.metrics.bootstrap,
                                metrics=_as_scored(card), translated=translated)
    return recomputed, segments.listed


def _compare_metric(result: Verification, where: str, stated: Any, again: Any) -> None:
    def differs(a: float | None, b: float | None) -> bool:
        return (a is None) != (b is None) or (a is not None and b is not None and abs(a - b) > TOLERANCE)

    wrong = []
    for attribute in ("score", "ci_low", "ci_high"):
        if differs(getattr(stated, attribute), getattr(again, attribute)):
            wrong.append(attribute)
            result.problem(f"{where}.{attribute}", f"{stated.name} {attribute}: the card says "
                           f"{getattr(stated, attribute)}, recomputed {getattr(again, attribute)}")
    if stated.higher_is_better != again.higher_is_better and not stated.signature.startswith("extension:"):
        wrong.append("higher_is_better")
        result.problem(f"{where}.higher_is_better", f"{stated.name}: the card says "
                       f"{'higher' if stated.higher_is_better else 'lower'} is better; for {stated.name} "
                       f"{'higher' if again.higher_is_better else 'lower'} is better (leaderboards rank by it)",
                       "use the card the run wrote", code="orientation")
    if stated.signature != again.signature:
        wrong.append("signature")
        result.problem(f"{where}.signature", f"{stated.name} signature: the card says {stated.signature!r}, "
                       f"recomputed {again.signature!r}", "a different sacrebleu version or setting scored it; "
                       "verify with the versions the card names", code="signature")
    interval = "" if again.ci_low is None else f" [{again.ci_low:.2f}, {again.ci_high:.2f}]"
    result.check(stated.name, not wrong, f"{again.score:.2f}{interval} recomputed" if not wrong else
                 f"differs: {', '.join(wrong)}")


def _extensions_enabled(extensions: Sequence[str]) -> Any:
    from mt_eval.extensions import enable_extension, make_plugin_manager

    manager = make_plugin_manager()
    for extension in extensions:
        enable_extension(manager, extension)
    return manager


def _as_scored(card: RunCard) -> dict[str, Any]:
    """The card's metrics set up as its signatures record (BLEU's tokenizer, TER's Asian-script support)."""
    from mt_eval.harness.metric_settings import metrics_recorded

    assert card.metrics is not None
    return metrics_recorded({m.name: m.signature for m in card.metrics.metrics})

