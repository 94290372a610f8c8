"""A run directory: ``run.json`` fixed when the run starts, ``results.jsonl`` appended as work completes,
``card.json`` written at the end. Shared by ``mt-eval run`` and ``mt-eval decide run``.

A run continues (``--resume``) only with the same inputs; an earlier run is never overwritten unless
``--force`` is given. One process at a time uses a run directory: `mt_eval.harness.run_lock` takes its lock for
as long as the run uses it.
"""

from __future__ import annotations

import errno
import hashlib
import os
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from mt_eval.atomic_files import remove_leftovers, write_atomically
from mt_eval.errors import ExpectedError
from mt_eval.harness.write_probe import permission_fix, unwritable
from mt_eval.js_text import same_json

State = TypeVar("State", bound=msgspec.Struct)
# then the LLM gateway's log and the sandbox's denied attempts (mt_eval.harness.fairness), and the contamination
# check's result (mt_eval.contamination.run_check)
FILES = ("results.jsonl", "card.json", "run.json", "predictions.txt", "gateway.jsonl", "sandbox-denied.jsonl",
         "contamination.json")
# the files a resumed run appends to where they are (the others it replaces whole, which needs only the directory)
APPENDED = {"results.jsonl": "its results", "gateway.jsonl": "the LLM gateway's log",
            "sandbox-denied.jsonl": "the sandbox's denied attempts"}


# the "kind" a run records in run.json (a translation run records none), and how a run of that kind is named
KINDS = {None: "a translation run (mt-eval run)", "decide": "a decide run (mt-eval decide run)"}


class _Kind(msgspec.Struct):
    kind: str | None = None


class RunError(ExpectedError):
    """A run cannot start or continue; the message says why and how to fix it."""


def write_json(path: Path, value: Any) -> None:
    """Write atomically: a crash never leaves a half-written file, nor a full disk a temporary one."""
    write_atomically(path, msgspec.json.format(msgspec.json.encode(value), indent=2) + b"\n")


def state_not_written(path: Path, problem: OSError, *, resumed: bool) -> str:
    """Why a run stops when its ``run.json`` cannot be written as it starts or resumes (a full disk), with the fix:
    nothing has run, and a resumed run's results are kept."""
    if not resumed:
        return (f"cannot write {path}: {problem.strerror or problem}; the run did not start: free space, or make the "
                "directory writable, then run the same command again")
    return (f"cannot write {path}: {problem.strerror or problem}; the run did not resume. The results so far are saved "
            f"in {path.parent / 'results.jsonl'}: free space, or make the directory writable, then continue with the "
            "same command and --resume")


def writable_directory(out: Path, what: str, flag: str = "--out", *, resuming: bool = False) -> None:
    """Refuse ``out`` before any work unless it is a directory that can be written in or created (for the
    ``what``, e.g. "the run"): a file there, a file among its parents, or a place that cannot be written is
    named now, not as an OSError once the work is done. Nothing is left behind: directories made to find
    out are removed. ``resuming`` the run there: refused by `open_run_directory` only if it has work left."""
    try:
        if out.exists() and not out.is_dir():
            raise RunError(f"{flag} {out} is a file, not a directory: give a directory for {what}")
        if resuming and (out / "run.json").is_file():
            return
    except OSError as exc:
        raise RunError(f"cannot use {flag} {out}: {exc.strerror or exc}") from None
    _try_writing(out, flag)


def writable_file(out: Path, name: str, flag: str = "--out") -> None:
    """Refuse ``out`` before any work unless a file can be written there: not a directory (the message
    suggests ``name`` in it), its directory writable or creatable (as for `writable_directory`)."""
    try:
        if out.is_dir():
            raise RunError(f"{flag} {out} is a directory: give the file to write, e.g. {flag} {out / name}")
    except OSError as exc:
        raise RunError(f"cannot use {flag} {out}: {exc.strerror or exc}") from None
    _try_writing(out.parent, flag, given=out)


