"""``mt-eval decide run``: one decision run from start (or resume) to sealed decision card.

The scorer is checked first, on the Uniform baseline against closed forms (`mt_eval.decisions.selfcheck`): when
it disagrees nothing is run or reported. Then the method decides every row (results appended to
``results.jsonl`` as they complete), and the card is written from exactly those results.
"""

from __future__ import annotations

import shlex
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import msgspec

from mt_eval import event_loop
from mt_eval._version import __version__
from mt_eval.atomic_files import write_atomically
from mt_eval.control_chars import escaped_for_terminal
from mt_eval.corpus.files import naming_part
from mt_eval.decisions import card as dc
from mt_eval.decisions.corpus import DecisionCorpus, read_decision_corpus
from mt_eval.decisions.execution import DECISIONS, DecideSettings, DecisionLog, decide_rows
from mt_eval.decisions.metrics import GROUPS, Judged, score_decisions
from mt_eval.decisions.records import QUESTION_TYPES, DecisionConfig, DecisionResult
from mt_eval.decisions.request import DecideRequest
from mt_eval.decisions.selfcheck import SelfCheck, describe_self_check, run_self_check
from mt_eval.decisions.summary import print_summary
from mt_eval.guarded_calls import guarded_close, prints_to_stderr
from mt_eval.harness import runcard as rc
from mt_eval.harness.environment import environment
from mt_eval.harness.latency import reported_latency_facts
from mt_eval.harness.method_contract import merged_card, method_facts, ran_rows_in, recorded_runtime
from mt_eval.harness.request import MethodSettings
from mt_eval.harness.results_log import repair
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
from mt_eval.harness.run_rules import RunFinished, finished_card
from mt_eval.harness.session import RunState, new_run_id, now
from mt_eval.loader import LoadedMethod, load_method, runtime_label
from mt_eval.method_start import start_method
from mt_eval.progress import RunProgress


class DecideState(RunState, kw_only=True):
    """``run.json`` of a decide run: a run's record (fixed at its start; a resume must match it), marked as a
    decide run."""

    kind: str = "decide"


class SelfCheckFailed(RunError):
    """The scorer disagrees with the closed forms on the Uniform baseline: nothing is reported."""


