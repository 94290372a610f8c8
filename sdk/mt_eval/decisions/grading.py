"""``mt-eval grade CARD --grader DIR``: blinded grading of a translation run by a decision method.

The run's entries become anonymous, shuffled items asking the rubric's score question (`mt_eval.decisions.
blinding`); the grader decides them like any decision run (limits, batches, timeouts, every answer checked);
answers that name the graded method are refused; the grading card (`mt_eval.decisions.grading_card`) records
each entry's expected score and distribution, the run-level mean with a bootstrap interval, and — with
``--labels`` — the grader's quality against human labels.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import sys
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from mt_eval import event_loop
from mt_eval._version import __version__
from mt_eval.atomic_files import directory_for
from mt_eval.control_chars import escaped_for_terminal
from mt_eval.decisions import grading_card as gc
from mt_eval.decisions.blinding import SENT_FIELDS, WITHHELD, Blinded, GradingError, blind, read_run_card, refuse_leaks
from mt_eval.decisions.execution import DecideSettings, decide_rows
from mt_eval.decisions.labels import quality_against
from mt_eval.decisions.metrics import CONFIDENCE, MetricValue, resample_counts
from mt_eval.decisions.records import DecisionResult
from mt_eval.decisions.request import GradeRequest
from mt_eval.decisions.rubric import Rubric, read_rubric
from mt_eval.guarded_calls import guarded_close, prints_to_stderr
from mt_eval.harness import runcard as rc
from mt_eval.harness.method_contract import method_facts
from mt_eval.harness.runcard import RunCard
from mt_eval.harness.session import new_run_id, now
from mt_eval.progress import RunProgress


def load_run(request: GradeRequest) -> tuple[RunCard, bytes, dict[str, dict[str, Any]]]:
    """The run card and its corpus's entries by id (the corpus must be the one the run used)."""
    from mt_eval.corpus.reader import load_corpus
    from mt_eval.harness.corpus import card_corpus_spec

    card, raw = read_run_card(request.card)
    spec = card_corpus_spec(card, request.card, request.corpus)  # read as the run read it (columns, parallel files)
    corpus_path = spec.main_path
    try:
        corpus = load_corpus(spec)
    except (ValueError, OSError) as exc:
        raise GradingError(f"cannot read the run's corpus: {exc}; give it with --corpus") from exc
    if corpus.sha256 != card.corpus.sha256:
        raise GradingError(f"{corpus_path} is not the corpus the run used (sha256 {corpus.sha256[:12]}…, the card "
                           f"records {card.corpus.sha256[:12]}…): give the run's corpus with --corpus")
    entries = {str(e["id"]): e for e in corpus.entries}
    if card.results_log is not None and not card.results:
        card.results = _logged_results(request.card, card.results_log, entries)
    return card, raw, entries


def _logged_results(card_path: Path, reference: rc.ResultsLogReference,
                    entries: dict[str, dict[str, Any]]) -> list[rc.CardResult]:
    """The results of a card that references its log (``--embed-results``), read from the log the card sealed and
    put in corpus order, as a card that lists them has them (the shuffle seed then gives the same items)."""
    from mt_eval.harness.card_results import LogMismatch, results_from_log

    try:
        results = list(results_from_log(Path(card_path), reference))
    except LogMismatch as exc:
        raise GradingError(f"cannot read the run's results: {exc}; {exc.hint}") from exc
    order = {entry_id: position for position, entry_id in enumerate(entries)}
    return sorted(results, key=lambda result: order.get(str(result.id), len(order)))


def graded_run(request: GradeRequest, card: RunCard, raw: bytes) -> gc.GradedRun:
    return gc.GradedRun(run_id=card.run_id, card_path=str(request.card),
                        card_file_sha256=hashlib.sha256(raw).hexdigest(),
                        card_content_sha256=card.content_sha256, corpus_name=card.corpus.name,
                        corpus_sha256=card.corpus.sha256, entries=card.corpus.entries)


