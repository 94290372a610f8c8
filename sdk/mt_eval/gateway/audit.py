"""The gateway's audit log: one JSON line per request, appended as it completes, and its summary for the
run card (``gateway``: the log's SHA-256, requests, tokens, models).

A line: ``time``, ``seq``, ``path``, ``model``, ``status``, ``refused`` (why the gateway refused, or null),
``request_sha256``/``response_sha256`` and their byte counts, ``prompt_tokens``, ``completion_tokens``,
``latency_s`` (and the bodies themselves when the policy sets ``log_bodies``). Reopening an existing log
continues it: a resumed run keeps one log and one token budget.

The totals are counted as each record is written, so the budget holds at once; the lines themselves are
gathered and written together (`flush`) — the gateway flushes once per turn of its event loop, so a burst
of answers costs one write, and nothing waits longer than that turn.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

import msgspec


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


class AuditLog:
    """Appends request records to ``path`` and keeps the running totals (restored from an existing log)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.requests = self.refused = self.prompt_tokens = self.completion_tokens = 0
        self.models: set[str] = set()
        self.refusals: dict[str, int] = {}
        if path.exists():
            for line in path.read_bytes().splitlines():
                try:
                    self._count(json.loads(line))
                except (ValueError, TypeError):
                    continue  # a torn last line
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = path.open("ab")
        self._pending: list[bytes] = []

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
        self.prompt_tokens += int(record.get("prompt_tokens") or 0)
        self.completion_tokens += int(record.get("completion_tokens") or 0)

    def write(self, record: dict[str, Any]) -> None:
        """Count the record now; its line is written at the next `flush` (or `close`)."""
        record = {"time": round(time.time(), 3), "seq": self.requests + 1, **record}
        self._count(record)
        self._pending.append(msgspec.json.encode(record) + b"\n")

    @property
    def pending(self) -> bool:
        return bool(self._pending)

    def flush(self) -> None:
        if self._pending:
            lines, self._pending = b"".join(self._pending), []
            self._file.write(lines)
            self._file.flush()

    def close(self) -> None:
        if not self._file.closed:
            self.flush()
            self._file.close()

    def facts(self, policy_path: Path | None, token_budget: int | None) -> GatewayFacts:
        if not self._file.closed:
            self.flush()
        policy_sha = hashlib.sha256(policy_path.read_bytes()).hexdigest() if policy_path else ""
        return GatewayFacts(log=self.path.name, log_sha256=hashlib.sha256(self.path.read_bytes()).hexdigest(),
                            requests=self.requests, refused=self.refused, tokens=self.tokens,
                            prompt_tokens=self.prompt_tokens, completion_tokens=self.completion_tokens,
                            token_budget=token_budget, models=sorted(self.models), policy_sha256=policy_sha)
