"""Where ``mt-eval new`` puts a generated plugin: a new directory, or an existing one (``--force``) without
losing the user's work — the files it would replace that the user changed since it generated them are named,
asked about, and kept as ``NAME.orig``. ``.mt-eval-answers.json`` records the SHA-256 of each generated file,
which is how a changed file is told from one the template wrote."""

from __future__ import annotations

from pathlib import Path

ANSWERS_FILE = ".mt-eval-answers.json"  # the answers and the SHA-256 of each file as generated


def occupied(directory: Path, *, force: bool) -> str | None:
    """Why the plugin cannot be written into ``directory``, or None."""
    try:
        if problem := broken_link(directory):
            return problem
        if directory.exists() and not directory.is_dir():
            return (f"{directory} exists and is not a directory: name a new directory for the plugin, or move "
                    "that file away")
        if not force and directory.is_dir() and any(directory.iterdir()):
            return f"{directory} already exists: choose a new directory, or add --force to write into it"
        above = next(p for p in directory.absolute().parents if p.exists())
        if not above.is_dir():  # (afile/plugin: exists() says no, and creating it fails on the file)
            return f"{directory} cannot be created: {display(above)} is a file, not a directory; choose another place"
    except OSError as exc:  # a name too long for the file system, a directory that cannot be listed
        name = str(directory)
        shown = name if len(name) <= 80 else f"{name[:60]}…({len(name)} characters)"
        return f"{shown}: {exc.strerror or exc}: choose another directory"
    return None


def broken_link(directory: Path) -> str | None:
    """Why ``directory`` or a directory above it is a symbolic link that leads nowhere (``exists()`` says no, yet
    nothing can be created in its place), or None."""
    import errno
    import os

    for link in (directory, *directory.parents):
        if link.is_symlink() and not link.exists():
            try:
                os.stat(link)
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    return f"{link} is a symbolic link to {os.readlink(link)}, a loop of links: remove the link, " \
                           "or point it at a directory"
            return f"{link} is a symbolic link to {os.readlink(link)}, which does not exist: remove the link, or " \
                   "create the directory it points to"
    return None


def display(path: Path) -> str:
    """``path`` relative to the working directory when it is below it, else whole."""
    import os

    relative = os.path.relpath(path)
    return str(path) if relative.startswith("..") else relative


def of_another_kind(generated: Path, target: Path) -> str | None:
    """Why the rendered plugin cannot be copied over an existing ``target``: the entries where the template
    writes a file and ``target`` has a directory, or the other way round (or a link to nothing, a named pipe),
    or None."""
    found = []
    for new in sorted(generated.rglob("*")):
        relative = new.relative_to(generated).as_posix()
        old = target / relative
        what = _kind(old)
        if what is not None and what != _kind(new):
            writes = "makes a directory" if new.is_dir() else "writes a file"
            found.append(f"{display(old)} is {what}, where the template {writes}")
    if not found:
        return None
    them = "it" if len(found) == 1 else "them"
    return f"{'; '.join(found)}: move {them} away or rename {them}, then run again; nothing was written"


def unwritable(generated: Path, target: Path) -> str | None:
    """Why the rendered plugin cannot be copied over an existing ``target``: it, or a directory the template
    writes in, or a file it replaces, cannot be written (a read-only file system, no write permission), or None."""
    import os

    olds = [target] + [target / new.relative_to(generated) for new in sorted(generated.rglob("*"))]
    found = [old for old in olds if old.exists() and not os.access(old, os.W_OK)]
    if not found:
        return None
    more = f" (and {len(found) - 1} more of what the template writes)" if len(found) > 1 else ""
    try:
        read_only = bool(os.statvfs(found[0]).f_flag & os.ST_RDONLY)
    except OSError:
        read_only = False
    if read_only:
        return f"{display(found[0])}{more} is on a read-only file system: choose another directory; nothing was written"
    return f"{display(found[0])}{more} cannot be written: make it writable, or choose another directory; nothing was " \
           "written"


def _kind(path: Path) -> str | None:
    import os

    if path.is_symlink() and not path.exists():
        return f"a symbolic link to {os.readlink(path)}, which does not exist"
    if path.is_dir():
        return "a directory"
    if path.is_file():
        return "a file"
    return "neither a file nor a directory" if path.exists() else None


def changed_by_user(generated: Path, target: Path) -> list[str]:
    """The files of an existing ``target`` the template would replace with other content and that the user
    changed since ``mt-eval new`` wrote them (its ``.mt-eval-answers.json`` records their SHA-256; a file it
    does not record counts as changed)."""
    import hashlib

    if not target.is_dir():
        return []
    recorded = recorded_files(target)
    changed = []
    for new in sorted(generated.rglob("*")):
        relative = new.relative_to(generated).as_posix()
        old = target / relative
        if not new.is_file() or relative == ANSWERS_FILE or not old.is_file():
            continue
        content = old.read_bytes()
        if content != new.read_bytes() and recorded.get(relative) != hashlib.sha256(content).hexdigest():
            changed.append(relative)
    return changed