def decide_run(request: DecideRequest) -> Path:
    """Run (or resume) the decision run ``request`` describes; the path of its decision card."""
    calls, given = request.calls, request.directory
    if given.out is not None:  # (a complete run resumed in a read-only directory writes nothing: `mt-eval run`'s way)
        writable_directory(given.out, "the decision run", resuming=given.resume)
    with RunDirectoryHold(given.out, command=shlex.join(["mt-eval", *request.command]), wait_s=given.wait_s,
                          resume=given.resume, prog="mt-eval decide", nothing_done="nothing was decided") as hold:
        # (a large corpus takes a while to read and check: Ctrl-C then has nothing saved to speak of)
        corpus = read_decision_corpus(request.corpus)  # (gold at the data's tolerance; --tolerance is the answers')
        check = run_self_check(corpus, request.ece_bins)
        if not request.quiet or not check.passed:
            print(describe_self_check(check), file=sys.stderr)
        if check.reason is None and not check.passed:
            raise SelfCheckFailed("the scorer disagrees with the closed forms on the Uniform baseline (above): "
                                  "refusing to run or report; nothing was written")
        started = time.perf_counter()
        with prints_to_stderr():  # what the method prints is not the result
            loaded = load_method(request.method, isolate=request.isolate, needs="decide")
        load_s = time.perf_counter() - started
        manifest = loaded.manifest
        spec = manifest.decide
        settings = DecideSettings(batch_size=calls.batch_size, concurrency=calls.concurrency, timeout_s=calls.timeout_s,
                                  tolerance=calls.tolerance, max_input_chars=spec.max_input_chars if spec else None,
                                  question_types=tuple(spec.question_types) if spec else QUESTION_TYPES)
        config = decision_config(request.settings, source_lang=request.source_lang, target_lang=request.target_lang,
                                 batch_size=calls.batch_size, concurrency=calls.concurrency, timeout_s=calls.timeout_s,
                                 seed=request.seed)
        refuse_unwritable_names([("the method's directory", loaded.directory), ("--out", request.directory.out),
                                 ("the corpus file", corpus.path)])
        out = run_directory(request.directory.out, loaded.directory, "decisions",
                            default_run_name(loaded.method_id, naming_part(corpus.path, corpus.name, corpus.sha256)))
        lock = hold.take(out)
    with lock:
        state = _open(out, request, loaded, corpus, config, settings, load_s, check)
        log_path = out / "results.jsonl"
        for note in repair(log_path, {row.id for row in corpus.rows}, DECISIONS):
            print(escaped_for_terminal(f"mt-eval decide run: {note}"), file=sys.stderr)
        done = DecisionLog.read(log_path)
        remaining = [row for row in corpus.rows if row.id not in done]
        if remaining:  # (the card says the runtime of every session that decided rows: `recorded_runtime`)
            ran_rows_in(out, state, runtime_label(loaded.source, isolate=request.isolate))
        progress = RunProgress(len(corpus.rows), len(done), label=f"{loaded.method_id} deciding", quiet=request.quiet)
        log = DecisionLog(log_path)

        def on_results(results: list[DecisionResult]) -> None:
            log.append(results)
            for result in results:
                progress.advance(result.failed)

        try:
            with prints_to_stderr():
                timing, method_card = event_loop.run(_decide_and_close, loaded, remaining, config, settings,
                                                     on_results)
        finally:
            log.close()
            progress.close()
        refuse_moved(lock)  # (moved or removed meanwhile: nothing more is read or written at its old path)
        if state.first_call_s is None and timing.first_call_s is not None:
            state.first_call_s = timing.first_call_s
            write_json(out / "run.json", state)
        recorded = DecisionLog.read(log_path)
        results = [recorded[row.id] for row in corpus.rows if row.id in recorded]
        card = rc.seal(build_card(state, loaded, method_card, corpus, config, settings, check, results, request))
        card_path = out / "card.json"
        refuse_moved(lock)  # (scoring a large run takes a while)
        try:  # (whole or not at all, no temporary file left behind)
            write_atomically(card_path, msgspec.json.format(msgspec.json.encode(card), indent=2) + b"\n")
        except OSError as exc:
            raise RunError(f"cannot write {card_path}: {exc.strerror or exc}. Every row decided is saved in "
                           f"{log_path}: free space, or make the directory writable, then run the same command "
                           "with --resume (in place of --force, where it has it) to write the card") from exc
        # (the result on standard output, before the card's path; the failures on standard error: as `mt-eval run`)
        print_summary(card, sys.stdout, sys.stderr, quiet=request.quiet)
        return card_path


async def _decide_and_close(loaded: LoadedMethod, rows: list[Any], config: DecisionConfig, settings: DecideSettings,
                            on_results: Any) -> tuple[Any, dict[str, Any]]:
    """Decide ``rows``, then close the method; the timing and the method card it ran under (a guest is started
    first, so that the card it sends at initialize is part of it; the cold call includes that start). A guest that
    cannot start is said as ``mt-eval run`` says it, with the fix (`mt_eval.method_start`)."""
    try:
        started = time.perf_counter()
        await start_method(loaded, config)
        card = await merged_card(loaded, None, config)
        start_s = time.perf_counter() - started
        stuck = (f"mt-eval decide: {loaded.method_id} blocked the event loop and could not be interrupted; finished "
                 "rows are saved. Run it in its own process: mt-eval decide run ... --resume --isolate")
        timing = await decide_rows(loaded.method, rows, config, settings, on_results, stuck_message=stuck)
        if timing.first_call_s is not None:
            timing.first_call_s += start_s
        return timing, card
    finally:
        await guarded_close(loaded.method, loaded.method_id, prog="mt-eval decide run", directory=loaded.directory)


def decision_config(given: MethodSettings, *, source_lang: str | None, target_lang: str | None, batch_size: int,
                    concurrency: int, timeout_s: float, seed: int | None) -> DecisionConfig:
    """The config the method is given: the languages, model settings, batch size, concurrency, timeout, seed and
    --param."""
    fields = {"source_lang": source_lang, "target_lang": target_lang, "model": given.model,
              "base_url": given.base_url, "temperature": given.temperature, "max_tokens": given.max_tokens,
              "batch_size": batch_size, "concurrency": concurrency, "timeout_s": timeout_s,
              "seed": seed, "params": given.params}
    try:
        return msgspec.convert({k: v for k, v in fields.items() if v is not None}, DecisionConfig)
    except msgspec.ValidationError as exc:
        raise RunError(f"invalid configuration: {exc}") from exc


