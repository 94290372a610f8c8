"""One evaluation from start (or resume) to sealed run card; the steps behind ``mt-eval run``."""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import anyio
import msgspec

from mt_eval import __version__
from mt_eval.harness import runcard as rc
from mt_eval.harness.corpus import Corpus, read_corpus
from mt_eval.harness.execution import ResultsLog, RunSettings, execute
from mt_eval.harness.progress import RunProgress
from mt_eval.harness.scoring import MetricScore, Scores, score
from mt_eval.loader import LoadedMethod, load_method
from mt_eval.pins import PinCheck, check_pins, refusals
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
    sessions: int = 1
    first_call_s: float | None = None
    load_s: float = 0.0
    normalised: dict[str, int] = msgspec.field(default_factory=dict)  # of every session so far


class RunError(Exception):
    """A run cannot start or continue; the message says why and how to fix it."""


def now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def new_run_id() -> str:
    return f"{datetime.datetime.now(datetime.UTC):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}"


def run_evaluation(args: argparse.Namespace) -> Path:
    """Run (or resume) the evaluation ``args`` describe; returns the path of the run card."""
    from mt_eval.plugins import enable_extension, make_plugin_manager

    corpus = read_corpus(args.corpus)
    if args.limit is not None:
        corpus.entries = corpus.entries[: max(0, args.limit)]
    manager = make_plugin_manager()
    for extension in args.extension:
        enable_extension(manager, extension)
    started = time.perf_counter()
    loaded = load_method(args.method, plugin_manager=manager, isolate=args.isolate)
    load_s = time.perf_counter() - started
    if args.isolate:
        _say_isolated_hooks_do_not_run(loaded)
    pins = check_pins(loaded.source)
    if refused := refusals(pins):
        raise RunError(f"{loaded.method_id}: pinned dependencies differ from what this run would use:\n"
                       + "\n".join(f"  {check.problem()}" for check in refused))
    card_file = _card_file(args.method_card)
    config = _run_config(args, corpus, loaded)
    settings = RunSettings(batch_size=args.batch_size, concurrency=args.concurrency, timeout_s=args.timeout,
                           retries=args.retries, retry_budget=args.retry_budget)
    out = Path(args.out) if args.out else Path("runs") / f"{loaded.method_id}__{_slug(corpus.name)}"
    state = _open_run_directory(out, args, loaded, corpus, config, settings, load_s)
    log_path = out / "results.jsonl"
    done = ResultsLog.read(log_path)
    remaining = [e for e in corpus.entries if e["id"] not in done]
    progress = RunProgress(len(corpus.entries), len(done), label=loaded.method_id, quiet=args.quiet)
    log = ResultsLog(log_path)

    def on_result(result: TranslationResult) -> None:
        progress.advance(result.error is not None)
        manager.hook.entry_completed(run_id=state.run_id, result=result)

    manager.hook.run_started(run_id=state.run_id, method_id=loaded.method_id, config=config)
    try:
        outcome, card = anyio.run(_execute_and_close, loaded, card_file, remaining, config, settings, log, on_result)
    finally:
        log.close()
        progress.close()
    if state.first_call_s is None and outcome.timing.first_call_s is not None:
        state.first_call_s = outcome.timing.first_call_s
    notes = ResultNotes()
    notes.merge(state.normalised)
    notes.merge(outcome.notes.counts)
    state.normalised = notes.counts
    _write_json(out / "run.json", state)
    results = ResultsLog.read(log_path)
    ordered = [results[e["id"]] for e in corpus.entries if e["id"] in results]
    scores = _scores(corpus, ordered, args, manager)
    run_card = rc.seal(_build_card(state, loaded, card, corpus, config, settings, outcome.retries_used, scores,
                                   ordered, args, pins))
    card_path = out / "card.json"
    _write_json(card_path, run_card)
    manager.hook.run_finished(run_id=state.run_id, card=run_card)
    if not args.quiet:
        _print_summary(run_card, sys.stderr)
    return card_path


async def _execute_and_close(loaded: LoadedMethod, card_file: tuple[str, Any] | None, entries: list[dict[str, Any]],
                             config: RunConfig, settings: RunSettings, log: ResultsLog, on_result: Any
                             ) -> tuple[Any, dict[str, Any]]:
    """Start the method (a guest sends its card at initialize), merge its card, then translate and close."""
    try:
        card = await _merged_card(loaded, card_file, config)
        outcome = await execute(loaded.method, entries, config, settings, log, on_result)
        host_notes = getattr(loaded.method, "result_notes", None)  # a guest's results, accepted by the host
        if isinstance(host_notes, ResultNotes):
            outcome.notes.merge(host_notes.counts)
        return outcome, card
    finally:
        close = getattr(loaded.method, "aclose", None)
        if close is not None:
            with anyio.CancelScope(shield=True):
                await close()


