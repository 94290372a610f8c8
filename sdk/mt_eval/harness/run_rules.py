"""What ``mt-eval run`` holds a run to: its corpus families, its freeze manifest, its latency plan and the
headline gate. Each is settled before the method translates anything (a bad policy, a freeze that does not
validate or does not match, a corpus whose families are malformed: the run refuses at once), and the card
gets its family record and the gate's verdict at the end. A ``--resume`` of a run with nothing left to do (a
decision run's too: `finished_card`) leaves its card as it is.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mt_eval.control_chars import escaped_for_terminal
from mt_eval.errors import ExpectedError
from mt_eval.harness.latency import LatencyPlan, Measured, sample_of
from mt_eval.harness.policy import PolicyError, ResolvedPolicy, load_policy

if TYPE_CHECKING:
    from mt_eval.corpus.model import Corpus
    from mt_eval.harness.freeze import FreezeManifest
    from mt_eval.harness.logged_results import LoggedResults
    from mt_eval.harness.request import RunRequest
    from mt_eval.harness.results_log import LogKind, LogScan
    from mt_eval.harness.runcard import RunCard
    from mt_eval.loader import LoadedMethod
    from mt_eval.records import RunConfig, TranslationResult



class RulesError(ExpectedError):
    """The run cannot start under its rules; the message says why and how to fix it."""


class RunFinished(Exception):
    """``--resume`` of a run with nothing left to do: its card stays as it is; the message says so."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code

    @classmethod
    def nothing_to_resume(cls, out: Path, *, withheld: bool = False) -> RunFinished:
        """The complete run in ``out`` (``withheld``: its headline withheld by the gate, exit status 5)."""
        from mt_eval.harness.outcome import EXIT_COMPLETE, EXIT_GATE_FAILED

        card_path = out / "card.json"
        said = f" (the gate withheld its headline: `mt-eval gate {card_path}` says why)" if withheld else ""
        return cls(f"the run in {out} is complete already: nothing to resume; its card {card_path} is unchanged"
                   f"{said}", EXIT_GATE_FAILED if withheld else EXIT_COMPLETE)


