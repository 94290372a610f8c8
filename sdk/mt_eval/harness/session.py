"""One evaluation from start (or resume) to sealed run card; the steps behind ``mt-eval run``.

The run directory is locked (`mt_eval.harness.run_lock`) from before ``run.json`` is read until the card is
written — one in use from before the corpus is read and the method loaded — so a second ``mt-eval run`` on it
refuses at once (or waits, with ``--wait``); a resume repairs a torn results log before appending to it, and
appends only what no one has written.
"""

from __future__ import annotations

import contextlib
import datetime
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from mt_eval.contamination.run_check import check_for_run
from mt_eval.corpus.families import FAMILY_FIELDS, family_of, scored_entries
from mt_eval.corpus.files import naming_part
from mt_eval.corpus.model import Corpus
from mt_eval.corpus.selection import Selection
from mt_eval.gold import corpus_gold_fields, method_view
from mt_eval.guarded_calls import prints_to_stderr
from mt_eval.harness import outcome as oc
from mt_eval.harness import runcard as rc
from mt_eval.harness.card_draft import draft_card, run_scores
from mt_eval.harness.card_results import embeds_results, log_reference
from mt_eval.harness.corpus import read_run_corpus, settle_run_corpus, write_run_outputs
from mt_eval.harness.execution import Outcome, RunSettings
from mt_eval.harness.fairness import FairnessError, FairRun
from mt_eval.harness.fairness import prepare as prepare_fairness
from mt_eval.harness.latency import Measured
from mt_eval.harness.logged_results import LoggedResults
from mt_eval.harness.method_contract import (
    card_file,
    checked_pins,
    merged_card,
    ran_rows_in,
    recorded_runtime,
    say_isolated_hooks_do_not_run,
)
from mt_eval.harness.metric_settings import METRIC_NAMES
from mt_eval.harness.request import RunRequest
from mt_eval.harness.results_log import ResultsLog, logged_ids, repair
from mt_eval.harness.run_config import run_config
from mt_eval.harness.run_directory import (
    RunError,
    default_run_name,
    differences,
    method_named,
    open_run_directory,
    refuse_unwritable_names,
    run_directory,
    writable_directory,
    write_json,
)
from mt_eval.harness.run_lock import RunDirectoryHold, refuse_moved
from mt_eval.harness.run_rules import RunRules
from mt_eval.harness.run_summary import print_summary
from mt_eval.harness.running import Around, run_method
from mt_eval.loader import LoadedMethod, load_method, runtime_label
from mt_eval.method_start import StartFailed
from mt_eval.pins import PinCheck
from mt_eval.process_memory import large_buffers_mapped
from mt_eval.progress import RunProgress
from mt_eval.records import RunConfig, TranslationResult


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
    retries_used: int = 0  # of every session so far: the retry budget is the whole run's
    latency: Measured | None = None  # the harness's latency calls (made once, by the first session)
    runtimes: list[str] | None = None  # of each session that ran entries (`recorded_runtime`); None: not noted


def now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def new_run_id() -> str:
    return f"{datetime.datetime.now(datetime.UTC):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}"


class RunReport(msgspec.Struct, kw_only=True):
    """How ``mt-eval run`` ended: the card it wrote, the run's status and the exit status."""

    card_path: Path
    status: rc.Status
    exit_code: int