def _say_isolated_hooks_do_not_run(loaded: LoadedMethod) -> None:
    """Under --isolate the plugin's code runs only in its own process, so hooks in it cannot run here: say so."""
    from mt_eval.loader import entry_module_file
    from mt_eval.plugins import declared_hooks

    file = entry_module_file(loaded.source)
    hooks = declared_hooks(file) if file is not None else []
    if hooks:
        print(f"mt-eval run: warning: --isolate: the hooks in {file} ({', '.join(hooks)}) do not run: the plugin's "
              "code runs only in its own process. Run without --isolate to run them, or move them into a module "
              "given with --extension", file=sys.stderr)


def _card_file(card_path: str | None) -> tuple[str, Any] | None:
    """``--method-card``: the card to use instead of the plugin's method_card.json, read now."""
    if card_path is None:
        return None
    from mt_eval.strict import parse_json

    path = Path(card_path)
    try:
        data, problems = parse_json(path.read_bytes(), file=str(path))
    except OSError as exc:
        raise RunError(f"--method-card {path}: cannot read it: {exc.strerror or exc}") from exc
    if data is None:
        raise RunError("the method card is not valid:\n" + "\n".join(p.render() for p in problems))
    return str(path), data


async def _merged_card(loaded: LoadedMethod, card_file: tuple[str, Any] | None, config: RunConfig) -> dict[str, Any]:
    """The run's method card: the plugin's files (or --method-card) and what the method reports when it runs."""
    from mt_eval.bridge.messages import BridgeError
    from mt_eval.bridge.method import per_entry_error
    from mt_eval.loader import method_card_of

    start = getattr(loaded.method, "start", None)
    if callable(start):  # a guest: its own card arrives with its answer to initialize
        try:
            await start(config)
        except BridgeError as exc:
            raise RunError(f"{loaded.method_id}: the method's process could not start: {per_entry_error(exc)}") from exc
    card, problems = method_card_of(loaded.source, loaded.method, card_file=card_file)
    errors = [p for p in problems if p.severity == "error"]
    if card is None or errors:
        raise RunError("the method card is not valid:\n" + "\n".join(p.render() for p in errors))
    return msgspec.to_builtins(card)  # type: ignore[no-any-return]


def _run_config(args: argparse.Namespace, corpus: Corpus, loaded: LoadedMethod) -> RunConfig:
    supported = loaded.manifest.supported_pairs
    pair = args.pair or corpus.pair or (supported[0] if supported else None)
    if not pair or ">" not in pair:
        raise RunError("no language pair: the corpus does not name one and the method supports any; "
                       "give --pair SRC>TGT, e.g. --pair eng>spa")
    if supported and pair not in supported:
        raise RunError(f"{loaded.method_id} supports {', '.join(supported)}, not {pair}; choose one with --pair "
                       "or use a corpus in a supported pair")
    source, _, target = pair.partition(">")
    params: dict[str, Any] = {}
    for item in args.param:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise RunError(f"--param {item!r}: write it as KEY=VALUE")
        try:
            params[key] = json.loads(value)
        except ValueError:
            params[key] = value
    fields = {"source_lang": source, "target_lang": target, "model": args.model, "base_url": args.base_url,
              "temperature": args.temperature, "max_tokens": args.max_tokens, "batch_size": args.batch_size,
              "concurrency": args.concurrency, "timeout_s": args.timeout, "seed": args.seed, "params": params}
    try:
        return msgspec.convert({k: v for k, v in fields.items() if v is not None}, RunConfig)
    except msgspec.ValidationError as exc:
        raise RunError(f"invalid run configuration: {exc}") from exc


def _open_run_directory(out: Path, args: argparse.Namespace, loaded: LoadedMethod, corpus: Corpus,
                        config: RunConfig, settings: RunSettings, load_s: float) -> RunState:
    state_path = out / "run.json"
    fresh = RunState(run_id=new_run_id(), started_at=now(), method_dir=str(loaded.directory.resolve()),
                     code_sha256=rc.code_sha256(loaded.directory), corpus_path=str(corpus.path.resolve()),
                     corpus_sha256=corpus.sha256, config=msgspec.to_builtins(config),
                     settings=msgspec.to_builtins(settings), limit=args.limit, load_s=round(load_s, 6))
    if state_path.exists() and args.resume:
        try:
            state = msgspec.json.decode(state_path.read_bytes(), type=RunState)
        except msgspec.DecodeError as exc:
            raise RunError(f"{state_path} is damaged ({exc}); start over with --force") from exc
        changed = [what for what, old, new in [
            ("the method's code", state.code_sha256, fresh.code_sha256),
            ("the corpus", state.corpus_sha256, fresh.corpus_sha256),
            ("the run configuration", state.config, fresh.config),
            ("the run settings", state.settings, fresh.settings),
            ("--limit", state.limit, fresh.limit)] if old != new]
        if changed:
            raise RunError(f"cannot resume {out}: {', '.join(changed)} changed since the run started; "
                           "resume with the same inputs, or start over with --force")
        state.sessions += 1
    elif (out / "results.jsonl").exists() and not args.force:
        raise RunError(f"{out} holds an earlier run: continue it with --resume, start over with --force, "
                       "or choose another --out")
    else:
        if args.resume:
            print(f"mt-eval run: nothing to resume in {out}; starting a new run", file=sys.stderr)
        if out.exists():
            for name in ("results.jsonl", "card.json", "run.json"):
                (out / name).unlink(missing_ok=True)
        state = fresh
    out.mkdir(parents=True, exist_ok=True)
    _write_json(state_path, state)
    return state


