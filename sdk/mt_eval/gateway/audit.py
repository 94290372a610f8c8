"""The gateway's audit log: one JSON line per request, appended as it completes, and its summary for the
run card (``gateway``: the log's SHA-256, requests, tokens, models).

A line: ``time``, ``seq``, ``path``, ``model``, ``status``, ``refused`` (why the gateway refused, or null),
``request_sha256``/``response_sha256`` and their byte counts, ``prompt_tokens``, ``completion_tokens``,
``latency_s`` (and the bodies themselves when the policy sets ``log_bodies``); ``error`` when the answer ended
short, and ``usage_unknown`` when its tokens could not be read (a complete 2xx answer that reports no usage, or a
stream the method hung up on that then never reported its usage: counted 0). Reopening an existing log
continues it: a resumed run keeps one log and one token budget. A torn last line (a write cut short: part
of a record, or NUL bytes) is cut off first, so the next record starts on a line of its own; any other line
that is not a request record stops the gateway with `AuditLogError` naming it (an audit trail is not
rewritten, and its totals would be wrong).

The totals are counted as each record is written, so the budget holds at once; the lines themselves are
gathered and written together (`flush`) — the gateway flushes once per turn of its event loop, so a burst
of answers costs one write, and nothing waits longer than that turn. Lines that cannot be written (a full
disk) are kept and tried again at the next flush, the log cut back to its last whole line; meanwhile `error`
says why, and the gateway forwards nothing (no exchange goes unlogged).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import stat
import time
from pathlib import Path
from typing import Any, BinaryIO

import msgspec

from mt_eval.errors import ExpectedError
from mt_eval.json_input import too_many_digits


class GatewayFacts(msgspec.Struct, kw_only=True):
    """The card's ``gateway``."""

    log: str
    log_sha256: str
    requests: int
    refused: int
    tokens: int
    prompt_tokens: int
    completion_tokens: int
    token_budget: int | None
    models: list[str]
    policy_sha256: str
    # requests whose usage never came (counted 0 tokens), and how far the tokens went past the budget (None: not)
    usage_unknown: int = 0
    budget_exceeded_by: int | None = None

    def budget_words(self) -> str | None:
        """The tokens against the budget, in words, when they went past it (the budget is checked as each request
        arrives), or some are unknown; None otherwise."""
        unknown = (f"; {self.usage_unknown} request{'s' if self.usage_unknown != 1 else ''} of unknown usage "
                   "counted 0") if self.usage_unknown else ""
        if self.budget_exceeded_by is None:
            return f"tokens {self.tokens}{unknown}" if unknown else None
        return (f"tokens {self.tokens} of a budget of {self.token_budget}: exceeded by {self.budget_exceeded_by} "
                f"(requests in flight when it was reached were let finish){unknown}")


class AuditLogError(ExpectedError):
    """An existing log holds a line that is not a request record (before its end): it is not continued."""


class NotALogFile(AuditLogError):
    """The log's path is a pipe, a socket or a block device: refused, not waited on (opening a pipe to write
    waits for a reader)."""

    def __init__(self, path: Path, kind: str) -> None:
        super().__init__(f"{path} is {kind}, not a file")
        self.kind = kind
        self.fix = (f"An audit log is appended to and read back (its totals, its SHA-256), which {kind} cannot be: "
                    "give the path of a regular file (a new one is made)")


_NOT_FILES = {stat.S_IFIFO: "a pipe (FIFO)", stat.S_IFSOCK: "a socket", stat.S_IFBLK: "a block device"}


def _append_to(path: Path) -> BinaryIO:
    """``path`` opened to append to, never waiting: a pipe, a socket or a block device raises `NotALogFile` (a
    character device such as /dev/null is written to as a file is)."""
    with contextlib.suppress(OSError):
        if (kind := _NOT_FILES.get(stat.S_IFMT(path.stat().st_mode))) is not None:
            raise NotALogFile(path, kind)
    try:  # (O_NONBLOCK: a pipe made in its place since is refused, not waited on)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o666)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # (a pipe that nobody reads, or a socket)
            raise NotALogFile(path, "a pipe or a socket") from None
        raise
    if (kind := _NOT_FILES.get(stat.S_IFMT(os.fstat(fd).st_mode))) is not None:
        os.close(fd)
        raise NotALogFile(path, kind)
    os.set_blocking(fd, True)
    return os.fdopen(fd, "ab", buffering=0)