def run_evaluation(request: RunRequest) -> RunReport:
    """Run (or resume) the evaluation ``request`` describes; raises `RunError`, `mt_eval.locks.Busy`, ..."""
    from mt_eval.extensions import enable_extension, make_plugin_manager, metric_scorers

    large_buffers_mapped()  # a million entries' blocks and arrays, freed, leave no holes for the scorers to count
    rules, given = RunRules.from_request(request), request.directory
    if given.out is not None:  # named now, not once the corpus is read and the method loaded
        writable_directory(given.out, "the run", resuming=given.resume)  # (then locked, when in use)
    with RunDirectoryHold(given.out, command=request.command_line(), wait_s=given.wait_s, resume=given.resume,
                          prog="mt-eval run", nothing_done="nothing was translated") as hold:
        spec = request.corpus
        corpus = read_run_corpus(spec)
        rules.validate_freeze(corpus)
        if request.champollion is not None and (problem := request.champollion.corpus_pair_problem(corpus.pair)):
            raise RunError(problem)
        try:
            hidden = corpus_gold_fields(corpus.dataset) | FAMILY_FIELDS  # what a method is never handed
        except ValueError as exc:
            raise RunError(f"{corpus.path}: {exc}") from exc
        manager = make_plugin_manager()
        for extension in request.extensions:
            enable_extension(manager, extension)
        try:
            fair = prepare_fairness(request)
        except FairnessError as exc:
            raise RunError(str(exc)) from exc
        started = time.perf_counter()
        try:
            with prints_to_stderr():  # the method's import and constructor, register_metrics: stdout is the result
                loaded = load_method(request.method, plugin_manager=manager, isolate=request.isolate, needs="translate",
                                     sandbox=fair.sandbox)
                metric_scorers(manager, taken=METRIC_NAMES, then="")  # (a name taken fails now, not once scored)
            load_s = time.perf_counter() - started
            if request.isolate:
                say_isolated_hooks_do_not_run(loaded)
            pins = checked_pins(loaded)
            given_card = card_file(request.method_card)
            config = fair.adjust_config(run_config(request, corpus, loaded.manifest))
            selection = settle_run_corpus(spec, corpus, config.pair, request.selection, quiet=request.quiet)
            rules.warn_missing_families(corpus, selection.entries, selected=selection.facts is not None)
            rules.warn_missing_covariates(corpus, loaded.manifest, config)  # (before any entry is translated)
            rules.check_freeze(loaded, corpus, selection.entries, selection.facts, config, request.calls)
            refuse_unwritable_names([("the method's directory", loaded.directory), ("--out", request.directory.out),
                                     *(("the corpus file" if f.role == "corpus" else f"the corpus's {f.role} file",
                                        f.path) for f in corpus.files)])
            named = naming_part(corpus.path, corpus.name, corpus.sha256)
            out = run_directory(request.directory.out, loaded.directory, default_run_name(loaded.method_id, named))
            lock = hold.take(out)
            # scoring needs a directory for temporary files: none is said now, not after the method translated it all
            # (here, once the run directory is locked: a disk that takes no file at all is said as the lock's)
            tempfile.gettempdir()
        except BaseException:
            fair.close_unused()
            raise
    with lock:
        try:
            state = _open_run_directory(out, request, loaded, corpus, config, load_s, fair.state(), rules, selection)
            contamination = check_for_run(loaded.directory, corpus, out, code_sha256=state.code_sha256,
                                          enabled=request.fairness.contamination_check,
                                          reuse=request.directory.resume, quiet=request.quiet)
        except BaseException:
            fair.close_unused()
            raise
        fair.out = out
        run = _Run(request, out, state, loaded, given_card, pins, corpus, selection, config, request.calls,
                   manager, fair, hidden, contamination, rules, lambda: refuse_moved(lock))
        return _run_locked(run)


class _Run(NamedTuple):
    """Everything settled before translating starts."""

    request: RunRequest
    out: Path
    state: RunState
    loaded: LoadedMethod
    given_card: tuple[str, Any] | None
    pins: list[PinCheck]
    corpus: Corpus
    selection: Selection
    config: RunConfig
    settings: RunSettings
    manager: Any
    fair: FairRun
    hidden: frozenset[str]  # the gold and family fields
    contamination: Any
    rules: RunRules
    in_place: Callable[[], None]  # raises RunError once the run directory was moved or removed while the run ran


