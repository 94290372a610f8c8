"""``mt-eval compare A.json B.json``: is B really better than A? Paired tests over the same corpus.

Both cards must verify (`mt_eval.harness.verify`: content hash, schema, corpus, metrics recomputed), come from the
same corpus (same sha256), translated into the same pair, and the same selection of it (same subset sha256). The
references are read from the corpus the cards name, the way the cards record it was read (or from ``--corpus`` or
``--source-file``/``--reference-file``), and the cards' selection is applied again; a truncated card is never
compared with a full one. The cards' covariates must be the same (`mt_eval.harness.compare_checks`; ``--allow-diff
NAME`` accepts a named difference). Over the scored entries, sacrebleu's paired bootstrap resampling and paired
approximate randomization give a p-value per metric, and a case-level bootstrap gives a 95% interval of the
difference B − A, all from each run's segment statistics (`mt_eval.harness.paired_tests`). The report also counts
the entries whose outputs differ (for two runs of the same method: its repeat-run stability) and puts the measured
latencies side by side when the hardware labels match.

Both cards' results are walked in corpus order, side by side, one chunk of each log at a time: no result,
outcome or hypothesis of a million-entry run is held. Each card's segment statistics are extracted once (once
in all when the two runs' outputs are the same), for both uses: recomputing the card's metrics, the step of
verification that needs them (`mt_eval.harness.verify_metrics`), and the tests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from mt_eval.errors import ExpectedError
from mt_eval.harness.runcard import RunCard

TYPE_CHECKING = False
if TYPE_CHECKING:
    from mt_eval.corpus.reader import CorpusSpec
    from mt_eval.harness.logged_results import ListedResults, LoggedResults
    from mt_eval.harness.verification import Verification

    InOrder = LoggedResults | ListedResults  # a card's results, read in corpus order


class CompareError(ExpectedError):
    """The two cards cannot be compared; the message says why and what to do. ``verification`` is the check of
    the card that does not verify, when that is why."""

    verification: Verification | None = None


def _checked_card(path: Path, corpus: CorpusSpec | None, corpora: Any) -> Verification:
    """Every step of `mt-eval verify` but recomputing the metrics (steps 1–5, 7 and 8 of `mt_eval.harness.verify`),
    which `_verify_scores` does from the statistics the tests use; `CompareError` when a step fails. ``corpora``
    (a `CorpusCache`) reads the corpus once for both cards (``--corpus -`` can be read only once)."""
    from mt_eval.harness.verify import check_card, check_records

    verification = check_card(path, corpus=corpus, corpora=corpora)
    check_records(verification)
    _refuse_unverified(path, verification)
    # What the checks kept that comparing does not need: a million ids, the corpus, the canonical JSON.
    verification.keys, verification.source, verification.canonical = [], None, None
    return verification


def _refuse_unverified(path: Path, verification: Verification) -> None:
    from mt_eval.harness.verify import render

    if not verification.ok or verification.card is None:
        refusal = CompareError(f"{path} does not verify, so it cannot be compared:\n"
                               + render(verification, verbose=False).split("\n", 1)[-1])
        refusal.verification = verification
        raise refusal


def compare_cards(baseline: Path, candidate: Path, *, corpus: CorpusSpec | None, bootstrap: int, trials: int,
                  seed: int, extensions: Sequence[str] = (), allow_diff: Sequence[str] = (),
                  stage: Callable[[str], None] = lambda _: None) -> dict[str, Any]:
    """The comparison report (`mt_eval.harness.compare_report` renders it); `CompareError` says why not.
    ``stage(what)`` hears of each step as it starts (a million-entry pair takes minutes)."""
    from mt_eval.corpus.model import CorpusError
    from mt_eval.corpus.reader import load_corpus
    from mt_eval.corpus.selection import request_from_facts, select
    from mt_eval.harness.compare_checks import covariate_differences, latency_comparison, output_differences
    from mt_eval.harness.corpus import card_corpus_spec
    from mt_eval.harness.verify_corpus import CorpusCache

    stage(f"verifying A, {baseline} (its metrics are recomputed below, from the statistics the tests use)")
    corpora = CorpusCache()
    checked = [_checked_card(baseline, corpus, corpora)]
    stage(f"verifying B, {candidate}")
    checked.append(_checked_card(candidate, corpus, corpora))
    a, b = (verification.card for verification in checked)
    assert a is not None and b is not None
    for path, card in ((baseline, a), (candidate, b)):
        if card.status == "failed":
            from mt_eval.harness.outcome import card_failed_entries

            why = f", e.g. {card.failures[0].message}" if card.failures else ""
            raise CompareError(f"{path} is a failed run: {card_failed_entries(card)}{why}; it has no scores to "
                               "compare: fix what failed and run it again")
        if card.metrics is None:  # (every scored entry abstained on or failed: never a chrF++ of 0 compared)
            from mt_eval.harness.gate import unscored_reason

            raise CompareError(f"{path} has no scores to compare: {unscored_reason(card)}; compare a run of the "
                               "method that translated scored entries")
    if a.corpus.sha256 != b.corpus.sha256:
        raise CompareError(f"the cards come from different corpora (A: {_corpus(a)}; B: {_corpus(b)}); paired tests "
                           "need the same entries: run both methods on the same corpus file")
    if a.corpus.pair != b.corpus.pair:
        raise CompareError(f"the cards translate different pairs (A: {a.corpus.pair}; B: {b.corpus.pair}); paired "
                           "tests compare translations into the same language, scored against the same references")
    subsets = [None if c.selection is None else c.selection.subset_sha256 for c in (a, b)]
    if subsets[0] != subsets[1]:
        raise CompareError(f"the cards ran different parts of the corpus (A: {_part(a)}; B: {_part(b)}); paired tests "
                           "need the same entries: run both on the same selection")
    spec = card_corpus_spec(a, baseline, corpus)
    try:
        source = corpora.get(repr(spec), lambda: load_corpus(spec))  # (as the checks read it: once)
        chosen = source.entries
        if a.selection is not None:
            chosen = select(source, request_from_facts(msgspec.to_builtins(a.selection))).entries
    except CorpusError as exc:
        raise CompareError(f"{exc} (give the corpus with --corpus, or --source-file and --reference-file)") from exc
    if source.sha256 != a.corpus.sha256:
        raise CompareError(f"{spec.main_path} is not the corpus the cards were run on (sha256 differs)")
    if not source.references:
        raise CompareError(f"{spec.main_path} has no references: a translation-only run cannot be compared")
    differences = covariate_differences(a, checked[0].data, b, checked[1].data)
    refused = [d for d in differences if d.name not in allow_diff]
    if refused:
        raise CompareError("the cards' covariates differ or are missing, so their scores are not comparable:\n  "
                           + "\n  ".join(str(d) for d in refused)
                           + f"\naccept a difference you mean to compare with --allow-diff NAME (e.g. --allow-diff "
                             f"{refused[0].name})")
    stage("reading both runs' results in corpus order")
    both = [in_corpus_order(card.results, chosen) for card in (a, b)]
    walk = _Walk()
    outputs = output_differences(a, b, walk.both(*both))
    for name, (missing, first) in zip((baseline, candidate), walk.missing, strict=True):
        if missing:
            raise CompareError(f"{name} has no result for {missing} entries (e.g. {first}): finish the run with "
                               "--resume first")
    if not walk.scored:
        raise CompareError("the cards have no scored entries to compare (every entry is a canary or a negative "
                           "control)")
    scored_with = _metrics_as_scored(a, b)
    metrics, not_computed = _within_reach(both, walk, scored_with)
    statistics = _statistics(both, walk, metrics, stage)
    _verify_scores([baseline, candidate], checked, both, statistics, metrics, walk.scored, extensions, stage,
                   not_computed)
    stated = {} if a.metrics is None else {m.name: m.score for m in a.metrics.metrics}
    rows = (_identical(metrics, bootstrap, trials, seed, stated) if walk.identical and set(metrics) <= set(stated)
            else _paired_tests(statistics, metrics, bootstrap, trials, seed, stage))
    orientation = _orientation(a, b)
    for row in rows:  # (every row has the same keys: whether the outputs are the same, and which way is better)
        row.update(higher_is_better=orientation(row["metric"]), identical=walk.identical)
    return {"a": str(baseline), "b": str(candidate), "compared": True, "rows": rows,
            "not_compared": [{"metric": name, "a": not_computed[0].get(name), "b": not_computed[1].get(name)}
                             for name in scored_with if name not in metrics],
            "allowed_differences": [{"name": d.name, "a": d.a, "b": d.b} for d in differences],
            "outputs": outputs, "latency": latency_comparison(a, b, list(allow_diff)),
            "partial": {side: card.errors for side, card in (("a", a), ("b", b)) if card.status == "partial"},
            "scored": {"entries": walk.scored, "failed": {"a": walk.failed[0], "b": walk.failed[1]},
                       "abstained": {"a": walk.abstained[0], "b": walk.abstained[1]}},
            "methods": {"a": _method(a), "b": _method(b)}}


def in_corpus_order(results: Sequence[Any], entries: Sequence[dict[str, Any]]) -> InOrder:
    """A card's results matched to ``entries``, with ``aligned()``: read from its log a chunk at a time when the
    card references one (`mt_eval.harness.card_results.ResultsOnDisk`), else looked up in the card's own list."""
    from mt_eval.harness.card_results import ResultsOnDisk
    from mt_eval.harness.logged_results import ListedResults, LoggedResults

    if isinstance(results, ResultsOnDisk):
        return LoggedResults(results.path, entries)
    return ListedResults(results, entries)