class AuditLog:
    """Appends request records to ``path`` and keeps the running totals (restored from an existing log);
    ``torn_bytes`` says how many bytes of a torn last line were cut off."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.requests = self.refused = self.prompt_tokens = self.completion_tokens = self.usage_unknown = 0
        self.models: set[str] = set()
        self.refusals: dict[str, int] = {}
        self.torn_bytes = 0
        self.error: OSError | None = None  # why the last write failed; None once the lines are written
        self._pending: list[bytes] = []
        self._unwritten = 0  # records among them
        end = self._restore(path.read_bytes()) if path.is_file() else None
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = _append_to(path)
        if end is not None:
            self._file.truncate(end)  # (appending writes at the end, wherever that now is)
        self._end = self._file.seek(0, os.SEEK_END)  # the end of the last whole line written

    def _restore(self, data: bytes) -> int | None:
        """Count the records of an existing log; where a torn last line starts (None: nothing to cut)."""
        lines = data.split(b"\n")
        tail = lines.pop()  # b"" when the log ends with a newline
        for number, line in enumerate(lines, start=1):
            if line.strip(b" \t\r"):
                self._count(self._record(line, number))
        if not tail.strip(b" \t\r\x00"):
            self.torn_bytes = len(tail)
            return len(data) - len(tail) if tail else None
        try:
            record = self._record(tail, len(lines) + 1)
        except AuditLogError:
            self.torn_bytes = len(tail)
            return len(data) - len(tail)
        self._count(record)  # (a whole record whose newline was lost: kept, and its line ended first)
        self._pending.append(b"\n")
        return None

    def _record(self, line: bytes, number: int) -> dict[str, Any]:
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise self._not_a_record(number, too_many_digits(exc) or f"not JSON ({exc})") from None
        if not isinstance(record, dict):
            raise self._not_a_record(number, f"a JSON {type(record).__name__}, not an object")
        for name in ("prompt_tokens", "completion_tokens"):
            value = record.get(name)
            if value is not None and (type(value) is not int or value < 0):
                raise self._not_a_record(number, f"{name} is {json.dumps(value)[:40]}, not a number of tokens")
        for name in ("refused", "model"):
            if record.get(name) is not None and not isinstance(record[name], str):
                raise self._not_a_record(number, f"{name} is not a string")
        return record

    def _not_a_record(self, number: int, why: str) -> AuditLogError:
        error = AuditLogError(f"{self.path}: line {number} is not a request record: {why}")
        error.fix = ("An audit log is not rewritten: move it aside (or give another --log) to start a new one, or "
                     "remove that line if you know what it was")
        return error

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def _count(self, record: dict[str, Any]) -> None:
        self.requests += 1
        if record.get("refused"):
            self.refused += 1
            self.refusals[record["refused"]] = self.refusals.get(record["refused"], 0) + 1
        elif record.get("model"):
            self.models.add(record["model"])
        self.usage_unknown += record.get("usage_unknown") is True
        self.prompt_tokens += int(record.get("prompt_tokens") or 0)
        self.completion_tokens += int(record.get("completion_tokens") or 0)

    def write(self, record: dict[str, Any]) -> None:
        """Count the record now; its line is written at the next `flush` (or `close`)."""
        record = {"time": round(time.time(), 3), "seq": self.requests + 1, **record}
        self._count(record)
        self._pending.append(msgspec.json.encode(record) + b"\n")
        self._unwritten += 1

    @property
    def pending(self) -> bool:
        return bool(self._pending)

    def flush(self) -> None:
        """Write the lines gathered; when that fails they are kept for the next flush, `error` says why, and
        the log is cut back to its last whole line."""
        if not self._pending:
            return
        lines = b"".join(self._pending)
        self._pending = [lines]
        try:
            left = memoryview(lines)
            while left:
                if not (written := self._file.write(left)):
                    raise OSError("the file took none of the bytes written to it")
                left = left[written:]
        except OSError as exc:
            self.error = exc
            with contextlib.suppress(OSError):
                self._file.truncate(self._end)
            return
        self._end += len(lines)
        self._pending, self._unwritten, self.error = [], 0, None

    def close(self) -> None:
        if not self._file.closed:
            self.flush()
            self._file.close()

    def check_written(self) -> None:
        """Raise `AuditLogError` when records could not be written (after the last try)."""
        if self.error is not None and self._unwritten:
            error = AuditLogError(f"{self.path}: {self._unwritten} request record(s) could not be written to it "
                                  f"({self.error.strerror or self.error}): the log is incomplete")
            error.fix = ("Make room for it (or give a log on another disk) before serving again; the requests "
                         "that came while it could not be written were refused, not forwarded")
            raise error

    def facts(self, policy_path: Path | None, token_budget: int | None) -> GatewayFacts:
        if not self._file.closed:
            self.flush()
        self.check_written()
        policy_sha = hashlib.sha256(policy_path.read_bytes()).hexdigest() if policy_path else ""
        exceeded = self.tokens - token_budget if token_budget is not None and self.tokens > token_budget else None
        return GatewayFacts(log=self.path.name, log_sha256=hashlib.sha256(self.path.read_bytes()).hexdigest(),
                            requests=self.requests, refused=self.refused, tokens=self.tokens,
                            prompt_tokens=self.prompt_tokens, completion_tokens=self.completion_tokens,
                            token_budget=token_budget, models=sorted(self.models), policy_sha256=policy_sha,
                            usage_unknown=self.usage_unknown, budget_exceeded_by=exceeded)