def _run_locked(run: _Run) -> RunReport:
    from mt_eval.extensions import notify

    request, out, state, loaded, config, manager, fair = run.request, run.out, run.state, run.loaded, run.config, \
        run.manager, run.fair
    entries = run.selection.entries
    log_path = out / "results.jsonl"
    for note in repair(log_path, {str(e["id"]) for e in entries}):
        print(f"mt-eval run: {note}", file=sys.stderr)
    log = ResultsLog(log_path, known=logged_ids(log_path))  # (the ids alone: a resumed run holds no results)
    remaining = log.unlogged(entries)
    progress = RunProgress(len(entries), len(entries) - len(remaining), label=loaded.method_id, quiet=request.quiet)
    runtime = (f"{loaded.source.runtime} (sandboxed: {fair.sandbox.tool.name})" if fair.sandbox is not None
               else runtime_label(loaded.source, isolate=request.isolate))
    if remaining:
        ran_rows_in(out, state, runtime)
    earlier, saved_at = dict(state.normalised), time.monotonic()  # (what the run's earlier sessions changed)

    def save_spent() -> None:  # the run's counts (results changed to be accepted, retries) with this session's
        run.in_place()
        state.normalised, state.retries_used = spent.normalised_with(earlier), spent.retries_used
        write_json(out / "run.json", state)

    def on_result(result: TranslationResult) -> None:
        nonlocal saved_at
        progress.advance(result.error is not None)
        notify(manager, "entry_completed", run_id=state.run_id, result=result)
        if time.monotonic() - saved_at >= 1.0:  # a run killed outright (SIGKILL) resumes with the last ones saved
            saved_at = time.monotonic()
            with contextlib.suppress(OSError, RunError):  # (a full disk, or a moved directory: said when it ends)
                save_spent()

    def view(group: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return method_view(group, run.hidden)

    def save_latency(measured: Measured) -> None:
        state.latency = measured
        write_json(out / "run.json", state)

    before = None
    if state.latency is None and remaining:  # measured once, by the run's first session, over its fixed sample
        before = run.rules.latency_calls(entries, config, run.settings.timeout_s, view, save_latency,
                                         quiet=request.quiet, directory=loaded.directory)

    async def card_of(started: LoadedMethod) -> dict[str, Any]:
        return await merged_card(started, run.given_card, config)

    async def replay(method: Any) -> None:
        await fair.replay_with_substitute(method, lambda: scored_entries(entries), config, config.seed, view,
                                          timeout_s=run.settings.timeout_s, directory=run.loaded.directory)

    around = Around(running=fair.running, begin=card_of, before=before, finish=replay, view=view,
                    can_move=fair.policy is None and fair.sandbox is None)
    notify(manager, "run_started", run_id=state.run_id, method_id=loaded.method_id, config=config)
    spent = Outcome(retry_budget=run.settings.budget_for(len(entries)), retries_used=state.retries_used)
    try:
        ran = run_method(loaded, remaining, config, run.settings, log, on_result, around=around, outcome=spent,
                         isolated=lambda: load_method(request.method, plugin_manager=manager, isolate=True,
                                                      needs="translate"),
                         resume_hint=request.command_line(drop=("--force", "--resume"), add=("--resume",)))
    except StartFailed as exc:
        raise RunError(str(exc)) from None
    except KeyboardInterrupt:
        progress.close()
        log.close()
        save_spent()  # (a resumed run has what is left of the budget, and adds to the counts)
        oc.print_failures_in_log(log_path, len(entries), sys.stderr)
        raise
    finally:
        log.close()
        progress.close()
    outcome, loaded, card = ran.outcome, ran.loaded, ran.begun
    if ran.moved_to_guest and state.runtimes:  # (its entries ran in-process until then: said so)
        state.runtimes[-1] = "python (isolated): it blocked the event loop in-process"
    if state.first_call_s is None and outcome.timing.first_call_s is not None:
        state.first_call_s = outcome.timing.first_call_s
    save_spent()
    results = LoggedResults(log_path, entries)  # in corpus order, read from the log pass by pass
    refusals = {str(e["id"]) for e in entries if family_of(e) == "negative"}  # a control's error is a refusal
    counted = results.excluding(refusals)
    status = oc.status_of(counted)
    scores = run_scores(entries, results, request, manager, state.config.get("target_lang")) if status != "failed" \
        else None
    referenced = None  # the card lists its results, or references the log (mt_eval.harness.card_results)
    if not embeds_results(request.embed_results, len(results)):
        referenced = log_reference(log_path, len(results))
    draft = draft_card(state, now(), loaded, card, run.corpus, run.selection, config, run.settings,
                       outcome.retries_used, scores, results, request, fair, run.pins, status,
                       recorded_runtime(state, runtime), referenced)
    draft.contamination = run.contamination
    draft.failures = oc.failures_of(counted)
    run_card = rc.seal(run.rules.finish_card(draft, entries, results, scored=run.corpus.references))
    run.in_place()  # (scoring a large run takes a while)
    card_path = write_run_outputs(out, run_card, entries, results)
    notify(manager, "run_finished", run_id=state.run_id, card=run_card)
    errors = sum(r.error is not None for r in counted)
    code = oc.exit_status(status, errors, len(counted), request.max_errors)
    if code == oc.EXIT_COMPLETE and run_card.gate is not None and not run_card.gate.passed:
        code = oc.EXIT_GATE_FAILED  # the run completed; its headline is withheld
    print_summary(run_card, out, sys.stdout, quiet=request.quiet, policy=request.policy, extensions=request.extensions)
    oc.print_failures(run_card.failures or [], errors, len(counted), sys.stderr, controls=len(results) - len(counted))
    if status != "complete":
        print(oc.verdict(status, code, errors, len(counted), request.max_errors), file=sys.stderr)
    return RunReport(card_path=card_path, status=status, exit_code=code)


def _open_run_directory(out: Path, request: RunRequest, loaded: LoadedMethod, corpus: Corpus, config: RunConfig,
                        load_s: float, fairness: dict[str, Any], rules: RunRules, selection: Selection) -> RunState:
    fresh = RunState(run_id=new_run_id(), started_at=now(), method_dir=str(loaded.directory.resolve()),
                     code_sha256=rc.code_sha256(loaded.directory), corpus_path=str(corpus.path.resolve()),
                     corpus_sha256=corpus.sha256, config=msgspec.to_builtins(config), load_s=round(load_s, 6),
                     settings=msgspec.to_builtins(request.calls), limit=request.selection.limit,
                     selection=request.selection.filters(), reading=request.corpus.reading(), fairness=fairness)

    def changes(state: RunState, now: RunState) -> list[tuple[str, str]]:
        def own(recorded: RunState) -> dict[str, Any]:  # the settings not in the configuration too (timeout_s)
            return {key: value for key, value in recorded.settings.items() if key not in recorded.config}

        return differences([(method_named(state.method_dir, now.method_dir), state.code_sha256, now.code_sha256),
                            ("the corpus", state.corpus_sha256, now.corpus_sha256),
                            ("the run configuration", state.config, now.config),
                            ("the run settings", own(state), own(now)), ("--limit", state.limit, now.limit),
                            ("the selection (--ids, --segment)", state.selection, now.selection),
                            ("how the corpus is read (--columns, --accept-doubt)", state.reading, now.reading),
                            ("the sandbox, --official or the gateway policy", state.fairness, now.fairness)])

    return open_run_directory(out, fresh, resume=request.directory.resume, force=request.directory.force,
                              changes=changes, command="mt-eval run",
                              finished=lambda state: rules.refuse_finished(out, state, selection.entries, request))

