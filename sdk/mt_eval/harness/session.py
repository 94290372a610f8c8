"""One evaluation from start (or resume) to sealed run card; the steps behind ``mt-eval run``."""

from __future__ import annotations

import argparse
import datetime
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import anyio
import msgspec

from mt_eval import __version__
from mt_eval.contamination.run_check import check_for_run
from mt_eval.corpus.arguments import selection_from_args
from mt_eval.corpus.describe import reading_facts
from mt_eval.corpus.families import FAMILY_FIELDS, by_pair, scored_entries
from mt_eval.corpus.model import Corpus
from mt_eval.corpus.reader import CorpusSpec
from mt_eval.corpus.selection import Selection
from mt_eval.gold import corpus_gold_fields, method_view
from mt_eval.harness import runcard as rc
from mt_eval.harness.commands import method_params
from mt_eval.harness.corpus import card_results, read_run_corpus, settle_run_corpus, write_predictions
from mt_eval.harness.environment import environment
from mt_eval.harness.execution import Outcome, ResultsLog, RunSettings, execute
from mt_eval.harness.fairness import FairnessError, FairRun, describe_outcome
from mt_eval.harness.fairness import prepare as prepare_fairness
from mt_eval.harness.latency import LatencyPlan, Measured, latency_facts, latency_line, measure
from mt_eval.harness.method_contract import card_file, checked_pins, merged_card, say_isolated_hooks_do_not_run
from mt_eval.harness.progress import RunProgress
from mt_eval.harness.run_directory import RunError, differences, open_run_directory, write_json
from mt_eval.harness.scoring import MetricScore, Scores, score
from mt_eval.loader import LoadedMethod, load_method
from mt_eval.manifest import Manifest
from mt_eval.pins import PinCheck
from mt_eval.records import RunConfig, TranslationResult
from mt_eval.results import ResultNotes, totals


class RunState(msgspec.Struct, kw_only=True):
    """``run.json``: fixed at the start of a run; a resume must match it."""

    run_id: str
    started_at: str
    method_dir: str
    code_sha256: str
    corpus_path: str
    corpus_sha256: str
    config: dict[str, Any]
    settings: dict[str, Any]
    limit: int | None = None
    selection: dict[str, Any] | None = None  # --ids and --segment as given
    reading: dict[str, Any] | None = None  # --columns and --accept-doubt as given
    fairness: dict[str, Any] | None = None
    sessions: int = 1
    first_call_s: float | None = None
    load_s: float = 0.0
    normalised: dict[str, int] = msgspec.field(default_factory=dict)  # of every session so far
    latency: Measured | None = None  # the harness's latency calls (made once, by the first session)


def now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def new_run_id() -> str:
    return f"{datetime.datetime.now(datetime.UTC):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}"