def _scores(corpus: Corpus, results: list[TranslationResult], args: argparse.Namespace, manager: Any
            ) -> Scores | None:
    if len(results) != len(corpus.entries) or not corpus.has_references or not results:
        return None
    references = [e["reference"] for e in corpus.entries]
    hypotheses = [r.predicted if r.error is None and r.predicted is not None else "" for r in results]
    scores = score(hypotheses, [references], resamples=args.resamples, seed=args.seed)
    from mt_eval.plugins import registered_metrics

    for name, scorer in registered_metrics(manager).items():
        scores.metrics.append(MetricScore(name=name, score=round(float(scorer(hypotheses, references)), 4),
                                          signature=f"extension:{name}"))
    return scores


def _build_card(state: RunState, loaded: LoadedMethod, card: dict[str, Any], corpus: Corpus, config: RunConfig,
                settings: RunSettings, retries_used: int, scores: Scores | None, results: list[TranslationResult],
                args: argparse.Namespace, pins: list[PinCheck]) -> rc.RunCard:
    derivation = loaded.source.derivation
    commit, dirty = rc.git_state(loaded.directory)
    usage = totals(results)
    latencies = [r.latency_s for r in results]
    return rc.RunCard(
        run_id=state.run_id, started_at=state.started_at, finished_at=now(), sessions=state.sessions,
        sdk_version=__version__,
        method=rc.MethodFacts(
            method_id=loaded.method_id, name=loaded.manifest.name, method_class=loaded.manifest.method_class,
            card=card, dependency_class=derivation.dependency_class,
            contributions=[rc.DependencyContribution(path=c.path, id=c.dependency_id,
                                                     dependency_class=c.dependency_class, reason=c.reason)
                           for c in derivation.contributions],
            runtime="python (isolated)" if args.isolate else loaded.source.runtime,
            code_sha256=state.code_sha256, git_commit=commit, git_dirty=dirty,
            guest_restarts=getattr(loaded.method, "restarts", None),
            champollion=getattr(args, "champollion_source", None)),
        corpus=rc.CorpusFacts(name=corpus.name, path=str(corpus.path), sha256=corpus.sha256,
                              entries=len(corpus.entries), pair=config.pair, license=corpus.license),
        covariates=rc.Covariates(model=config.model, temperature=config.temperature, max_tokens=config.max_tokens,
                                 seed=config.seed, batch_size=settings.batch_size, concurrency=settings.concurrency,
                                 timeout_s=settings.timeout_s, retries_per_entry=settings.retries,
                                 retry_budget=settings.budget_for(len(corpus.entries)), retries_used=retries_used),
        environment=rc.environment(),
        metrics=scores,
        latency=rc.latency_facts(state.first_call_s, state.load_s, latencies, settings.warmup_entries),
        usage=rc.UsageTotals(prompt_tokens=usage["prompt_tokens"], completion_tokens=usage["completion_tokens"],
                             total_tokens=usage["total_tokens"]),
        errors=sum(r.error is not None for r in results),
        results=results,
        cached=usage["cached"],
        normalised=dict(state.normalised),
        pins=pins,
    )


def _write_json(path: Path, value: Any) -> None:
    """Write atomically: a crash never leaves a half-written file."""
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_bytes(msgspec.json.format(msgspec.json.encode(value), indent=2) + b"\n")
    temporary.replace(path)


def _slug(text: str) -> str:
    from mt_eval.manifest import kebab_case

    return kebab_case(text) or "corpus"


def _print_summary(card: rc.RunCard, stream: Any) -> None:
    head = (f"{card.method.method_id} on {card.corpus.name} ({card.corpus.pair}): {card.corpus.entries} entries, "
            f"{card.errors} error{'s' if card.errors != 1 else ''}")
    lines = [head]
    if card.metrics is not None:
        parts = []
        for m in card.metrics.metrics:
            ci = f" [{m.ci_low:.2f}, {m.ci_high:.2f}]" if m.ci_low is not None and m.ci_high is not None else ""
            parts.append(f"{m.name} {m.score:.2f}{ci}")
        lines.append("  " + "   ".join(parts))
    else:
        lines.append("  not scored: the corpus has no reference for every entry")
    if card.normalised:
        notes = ResultNotes()
        notes.merge(card.normalised)
        lines.append(f"  warning: results accepted after changes (the upstream harness's shape): {notes.summary()}")
    lat = card.latency
    if lat.cold_s is not None and lat.hot_p50_s is not None and lat.hot_p95_s is not None:
        lines.append(f"  latency: cold {lat.cold_s:.3f} s; hot p50 {lat.hot_p50_s * 1000:.1f} ms, "
                     f"p95 {lat.hot_p95_s * 1000:.1f} ms")
    stream.write("\n".join(lines) + "\n")
