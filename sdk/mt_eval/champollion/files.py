"""A champollion project's files on disk, read and written as the Node side does (``lib/champollion/files.js``).

JSON files — locale files, the lock file, a plugin's method.json — are read by the shared reader
(`mt_eval.json_input`, Node's ``lib/json-text.js``): a syntax error names its line and column and the fix, an
invalid byte its offset, in the same words on both sides. A target file is written atomically (a temporary
file beside it, renamed over it) and keeps the mode of the file it replaces; a failed write leaves no
temporary file. `unwritable` says, before anything is translated for a file, why it could not be written;
`read_only` refuses a target file its user made read-only, which a rename would replace. OS errors are worded
as the C library's ``strerror``, which the Node side reproduces.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path
from typing import Any

from mt_eval.json_input import parse_json

# The fix for a write that failed, by errno.
_WRITE_FIXES = {
    errno.EACCES: "make its directory writable",
    errno.EPERM: "make its directory writable",
    errno.EROFS: "put the locales on a writable file system",
    errno.ENOSPC: "free some disk space",
    errno.EDQUOT: "free some disk space",
}


class FileProblem(ValueError):
    """A file that cannot be read or written: ``str()`` names it, says what is wrong and, when known, the fix."""

    def __init__(self, path: Path, what: str, fix: str | None = None) -> None:
        self.path = path
        self.what = what
        self.fix = fix
        super().__init__(f"{path}: {what}" + (f"; {fix}" if fix else ""))


def read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise FileProblem(path, f"cannot read it: {exc.strerror or exc}") from exc


def parse_json_file(raw: bytes, path: Path, *, exact_numbers: bool = False, repeated: list[str] | None = None
                    ) -> Any:
    """The JSON value of a file's bytes; `FileProblem` for a syntax error or invalid UTF-8. A repeated key keeps
    its first place and its last value, as JSON.parse and Node's reader do; ``repeated`` hears of its dotted path
    (``nav.title``; array items by index). With ``exact_numbers``, numbers are `JsonNumber`s, as written."""
    value, problems = parse_json(raw, file=str(path), exact_numbers=exact_numbers)
    errors = [p for p in problems if p.code != "duplicate-key"]
    if errors:
        raise FileProblem(path, errors[0].message, errors[0].hint)
    if repeated is not None and len(errors) < len(problems):  # (rare: the file is read again, for the paths)
        repeated += _repeated_paths(raw)
    return value


def _repeated_paths(raw: bytes) -> list[str]:
    """The dotted paths of the keys written more than once in one object of the JSON text ``raw``."""
    import json

    class Marked(dict[str, Any]):
        repeated: tuple[str, ...] = ()

    def pairs(items: list[tuple[str, Any]]) -> Marked:
        keys = [key for key, _ in items]
        marked = Marked(items)
        marked.repeated = tuple(key for key in dict.fromkeys(keys) if keys.count(key) > 1)
        return marked

    found: list[str] = []

    def walk(node: Any, path: list[str]) -> None:
        if isinstance(node, dict):
            found.extend(".".join([*path, key]) for key in getattr(node, "repeated", ()))
            for key, value in node.items():
                walk(value, [*path, key])
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, [*path, str(index)])

    walk(json.loads(raw.decode("utf-8-sig"), object_pairs_hook=pairs), [])
    return found


def read_json(path: Path) -> Any:
    return parse_json_file(read_bytes(path), path)


def unwritable(path: Path) -> FileProblem | None:
    """Why the file at ``path`` could not be written (None: it can, as far as can be told beforehand)."""
    if path.is_dir():
        return FileProblem(path, "cannot write it: a directory is in its place", "move or remove that directory")
    directory = path.parent
    while not os.path.lexists(directory) and directory != directory.parent:
        directory = directory.parent
    if not directory.is_dir():
        return FileProblem(path, f"cannot create its directory: {directory} is not a directory",
                           f"move or remove {directory}")
    if not os.access(directory, os.W_OK | os.X_OK):
        if _on_read_only_file_system(directory):  # (no chmod helps)
            return FileProblem(path, f"cannot write it: {directory} is on a file system mounted read-only",
                               _WRITE_FIXES[errno.EROFS])
        return FileProblem(path, f"cannot write it: {directory} is not writable",
                           f"make it writable (chmod u+wx {directory})")
    return None


def read_only(path: Path, or_else: str | None = None) -> FileProblem | None:
    """A `FileProblem` when the file at ``path`` (following links, as `write_atomic` does) is there and read-only —
    no write permission at all (mode 0444; root, whom the permission does not stop, included), or none for this
    user — else None. Whoever made it read-only does not want it replaced, though a rename over it would: it is
    left as it is. ``or_else`` is the other fix, besides making it writable ("remove … from the pairs")."""
    try:
        found = path.stat()
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(found.st_mode):
        return None
    mode = f"{stat.S_IMODE(found.st_mode):04o}"
    if not found.st_mode & 0o222:
        what = f"the file is read-only (mode {mode})"
    elif os.access(path, os.W_OK) or _on_read_only_file_system(path):
        return None  # (a read-only file system: said by the write)
    else:
        what = f"the file is read-only to this user (mode {mode})"
    fix = f"make it writable (chmod u+w {path}) to have it written" + (f", or {or_else}" if or_else else "")
    return FileProblem(path, f"cannot write it: {what}, so it is left as it is", fix)


def source_in_place(target: Path, locales_dir: Path, source: Path, source_folder: Path | None, input_locale: str
                    ) -> FileProblem | None:
    """A `FileProblem` when the target file at ``target`` (in ``locales_dir``) is a source file — ``source``, or
    anything under ``source_folder`` (a link to that folder or into it) — else None: its values would be adopted as
    translations of themselves, and a write would put translations in place of the source strings."""
    real = _real_path(target)
    is_source = real == _real_path(source) or (target.is_file() and source.is_file() and target.samefile(source))
    inside = source_folder is not None and real.is_relative_to(_real_path(source_folder))
    if not (is_source or inside):
        return None
    relative = target.relative_to(locales_dir)  # (the links in the locales directory, not those above it)
    link = next((locales_dir / p for p in (relative, *relative.parents[:-1]) if (locales_dir / p).is_symlink()), None)
    where = f"the source file {source}" if is_source else f"in the source folder {source_folder}"
    how = f"{link} is a symbolic link to {os.readlink(link)}" if link is not None else "a hard link"
    return FileProblem(target, f"cannot write it: it is {where} ({how}), so its translations would be written over "
                               f"the {input_locale} strings",
                       f"remove {link or target}: the next run writes the translations in its place")


def _real_path(path: Path) -> Path:
    """``path`` with every symbolic link resolved, as far as it exists (as Node's `realPath`)."""
    return Path(os.path.realpath(path))


def _on_read_only_file_system(path: Path) -> bool:
    """Whether ``path`` is on a file system mounted read-only (as Node's access() says with EROFS)."""
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file renamed over it, keeping an existing file's mode;
    `FileProblem` when it cannot be written (no temporary file is left behind). A symbolic link is written
    through: the file it points to is replaced, and the link stays (a shared file linked into several locales)."""
    shown, path = path, linked_file(path)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    created = False
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        mode = stat.S_IMODE(path.stat().st_mode) if path.is_file() else None
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0),
                     0o666 if mode is None else mode)
        created = True
        with os.fdopen(fd, "wb") as out:
            if mode is not None:
                os.fchmod(out.fileno(), mode)  # exactly the old mode, whatever the umask
            out.write(text.encode("utf-8"))
            out.flush()
            os.fsync(out.fileno())  # (on disk before it replaces the old file)
        os.replace(temporary, path)
    except OSError as exc:
        if created:
            with contextlib.suppress(OSError):
                temporary.unlink()
        raise FileProblem(shown, f"cannot write it: {exc.strerror or exc}", _WRITE_FIXES.get(exc.errno or 0)) from exc


def linked_file(path: Path) -> Path:
    """The file a chain of symbolic links at ``path`` ends at (``path`` itself when it is no link)."""
    for _ in range(40):  # (the kernel's own limit: a loop is left for the write to report)
        if not path.is_symlink():
            break
        path = path.parent / os.readlink(path)
    return path