def run_evaluation(args: argparse.Namespace) -> tuple[Path, bool]:
    """Run (or resume) the evaluation ``args`` describe; returns the path of the run card and whether the gate
    withheld its headline."""
    from mt_eval.harness.run_rules import RunRules, print_gate
    from mt_eval.plugins import enable_extension, make_plugin_manager

    rules = RunRules.from_args(args)
    spec, corpus = read_run_corpus(args)
    try:
        hidden = corpus_gold_fields(corpus.dataset) | FAMILY_FIELDS  # what a method is never handed
    except ValueError as exc:
        raise RunError(f"{corpus.path}: {exc}") from exc
    manager = make_plugin_manager()
    for extension in args.extension:
        enable_extension(manager, extension)
    try:
        fair = prepare_fairness(args)
    except FairnessError as exc:
        raise RunError(str(exc)) from exc
    started = time.perf_counter()
    try:
        loaded = load_method(args.method, plugin_manager=manager, isolate=args.isolate, needs="translate",
                             sandbox=fair.sandbox)
        load_s = time.perf_counter() - started
        if args.isolate:
            say_isolated_hooks_do_not_run(loaded)
        pins = checked_pins(loaded)
        given_card = card_file(args.method_card)
        config = fair.adjust_config(run_config(args, corpus, loaded.manifest))
        selection = settle_run_corpus(args, spec, corpus, config.pair)
    except BaseException:
        fair.close_unused()
        raise
    entries = selection.entries
    rules.warn_missing_families(corpus, entries)
    settings = RunSettings(batch_size=args.batch_size, concurrency=args.concurrency, timeout_s=args.timeout,
                           retries=args.retries, retry_budget=args.retry_budget)
    out = Path(args.out) if args.out else Path("runs") / f"{loaded.method_id}__{_slug(corpus.name)}"
    try:
        rules.check_freeze(loaded, corpus, entries, selection.facts, config, settings)
        state = _open_run_directory(out, args, loaded, spec, corpus, config, settings, load_s, fair.state())
        contamination = check_for_run(loaded.directory, corpus, out, code_sha256=state.code_sha256,
                                      enabled=getattr(args, "contamination_check", True), reuse=args.resume,
                                      quiet=args.quiet)
    except BaseException:
        fair.close_unused()
        raise
    fair.out = out
    log_path = out / "results.jsonl"
    done = ResultsLog.read(log_path)
    remaining = [e for e in entries if e["id"] not in done]
    progress = RunProgress(len(entries), len(done), label=loaded.method_id, quiet=args.quiet)
    log = ResultsLog(log_path)

    def on_result(result: TranslationResult) -> None:
        progress.advance(result.error is not None)
        manager.hook.entry_completed(run_id=state.run_id, result=result)

    manager.hook.run_started(run_id=state.run_id, method_id=loaded.method_id, config=config)
    latency = None
    if state.latency is None and remaining:  # measured once, over the run's fixed sample, then kept

        def measured(facts: Measured) -> None:
            state.latency = facts
            write_json(out / "run.json", state)

        latency = (rules.latency, entries, measured)
        if not args.quiet and rules.latency.sample:
            plan = rules.latency
            print(f"latency: 1 cold, {plan.warmup} warm-up and {plan.sample} × {plan.repetitions} timed one-entry "
                  "calls before the run (never scored; --latency-sample 0 makes none)", file=sys.stderr)
    try:
        outcome, card = anyio.run(_execute_and_close, loaded, given_card, remaining, config, settings, log,
                                  on_result, fair, hidden, latency)
    finally:
        log.close()
        progress.close()
    if state.first_call_s is None and outcome.timing.first_call_s is not None:
        state.first_call_s = outcome.timing.first_call_s
    notes = ResultNotes()
    notes.merge(state.normalised)
    notes.merge(outcome.notes.counts)
    state.normalised = notes.counts
    write_json(out / "run.json", state)
    results = ResultsLog.read(log_path)
    ordered = [results[e["id"]] for e in entries if e["id"] in results]
    scores = _scores(entries, ordered, args, manager)
    draft = _build_card(state, loaded, card, corpus, selection, config, settings, outcome.retries_used, scores,
                        ordered, args, fair, pins)
    draft.contamination = contamination
    run_card = rc.seal(rules.finish_card(draft, entries, results, scored=corpus.references))
    card_path = out / "card.json"
    write_json(card_path, run_card)
    write_predictions(out / "predictions.txt", entries, results)
    manager.hook.run_finished(run_id=state.run_id, card=run_card)
    if not args.quiet:
        _print_summary(run_card, out, sys.stderr)
    print_gate(run_card, card_path, sys.stderr, quiet=args.quiet)
    return card_path, run_card.gate is not None and not run_card.gate.passed


