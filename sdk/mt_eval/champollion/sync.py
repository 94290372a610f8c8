"""Translating a project's locales: plan each target locale, send only what is due, write files and lock.

Per target locale (in config order): the due source texts of all its files, each text once, in file and key
order, are protected (`placeholders`; as ICU messages in a file that holds ICU messages, `plan`), sent in batches
of the pair's ``batchSize`` and restored. A text with nothing to translate (only placeholders, digits,
punctuation) is copied without being sent. A failed key keeps
its previous value (or stays out of the file) and its previous lock entry, so it is tried again next time; so
does a key not translated when the run was interrupted (Ctrl-C), whose locale is written with what was
translated before. A target file is written only when its bytes change, and not created empty when none of its
keys got a value; so is the lock file. A target file that cannot be written, or that its user made read-only,
is an error of that file alone (the others are written), left as it is, and keeps its lock entries.
The Node side (``lib/champollion/sync.js``) does the same, and writes the same bytes.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from mt_eval.champollion.config import ChampollionConfig, Pair
from mt_eval.champollion.files import FileProblem, unwritable, write_atomic
from mt_eval.champollion.jsonfmt import format_json, js_string, utf16_key
from mt_eval.champollion.languages import LanguageError, pair_languages
from mt_eval.champollion.locales import LocaleFiles, fill, find_locale_files, slots
from mt_eval.champollion.lockfile import LOCK_FILE, Lock, LockEntry, method_fingerprint, read_lock
from mt_eval.champollion.placeholders import PlaceholderError, Protected, has_words, keep_edges, protect, restore
from mt_eval.champollion.plan import FilePlan, edited_since_read, plan_file, source_of
from mt_eval.champollion.plugins import resolve_plugin
from mt_eval.code_hash import code_sha256
from mt_eval.guarded_calls import call_failure

# (entries, run config fields) → one result dict per entry ({"id", "predicted"} or {"id", "error"})
Translate = Callable[[list[dict[str, Any]], dict[str, Any]], Awaitable[list[dict[str, Any]]]]
Progress = Callable[[str, int, int], None]
BATCHES_IN_FLIGHT = 4  # batches of one locale sent at once
BLANK = re.compile(r"[ \t\r\n]*")  # a translation with nothing in it
NOT_SENT = "not sent: interrupted"  # the error of an entry the method was not called for after Ctrl-C


class StartInterrupted(Exception):
    """Ctrl-C (or SIGTERM, SIGHUP) came while the pair's method was loading or starting, and made it fail: the run
    is interrupted, and the method is not to blame."""


@dataclass(frozen=True)
class PairMethod:
    """A pair with its plugin resolved and its RunConfig worked out."""

    pair: Pair
    directory: Path
    method_id: str
    run_config: dict[str, Any]
    fingerprint: str

    @property
    def languages(self) -> str:
        return f"{self.run_config['source_lang']}>{self.run_config['target_lang']}"


def pair_method(config: ChampollionConfig, pair: Pair) -> PairMethod:
    """Resolve a pair's plugin and language codes; raises PluginNotFoundError, LanguageError or
    PluginLoadError (an invalid plugin)."""
    from mt_eval.loader import PluginLoadError, read_plugin

    directory = resolve_plugin(pair.settings.method_plugin, config.directory, pair=pair.key)
    source, problems = read_plugin(directory)
    errors = [p for p in problems if p.severity == "error"]
    if source is None or errors:
        raise PluginLoadError(problems, summary=f"methodPlugin of {pair.key}: {directory} is not a valid plugin")
    s = pair.settings
    try:
        source_lang, target_lang = pair_languages(pair.source, pair.target, list(source.manifest.supported_pairs),
                                                  source_language=s.source_language,
                                                  target_language=s.target_language)
    except LanguageError as exc:
        raise LanguageError(f"pair {js_string(pair.key)}: {source.method_id} ({directory}): {exc}. Set "
                            '"sourceLanguage" and "targetLanguage" in the pair to codes the method supports') from exc
    run_config: dict[str, Any] = {"source_lang": source_lang, "target_lang": target_lang, "batch_size": s.batch_size}
    if s.model is not None:
        run_config["model"] = s.model
    if s.temperature is not None:
        run_config["temperature"] = s.temperature
    if s.timeout_s is not None:
        run_config["timeout_s"] = s.timeout_s
    # (the timeout changes no translation: it is not part of the fingerprint, so changing it sends nothing again)
    fingerprint = method_fingerprint(source.method_id, code_sha256(directory), source_lang, target_lang, s.model,
                                     s.temperature)
    return PairMethod(pair, directory, source.method_id, run_config, fingerprint)


@dataclass
class FileReport:
    file: str
    due: list[tuple[str, str]] = field(default_factory=list)
    up_to_date: int = 0
    adopted: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    repeated: list[str] = field(default_factory=list)  # keys written twice in the target file (the last was kept)
    translated: list[str] = field(default_factory=list)
    copied: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)  # failed keys with no previous value: missing from the file
    interrupted: list[str] = field(default_factory=list)  # due, and not translated before the run was interrupted
    written: bool = False
    error: str | None = None


@dataclass
class LocaleReport:
    locale: str
    pair: str
    method: str
    languages: str
    sent: int = 0
    calls: int = 0
    files: list[FileReport] = field(default_factory=list)
    orphaned: list[str] = field(default_factory=list)  # target files left alone, their source file gone


@dataclass
class SyncReport:
    dry_run: bool
    locales: list[LocaleReport] = field(default_factory=list)
    interrupted: bool = False
    not_started: list[str] = field(default_factory=list)  # target locales an interruption left alone

    @property
    def ok(self) -> bool:
        return not self.interrupted and all(f.error is None and not f.failed and not f.interrupted
                                            for r in self.locales for f in r.files)


@dataclass
class _Sent:
    strings: int = 0
    calls: int = 0


async def sync_locales(config: ChampollionConfig, methods: list[PairMethod],
                       open_method: Callable[[PairMethod], Awaitable[Translate]], *, dry_run: bool = False,
                       force: bool = False, progress: Progress | None = None,
                       stop: anyio.Event | None = None) -> SyncReport:
    """Bring every pair's target files up to date; ``open_method`` is awaited only for a pair with work, and
    when it raises (the method cannot start) so does this, once, at once: locales done before are saved.
    Once ``stop`` is set (Ctrl-C), nothing more is sent: the locale in progress is written with what was
    translated (and its lock entries), the others are not started, and the report says ``interrupted``."""
    config.check_locales_dir()
    files = find_locale_files(config.locales_dir, config.input_locale)
    lock_path = config.locales_dir / LOCK_FILE
    lock = read_lock(lock_path)
    saved = lock.to_json() if lock_path.is_file() else None
    report = SyncReport(dry_run=dry_run)
    for index, method in enumerate(methods):
        if stop is not None and stop.is_set():
            report.interrupted = True
            report.not_started = [m.pair.target for m in methods[index:]]
            break
        locale = method.pair.target
        leave_out = f"remove {js_string(method.pair.key)} from the pairs of {config.file}"
        plans = [plan_file(files, name, config.locales_dir, config.input_locale, locale, lock, method.fingerprint,
                           force=force, leave_out=leave_out) for name in files.sources]
        locale_report = LocaleReport(locale=locale, pair=method.pair.key, method=method.method_id,
                                     languages=method.languages)
        report.locales.append(locale_report)
        texts = _due_texts(plans)
        sendable = [text for text, protected in texts.items() if has_words(protected)]
        invalid = _not_sendable(sendable, texts)  # (fails before it is sent, so it is not counted as sent)
        sendable = [text for text in sendable if text not in invalid] if invalid else sendable
        batch_size = int(method.run_config["batch_size"])
        locale_report.calls = -(-len(sendable) // batch_size)
        locale_report.sent = len(sendable)
        outcomes: dict[str, tuple[str | None, str | None]] = {
            text: (source_of(text), None) for text, protected in texts.items() if not has_words(protected)}
        outcomes.update((text, (None, problem)) for text, problem in invalid.items())
        if sendable and not dry_run:
            if (problem := unwritable(lock_path)) is not None:
                raise problem  # what is translated could not be recorded, and would be paid for again
            batches = [sendable[i:i + batch_size] for i in range(0, len(sendable), batch_size)]
            sent = _Sent()
            send = functools.partial(_send, open_method, method, batches, texts, outcomes, progress, sent)
            if await _unless_stopped(stop, send):
                report.interrupted = True
                report.not_started = [m.pair.target for m in methods[index + 1:]]
                locale_report.sent, locale_report.calls = sent.strings, sent.calls
        for plan in plans:
            locale_report.files.append(_finish_file(plan, outcomes, texts, lock, method.fingerprint, dry_run))
        locale_report.orphaned = _drop_stale_files(lock, files, locale, plans, config.locales_dir)
        if not dry_run:  # after each locale, so an interrupted run loses no record of what it wrote
            saved = _save_lock(lock, lock_path, saved)
        if report.interrupted:
            break
    if not dry_run:
        _save_lock(lock, lock_path, saved)
    return report


async def _unless_stopped(stop: anyio.Event | None, work: Callable[[], Awaitable[None]]) -> bool:
    """Run ``work``, cancelled if ``stop`` is set first; True when ``stop`` was set (before or during it)."""
    if stop is None:
        await work()
        return False
    if stop.is_set():
        return True
    failure: Exception | None = None
    async with anyio.create_task_group() as group:

        async def stopper() -> None:
            await stop.wait()
            group.cancel_scope.cancel()

        group.start_soon(stopper)
        try:
            await work()
        except StartInterrupted:
            return True
        except Exception as exc:  # raised as it is (a method that cannot start), not in an exception group
            failure = exc
        group.cancel_scope.cancel()
    if failure is not None:
        raise failure
    return stop.is_set()


def _save_lock(lock: Lock, path: Path, saved: str | None) -> str | None:
    """Write the lock file when its text changed (and not at all while it does not exist and has nothing to
    record); returns the text the file now holds (None: there is no file)."""
    if saved is None and not lock.files:
        return None
    text = lock.to_json()
    if text != saved:
        write_atomic(path, text)
    return text


async def _send(open_method: Callable[[PairMethod], Awaitable[Translate]], method: PairMethod,
                batches: list[list[str]], texts: dict[str, Protected],
                outcomes: dict[str, tuple[str | None, str | None]], progress: Progress | None, sent: _Sent) -> None:
    """Start the pair's method and translate the locale's batches with it."""
    translate = await open_method(method)
    await _run_batches(batches, translate, texts, method.run_config, outcomes, method.pair.target, progress, sent)


async def _run_batches(batches: list[list[str]], translate: Translate, texts: dict[str, Protected],
                       run_config: dict[str, Any], outcomes: dict[str, tuple[str | None, str | None]], locale: str,
                       progress: Progress | None, sent: _Sent) -> None:
    """Translate the batches, `BATCHES_IN_FLIGHT` at a time, counting each in ``sent`` as it is handed to the method
    (one in flight when the run is interrupted was sent, and may have been paid for) and reporting progress as each
    is answered."""
    pending = iter(batches)
    total = sum(len(batch) for batch in batches)
    answered = 0

    async def worker() -> None:
        nonlocal answered
        for batch in pending:
            sent.strings += len(batch)
            sent.calls += 1
            outcomes.update(await _translate_batch(translate, batch, texts, run_config))
            answered += len(batch)
            if progress is not None:
                progress(locale, answered, total)

    async with anyio.create_task_group() as group:
        for _ in range(min(BATCHES_IN_FLIGHT, len(batches))):
            group.start_soon(worker)


def _not_sendable(sendable: list[str], texts: dict[str, Protected]) -> dict[str, str]:
    """Each text that cannot be sent, with why: ICU messages nested too deep (`placeholders.protect`), or a lone
    surrogate (in the words of `mt_eval.lone_surrogates`, as a method's call would fail it)."""
    from mt_eval.lone_surrogates import problem_in

    return {text: problem for text in sendable
            if (problem := texts[text].problem or problem_in({"source": texts[text].text}, "entry"))}


def _due_texts(plans: list[FilePlan]) -> dict[str, Protected]:
    """The locale's due texts protected, each once, by key (`plan.text_key`): read as ICU in a file with ICU
    messages."""
    texts: dict[str, Protected] = {}
    for plan in plans:
        for due in plan.due:
            if due.text not in texts:
                texts[due.text] = protect(due.slot.source, icu=plan.icu)
    return texts


async def _translate_batch(translate: Translate, batch: list[str], texts: dict[str, Protected],
                           run_config: dict[str, Any]) -> dict[str, tuple[str | None, str | None]]:
    entries = [{"id": str(i + 1), "source": texts[text].text} for i, text in enumerate(batch)]
    try:
        results = await translate(entries, run_config)
    except Exception as exc:
        return {text: (None, call_failure(exc)) for text in batch}
    by_id = {r["id"]: r for r in results}
    out: dict[str, tuple[str | None, str | None]] = {}
    for entry, text in zip(entries, batch, strict=True):
        result = by_id.get(entry["id"], {})
        if result.get("error") == NOT_SENT:  # (Ctrl-C came first: no outcome, so the key is reported interrupted)
            continue
        if result.get("error") is not None or not isinstance(result.get("predicted"), str):
            out[text] = (None, str(result.get("error") or "the method returned no translation"))
            continue
        if BLANK.fullmatch(result["predicted"]):  # (a text is sent when it has words to translate: `has_words`)
            out[text] = (None, f"the translation {js_string(result['predicted'])} is empty")
            continue
        try:
            sent = texts[text]
            restored = restore(result["predicted"], sent.placeholders, sent.icu, sent.apostrophes_doubled)
            out[text] = (keep_edges(source_of(text), restored), None)
        except PlaceholderError as exc:
            out[text] = (None, str(exc))
    return out


def _finish_file(plan: FilePlan, outcomes: dict[str, tuple[str | None, str | None]], texts: dict[str, Protected],
                 lock: Lock, fingerprint: str, dry_run: bool) -> FileReport:
    report = FileReport(file=plan.name, due=[(d.slot.key, d.reason) for d in plan.due], up_to_date=plan.up_to_date,
                        adopted=plan.adopted, removed=plan.removed, repeated=plan.repeated, error=plan.error)
    report.failed = list({slot.key: slot.collision or "" for slot in plan.collisions}.items())  # once per key
    report.left_out = [key for key, _ in report.failed]
    if plan.error is not None or dry_run:
        return report
    due_keys = {d.slot.key for d in plan.due}
    values = {key: text for key, text in plan.previous.items() if key in plan.keep or key in due_keys}
    entries: dict[str, LockEntry] = dict(plan.keep)
    try:  # a value a person saved while the keys were translated is kept (adopted), not written over
        edited = {key: text for key, text in edited_since_read(plan).items() if key in values or key in due_keys}
    except FileProblem as exc:
        report.error = str(exc)  # edited meanwhile into what cannot be read: left as it is, with its lock entries
        return report
    values.update(edited)
    sources = {**{key: entry.source for key, entry in entries.items()}, **{d.slot.key: d.source_hash for d in plan.due}}
    entries.update({key: LockEntry(sources[key], None) for key in edited})
    report.adopted = [*plan.adopted, *(key for key in edited if key not in plan.adopted)]
    for due in plan.due:
        if due.slot.key in edited:
            continue
        if due.text not in outcomes:  # the run was interrupted before it was translated
            report.interrupted.append(due.slot.key)
            continue
        translated, error = outcomes[due.text]
        if translated is None:
            kept = due.slot.key in plan.previous
            report.failed.append((due.slot.key, f"{error or 'not translated'}; "
                                  f"{'kept the previous value' if kept else 'left out of the file'}"))
            if not kept:
                report.left_out.append(due.slot.key)
            continue
        values[due.slot.key] = translated
        entries[due.slot.key] = LockEntry(due.source_hash, fingerprint)
        (report.copied if not has_words(texts[due.text]) else report.translated).append(due.slot.key)
    if plan.previous_text is None and not values and (plan.due or plan.collisions):  # nothing for a file not there yet
        lock.files.pop(plan.name, None)
        return report
    text = format_json(fill(plan.shape, values))
    if text != plan.previous_text:
        try:
            if plan.read_only is not None:  # (nothing was due: only keys removed, or its layout, would change it)
                raise plan.read_only
            write_atomic(plan.path, text)
        except FileProblem as exc:
            report.error = str(exc)  # its lock entries stay as they were: what it lacks is sent again next time
            return report
        report.written = True
    lock.files[plan.name] = {slot.key: entries[slot.key].with_value(values[slot.key]) for slot in slots(plan.shape)
                             if slot.key in entries and slot.key in values and not slot.collision}
    return report


def _drop_stale_files(lock: Lock, files: LocaleFiles, locale: str, plans: list[FilePlan], locales_dir: Path
                      ) -> list[str]:
    """Forget lock entries of this locale's target files whose source file is gone — once the target file is gone
    too: while it stays, its entries say what its values translate, so a source file of that name coming back
    with other texts has them translated again (forgotten, the old translations were adopted as written by hand).
    Returns the target files whose source file is gone, orphaned (sorted), the lock knowing them or not: the
    report names them."""
    current = {plan.name for plan in plans}
    prefix = files.target_name(locale, "")
    orphaned = {name for name in files.targets_on_disk(locales_dir, locale) if name not in current}
    for name in list(lock.files):
        mine = name.startswith(prefix) if files.directory_layout else name == prefix
        if mine and name not in current:
            if (locales_dir / name).is_file():
                orphaned.add(name)
            else:
                del lock.files[name]
    return sorted(orphaned, key=utf16_key)