@dataclass
class RunRules:
    policy: ResolvedPolicy
    latency: LatencyPlan
    freeze_path: Path | None = None
    freeze_sha256: str | None = None
    freeze_status: str | None = None
    resamples: int = 1000
    bootstrap: str = "fast"
    policy_path: Path | None = None
    frozen: tuple[FreezeManifest, str | None] | None = None  # the manifest validated, and its bytes' SHA-256

    @classmethod
    def from_request(cls, request: RunRequest) -> RunRules:
        try:
            policy = load_policy(request.policy)
        except PolicyError as exc:
            raise RulesError(str(exc)) from None
        if policy.policy.contamination == "verified-clean" and not request.fairness.contamination_check:
            raise RulesError(f"--no-contamination-check skips the contamination check, and the gate policy "
                             f"{policy.policy.name} ({policy.source}) needs it to have found the method's bundle "
                             '"verified-clean", so the headline would be withheld: leave --no-contamination-check '
                             'out, or give a policy whose "contamination" is "not-contaminated" or "off"')
        return cls(policy=policy, latency=request.latency, freeze_path=request.freeze, resamples=request.resamples,
                   bootstrap=request.bootstrap, policy_path=request.policy)

    def warn_missing_families(self, corpus: Any, entries: Sequence[dict[str, Any]], *, selected: bool = False
                              ) -> None:
        """Warn, naming the file and field, when the run's entries lack the families the policy needs, or hold
        fewer scored entries than its ``min_scored`` (the gate will withhold the headline). Malformed families
        were refused when the corpus was read. ``selected``: the entries are a selection of the corpus's, which
        may have left its families out. Nothing for a corpus without references: the run is translation only,
        and the gate judges runs that are scored."""
        import sys

        from mt_eval.corpus.families import FAMILIES, family_of, marking

        if not getattr(corpus, "references", True):  # (translation only: no headline, and no gate to withhold it)
            return
        counts = dict.fromkeys(FAMILIES, 0)
        for entry in entries:
            counts[family_of(entry)] += 1
        policy = self.policy.policy
        for family, least in (("canary", policy.min_canaries), ("negative", policy.min_negatives)):
            if counts[family] < least:
                mark = (f"mark entries with {marking(family, corpus.format)}" if corpus.format != "parallel" else
                        f"parallel text has no fields: give the corpus as JSONL, JSON or a TSV with a header, with "
                        f"{marking(family, None)} entries")
                if selected:  # (the corpus may have them)
                    kind = "canaries" if family == "canary" else "negative controls"
                    mark = (f"this run is a selection ({len(entries)} of the corpus's {len(corpus.entries)} entries): "
                            f"run the whole corpus, or select its {kind} too; or {mark}")
                columns = [column.key for column in corpus.columns or ()]  # (a TSV's: it has no JSON path)
                where = ("column family" if "family" in columns else "(no family column)") \
                    if corpus.format == "tsv" else "(no families)" if corpus.format == "parallel" else \
                    "$.entries[*].family"
                print(escaped_for_terminal(
                    f"warning: corpus {escaped_for_terminal(str(corpus.path), one_line=True)} {where}: "
                    f"{counts[family]} {family} "
                    f"entr{'y' if counts[family] == 1 else 'ies'}; the gate policy {policy.name} needs at least "
                    f"{least}, so the headline will be withheld ({mark}, or give --policy FILE)"), file=sys.stderr)
        if counts["scored"] < policy.min_scored:  # (the denominator: --limit 10 of a policy's min_scored 30)
            more = (f"this run is a selection ({len(entries)} of the corpus's {len(corpus.entries)} entries): run the "
                    "whole corpus, or select more of its scored entries" if selected else "score a larger corpus")
            print(escaped_for_terminal(
                f"warning: corpus {escaped_for_terminal(str(corpus.path), one_line=True)}: {counts['scored']} scored "
                f"entr{'y' if counts['scored'] == 1 else 'ies'}; the gate policy {policy.name} needs at least "
                f"{policy.min_scored} (its min_scored), so the headline will be withheld ({more}, or give --policy "
                'FILE with a lower "min_scored")'), file=sys.stderr)

    def validate_freeze(self, corpus: Corpus) -> None:
        """With ``--freeze FILE``: refuse a manifest that does not validate (its pair too, against ``corpus``, the
        run's, before the run's own pair is settled) or is not frozen."""
        if self.freeze_path is None:
            return
        from mt_eval.harness.freeze_validation import validated_freeze

        path = self.freeze_path
        # (read once: the run records the SHA-256 of the bytes it validated; it compares the corpus it reads, later)
        manifest, problems, digest = validated_freeze(path, run_corpus=corpus)
        errors = [p for p in problems if p.severity == "error"]
        if manifest is None or errors:
            raise RulesError(f"--freeze {path} does not validate ({len(errors)} problem"
                             f"{'s' if len(errors) != 1 else ''}); nothing was run:\n"
                             + "\n".join(p.render() for p in errors))
        if manifest.status != "frozen":
            raise RulesError(f"--freeze {path}: its status is {manifest.status!r}; only a frozen manifest can hold a "
                             "run (mt-eval freeze validate lists what is missing)")
        self.frozen = manifest, digest

    def check_freeze(self, loaded: LoadedMethod, corpus: Any, entries: Sequence[dict[str, Any]],
                     selection: dict[str, Any] | None, config: RunConfig, settings: Any) -> None:
        """With ``--freeze FILE`` (validated by `validate_freeze`): refuse a run that differs from it, naming every
        difference. ``selection``: the card's selection record (None: the whole corpus runs)."""
        if self.freeze_path is None or self.frozen is None:
            return
        from mt_eval.harness.freeze import build_manifest, differences, scoring_facts

        path = self.freeze_path
        manifest, digest = self.frozen
        # The corpus's source and licence as the freeze states them (freeze init --corpus-source/--corpus-license
        # give them for a corpus that cannot, a TSV or JSONL file): descriptions, whereas its sha256 is compared.
        actual = build_manifest(method_dir=loaded.directory, method_id=loaded.method_id, corpus=corpus,
                                entries=entries, selection=selection, config=config, settings=settings,
                                plan=self.latency, created_at=manifest.created_at,
                                corpus_source=manifest.corpus.source, corpus_license=manifest.corpus.license,
                                scoring=scoring_facts(self.resamples, self.bootstrap, self.policy_path, self.policy))
        different = differences(manifest, actual, path)
        if different:
            raise RulesError(f"this run differs from the frozen manifest {path} in {len(different)} item"
                             f"{'s' if len(different) != 1 else ''}; nothing was run:\n  "
                             + "\n  ".join(different))
        self.freeze_sha256 = digest
        self.freeze_status = manifest.status

    def warn_missing_covariates(self, corpus: Any, manifest: Any, config: RunConfig) -> None:
        """Warn of each covariate the policy requires that a run of the method of ``manifest`` with ``config`` will
        leave missing (the gate will withhold the headline), saying what to give: before any entry is translated.
        Nothing for a corpus without references, as in `warn_missing_families`."""
        import sys

        from mt_eval.harness.covariates import missing_for_run

        if not getattr(corpus, "references", True):
            return
        policy = self.policy.policy
        for name, why in missing_for_run(manifest, config).items():
            if name in policy.required_covariates:
                print(f"warning: the gate policy {policy.name} requires the covariate {name}, which this run will "
                      f"leave missing ({why}), so the headline will be withheld", file=sys.stderr)

    def latency_calls(self, entries: Sequence[dict[str, Any]], config: RunConfig, timeout_s: float,
                      view: Callable[[list[dict[str, Any]]], list[dict[str, Any]]],
                      save: Callable[[Measured], None], *, quiet: bool,
                      directory: Path | None = None) -> Callable[[Any, float], Awaitable[None]]:
        """What runs just before the method's entries (`mt_eval.harness.running.Around.before`): the latency
        calls of ``self.latency``, their measurement handed to ``save``. Whatever a guest's host noted while
        accepting their results is forgotten, and results that match no entry are not said (a call that returned
        some measured nothing, in this process too): the results are thrown away, and the run's calls say theirs."""
        from mt_eval.harness.latency import measure
        from mt_eval.results import STRAY_REPORTS, ResultNotes

        plan = self.latency
        if not quiet and (sample := len(sample_of(entries, plan))):  # (fewer scored entries: a smaller sample)
            import sys

            print(f"latency: 1 cold, {plan.warmup} warm-up and {sample} × {plan.repetitions} timed one-entry "
                  "calls before the run (never scored; --latency-sample 0 makes none)", file=sys.stderr)

        async def before(method: Any, start_s: float) -> None:
            notes = getattr(method, "result_notes", None)
            kept = (dict(notes.counts), notes.stray_calls) if isinstance(notes, ResultNotes) else None
            if isinstance(notes, ResultNotes):
                notes.stray_calls = STRAY_REPORTS  # (as if said already: unsaid)
            try:
                measured = await measure(method, entries, config, plan, timeout_s, view, directory=directory)
            finally:
                if isinstance(notes, ResultNotes) and kept is not None:
                    notes.counts, notes.stray_calls = kept
            measured.start_s = round(start_s, 6)
            save(measured)

        return before

    def refuse_other_latency(self, out: Path, state: Any, entries: Sequence[dict[str, Any]]) -> None:
        """`RunError` for a resume whose ``--latency-*`` differ from those the run's latency was measured with (its
        first session's, in ``state``): measured once a run, the resume's would silently not apply."""
        from mt_eval.harness.latency import plan_changes
        from mt_eval.harness.run_directory import RunError

        measured = getattr(state, "latency", None)
        changed = plan_changes(measured, entries, self.latency) if measured is not None else []
        if changed:
            raise RunError(f"cannot resume {out}: its latency was measured once, by its first session, and this "
                           f"resume asks for other latency calls ({', '.join(changed)}), which would not be made: "
                           "resume with the run's own --latency-* options, or start over with --force to measure "
                           "with these")

    def finish_card(self, card: RunCard, entries: Sequence[dict[str, Any]],
                    results: Mapping[str, TranslationResult] | LoggedResults, *, scored: bool = True) -> RunCard:
        """The card with its family record, its freeze reference and the gate's verdict (none for a
        translation-only run, ``scored`` False: it has no headline to gate)."""
        from mt_eval.harness.families import tally
        from mt_eval.harness.freeze import FreezeReference
        from mt_eval.harness.gate import apply_gate

        card.families = tally(entries, results)
        if self.freeze_path is not None and self.freeze_sha256 is not None:
            card.freeze = FreezeReference(path=str(self.freeze_path), sha256=self.freeze_sha256,
                                          status=self.freeze_status or "frozen")
        card.gate = apply_gate(card, self.policy) if scored else None
        return card

    def refuse_finished(self, out: Path, state: Any, entries: Sequence[dict[str, Any]], request: RunRequest) -> None:
        """Called on every resume, once its inputs match ``state``: a `RunError` when its ``--latency-*`` are not
        the run's (`refuse_other_latency`). Raise `RunFinished` when ``out`` holds the card of the complete run
        ``state`` as `finished_card` finds it, under the same gate policy and freeze, with its results log (or
        every result) in it, and its predictions written, and ``request`` would make the same card of it
        (`_card_as_asked`); a `RunError` when its predictions are not those its results make
        (`_refuse_changed_predictions`). Otherwise (a partial or failed run, a card not written, out of date or
        edited, its log edited, other scoring) the resume goes on, and rewrites the card."""
        from mt_eval.harness.card_results import file_sha256
        from mt_eval.harness.results_log import TRANSLATIONS

        self.refuse_other_latency(out, state, entries)
        entry_ids = {str(entry["id"]) for entry in entries}
        # (the log's results kept only for a card that embeds its own, to compare: one read of the log either way)
        found = finished_card(out, state, entry_ids, TRANSLATIONS,
                              keep_results=lambda card: not card.get("results_log"))
        if found is None:
            return
        card, log = found
        referenced, gate, freeze = (_object(card, key) for key in ("results_log", "gate", "freeze"))
        listed = card["results"] if isinstance(card.get("results"), list) else []
        try:
            sealed_log = referenced.get("sha256") == file_sha256(out / "results.jsonl") if referenced else \
                _lists_the_log(listed, log.results)
        except OSError:
            return
        if (card.get("status") == "complete" and sealed_log and (out / "predictions.txt").is_file()
                and gate.get("policy_sha256") in (None, self.policy.sha256)
                and freeze.get("sha256") == self.freeze_sha256 and _card_as_asked(card, request)):
            _refuse_changed_predictions(out, entries)
            raise RunFinished.nothing_to_resume(out, withheld=gate.get("passed") is False)