class _Walk:
    """One pass over both cards' results in corpus order (`both`), noting what the tests need on the way: how
    many entries are scored, whether the two runs' hypotheses are the same on every one, each card's scored
    entries without a result (how many, and the first), and those it failed or abstained on."""

    def __init__(self) -> None:
        self.scored = 0
        self.identical = True
        self.missing: list[tuple[int, Any]] = [(0, None), (0, None)]
        self.failed = [0, 0]  # each card's scored entries that failed (scored as empty translations)
        self.abstained = [0, 0]  # ... and those it abstained on (scored so too)

    def both(self, a: InOrder, b: InOrder) -> Iterator[tuple[Mapping[str, Any], Any, Any]]:
        from mt_eval.corpus.families import family_of

        for (entry, in_a), (_, in_b) in zip(a.aligned(), b.aligned(), strict=True):
            if family_of(entry) == "scored":
                self.scored += 1
                for side, result in enumerate((in_a, in_b)):
                    if result is None:
                        self.missing[side] = _counted(self.missing[side], entry["id"])
                    elif result.error is not None:
                        self.failed[side] += 1
                    elif result.abstained:
                        self.abstained[side] += 1
                if self.identical and _hypothesis(in_a) != _hypothesis(in_b):
                    self.identical = False
            yield entry, in_a, in_b


