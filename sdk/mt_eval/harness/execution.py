"""Running a method over corpus entries: bounded concurrency, batches, timeouts, retries, nothing lost.

Workers (``concurrency`` of them) take batches of ``batch_size`` entries from one queue. A batch gets
``timeout_s`` per entry; a method that raises or times out fails only that batch's entries. Failed
entries are retried (``retries`` times each) while the run's retry budget lasts. Every final result is
appended to the results log as it completes, so an interrupted run can be resumed.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import msgspec

from mt_eval.records import TranslationResult
from mt_eval.results import ResultNotes, error_result, results_for

_decode_result = msgspec.json.Decoder(TranslationResult).decode
_encode = msgspec.json.Encoder().encode


@dataclass(frozen=True)
class RunSettings:
    batch_size: int = 8
    concurrency: int = 8
    timeout_s: float = 120.0
    retries: int = 1
    retry_budget: int | None = None

    def budget_for(self, entries: int) -> int:
        """Total retries a run may spend: given, or 10% of the entries (at least 10)."""
        return self.retry_budget if self.retry_budget is not None else max(10, entries // 10)


@dataclass
class Timing:
    """Wall-clock facts of one run (the cold latency; hot latency comes from the results' latency_s)."""

    first_call_s: float | None = None


@dataclass
class Outcome:
    completed: int = 0
    retries_used: int = 0
    timing: Timing = field(default_factory=Timing)
    notes: ResultNotes = field(default_factory=ResultNotes)  # what was changed to accept the method's results


class ResultsLog:
    """``results.jsonl``: one final result per line, appended as entries complete."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = path.open("ab")

    @staticmethod
    def read(path: Path) -> dict[str, TranslationResult]:
        """Results already recorded; a torn last line (a crash mid-write) is ignored."""
        found: dict[str, TranslationResult] = {}
        if not path.exists():
            return found
        lines = path.read_bytes().split(b"\n")
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                result = _decode_result(line)
            except msgspec.DecodeError:
                if number >= len(lines) - 1:
                    continue  # torn final line
                raise ValueError(f"{path}:{number}: not a result line; the log is damaged") from None
            found[result.id] = result
        return found

    def append(self, results: list[TranslationResult]) -> None:
        self._file.write(b"".join(_encode(r) + b"\n" for r in results))
        self._file.flush()

    def close(self) -> None:
        self._file.close()


async def execute(method: Any, entries: list[dict[str, Any]], config: Any, settings: RunSettings, log: ResultsLog,
                  on_result: Callable[[TranslationResult], None]) -> Outcome:
    """Translate ``entries`` with ``method``; every final result goes to ``log`` and ``on_result``."""
    outcome = Outcome()
    budget = settings.budget_for(len(entries))
    attempts: dict[str, int] = {}
    queue: deque[list[dict[str, Any]]] = deque(
        entries[i:i + settings.batch_size] for i in range(0, len(entries), settings.batch_size))
    by_id = {str(e["id"]): e for e in entries}
    busy = 0
    wake = anyio.Event()

    async def worker() -> None:
        nonlocal busy, budget, wake
        while True:
            if not queue:
                if busy == 0:
                    return
                await wake.wait()  # a batch in flight may come back with entries to retry
                continue
            batch = queue.popleft()
            busy += 1
            try:
                results = await _translate_batch(method, batch, config, settings, outcome.timing, outcome.notes)
            finally:
                busy -= 1
                wake.set()
                wake = anyio.Event()
            final, retry = [], []
            for entry, result in zip(batch, results, strict=True):
                tries = attempts.get(result.id, 0)
                if result.error is not None and tries < settings.retries and budget > 0:
                    attempts[result.id] = tries + 1
                    budget -= 1
                    outcome.retries_used += 1
                    retry.append(by_id.get(result.id, entry))
                else:
                    final.append(result)
            if retry:
                queue.append(retry)
            if final:
                log.append(final)
                outcome.completed += len(final)
                for result in final:
                    on_result(result)

    async with anyio.create_task_group() as group:
        for _ in range(max(1, min(settings.concurrency, len(queue)))):
            group.start_soon(worker)
    return outcome


async def _translate_batch(method: Any, batch: list[dict[str, Any]], config: Any, settings: RunSettings,
                           timing: Timing, notes: ResultNotes) -> list[TranslationResult]:
    limit = settings.timeout_s * len(batch)
    started = time.perf_counter()
    try:
        with anyio.fail_after(limit):
            raw = await method.translate([dict(e) for e in batch], config)
        error = None
    except TimeoutError:
        raw, error = None, f"timed out after {limit:g} s ({settings.timeout_s:g} s per entry)"
    except Exception as exc:
        raw, error = None, f"method raised {type(exc).__name__}: {exc}"
    elapsed = time.perf_counter() - started
    if timing.first_call_s is None:
        timing.first_call_s = elapsed
    if error is not None:
        return [error_result(str(e["id"]), error, elapsed) for e in batch]
    paired, _unknown = results_for(batch, raw, label="the method", notes=notes, elapsed_s=elapsed)
    return paired