async def _execute_and_close(loaded: LoadedMethod, given_card: tuple[str, Any] | None, entries: list[dict[str, Any]],
                             config: RunConfig, settings: RunSettings, log: ResultsLog, on_result: Any, fair: FairRun,
                             hidden: frozenset[str], latency: tuple[LatencyPlan, list[dict[str, Any]], Any] | None
                             ) -> tuple[Any, dict[str, Any]]:
    """Start the method (a guest sends its card at initialize) and merge its card; make the latency calls
    (``latency``: the plan, the run's entries and where the measurement goes); translate, each pair's entries in
    calls of their own; close. The method is handed each entry without its ``hidden`` fields."""

    def view(group: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return method_view(group, hidden)

    try:
        async with fair.running(loaded.method_id):
            started = time.perf_counter()
            card = await merged_card(loaded, given_card, config)
            start_s = time.perf_counter() - started  # a guest starts here: part of the cold latency
            if latency is not None:
                plan, run_entries, measured = latency
                host_notes = getattr(loaded.method, "result_notes", None)
                before = dict(host_notes.counts) if isinstance(host_notes, ResultNotes) else None
                facts = await measure(loaded.method, run_entries, config, plan, settings.timeout_s, view)
                if isinstance(host_notes, ResultNotes) and before is not None:
                    host_notes.counts = before  # the latency calls' results are thrown away, their notes too
                facts.start_s = round(start_s, 6)
                measured(facts)
            outcome = Outcome()
            for group_config, group in by_pair(entries, config):  # negative controls of another pair
                done = await execute(loaded.method, view(group), group_config, settings, log, on_result)
                outcome.completed += done.completed
                outcome.retries_used += done.retries_used
                outcome.notes.merge(done.notes.counts)
                if outcome.timing.first_call_s is None:
                    outcome.timing = done.timing
            if entries:
                await fair.replay_with_substitute(loaded.method, view(scored_entries(entries)), config, config.seed)
            host_notes = getattr(loaded.method, "result_notes", None)  # a guest's results, accepted by the host
            if isinstance(host_notes, ResultNotes):
                outcome.notes.merge(host_notes.counts)
            return outcome, card
    finally:
        close = getattr(loaded.method, "aclose", None)
        if close is not None:
            with anyio.CancelScope(shield=True):
                await close()


def run_config(args: argparse.Namespace, corpus: Corpus, manifest: Manifest) -> RunConfig:
    """The RunConfig of ``mt-eval run`` (and ``mt-eval freeze init``) from its arguments."""
    supported = manifest.supported_pairs
    pair = args.pair or corpus.pair or (supported[0] if supported else None)
    if not pair or ">" not in pair:
        raise RunError("no language pair: the corpus does not name one and the method supports any; "
                       "give --pair SRC>TGT, e.g. --pair eng>spa")
    if supported and pair not in supported:
        raise RunError(f"{manifest.method_id or manifest.name} supports {', '.join(supported)}, not {pair}; choose "
                       "one with --pair or use a corpus in a supported pair")
    source, _, target = pair.partition(">")
    fields = {"source_lang": source, "target_lang": target, "model": args.model, "base_url": args.base_url,
              "temperature": args.temperature, "max_tokens": args.max_tokens, "batch_size": args.batch_size,
              "concurrency": args.concurrency, "timeout_s": args.timeout, "seed": args.seed,
              "params": method_params(args.param)}
    try:
        return msgspec.convert({k: v for k, v in fields.items() if v is not None}, RunConfig)
    except msgspec.ValidationError as exc:
        raise RunError(f"invalid run configuration: {exc}") from exc


def _open_run_directory(out: Path, args: argparse.Namespace, loaded: LoadedMethod, spec: CorpusSpec,
                        corpus: Corpus, config: RunConfig, settings: RunSettings, load_s: float,
                        fairness: dict[str, Any]) -> RunState:
    fresh = RunState(run_id=new_run_id(), started_at=now(), method_dir=str(loaded.directory.resolve()),
                     code_sha256=rc.code_sha256(loaded.directory), corpus_path=str(corpus.path.resolve()),
                     corpus_sha256=corpus.sha256, config=msgspec.to_builtins(config),
                     settings=msgspec.to_builtins(settings), limit=args.limit,
                     selection=selection_from_args(args).filters(), reading=spec.reading(), load_s=round(load_s, 6),
                     fairness=fairness)

    def changes(state: RunState, now: RunState) -> list[str]:
        return differences([("the method's code", state.code_sha256, now.code_sha256),
                            ("the corpus", state.corpus_sha256, now.corpus_sha256),
                            ("the run configuration", state.config, now.config),
                            ("the run settings", state.settings, now.settings), ("--limit", state.limit, now.limit),
                            ("the selection (--ids, --segment)", state.selection, now.selection),
                            ("how the corpus is read (--columns, --accept-doubt)", state.reading, now.reading),
                            ("the sandbox, --official or the gateway policy", state.fairness, now.fairness)])

    return open_run_directory(out, fresh, resume=args.resume, force=args.force, changes=changes, command="mt-eval run")


def _scores(entries: list[dict[str, Any]], results: list[TranslationResult], args: argparse.Namespace,
            manager: Any) -> Scores | None:
    """The metrics over the scored entries (canaries and negative controls are not scored); None when not
    every entry has a result or the scored entries have no references."""
    scored = scored_entries(entries)
    if len(results) != len(entries) or not scored or any(not isinstance(e.get("reference"), str) for e in scored):
        return None
    by_id = {r.id: r for r in results}
    references = [e["reference"] for e in scored]
    hypotheses = [_hypothesis(by_id[str(e["id"])]) for e in scored]
    scores = score(hypotheses, [references], resamples=args.resamples, seed=args.seed)
    from mt_eval.plugins import registered_metrics

    for name, scorer in registered_metrics(manager).items():
        scores.metrics.append(MetricScore(name=name, score=round(float(scorer(hypotheses, references)), 4),
                                          signature=f"extension:{name}"))
    return scores


def _hypothesis(result: TranslationResult) -> str:
    """What is scored: the prediction; an entry that failed or was abstained on scores as empty."""
    return result.predicted if result.error is None and result.predicted is not None else ""


def _build_card(state: RunState, loaded: LoadedMethod, card: dict[str, Any], corpus: Corpus, selection: Selection,
                config: RunConfig, settings: RunSettings, retries_used: int, scores: Scores | None,
                results: list[TranslationResult], args: argparse.Namespace, fair: FairRun,
                pins: list[PinCheck]) -> rc.RunCard:
    from mt_eval.harness.covariates import run_covariates

    derivation = loaded.source.derivation
    commit, dirty = rc.git_state(loaded.directory)
    covariates = run_covariates(loaded.manifest, config)
    usage = totals(results)
    return rc.RunCard(
        run_id=state.run_id, started_at=state.started_at, finished_at=now(), sessions=state.sessions,
        sdk_version=__version__,
        method=rc.MethodFacts(
            method_id=loaded.method_id, name=loaded.manifest.name, method_class=loaded.manifest.method_class,
            card=card, dependency_class=derivation.dependency_class,
            contributions=[rc.DependencyContribution(path=c.path, id=c.dependency_id,
                                                     dependency_class=c.dependency_class, reason=c.reason)
                           for c in derivation.contributions],
            runtime=_runtime(loaded, args, fair),
            code_sha256=state.code_sha256, git_commit=commit, git_dirty=dirty,
            guest_restarts=getattr(loaded.method, "restarts", None),
            champollion=getattr(args, "champollion_source", None)),
        corpus=rc.CorpusFacts(name=corpus.name, path=str(corpus.path), sha256=corpus.sha256,
                              entries=len(corpus.entries), pair=config.pair, license=corpus.license,
                              reading=msgspec.convert(reading_facts(corpus), rc.CorpusReading)),
        covariates=rc.Covariates(model=covariates.model, temperature=config.temperature,
                                 max_tokens=config.max_tokens, seed=config.seed, batch_size=settings.batch_size,
                                 concurrency=settings.concurrency, timeout_s=settings.timeout_s,
                                 retries_per_entry=settings.retries,
                                 retry_budget=settings.budget_for(len(selection.entries)), retries_used=retries_used,
                                 tool_permissions=covariates.tool_permissions,
                                 not_applicable=covariates.not_applicable),
        environment=environment(node=loaded.source.runtime == "node"),
        metrics=scores,
        latency=latency_facts(state.latency, state.load_s, results),
        usage=rc.UsageTotals(prompt_tokens=usage["prompt_tokens"], completion_tokens=usage["completion_tokens"],
                             total_tokens=usage["total_tokens"]),
        errors=sum(r.error is not None for r in results),
        results=card_results(corpus, results),
        selection=None if selection.facts is None else msgspec.convert(selection.facts, rc.SelectionFacts),
        **fair.card_fields(results, complete=len(results) == len(selection.entries)),
        cached=usage["cached"], normalised=dict(state.normalised), pins=pins,
    )


def _slug(text: str) -> str:
    from mt_eval.manifest import kebab_case

    return kebab_case(text) or "corpus"


def _runtime(loaded: LoadedMethod, args: argparse.Namespace, fair: FairRun) -> str:
    if fair.sandbox is not None:
        return f"{loaded.source.runtime} (sandboxed: {fair.sandbox.tool.name})"
    return "python (isolated)" if args.isolate else loaded.source.runtime


def _print_summary(card: rc.RunCard, out: Path, stream: Any) -> None:
    entries = f"{card.corpus.entries} entries"
    if card.selection is not None:
        entries = f"{card.selection.entries_selected} of {card.corpus.entries} entries (a selection)"
    head = (f"{card.method.method_id} on {card.corpus.name} ({card.corpus.pair}): {entries}, "
            f"{card.errors} error{'s' if card.errors != 1 else ''}")
    lines = [head]
    if card.metrics is not None:
        parts = []
        for m in card.metrics.metrics:
            ci = f" [{m.ci_low:.2f}, {m.ci_high:.2f}]" if m.ci_low is not None and m.ci_high is not None else ""
            parts.append(f"{m.name} {m.score:.2f}{ci}")
        lines.append("  " + "   ".join(parts))
    elif card.corpus.reading is not None and not card.corpus.reading.references:
        lines.append(f"  not scored: the corpus has no references (translation only); the predictions are in "
                     f"{out / 'predictions.txt'}")
    else:
        lines.append("  not scored: not every entry has a result")
    lines += describe_outcome(card.eligibility, card.sandbox)
    if card.normalised:
        notes = ResultNotes()
        notes.merge(card.normalised)
        lines.append(f"  warning: results accepted after changes (the upstream harness's shape): {notes.summary()}")
    lines.append("  " + latency_line(card.latency))
    stream.write("\n".join(lines) + "\n")