def _counted(tally: tuple[int, Any], key: Any) -> tuple[int, Any]:
    """(how many, the first) with one more: ``key``."""
    count, first = tally
    return count + 1, key if first is None else first


def _hypothesis(result: Any) -> str | None:
    """What a result is scored as (a failed or abstained entry: an empty hypothesis); None without a result."""
    if result is None:
        return None
    return result.predicted or "" if result.error is None else ""


def _method(card: RunCard) -> dict[str, Any]:
    return {"method_id": card.method.method_id, "code_sha256": card.method.code_sha256, "run_id": card.run_id}


def _corpus(card: RunCard) -> str:
    return f"{card.corpus.name}, {card.corpus.path}, sha256 {card.corpus.sha256[:12]}…"


def _part(card: RunCard) -> str:
    if card.selection is None:
        return f"the whole corpus, {card.corpus.entries} entries"
    import shlex

    from mt_eval.corpus.selection import id_options

    chosen = card.selection
    ids = id_options(msgspec.to_builtins(chosen))  # (as the options that select them again)
    how = [" ".join(f"--ids {shlex.quote(value)}" for value in ids),
           " ".join(f"--segment {shlex.quote(name)}" for name in chosen.segment or []),
           f"--limit {chosen.limit}" if chosen.limit else ""]
    return (f"{chosen.entries_selected} of {chosen.entries_in_corpus} entries: "
            f"{', '.join(h for h in how if h) or 'a selection'}, subset sha256 {chosen.subset_sha256[:12]}…")


def _within_reach(both: list[InOrder], walk: _Walk, metrics: dict[str, Any]
                  ) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """The metrics both runs' outputs can be scored with (the metrics they share: TER is not computed on a segment
    too long for it), and for each run those its outputs cannot, with why (`mt_eval.harness.scoring.out_of_reach`).
    Only TER, the last metric, can be left out: each other keeps its place, which seeds its bootstrap."""
    from mt_eval.harness.logged_results import ScoredSegments
    from mt_eval.harness.scoring import STATS_CHUNK, out_of_reach

    read = [ScoredSegments(results, STATS_CHUNK) for results in (both[:1] if walk.identical else both)]
    beyond = [out_of_reach(metrics, segments(), segments.key_at) for segments in read]
    beyond = beyond * 2 if walk.identical else beyond
    return {name: metric for name, metric in metrics.items() if not any(name in run for run in beyond)}, beyond