def _refuse_changed_predictions(out: Path, entries: Sequence[dict[str, Any]]) -> None:
    """`RunError` when the predictions.txt of the complete run in ``out`` is not the one its results make
    (`mt_eval.harness.corpus.predictions_problem`): edited or cut short since, it would be left as it is by a resume
    that says the run is complete, its card unchanged."""
    from mt_eval.harness.corpus import predictions_problem
    from mt_eval.harness.logged_results import LoggedResults
    from mt_eval.harness.run_directory import RunError

    path, card_path = out / "predictions.txt", out / "card.json"
    problem = predictions_problem(path, entries, LoggedResults(out / "results.jsonl", entries))
    if problem is not None:
        raise RunError(f"cannot resume {out}: the run is complete, but {path} is not the file it wrote of its results "
                       f"({problem}): it was edited or cut short since. Its card and results.jsonl are as the run "
                       f"sealed them (`mt-eval verify {card_path}` checks them): delete {path} and resume again to "
                       "write it anew from them, or run again with another --out")


def _lists_the_log(listed: list[Any], logged: dict[str, Any]) -> bool:
    """Whether the results a card embeds (``listed``) are those its run's log holds (``logged``), one for one: a log
    edited since the card was sealed is scored again by a resume, as one the card references by its hash is."""
    import msgspec

    from mt_eval.records import TranslationResult

    try:
        embedded = {str(item["id"]): msgspec.convert({**item, "id": str(item["id"])}, TranslationResult)
                    for item in listed}
    except (TypeError, KeyError, msgspec.ValidationError):
        return False
    return len(embedded) == len(listed) and embedded == logged


