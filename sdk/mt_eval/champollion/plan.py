"""What a locale needs: per target file, which keys are up to date, which must be sent, which go away.

A key is *due* when its value is missing from the target file (``new``), its source text changed since it
was translated (``source changed``), its text is read as ICU now that its file holds ICU messages, or no longer
is (``now read as ICU``, ``no longer read as ICU``: `lockfile`), the pair's method or settings changed
(``method changed``) or every key is forced (``forced``). A value present in the target but unknown to the lock
file is *adopted*: kept and recorded, translated again only when its source changes (not when its reading does:
it was written for the file's format); so is a value edited since the method wrote it (its hash is not the one the
lock recorded), which a change of the method does not replace. Keys of the target that the source no longer
has are *removed*. A target file that is a source file (a symbolic link to it, or into the source folder) is an
error, neither read nor written. A file with keys due that could not be written (a directory in its place, a file
where its directory should be, a directory that is not writable) or that its user made read-only is an error at
once, and none of its keys is sent. A source file that holds an ICU plural, select or selectordinal message is
written in ICU: its other texts are ICU messages too (``icu``). The Node side (``lib/champollion/plan.js``) plans
identically.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mt_eval.champollion.files import FileProblem, parse_json_file, read_bytes, read_only, source_in_place, unwritable
from mt_eval.champollion.jsonfmt import js_string
from mt_eval.champollion.locales import LocaleFiles, Slot, layout, slots, string_values
from mt_eval.champollion.lockfile import Lock, LockEntry, hash_text
from mt_eval.champollion.placeholders import holds_icu_message, read_as_icu_for_its_file


@dataclass
class Due:
    slot: Slot
    reason: str  # new | source changed | now read as ICU | no longer read as ICU | method changed | forced
    text: str  # its key among the texts the locale sends (`text_key`)
    source_hash: str  # the SOURCE its lock entry records once translated: marked when read as ICU (`lockfile`)


def text_key(source: str, icu: bool) -> str:
    """The key of a due text among the texts a locale sends (`sync`): its source, marked read as ICU or not (one
    text of a file with ICU messages and of a file without is protected, and restored, apart)."""
    return f"{'icu' if icu else 'text'}:{source}"


def source_of(key: str) -> str:
    """The source text of a `text_key`."""
    return key.partition(":")[2]


@dataclass
class FilePlan:
    """One target file: its shape, previous values and what to do with each key."""

    name: str  # relative to the locales directory
    path: Path
    shape: Any = None
    previous: dict[str, str] = field(default_factory=dict)
    previous_text: str | None = None
    keep: dict[str, LockEntry] = field(default_factory=dict)  # lock entries of previous values kept
    due: list[Due] = field(default_factory=list)
    collisions: list[Slot] = field(default_factory=list)
    up_to_date: int = 0
    adopted: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    repeated: list[str] = field(default_factory=list)  # keys written twice in one object of the target: the last kept
    read_only: FileProblem | None = None  # a read-only target: not written, even when only keys removed would change it
    error: str | None = None
    icu: bool = False  # the source file holds an ICU plural, select or selectordinal message (`placeholders.protect`)


def read_tree(path: Path, raw: bytes | None = None, repeated: list[str] | None = None) -> Any:
    """A locale file's JSON object (read from ``raw`` when given), its numbers as written (`JsonNumber`s, copied
    to the target as they are); `FileProblem` saying what is wrong. ``repeated`` hears of each key written twice
    in one object (its dotted path)."""
    tree = parse_json_file(read_bytes(path) if raw is None else raw, path, exact_numbers=True, repeated=repeated)
    if not isinstance(tree, dict):
        raise FileProblem(path, "expected a JSON object of translation keys")
    return tree


def edited_since_read(plan: FilePlan) -> dict[str, str]:
    """The values of the target file that differ from those it was planned from: edited by a person while its keys
    were translated, they are kept when it is written. `FileProblem` when it can no longer be read."""
    if not plan.path.is_file():
        return {}
    raw = read_bytes(plan.path)
    if plan.previous_text is not None and raw == plan.previous_text.encode("utf-8"):
        return {}
    now = string_values(read_tree(plan.path, raw))
    return {key: text for key, text in now.items() if plan.previous.get(key) != text}


def plan_file(files: LocaleFiles, name: str, locales_dir: Path, input_locale: str, locale: str, lock: Lock,
              fingerprint: str, *, force: bool, leave_out: str | None = None) -> FilePlan:
    """The plan of one target file. Its ``read_only`` is the `FileProblem` of a read-only target (`files.read_only`,
    with ``leave_out`` as the other fix: how to stop translating it)."""
    target_name = files.target_name(locale, name)
    plan = FilePlan(name=target_name, path=locales_dir / target_name)
    repeated: list[str] = []
    source_path = files.source_path(locales_dir, input_locale, name)
    source_folder = locales_dir / input_locale if files.directory_layout else None
    try:
        if (aliased := source_in_place(plan.path, locales_dir, source_path, source_folder, input_locale)) is not None:
            raise aliased  # (its values are not adopted, nor a translation written over a source file)
        source = read_tree(source_path, repeated=repeated)
        if plan.path.is_file():
            raw = read_bytes(plan.path)
            plan.previous = string_values(read_tree(plan.path, raw, repeated=plan.repeated))
            plan.previous_text = raw.decode("utf-8")
    except FileProblem as exc:
        plan.error = str(exc)
        return plan
    plan.shape = layout(source, locale)
    entries = lock.files.get(target_name, {})
    keys = set()
    all_slots = slots(plan.shape)
    plan.icu = any(holds_icu_message(slot.source) for slot in all_slots)
    for slot in all_slots:
        keys.add(slot.key)
        written_twice = next((path for path in repeated if slot.key == path or slot.key.startswith(f"{path}.")), None)
        if written_twice is not None:
            slot.collision = (f"{js_string(written_twice)} is written more than once in one object of the source "
                              "file, so it is not translated; keep one of them (JSON readers keep the last)")
        if slot.collision:
            plan.collisions.append(slot)
            continue
        previous = plan.previous.get(slot.key)
        entry = entries.get(slot.key)
        read_as_icu = plan.icu and read_as_icu_for_its_file(slot.source)
        locked = hash_text(slot.source, read_as_icu=read_as_icu)
        reason = None
        if previous is None:
            reason = "new"
        elif force:
            reason = "forced"
        elif entry is None:
            plan.adopted.append(slot.key)
            plan.keep[slot.key] = LockEntry(locked, None)
        elif entry.source != locked and entry.source != hash_text(slot.source, read_as_icu=not read_as_icu):
            reason = "source changed"
        elif entry.edited(previous):  # a person fixed the method's translation: kept as adopted
            plan.adopted.append(slot.key)
            plan.keep[slot.key] = LockEntry(locked, None)
        elif entry.source != locked and entry.method is not None:
            reason = "now read as ICU" if read_as_icu else "no longer read as ICU"
        elif entry.method is not None and entry.method != fingerprint:
            reason = "method changed"
        else:
            plan.up_to_date += 1
            plan.keep[slot.key] = LockEntry(locked, entry.method)  # (adopted: kept however it is read)
        if reason is not None:
            plan.due.append(Due(slot, reason, text_key(slot.source, plan.icu), locked))
        if previous is not None and entry is not None and slot.key not in plan.keep:
            plan.keep[slot.key] = entry  # still true of the previous value, kept if the translation fails
    plan.removed = [key for key in plan.previous if key not in keys]
    plan.read_only = read_only(plan.path, leave_out)
    if plan.due and (problem := unwritable(plan.path) or plan.read_only) is not None:
        plan.error = str(problem)  # said now, so that nothing is sent for a file that cannot be written
        plan.due = []
    return plan