def _statistics(both: list[InOrder], walk: _Walk, metrics: dict[str, Any], stage: Callable[[str], None]
                ) -> list[list[Any]]:
    """Each card's segment statistics for each metric (A's, then B's), extracted once for the cards' metrics and
    the tests, in worker processes for a large corpus, each reading the card's results (its log) and the corpus
    itself. Two runs with the same outputs have the same statistics: A's are extracted, and serve for B."""
    from mt_eval.harness.logged_results import ScoredSegments
    from mt_eval.harness.metric_statistics import SegmentSource
    from mt_eval.harness.scorer_processes import extract_statistics
    from mt_eval.harness.scoring import STATS_CHUNK

    runs = both[:1] if walk.identical else both
    sources: list[tuple[Any, SegmentSource]] = [(metric, ScoredSegments(results, STATS_CHUNK)) for results in runs
                                                for metric in metrics.values()]
    which = "A's run (B's outputs are the same)" if walk.identical else "both runs"
    stage(f"segment statistics of {walk.scored:,} scored entries, {which}, {len(metrics)} metrics")
    extracted = extract_statistics(sources, walk.scored)
    by_run = [extracted[start:start + len(metrics)] for start in range(0, len(extracted), len(metrics))]
    return by_run * 2 if walk.identical else by_run


def _verify_scores(paths: list[Path], checked: list[Verification], both: list[InOrder], statistics: list[list[Any]],
                   metrics: dict[str, Any], count: int, extensions: Sequence[str], stage: Callable[[str], None],
                   not_computed: list[dict[str, str]]) -> None:
    """Step 6 of verification for each card, from ``statistics``: its metrics recomputed with its own bootstrap
    resamples, seed and draws (in worker processes for a large corpus) must be what it states, as `mt-eval verify`
    recomputes them from the card alone; `CompareError` when they are not. ``metrics``: those that extracted
    ``statistics`` (`make_metrics`, in its order: a metric's seed is its place there). Two cards with the same
    statistics (the same outputs) and the same bootstrap settings have each interval drawn once, for both."""
    from mt_eval.harness.logged_results import ScoredSegments, translated_count
    from mt_eval.harness.scorer_processes import Scoring, score_statistics
    from mt_eval.harness.scoring import STATS_CHUNK
    from mt_eval.harness.verify_metrics import check_scores

    stating = [(path, verification, verification.card, results, stats, beyond, not_computed[1 - side])
               for side, (path, verification, results, stats, beyond)
               in enumerate(zip(paths, checked, both, statistics, not_computed, strict=True))
               if verification.card is not None and verification.card.metrics is not None]
    if len(stating) == 2:
        stage("recomputing both cards' metrics from them, with each card's own bootstrap")
    elif stating:  # the other card states none (a run that failed on every entry)
        stage(f"recomputing {'A' if stating[0][0] == paths[0] else 'B'}'s metrics from them, with its own bootstrap")
    jobs: dict[tuple[Any, ...], Scoring] = {}  # by what decides the score: the statistics and the draws
    keys: list[list[tuple[Any, ...]]] = []  # each card's jobs, in the order of ``metrics``
    for _, _, card, results, stats, _, _ in stating:
        stated = card.metrics
        assert stated is not None
        keys.append([])
        translated = translated_count(results) if stated.bootstrap == "upstream" else None
        for number, (name, metric) in enumerate(metrics.items()):
            seed = (stated.bootstrap_seed, number)
            key = (id(stats[number]), stated.bootstrap_resamples, seed, stated.bootstrap, translated)
            jobs.setdefault(key, (name, metric, stats[number], stated.bootstrap_resamples, seed, stated.bootstrap,
                                  translated))
            keys[-1].append(key)
    recomputed = dict(zip(jobs, score_statistics(list(jobs.values()), count), strict=True))
    for (path, verification, card, results, _, beyond, other), card_keys in zip(stating, keys, strict=True):
        check_scores(verification, card, [recomputed[key] for key in card_keys], extensions,
                     ScoredSegments(results, STATS_CHUNK).listed, not_computed=beyond,
                     left_out={name: f"the other card's outputs: {why}" for name, why in other.items()
                               if name not in beyond})
        _refuse_unverified(path, verification)