def _open(out: Path, request: DecideRequest, loaded: LoadedMethod, corpus: DecisionCorpus, config: DecisionConfig,
          settings: DecideSettings, load_s: float, check: SelfCheck) -> DecideState:
    fresh = DecideState(run_id=new_run_id(), started_at=now(), method_dir=str(loaded.directory.resolve()),
                        code_sha256=rc.code_sha256(loaded.directory), corpus_path=str(corpus.path.resolve()),
                        corpus_sha256=corpus.sha256, config=_as_json(config), settings=_as_json(settings),
                        load_s=round(load_s, 6))

    def changes(state: DecideState, now: DecideState) -> list[tuple[str, str]]:
        return differences([(method_named(state.method_dir, now.method_dir), state.code_sha256, now.code_sha256),
                            ("the corpus", state.corpus_sha256, now.corpus_sha256),
                            ("the configuration", state.config, now.config),
                            ("the settings", _own(state.settings, state.config), _own(now.settings, now.config))])

    return open_run_directory(out, fresh, resume=request.directory.resume, force=request.directory.force,
                              changes=changes, command="mt-eval decide run",
                              finished=lambda state: _refuse_finished(out, state, corpus, check, request))


def _refuse_finished(out: Path, state: DecideState, corpus: DecisionCorpus, check: SelfCheck, request: DecideRequest
                     ) -> None:
    """Raise `RunFinished` when ``out`` holds the card of the decision run ``state`` as its last session sealed it
    (`finished_card`), with every question answered, from the results in its log, and scored and self-checked as
    this resume would (the same --resamples and --ece-bins). Otherwise (a row or question failed, a card not written,
    out of date or edited) the resume goes on, and rewrites the card, as `mt-eval run`'s does. An --isolate given now
    changes nothing: no row would run, and the card keeps the runtime its rows were decided in."""
    found = finished_card(out, state, {row.id for row in corpus.rows}, DECISIONS, keep_results=True)
    if found is None:
        return
    card, log = found
    overall = (card.get("coverage") or {}).get("overall") or {}
    metrics = card.get("metrics") or {}
    scored = (metrics.get("bootstrap_resamples"), metrics.get("ece_bins")) if metrics else None
    if (card.get("card_version") == dc.CARD_VERSION and card.get("errors") == 0 and not overall.get("failed")
            and scored in (None, (request.resamples, request.ece_bins))
            and card.get("self_check") == msgspec.to_builtins(check)
            and card.get("results") == msgspec.to_builtins([log.results[row.id] for row in corpus.rows])):
        raise RunFinished.nothing_to_resume(out)


def _own(settings: Any, config: Any) -> Any:
    """The settings without the fields the configuration holds too (batch size, concurrency, timeout): a change of
    one is said once, with the configuration."""
    if isinstance(settings, dict) and isinstance(config, dict):
        return {name: value for name, value in settings.items() if name not in config}
    return settings


def _as_json(value: Any) -> Any:
    """``value`` as it reads back from run.json (tuples become lists), so a resume compares like with like."""
    return msgspec.json.decode(msgspec.json.encode(value))


def judged_answers(corpus: DecisionCorpus, results: list[DecisionResult]
                   ) -> tuple[list[Judged], dict[str, dc.Coverage]]:
    """The answered questions that have gold (what is scored), and the coverage per question type."""
    by_id = {r.id: r for r in results}
    judged: list[Judged] = []
    counts: dict[str, Counter[str]] = {group: Counter() for group in GROUPS}
    for case, (row, gold) in enumerate(zip(corpus.rows, corpus.gold, strict=True)):
        result = by_id.get(row.id)
        for name, question in row.questions.items():
            answer = result.answers.get(name) if result is not None and result.error is None else None
            answered = answer is not None and answer.probabilities is not None
            scored = answered and name in gold
            for group in ("overall", question.type):
                counts[group].update(asked=1, answered=int(answered), failed=int(not answered), scored=int(scored))
            if scored:
                assert answer is not None and answer.probabilities is not None
                values = [level.value for level in question.levels or []] if question.type == "score" else None
                judged.append(Judged(case=case, kind=question.type, predicted=_in_order(row.id, name, question,
                                                                                        answer.probabilities),
                                     gold=gold[name], values=values))
    coverage = {group: dc.Coverage(asked=c["asked"], answered=c["answered"], failed=c["failed"], scored=c["scored"])
                for group, c in counts.items() if c["asked"]}
    return judged, coverage