def recorded_files(target: Path) -> dict[str, str]:
    """The files ``mt-eval new`` wrote into ``target`` as its ``.mt-eval-answers.json`` records them: each path
    with its SHA-256 as generated (none when the record is missing or unreadable)."""
    import json

    try:
        recorded = json.loads((target / ANSWERS_FILE).read_text(encoding="utf-8")).get("files") or {}
    except (OSError, ValueError, AttributeError):
        return {}
    return {name: digest for name, digest in recorded.items() if isinstance(name, str) and isinstance(digest, str)} \
        if isinstance(recorded, dict) else {}


def left_behind(generated: Path, target: Path) -> tuple[list[str], list[str]]:
    """The files an earlier generation wrote into ``target`` that this one (``generated``) does not write, e.g.
    pipeline.py when a Python plugin is made again for Node: (those unchanged since, which can go; those the
    user changed, which stay). Only plain files inside ``target`` are considered."""
    import hashlib

    inside = target.resolve()
    unchanged: list[str] = []
    changed: list[str] = []
    for name, digest in sorted(recorded_files(target).items()):
        old = target / name
        if (generated / name).exists() or old.is_symlink() or not old.is_file() or \
                inside not in old.resolve().parents:
            continue
        try:
            same = hashlib.sha256(old.read_bytes()).hexdigest() == digest
        except OSError:  # (unreadable: kept, as the user's)
            same = False
        (unchanged if same else changed).append(name)
    return unchanged, changed


def remove_left_behind(target: Path, unchanged: list[str], changed: list[str]) -> None:
    """Remove the unchanged files of `left_behind` (and the directories they leave empty), and say which were
    removed and which of the user's were kept."""
    import sys

    removed = []
    for name in unchanged:
        try:
            (target / name).unlink()
        except OSError:
            changed.append(name)  # (still there: said as kept)
            continue
        removed.append(name)
        for directory in (target / name).parents:
            try:
                if directory == target or any(directory.iterdir()):
                    break
                directory.rmdir()
            except OSError:  # (an empty directory that cannot go stays: only the files were the generation's)
                break
    if removed:
        print(f"mt-eval new: removed {len(removed)} file(s) of the earlier generation that this one does not write "
              f"(unchanged since): {', '.join(removed)}", file=sys.stderr)
    if changed:
        print(f"mt-eval new: kept {len(changed)} file(s) of the earlier generation that this one does not write, as "
              f"you changed them: {', '.join(sorted(changed))} (remove them if the method no longer needs them)",
              file=sys.stderr)


def may_replace(changed: list[str], target: Path, *, ask: bool) -> bool:
    """Say which changed files would be replaced (each kept as NAME.orig); ask unless ``ask`` is false."""
    import sys

    listing = "\n".join(f"  {name}  (yours is kept as {backup_name(target, name)})" for name in changed)
    print(f"mt-eval new: {len(changed)} file(s) in {target} differ from what the template writes and were changed "
          f"since it wrote them:\n{listing}", file=sys.stderr)
    if not ask:
        return True
    from rich.prompt import Confirm

    try:
        return Confirm.ask("Replace them (your versions are kept as .orig files)?", default=False)
    except EOFError:
        print()  # (ends the question's line)
        print("mt-eval new: standard input ended before the answer, taken as no (--no-input replaces them, "
              "keeping yours as .orig)", file=sys.stderr)
        return False


def backup_name(target: Path, name: str) -> str:
    """Where the user's ``name`` in ``target`` is kept when it is replaced: ``NAME.orig``, or ``NAME.1.orig``,
    ``NAME.2.orig``, … when earlier backups are there (none is ever overwritten)."""
    kept, counter = f"{name}.orig", 1
    while (target / kept).exists():
        kept, counter = f"{name}.{counter}.orig", counter + 1
    return kept


def place(generated: Path, target: Path, *, backups: list[str]) -> str | None:
    """Move the rendered plugin to ``target``, or copy it over an existing directory's files (keeping the
    user's version of each file in ``backups`` as ``NAME.orig``); why it stopped part way, or None."""
    import shutil

    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(generated, target)
        return None
    kept: list[str] = []
    files = [new for new in sorted(generated.rglob("*")) if not new.is_dir()]
    written = 0
    old = target
    try:
        for name in backups:
            old = target / name
            old.replace(target / backup_name(target, name))
            kept.append(name)
        for new in sorted(generated.rglob("*")):
            old = target / new.relative_to(generated)
            if new.is_dir():
                old.mkdir(exist_ok=True)
            else:
                shutil.copy2(new, old)
                written += 1
    except OSError as exc:
        yours = f"; {', '.join(kept)} of yours kept as .orig" if kept else ""
        return f"writing into {display(target)} stopped at {display(old)}: {exc.strerror or exc}; {written} of " \
               f"{len(files)} files were written{yours}: once it can be written, run again with --force"
    return None