def _paired_tests(statistics: list[list[Any]], metrics: dict[str, Any], bootstrap: int, trials: int, seed: int,
                  stage: Callable[[str], None]) -> list[dict[str, Any]]:
    """sacrebleu's paired bootstrap and approximate randomization, and the case-level interval of B − A over the
    bootstrap's resamples, for each metric, from the segments' statistics (`mt_eval.harness.paired_tests`)."""
    from mt_eval.harness.paired_tests import paired_tests

    rows: list[dict[str, Any]] = []
    for index, (name, metric) in enumerate(metrics.items()):
        stats_a, stats_b = statistics[0][index], statistics[1][index]
        stage(f"{name}: paired bootstrap ({bootstrap:,} resamples) and approximate randomization ({trials:,} trials)")
        tests = paired_tests(metric, stats_a, stats_b, resamples=bootstrap, trials=trials, seed=seed)
        a, b = float(tests.a), float(tests.b)
        # No difference is never a significant one: the bootstrap's p is sacrebleu's, which counts only resamples
        # beyond the observed difference and gives 1/(n+1) when it is 0 (different outputs with the same score, e.g.
        # BLEU 0 against 0); the randomization p, which counts ties too (`paired_tests`), is 1 there already.
        p_bootstrap, p_randomization = (1.0, 1.0) if a == b else (tests.p_bootstrap, tests.p_randomization)
        rows.append({"metric": name, "a": round(a, 4), "b": round(b, 4), "delta": round(b - a, 4),
                     "delta_ci_low": tests.low, "delta_ci_high": tests.high, "p_bootstrap": p_bootstrap,
                     "p_randomization": p_randomization, "bootstrap_resamples": bootstrap,
                     "randomization_trials": trials, "seed": seed})
    return rows


def _identical(metrics: dict[str, Any], bootstrap: int, trials: int, seed: int, stated: dict[str, float]
               ) -> list[dict[str, Any]]:
    """Two runs with the same outputs on every scored entry: a difference of 0, p = 1 (sacrebleu counts only
    resamples whose difference exceeds the observed one, and would give 1/(n+1) here). The scores are those
    ``stated`` by the baseline card, which its verification recomputed from these outputs."""
    return [{"metric": name, "a": stated[name], "b": stated[name], "delta": 0.0, "delta_ci_low": 0.0,
             "delta_ci_high": 0.0, "p_bootstrap": 1.0, "p_randomization": 1.0, "bootstrap_resamples": bootstrap,
             "randomization_trials": trials, "seed": seed} for name in metrics]


def _orientation(a: RunCard, b: RunCard) -> Callable[[str], bool]:
    """Whether a higher score of a metric is the better one, as the cards record it (their verification checked
    it); a metric neither card records (neither was scored), as the run would record it."""
    from mt_eval.harness.metric_statistics import higher_is_better

    recorded = {m.name: m.higher_is_better for card in (b, a) if card.metrics is not None
                for m in card.metrics.metrics}
    return lambda name: recorded.get(name, higher_is_better(name))


def _metrics_as_scored(a: RunCard, b: RunCard) -> dict[str, Any]:
    """The metrics as both cards' signatures record them (BLEU's tokenizer, TER's Asian-script support);
    `CompareError` when the cards were scored differently."""
    from mt_eval.harness.metric_settings import MetricSetupError, make_metrics, metrics_recorded, recorded_settings

    signatures = [{m.name: m.signature for m in card.metrics.metrics} if card.metrics else {} for card in (a, b)]
    settings = [recorded_settings(s) for s in signatures]
    if all(signatures) and settings[0] != settings[1]:
        shown = [f"BLEU tok:{tok}, TER asian:{'yes' if asian else 'no'}" for tok, asian in settings]
        raise CompareError(f"the cards' metrics were set up differently (A: {shown[0]}; B: {shown[1]}), so their "
                           "scores are not comparable: run the older card's method again with this mt-eval, which "
                           "tokenizes for the target language")
    if not any(signatures):  # (neither was scored: as a run of its pair would score it)
        return make_metrics(a.corpus.pair.partition(">")[2] or None)
    try:
        return metrics_recorded(signatures[0] or signatures[1])
    except MetricSetupError as exc:
        raise CompareError(f"the cards' metrics cannot be recomputed here: {exc}") from None