def grading_out(request: GradeRequest, grader_id: str | None) -> Path:
    """Where the grading card of ``grader_id`` (None: people's sheets) goes, checked before any grading: --out is a
    directory, the card there is not the --labels being compared with, and one of another grader (a people's card,
    say) is replaced only with --force (the same grader's is: it is that grading done again)."""
    from mt_eval.harness.run_directory import fitting_name

    out = request.out or request.card.resolve().parent / "grading" / fitting_name(grader_id or "human")
    if out.exists() and not out.is_dir():
        raise GradingError(f"--out {out} is a file, not a directory: give the directory for the grading card")
    path = out / "grading-card.json"
    if not path.is_file():
        return out
    if request.labels is not None and request.labels.exists() and path.samefile(request.labels):
        raise GradingError(f"--labels {request.labels} is the grading card this grading would write over: give "
                           "another --out")
    try:
        earlier = msgspec.json.decode(path.read_bytes())
        by = (earlier.get("grader") or {}).get("method_id") if earlier.get("grader") else None
    except (msgspec.DecodeError, AttributeError):
        by = "unreadable"
    if by != grader_id and not request.force:
        said = "people's sheets" if by is None else "a grading card it cannot read" if by == "unreadable" else by
        raise GradingError(f"{path} holds the grading of {said}; writing this one there would replace it. Choose "
                           "another --out, or give --force to replace it")
    return out


def _writable(out: Path, *, given: bool) -> None:
    """Refuse an ``out`` the grading card could not be written in (a file among its parents, no permission)."""
    from mt_eval.harness.run_directory import RunError, writable_directory

    try:
        writable_directory(out, "the grading card", "--out" if given else "the grading directory")
    except RunError as exc:
        raise GradingError(str(exc)) from None


def grader_seed(seed: int) -> int:
    """The seed the grader is given for ``--seed``: drawn from it, not it, since with the shuffle's own seed and the
    public corpus a grader could rebuild which item is which entry."""
    import hashlib

    return int.from_bytes(hashlib.sha256(f"mt-eval grader seed {seed}".encode()).digest()[:4], "big") >> 1


def choose_seed(seed: int | None) -> int:
    """The shuffle seed: the one given, or a fresh one (recorded in the card either way)."""
    return seed if seed is not None else secrets.randbelow(2**31)


def grade_with_method(request: GradeRequest) -> Path:
    """Grade a run card with a decision method; the path of the grading card."""
    from mt_eval.decisions.session import decision_config
    from mt_eval.loader import load_method

    started_at = now()
    card, raw, entries = load_run(request)
    rubric, rubric_sha = read_rubric(request.rubric)
    blinded = blind(card, entries, rubric, seed=choose_seed(request.seed), with_reference=request.with_reference)
    assert request.grader is not None
    if request.labels is not None:  # (read now: a labels file that cannot be used must not cost the grading)
        from mt_eval.decisions.labels import usable_labels

        for warning in usable_labels(request.labels, rubric, card.content_sha256,
                                     {item.entry_id for item in blinded.items}):
            print(escaped_for_terminal(f"mt-eval grade: warning: {warning}"), file=sys.stderr)
    with prints_to_stderr():  # what the grader prints is not the result
        loaded = load_method(request.grader, isolate=request.isolate, needs="decide")
    # (before any item is sent: a card that cannot be written loses the grading)
    _writable(grading_out(request, loaded.method_id), given=request.out is not None)
    manifest = loaded.manifest
    types = manifest.decide.question_types if manifest.decide else ["noul", "choice", "score"]
    if "score" not in types:
        raise GradingError(f"{loaded.method_id} cannot grade on a rubric: it does not answer score questions "
                           f"(method.json $.decide.question_types: {', '.join(types)})")
    source_lang, _, target_lang = card.corpus.pair.partition(">")
    calls = request.calls
    config = decision_config(request.settings, source_lang=source_lang or None, target_lang=target_lang or None,
                             batch_size=calls.batch_size, concurrency=calls.concurrency, timeout_s=calls.timeout_s,
                             seed=None if request.seed is None else grader_seed(request.seed))
    settings = DecideSettings(batch_size=calls.batch_size, concurrency=calls.concurrency, timeout_s=calls.timeout_s,
                              tolerance=calls.tolerance, max_input_chars=manifest.decide.max_input_chars
                              if manifest.decide else None)
    collected: dict[str, DecisionResult] = {}
    by_item = {item.item_id: item for item in blinded.items}

    progress = RunProgress(len(blinded.items), label=f"{loaded.method_id} grading", quiet=request.quiet)

    def on_results(results: list[DecisionResult]) -> None:
        for result in results:
            collected[result.id] = checked = refuse_leaks(result, by_item[result.id], blinded.identity)
            progress.advance(checked.failed)

    try:
        with prints_to_stderr():
            card_of_grader = event_loop.run(_decide_and_close, loaded, blinded, config, settings, on_results)
    finally:
        progress.close()
    grades = {item.entry_id: collected[item.item_id] for item in blinded.items}
    facts = method_facts(loaded, card_of_grader, runtime=loaded.source.runtime,
                         code_sha256=rc.code_sha256(loaded.directory))
    out = finish(request, started_at, card, raw, rubric, rubric_sha, blinded, grades, grader=facts,
                 grader_config=msgspec.to_builtins(config), tolerance=calls.tolerance)
    return out


