"""A store's SQLite file as publishers share it: checked before it is opened, and held while it is published into.

``mt-eval publish`` into a store that does not exist yet creates its file, and a publish that stored nothing (every
card refused) deletes the file it created rather than leave an empty store behind. Two publishes may start at once
into the same new file, and the one whose cards are refused must not delete it under the other. So each publisher
holds the file (a shared ``flock``, which SQLite's own locks leave alone) from before its first use to its close,
and the one that created it deletes it only when it can hold it alone (an exclusive lock, taken without waiting)
and finds it empty then. A publisher that opened a file just as it was deleted finds that out (the path no longer
names the file it holds) and opens the path again. Without ``flock`` (Windows) an empty store is simply kept.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from mt_eval.leaderboard import StoreError
from mt_eval.leaderboard.address import STORE_FILE, default_path

try:
    import fcntl
except ImportError:  # (not on Windows)
    fcntl = None  # type: ignore[assignment]

SQLITE_FILES = ("", "-journal", "-wal", "-shm")  # the database and what SQLite keeps beside it


def check_file(path: Path, where: str, *, create: bool, nothing_at: str) -> None:
    """`StoreError` when ``path`` cannot be a store's file: a directory, or (``create``) in no directory; when it
    does not exist and is only to be read, ``nothing_at`` says so."""
    if path.is_dir():
        raise StoreError(f"{where} is a directory: give the store's file, such as {path / STORE_FILE}")
    if path.exists() and not path.is_file():  # (SQLite had said only "disk I/O error")
        raise StoreError(f"{where} is not a regular file (it is {_kind(path)}): give --db the store's file (a new "
                         "name makes a new store), or a postgresql:// URL")
    if path.exists():
        if create:
            _check_writable(path, where)
        return
    nearest = next((folder for folder in path.parents if folder.exists()), None)  # (notes.txt/board.db)
    if nearest is not None and not nearest.is_dir():
        raise StoreError(f"cannot {'create' if create else 'open'} the leaderboard store {where}: {nearest} is a "
                         "file, not a directory")
    if not create:
        raise StoreError(nothing_at + _absolute_meant(path, (Path("/") / path).is_file()))
    if path == default_path():  # (under $XDG_DATA_HOME or ~/.local/share, which may not be writable: HOME=/)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the leaderboard store {where}: cannot make its directory {path.parent} "
                             f"({exc.strerror or exc}); name a store in a directory this user can write with --db "
                             "FILE or $MT_EVAL_DB, or set XDG_DATA_HOME") from None
    elif not path.parent.is_dir():
        raise StoreError(f"cannot create the leaderboard store {where}: the directory {path.parent} does not exist"
                         + _absolute_meant(path, (Path("/") / path).parent.is_dir()))


def followed(path: Path) -> Path:
    """The file a symbolic link ``path`` leads to (SQLite keeps the store there, and its log beside it), else
    ``path``: a link to a store not made yet makes it there, as SQLite would; a link into no directory says so."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _kind(path: Path) -> str:
    mode = path.stat().st_mode
    kinds = ((stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
             (stat.S_ISSOCK, "a socket"))
    return next((kind for test, kind in kinds if test(mode)), "neither a file nor a directory")


def _absolute_meant(path: Path, likely: bool) -> str:
    """For a relative ``path`` — one given as sqlite:///PATH, as a plain path is made absolute — that was
    ``likely`` meant from / (sqlite:///tmp/board.db), how to write that; else ""."""
    if path.is_absolute() or not likely:
        return ""
    return f"; for the absolute path /{path}, write four slashes: sqlite:////{path}"


def _check_writable(path: Path, where: str) -> None:
    """`StoreError` when this user may not write the store's file, or the log and index SQLite keeps beside it:
    said before SQLite opens it, which would leave a log and an index beside it that only read, as the file does
    (so the store could not be published into even once the file was made writable). A read-only file system is
    not said here (`mt_eval.leaderboard.store.open_store` says it)."""
    read_only = [file for file in (Path(f"{path}{suffix}") for suffix in ("", "-wal", "-shm")) if _read_only(file)]
    if read_only:
        names = [file.name for file in read_only]
        named = "it" if read_only == [path] else " and ".join([", ".join(names[:-1]), names[-1]][len(names) == 1:])
        beside = "" if path in read_only else ", which SQLite keeps beside it,"
        one = len(read_only) == 1
        raise StoreError(f"cannot publish into the leaderboard store {where}: {named}{beside} {'is' if one else 'are'} "
                         f"read-only for this user (make {'it' if one else 'them'} writable: chmod u+w "
                         f"{' '.join(str(file) for file in read_only)}; or publish as the user who owns the store)")


def _read_only(file: Path) -> bool:
    """Whether ``file`` exists and this user may not write it (a read-only file system aside)."""
    try:
        os.close(os.open(file, os.O_RDWR))
    except OSError as exc:  # (FileNotFoundError: none; EROFS, and anything else, said by open_store or SQLite)
        return exc.errno in (errno.EACCES, errno.EPERM)
    return False


class FileHold:
    """A publisher's hold on a store file (see the module docstring): `take` it, `release` it when done."""

    def __init__(self, path: Path, fd: int | None, created: bool) -> None:
        self.path = path
        self.created = created  # this hold made the file: it may delete it, empty, when it holds it alone
        self._fd = fd

    @classmethod
    def take(cls, path: Path) -> FileHold:
        """Hold ``path``, creating it (empty: SQLite makes it a database) when it does not exist."""
        if fcntl is None:
            return cls(path, None, created=not path.exists())  # type: ignore[unreachable,unused-ignore]
        for _ in range(100):  # (each turn means another publisher deleted the file meanwhile)
            try:
                fd, created = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644), True
            except FileExistsError:
                try:
                    fd, created = _open_existing(path), False
                except FileNotFoundError:
                    continue
                except OSError as exc:
                    raise StoreError(f"cannot open the leaderboard store {path}: {exc.strerror or exc}") from exc
            except OSError as exc:  # (a directory not writable, a read-only file system)
                raise StoreError(f"cannot create the leaderboard store {path}: {exc.strerror or exc}; give --db a file "
                                 "in a directory this user can write") from exc
            fcntl.flock(fd, fcntl.LOCK_SH)
            if _names(path, fd):
                return cls(path, fd, created)
            os.close(fd)
        raise StoreError(f"cannot hold the leaderboard store file {path}: it is deleted as soon as it is made")

    def alone(self) -> bool:
        """Whether this hold created the file and now holds it alone (no other publisher holds it); from then on
        none can start using it until it is released."""
        if not self.created or self._fd is None or fcntl is None:
            return False
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # another publisher holds it: it is theirs too now
            return False
        return True

    def delete(self) -> None:
        """Delete the file and SQLite's files beside it (when `alone`, and it holds no card)."""
        for suffix in SQLITE_FILES:
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)


def _open_existing(path: Path) -> int:
    try:
        return os.open(path, os.O_RDWR)
    except OSError as exc:  # a file only readable (or on a read-only file system): held all the same (SQLite says
        if exc.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):  # what it cannot write)
            raise
        return os.open(path, os.O_RDONLY)


def _names(path: Path, fd: int) -> bool:
    """Whether ``path`` still names the file open as ``fd`` (it was not deleted, or replaced, meanwhile)."""
    try:
        named, held = os.stat(path), os.fstat(fd)
    except OSError:
        return False
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)