def _try_writing(directory: Path, flag: str, given: Path | None = None) -> None:
    """`RunError` when ``directory`` cannot be written in (`mt_eval.harness.write_probe.unwritable`)."""
    if (why := unwritable(directory, flag, given)) is not None:
        raise RunError(why)


def run_directory(out: str | Path | None, plugin: Path, *default: str) -> Path:
    """``--out``, or ``runs/<default…>`` in the working directory — beside the plugin instead when the working
    directory is inside it. A run directory never lies in the method's directory: its results would become
    part of the method (its code hash, the contamination check, what is shipped with it), so an ``--out``
    there is refused with one outside to use instead."""
    import os

    home = plugin.resolve()
    if out:
        if Path(out).resolve().is_relative_to(home):
            outside = os.path.relpath(home.parent / "runs" / Path(out).name)
            raise RunError(f"--out {out} is inside the method's directory {home}: its results would become part of "
                           f"the method (its code hash, the contamination check, what is shipped with it); write "
                           f"them outside it, e.g. --out {outside}")
        return Path(out)
    base = Path("runs")
    if Path.cwd().resolve().is_relative_to(home):
        base = Path(os.path.relpath(home.parent / "runs"))
    return base.joinpath(*default)


# the longest name a run gives a directory it names itself: 255 bytes is the file systems' limit, and what tools
# add to a name (a copy's " (2)", an archive's ".tar.gz") needs room
NAME_BYTES = 200