async def _decide_and_close(loaded: Any, blinded: Blinded, config: Any, settings: DecideSettings, on_results: Any
                            ) -> dict[str, Any]:
    """Grade the blinded items, then close the grader; the method card it ran under (a guest is started first,
    so that the card it sends at initialize is part of it; one that cannot start is said as ``mt-eval run`` says it,
    with the fix: `mt_eval.method_start`)."""
    from mt_eval.harness.method_contract import merged_card
    from mt_eval.method_start import start_method

    method = loaded.method
    try:
        await start_method(loaded, config)
        card = await merged_card(loaded, None, config)
        stuck = (f"mt-eval grade: {loaded.method_id} blocked the event loop and could not be interrupted; no grading "
                 "card was written. Run the grader in its own process: give --isolate")
        await decide_rows(method, [item.case for item in blinded.items], config, settings, on_results,
                          stuck_message=stuck)
        return card
    finally:
        await guarded_close(method, loaded.method_id, prog="mt-eval grade", directory=loaded.directory)


def finish(request: GradeRequest, started_at: str, card: RunCard, raw: bytes, rubric: Rubric, rubric_sha: str,
           blinded: Blinded, grades: dict[str, DecisionResult], *, grader: rc.MethodFacts | None = None,
           human: gc.HumanGraders | None = None, grader_config: dict[str, Any] | None = None,
           tolerance: float) -> Path:
    """Build, seal and write the grading card from the grades by entry id; print its summary."""
    items = {item.entry_id: item.item_id for item in blinded.items}
    levels = [level.name for level in rubric.levels]
    entries: list[gc.GradedEntry] = []
    for result in card.results:
        entry_id = str(result.id)
        if entry_id in blinded.controls:
            continue
        if entry_id in blinded.not_graded:
            entries.append(gc.GradedEntry(entry_id=entry_id, item=None, error=blinded.not_graded[entry_id]))
            continue
        grade = grades.get(entry_id)
        answer = grade.answers.get(rubric.name) if grade is not None and grade.error is None else None
        if answer is None or answer.probabilities is None:
            why = (grade.error if grade is not None and grade.error else answer.error if answer is not None
                   else gc.UNANSWERED if human is not None else "not graded")
            entries.append(gc.GradedEntry(entry_id=entry_id, item=items[entry_id], error=why))
            continue
        distribution = {label: answer.probabilities[label] for label in levels}
        level = max(levels, key=lambda label: (distribution[label], -levels.index(label)))
        entries.append(gc.GradedEntry(entry_id=entry_id, item=items[entry_id], expected=answer.expected,
                                      distribution=distribution, level=level))
    summary = summarize(entries, levels, request.resamples, blinded.seed)
    quality = quality_against(request.labels, entries, rubric, request.ece_bins, request.resamples, blinded.seed,
                              card.content_sha256) if request.labels is not None else None
    if request.labels is not None and quality is None:
        print(escaped_for_terminal(f"mt-eval grade: warning: no labelled entry was graded, so the grader is not "
                                   f"measured against {request.labels}"), file=sys.stderr)
    grading = gc.GradingCard(
        grading_id=new_run_id(),
        started_at=started_at, finished_at=now(), sdk_version=__version__, run=graded_run(request, card, raw),
        grader=grader, human_graders=human, grader_config=grader_config, rubric=rubric, rubric_sha256=rubric_sha,
        question=rubric.name, blinding=gc.Blinding(seed=blinded.seed, sent=[f for f in SENT_FIELDS if f != "reference"
                                                                            or blinded.with_reference],
                                                   withheld=list(WITHHELD), with_reference=blinded.with_reference,
                                                   identity_strings_checked=len(blinded.identity)),
        tolerance=tolerance, entries=entries, summary=summary, quality=quality)
    grading = rc.seal(grading)
    out = grading_out(request, grader.method_id if grader is not None else None)
    path = out / "grading-card.json"
    temporary = out / f".{path.name}.{os.getpid()}.tmp"  # its own: two gradings of one card may end at once
    try:
        with directory_for(out):  # (one made for the card is not left behind empty)
            try:
                temporary.write_bytes(msgspec.json.format(msgspec.json.encode(grading), indent=2) + b"\n")
                temporary.replace(path)
            except BaseException:
                temporary.unlink(missing_ok=True)
                raise
    except OSError as exc:  # (a full disk: said, with what to do, not a traceback)
        raise GradingError(f"cannot write {path}: {exc.strerror or exc}; no grading card was written. Free space, "
                           "or make the directory writable (or give another --out), and grade again") from exc
    from mt_eval.decisions.summary import grading_failure_lines, grading_lines

    if not request.quiet:  # (the result: on standard output, before the card's path, as `mt-eval run` has it)
        sys.stdout.write(escaped_for_terminal("\n".join(grading_lines(grading))) + "\n")
    if failures := grading_failure_lines(grading):  # (on standard error, with --quiet too, as run says them)
        sys.stderr.write(escaped_for_terminal("\n".join(failures)) + "\n")
    return path