def _card_as_asked(card: dict[str, Any], request: RunRequest) -> bool:
    """Whether scoring the finished run again as ``request`` asks would give the same card: its intervals drawn
    alike (``--resamples``, ``--seed``, ``--bootstrap``), its results embedded or referenced as ``--embed-results``
    says, and neither ``--extension`` nor ``--method-card`` given: a resume that differs scores the run again, and
    rewrites its card, as before."""
    metrics = _object(card, "metrics")
    drawn = (metrics.get("bootstrap_resamples"), metrics.get("bootstrap_seed"), metrics.get("bootstrap", "fast"))
    embedded = request.embed_results == "auto" or (request.embed_results == "always") == (
        card.get("results_log") is None)
    return ((not metrics or drawn == (request.resamples, request.seed, request.bootstrap)) and embedded
            and not request.extensions and request.method_card is None)


def finished_card(out: Path, state: Any, ids: set[str], kind: LogKind[Any], *,
                  keep_results: bool | Callable[[dict[str, Any]], bool] = False
                  ) -> tuple[dict[str, Any], LogScan[Any]] | None:
    """The card in ``out`` and its ``results.jsonl`` (a log of ``kind``; its results kept with ``keep_results``,
    or when ``keep_results(card)`` is true)
    when the card is as the last session of ``state`` (its ``run.json``) sealed it -- its content hash holds --
    and the log holds a result for each of ``ids``, and nothing else, and needs no repair; else None. What a
    resume would do on top (whether the card is complete, under the same settings) is the caller's to check."""
    import json

    from mt_eval.harness.results_log import scan
    from mt_eval.harness.verify import HASH_FIELD, canonical_sha256

    try:
        card = json.loads((out / "card.json").read_bytes())
        if not isinstance(card, dict) or card.get(HASH_FIELD) != canonical_sha256(card):
            return None
        keep = keep_results(card) if callable(keep_results) else keep_results
        log = scan(out / "results.jsonl", kind, keep=lambda result: keep)
    except (OSError, ValueError):
        return None
    if ((card.get("run_id"), card.get("sessions")) != (state.run_id, state.sessions) or log.ids != ids
            or log.needs_rewrite or log.torn_bytes or log.unterminated):
        return None
    return card, log


def _object(card: dict[str, Any], key: str) -> dict[str, Any]:
    """The card's field ``key`` when it is an object, else an empty one."""
    value = card.get(key)
    return value if isinstance(value, dict) else {}
