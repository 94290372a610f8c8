"""A bundle's git history: what a repository's object store holds that its checked-out files do not.

A method can keep texts out of its files and in its history: a file committed and then deleted, an older
version of a file, a stash, a dangling object, a commit message. The object store is not read as files
(`bundle_walk`: loose objects are compressed, packed ones stored as deltas), so it is read through ``git
cat-file``: every blob in it, reachable or not, except those that are byte for byte a file checked out beside
it (read as that file), and every commit and annotated tag (their messages). A blob is named by a path history
gives it (``data/refs.tsv``), else by its id; a commit or tag by its kind and id. Objects a repository borrows
from a store outside the bundle (``objects/info/alternates``) are not the bundle's and are not read.

Git only reads here: it runs with no system or global configuration, the repository's hooks and file-system
monitor off, no optional locks, and no fetching of missing objects. Without git, the history cannot be read,
and the verdict cannot be "clean".
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

# What marks a directory as a git repository (a ``.git`` directory, or a bare repository of any name).
MARKS = ("HEAD", "objects", "refs")


class HistoryError(Exception):
    """The history cannot be read: the message says why (git missing, or git failing on the repository)."""


@dataclass(frozen=True)
class StoredObject:
    id: str
    size: int
    name: str  # a path history gives it, or its id


@dataclass(frozen=True)
class History:
    objects: list[StoredObject]  # to read
    checked_out: int  # blobs left out: a checked-out file holds each
    borrowed: list[str]  # the stores outside the bundle it borrows objects from (not read)


def is_repository(directory: Path, names: set[str]) -> bool:
    """Whether ``directory`` (holding ``names``) is a git repository's own directory (``.git``, or bare)."""
    return all(mark in names for mark in MARKS) and (directory / "objects").is_dir() and (directory / "HEAD").is_file()


def list_objects(git_dir: Path, work_tree: Path | None, bundle: Path) -> History:
    """The objects of the repository at ``git_dir`` to read: its commits, tags and blobs, less the blobs a file
    of ``work_tree`` (its checked-out files; None for a bare repository) holds and those borrowed from a store
    outside ``bundle``. `HistoryError` when git cannot list them."""
    stores, borrowed = _stores(git_dir / "objects", bundle.resolve())
    own = _stored_ids(git_dir, stores) if borrowed else None
    sizes: dict[str, int] = {}
    names: dict[str, str] = {}
    for line in _git(git_dir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype) "
                     "%(objectsize)").splitlines():
        object_id, kind, size = line.split(" ")
        if own is not None and object_id not in own:
            continue
        if kind in ("blob", "commit", "tag"):
            sizes[object_id] = int(size)
        if kind != "blob":
            names[object_id] = f"{kind} {object_id}"
    listing = _git(git_dir, "rev-list", "--objects", "--all", "--reflog", "--", allow_failure=True)
    for line in listing.splitlines():
        object_id, _, path = line.partition(" ")
        if path and object_id in sizes:
            names.setdefault(object_id, path)
    held = _checked_out(git_dir, work_tree) if work_tree is not None else set()
    objects = [StoredObject(object_id, size, names.get(object_id, object_id)) for object_id, size in sizes.items()
               if object_id not in held]
    objects.sort(key=lambda stored: (stored.name, stored.id))
    return History(objects, sum(object_id in held for object_id in sizes), borrowed)


def _stores(objects: Path, bundle: Path) -> tuple[list[Path], list[str]]:
    """The object stores git reads for the one at ``objects``: it and the alternates it names, as git follows
    them (relative to the store naming them, to a depth of five), split into those inside ``bundle`` and the
    names of those outside it."""
    inside: list[Path] = []
    outside: list[str] = []
    pending = [(objects, 0)]
    while pending:
        store, depth = pending.pop(0)
        resolved = store.resolve()
        if resolved in inside or str(resolved) in outside:
            continue
        if depth and not resolved.is_relative_to(bundle):
            outside.append(str(resolved))
            continue
        inside.append(resolved)
        try:
            lines = (store / "info" / "alternates").read_text(errors="surrogateescape").splitlines()
        except OSError:
            continue
        if depth < 5:
            pending += [(store / line.strip(), depth + 1) for line in lines if line.strip()
                        and not line.startswith("#")]
    return inside, outside