def summarize(entries: list[gc.GradedEntry], levels: list[str], resamples: int, seed: int) -> gc.GradeSummary:
    """The run-level mean of the expected scores with a bootstrap interval over entries, and the levels chosen."""
    expected = np.array([e.expected for e in entries if e.expected is not None], dtype=np.float64)
    mean = MetricValue(value=round(float(expected.mean()), 6) if expected.size else None)
    if expected.size and resamples > 0:
        rng = np.random.default_rng(seed)
        chunk = max(1, 4_000_000 // expected.size)
        means = np.concatenate([resample_counts(rng, expected.size, min(chunk, resamples - start)) @ expected
                                for start in range(0, resamples, chunk)]) / expected.size
        tail = (1 - CONFIDENCE) / 2 * 100
        low, high = np.percentile(means, [tail, 100 - tail])
        mean.ci_low, mean.ci_high = round(float(low), 6), round(float(high), 6)
    chosen = {label: 0 for label in levels}
    for entry in entries:
        if entry.level is not None:
            chosen[entry.level] += 1
    graded = sum(e.expected is not None for e in entries)
    not_graded = sum(e.item is None for e in entries)
    unanswered = sum(e.item is not None and e.error == gc.UNANSWERED for e in entries)
    return gc.GradeSummary(graded=graded, failed=len(entries) - graded - not_graded - unanswered,
                           not_graded=not_graded, unanswered=unanswered, mean_expected=mean, levels=chosen,
                           bootstrap_resamples=resamples, bootstrap_seed=seed)