def default_run_name(method_id: str, corpus_name: str) -> str:
    """``METHOD_ID__CORPUS``, the directory of a run not given ``--out``; the longer part is shortened (see
    `fitting_name`) so that the whole is at most `NAME_BYTES`, the same name for the same inputs (a resume finds it)."""
    from mt_eval.manifest import kebab_case

    corpus = kebab_case(corpus_name) or "corpus"
    room = NAME_BYTES - len("__")
    method_room = max(room // 2, room - len(corpus.encode()))
    method = fitting_name(method_id, method_room)
    return f"{method}__{fitting_name(corpus, room - len(method.encode()))}"


def fitting_name(name: str, limit: int = NAME_BYTES) -> str:
    """``name`` when its UTF-8 form is at most ``limit`` bytes, else its start and a hash of the whole (two long
    names that start alike stay apart)."""
    raw = name.encode()
    if len(raw) <= limit:
        return name
    digest = hashlib.sha256(raw).hexdigest()[:12]
    return raw[:limit - len(digest) - 1].decode("utf-8", "ignore") + "-" + digest


def refuse_unwritable_names(named: Iterable[tuple[str, Path | str | None]]) -> None:
    """`RunError` for a path whose name is not UTF-8 (bytes the file system holds, that Python keeps as lone
    surrogates): run.json and the card record it as JSON text, which cannot hold it. Checked before the run
    directory is made, so nothing is left half-written. ``named``: (what it is, e.g. "the corpus file", path)."""
    for what, path in named:
        if path is None:
            continue
        raw = os.fsencode(Path(path).resolve())
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            shown = raw.decode("utf-8", "backslashreplace")
            raise RunError(f"{what} {shown} has a name that is not UTF-8 (byte 0x{raw[exc.start]:02x}): the run "
                           "records it in run.json and the card, which are UTF-8 JSON; rename it (or the directory "
                           "above it that holds the byte) with UTF-8 characters") from None


def open_run_directory(out: Path, fresh: State, *, resume: bool, force: bool,
                       changes: Callable[[State, State], list[tuple[str, str]]], command: str,
                       finished: Callable[[State], None] | None = None) -> State:
    """The state of the run in ``out``: the recorded one when resuming (``changes`` names what differs from
    ``fresh``, which refuses the resume; ``finished`` raises, before anything is written, for a run with nothing
    left to do), else ``fresh`` in a cleared directory. ``run.json`` is (re)written."""
    state_path = out / "run.json"
    _refuse_corpus_among_outputs(out, getattr(fresh, "corpus_path", None))
    folders = [name for name in FILES if (out / name).is_dir()]
    if folders:  # never a run's: even --force deletes only files
        raise RunError(f"{out / folders[0]} is a directory, where a run keeps its {folders[0]} file, so {out} is not "
                       "a run directory mt-eval wrote: choose another --out, or move that directory away")
    outputs = [name for name in FILES if name != "run.json" and (out / name).exists()]  # (run.json alone: none yet)
    if (resume or (outputs and not force)) and (other := _other_kind(state_path, fresh)) is not None:
        raise RunError(f"{out} is the directory of {other}, which {command} cannot continue: choose another --out, or "
                       f"replace it with --force{' instead of --resume' if resume else ''} (which deletes that run)")
    if state_path.exists() and resume:
        try:
            state = msgspec.json.decode(state_path.read_bytes(), type=type(fresh))
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise RunError(f"{state_path} is damaged or not this kind of run ({exc}); start over with --force") from exc
        changed = changes(state, fresh)
        if changed:
            details = "; ".join(f"{name}: {detail}" for name, detail in changed if detail)
            raise RunError(f"cannot resume {out}: {', '.join(name for name, _ in changed)} changed since the run "
                           f"started{f' ({details})' if details else ''}; resume with the same inputs, or start over "
                           f"with --force{_written_since(state) if any(n == CODE for n, _ in changed) else ''}")
        if finished is not None:
            finished(state)
        _refuse_read_only(out)
        _refuse_unwritable_logs(out)
        state.sessions += 1  # type: ignore[attr-defined]
    elif outputs and not force and state_path.exists():
        try:
            changed = changes(msgspec.json.decode(state_path.read_bytes(), type=type(fresh)), fresh)
        except (msgspec.DecodeError, msgspec.ValidationError):
            changed = []
        if changed:  # another corpus (dev.tsv, then dev.json: one default directory), method or settings
            raise RunError(f"{out} holds an earlier run of other inputs ({', '.join(name for name, _ in changed)} "
                           f"differ{'s' if len(changed) == 1 else ''}), which --resume cannot continue: choose another "
                           "--out, or start over with --force (which deletes that run)")
        raise RunError(f"{out} holds an earlier run: continue it with --resume, start over with --force, "
                       "or choose another --out")
    elif outputs and not force:  # a run's outputs, or files of the user's that have their names
        raise RunError(f"{out} holds {', '.join(outputs)} but no run.json, so there is no run to resume: start "
                       f"over with --force (which deletes {'it' if len(outputs) == 1 else 'them'}), or choose "
                       "another --out")
    else:
        if resume:
            print(f"{command}: nothing to resume in {out}; starting a new run", file=sys.stderr)
        for name in ("card.json", *FILES):  # (a card never outlives its log; the lock file stays: one may wait on it)
            (out / name).unlink(missing_ok=True)
        state = fresh
    out.mkdir(parents=True, exist_ok=True)
    remove_leftovers(out, FILES)  # (of a session killed outright as it wrote one: under the lock, none is in use)
    try:
        write_json(state_path, state)
    except OSError as exc:  # (a full disk: nothing has run yet, and what an earlier session saved is kept)
        raise RunError(state_not_written(state_path, exc, resumed=state is not fresh)) from None
    return state


def _refuse_corpus_among_outputs(out: Path, corpus_path: str | None) -> None:
    """`RunError` when the corpus is one of the files a run writes in ``out`` (a corpus ``results.jsonl`` with
    ``--out`` its directory, say), which the run would replace and ``--force`` delete before reading it again."""
    for name in FILES if corpus_path else ():
        try:
            same = os.path.samefile(out / name, str(corpus_path))
        except OSError:  # (not there: nothing to replace)
            continue
        if same:
            raise RunError(f"the corpus {corpus_path} is {out / name}, a file the run writes in its directory (and "
                           f"--force deletes): move the corpus out of {out}, or choose another --out")


def _refuse_read_only(out: Path) -> None:
    """`RunError` when a resume with work left cannot write in ``out`` or its lock file (a complete run's writes
    nothing: a read-only run directory is let in as far as this)."""
    path = out
    try:
        tempfile.TemporaryFile(dir=out).close()
        if os.path.lexists(path := out / ".lock"):  # (`mt_eval.locks.RunDirectoryLock.FILE`)
            os.close(os.open(path, os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0)))
    except OSError as exc:
        fix = (f"make the run's files writable for you (chmod -R u+w {out})" if exc.errno == errno.EACCES
               else permission_fix(path, exc) or "make it writable")
        raise RunError(f"cannot resume {out}: the run has work left (entries to translate, or its card to write), and "
                       f"{path} cannot be written ({exc.strerror or exc}): {fix}, or copy {out} where you can write "
                       "and resume the copy") from None