def _in_order(row_id: str, name: str, question: Any, probabilities: dict[str, float]) -> list[float]:
    """An answer's probabilities in the order of its question's options, as the gold is: a results log rewritten
    with its keys in another order (``jq -S``) is scored as it was decided, and one that names other options is
    refused, saying which row."""
    options = question.option_names
    if set(probabilities) != set(options):
        shown = ", ".join(f'"{option}"' for option in probabilities) or "no option"
        wanted = ", ".join(f'"{option}"' for option in options)
        raise RunError(f'results.jsonl: row "{row_id}", question "{name}": the recorded probabilities name {shown}, '
                       f"not the options {wanted} of the corpus: the log was edited. Remove the row's line and run "
                       "the same command with --resume to decide the row again")
    return [probabilities[option] for option in options]


def build_card(state: DecideState, loaded: LoadedMethod, method_card: dict[str, Any], corpus: DecisionCorpus,
               config: DecisionConfig,
               settings: DecideSettings, check: SelfCheck, results: list[DecisionResult], request: DecideRequest
               ) -> dc.DecisionCard:
    judged, coverage = judged_answers(corpus, results)
    provenance = dc.Provenance(run_id=state.run_id, results_sha256=dc.results_sha256(results))
    metrics = (score_decisions(judged, len(corpus.rows), bins=request.ece_bins, resamples=request.resamples,
                               seed=request.seed)
               if judged and len(results) == len(corpus.rows) else None)
    return dc.DecisionCard(
        run_id=state.run_id, started_at=state.started_at, finished_at=now(), sessions=state.sessions,
        sdk_version=__version__,
        method=method_facts(loaded, method_card, code_sha256=state.code_sha256,
                            runtime=recorded_runtime(state, runtime_label(loaded.source, isolate=request.isolate))),
        corpus=dc.DecisionCorpusFacts(name=corpus.name, path=str(corpus.path), sha256=corpus.sha256,
                                      rows=len(corpus.rows), questions=corpus.questions_by_type(),
                                      gold_questions=corpus.gold_questions, license=corpus.license),
        config=msgspec.to_builtins(config),
        settings=dc.DecisionSettings(batch_size=settings.batch_size, concurrency=settings.concurrency,
                                     timeout_s=settings.timeout_s, tolerance=settings.tolerance,
                                     max_input_chars=settings.max_input_chars,
                                     question_types=list(settings.question_types)),
        self_check=check, self_check_produced_by=dc.Provenance(run_id=state.run_id, results_sha256=corpus.sha256),
        metrics=metrics, metrics_produced_by=provenance if metrics is not None else None,
        coverage=coverage, rows_over_limit=sum(1 for r in results if r.error and "max_input_chars" in r.error),
        failures=failure_summary(results), environment=environment(),
        latency=reported_latency_facts(state.first_call_s, state.load_s, [r.latency_s for r in results], 10),
        usage=rc.UsageTotals(prompt_tokens=sum(r.usage.prompt_tokens for r in results),
                             completion_tokens=sum(r.usage.completion_tokens for r in results)),
        errors=sum(r.error is not None for r in results), results=results)


def failure_summary(results: list[DecisionResult]) -> list[dc.DecisionFailure]:
    """The distinct row and question errors, most frequent first, each with how often and an example."""
    seen: dict[tuple[str, str | None], dc.DecisionFailure] = {}
    for result in results:
        problems = [(result.error, None)] if result.error else [
            (a.error, name) for name, a in result.answers.items() if a.error]
        for message, question in problems:
            key = (message, question)
            if key in seen:
                seen[key].count += 1
            else:
                seen[key] = dc.DecisionFailure(message=message, count=1, example_id=result.id, question=question)
    return sorted(seen.values(), key=lambda f: -f.count)