def _stored_ids(git_dir: Path, stores: list[Path]) -> set[str]:
    """The ids of the objects the stores hold, loose (``ab/cdef…``) or packed (listed by ``git show-index``)."""
    ids: set[str] = set()
    for store in stores:
        for loose in store.glob("[0-9a-f][0-9a-f]/*"):
            ids.add(loose.parent.name + loose.name)
        for index in sorted(store.glob("pack/*.idx")):
            with index.open("rb") as stream:
                listed = _git(git_dir, "show-index", stdin=stream)
            ids.update(line.split()[1] for line in listed.splitlines() if len(line.split()) >= 2)
    return ids


def read_objects(git_dir: Path, objects: list[StoredObject]) -> Generator[tuple[StoredObject, ObjectStream]]:
    """Each object with a stream of its bytes, in order; a stream must be done with before the next is asked for
    (what is left of it is skipped). Closing the iterator ends git."""
    if not objects:
        return
    with tempfile.TemporaryFile() as wanted:
        wanted.write("".join(f"{stored.id}\n" for stored in objects).encode("ascii"))
        wanted.seek(0)
        process = subprocess.Popen(_command(git_dir, "cat-file", "--batch"), stdin=wanted, stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, env=_environment())
    assert process.stdout is not None
    try:
        for stored in objects:
            header = process.stdout.readline().split()
            if len(header) != 3 or header[0].decode("ascii", "replace") != stored.id:
                raise HistoryError(f"git cat-file answered {b' '.join(header)!r} for object {stored.id}")
            stream = ObjectStream(process.stdout, int(header[2]))
            yield stored, stream
            stream.skip_rest()
            process.stdout.read(1)  # (the newline after each object)
    finally:
        process.kill()
        process.stdout.close()
        process.wait()


class ObjectStream:
    """The next ``size`` bytes of ``stream`` (one object of ``git cat-file --batch``), as a stream."""

    def __init__(self, stream: IO[bytes], size: int) -> None:
        self._stream = stream
        self._left = size

    def read(self, size: int = -1) -> bytes:
        wanted = self._left if size is None or size < 0 else min(size, self._left)
        data = self._stream.read(wanted) if wanted else b""
        self._left -= len(data)
        if wanted and not data:
            raise HistoryError("git cat-file ended before the object did")
        return data

    def skip_rest(self) -> None:
        while self._left:
            self.read(1 << 20)


def _checked_out(git_dir: Path, work_tree: Path) -> set[str]:
    """The ids of the blobs that the files of the index, as they are in ``work_tree``, hold exactly."""
    paths = []
    for record in _git(git_dir, "ls-files", "-z", "--cached", allow_failure=True).split("\0"):
        path = work_tree / record
        if record and path.is_file() and not path.is_symlink():
            paths.append(str(path))
    if not paths:
        return set()
    hashed = _git(git_dir, "hash-object", "--no-filters", "--stdin-paths", work_tree=work_tree,
                  stdin="\n".join(paths) + "\n", allow_failure=True)
    return set(hashed.split())


def _git(git_dir: Path, *argv: str, work_tree: Path | None = None, stdin: str | IO[bytes] | None = None,
         allow_failure: bool = False) -> str:
    """Git's output (``stdin``: text to send, or a file to read from); `HistoryError` when it fails."""
    given = {"input": stdin} if isinstance(stdin, str) or stdin is None else {"stdin": stdin}
    try:
        done = subprocess.run(_command(git_dir, *argv, work_tree=work_tree), **given, capture_output=True,
                              text=True, env=_environment(), check=False, errors="surrogateescape")
    except OSError as exc:
        raise HistoryError(f"cannot run git: {exc.strerror or exc}") from exc
    if done.returncode != 0 and not allow_failure:
        said = done.stderr.strip().splitlines()
        raise HistoryError(f"git {argv[0]} failed on it: {said[-1] if said else f'exit status {done.returncode}'}")
    return done.stdout if done.returncode == 0 else ""


def _command(git_dir: Path, *argv: str, work_tree: Path | None = None) -> list[str]:
    git = shutil.which("git")
    if git is None:
        raise HistoryError("git is not installed, or not on PATH (Debian: apt-get install git)")
    options = ["-c", "core.fsmonitor=false", "-c", "core.hooksPath=" + os.devnull, "-c", "safe.directory=*",
               "-c", "protocol.allow=never", "--git-dir", str(git_dir)]
    if work_tree is not None:
        options += ["--work-tree", str(work_tree)]
    return [git, *options, *argv]


def _environment() -> dict[str, str]:
    keep = {name: value for name, value in os.environ.items() if not name.startswith("GIT_")}
    return {**keep, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_OPTIONAL_LOCKS": "0",
            "GIT_NO_LAZY_FETCH": "1", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