def _refuse_unwritable_logs(out: Path) -> None:
    """`RunError` naming the first file of `APPENDED` in ``out`` that cannot be opened for appending, with the fix;
    checked before a resume changes anything (it was a bare "[Errno 13] Permission denied" once run.json had been
    rewritten)."""
    for name, holds in APPENDED.items():
        path = out / name
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_APPEND))  # (where a run made it: none is made, nothing written)
        except FileNotFoundError:
            continue
        except OSError as exc:
            fix = (permission_fix(path, exc)
                   or f"make it writable, or copy {out} where you can write and resume the copy")
            raise RunError(f"cannot resume {out}: {path} cannot be written ({exc.strerror or exc}), and the run "
                           f"appends {holds} to it: {fix}, then resume again") from None


def _other_kind(state_path: Path, fresh: msgspec.Struct) -> str | None:
    """How the run recorded in ``state_path`` is named when it is of another kind than ``fresh`` (a decide run's
    run.json reads as a translation run's, and the other way round: their fields are the same but one); None when
    it is of the same kind, or there is no run.json to read."""
    try:
        recorded = msgspec.json.decode(state_path.read_bytes(), type=_Kind).kind
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None  # (none, or one that cannot be read: said below, as it is)
    if recorded == getattr(fresh, "kind", None):
        return None
    return KINDS.get(recorded, f"a run of another kind ({recorded})")


def differences(named: list[tuple[str, Any, Any]]) -> list[tuple[str, str]]:
    """What differs among the (name, recorded, now) triples: (name, the values that changed as "recorded → now",
    of an object each field that changed; empty for a hash)."""
    return [(name, _changed_values(recorded, now)) for name, recorded, now in named
            if not same_json(recorded, now)]  # (true is not 1)


def method_named(recorded_dir: str, now_dir: str) -> str:
    """How a change of the method's code is named: with both directories when the method is another one (a plugin
    moved, with the same code, resumes)."""
    if recorded_dir == now_dir:
        return CODE
    return f"the method (this run is for {recorded_dir}, not {now_dir})"


CODE = "the method's code"  # (what `method_named` calls it when the directory is the same)


def _written_since(state: Any) -> str:
    """For a resume refused because the method's code changed: the plugin's files modified since the run started,
    named with the likely cause (a method that writes in its own directory changes its own code); "" when none."""
    from mt_eval.code_hash import written_since

    try:
        directory = Path(state.method_dir)
        written = written_since(directory, state.started_at)
    except (AttributeError, ValueError, OSError):
        return ""
    if not written:
        return ""
    shown = ", ".join(written[:5]) + (f" and {len(written) - 5} more" if len(written) > 5 else "")
    return (f". Modified in {directory} since the run started: {shown}; if the method wrote them (a cache, a log), it "
            "changes its own code, and its runs can never be resumed: have it write to a temporary directory instead")


def _changed_values(recorded: Any, now: Any) -> str:
    if isinstance(recorded, dict) and isinstance(now, dict):
        keys = [key for key in dict.fromkeys([*recorded, *now]) if not same_json(recorded.get(key), now.get(key))]
        return ", ".join(f"{key} {_shown(recorded.get(key))} → {_shown(now.get(key))}" for key in keys)
    if _is_hash(recorded) or _is_hash(now):
        return ""
    return f"{_shown(recorded)} → {_shown(now)}"


def _is_hash(value: Any) -> bool:
    return isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)


def _shown(value: Any) -> str:
    text = "unset" if value is None else msgspec.json.encode(value).decode()
    return text if len(text) <= 60 else text[:57] + "…"
