"""One process per batch, for translator programs that answer only once their input has ended.

`run_batch` starts the program, writes every record of the batch (each followed by the framing's
terminator), closes stdin, and splits the whole output into one answer per record. When the program
fails on a batch — it exits with an error, runs past its allowance (the timeout per record), or gives
the wrong number of answers — the batch is split in halves and each half runs again, down to single
records, so only the records the program really fails on fail, each with the program's stderr tail.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence

from mt_eval.adapters.framing import Framing
from mt_eval.adapters.hints import answer_count_mismatch, cannot_start, oversized_answer
from mt_eval.adapters.record_process import (
    DEFAULT_TIMEOUT_S,
    TRANSIENT_START_ERRORS,
    ProcessOptions,
    RecordFailure,
    program_log,
)
from mt_eval.child_process import ChildProcess, exit_status, wait_event


class _OneRun(ChildProcess):
    """The program run once: its whole output, and an event set when it has ended. An answer over
    ``max_record_bytes``, or far more answers than records, ends it at once (``overflow`` says which): a
    runaway program does not fill the memory."""

    def __init__(self, command: Sequence[str], options: ProcessOptions, framing: Framing, records: int,
                 **kwargs: object) -> None:
        super().__init__(command, logger=program_log, tail_bytes=options.stderr_tail_bytes,
                         tail_lines=options.stderr_tail_lines, grace_s=options.shutdown_grace_s,
                         stderr_encoding=framing.encoding, **kwargs)  # type: ignore[arg-type]
        self.output = bytearray()
        self.ended = asyncio.Event()
        self.overflow: RecordFailure | None = None
        self._terminator = framing.terminator
        self._answers_allowed = 2 * records + 16  # (room for the empty flushes at the end that are tolerated)
        self._max_answer = options.max_record_bytes
        self._answers = 0
        self._open_from = 0  # where the answer not yet ended starts

    def on_output(self, data: bytes) -> None:
        if self.overflow is not None:
            return
        self.output += data
        found = data.count(self._terminator)
        if found:
            self._answers += found
            self._open_from = self.output.rfind(self._terminator) + len(self._terminator)
        if len(self.output) - self._open_from > self._max_answer:
            self._overflowed(oversized_answer(self.label, self._max_answer))
        elif self._answers > self._answers_allowed:
            self._overflowed(f"{self.label} gave over {self._answers_allowed} answers for "
                             f"{(self._answers_allowed - 16) // 2} record(s)")

    def _overflowed(self, message: str) -> None:
        self.overflow = RecordFailure("oversized", message)
        self.output = bytearray()
        self.kill()
        self.ended.set()  # (a killed child's end is not reported)

    def on_gone(self, status: str) -> None:
        self.ended.set()


async def run_once(command: Sequence[str], records: list[bytes], framing: Framing, *,
                   cwd: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None,
                   options: ProcessOptions | None = None, label: str | None = None,
                   timeout_s: float | None = None) -> list[bytes]:
    """Run the program once over ``records``; one answer per record, or `RecordFailure` for the batch (``lasting``
    when the program cannot be started and trying again would not help: see `TRANSIENT_START_ERRORS`)."""
    options = options or ProcessOptions()
    per_record = timeout_s or options.timeout_s or DEFAULT_TIMEOUT_S
    child = _OneRun(command, options, framing, len(records), cwd=cwd, env=env, label=label)
    label = child.label
    try:
        await child.spawn()
    except OSError as exc:
        raise RecordFailure("unavailable", cannot_start(label, command, exc, cwd),
                            lasting=exc.errno not in TRANSIENT_START_ERRORS) from exc
    allowance = per_record * max(1, len(records))
    try:
        child.write(b"".join(record + framing.terminator for record in records))
        child.close_stdin()
        ended = await wait_event(child.ended, allowance)
        if not ended:
            child.kill()
    finally:
        await child.aclose()  # and whatever it started and left behind
    alone = len(records) == 1
    if child.overflow is not None:
        raise RecordFailure("oversized", child.overflow.message, stderr_tail=child.stderr_tail(), alone=alone)
    if not ended:
        raise RecordFailure("timeout", f"{label} did not finish {len(records)} record(s) within {allowance:g} s",
                            stderr_tail=child.stderr_tail(), alone=alone)
    if child.exit_code != 0:
        raise RecordFailure("exited", f"{label} {exit_status(child.exit_code)}", stderr_tail=child.stderr_tail(),
                            alone=alone)
    output = bytes(child.output)
    answers = framing.split_output(output, len(records))
    if answers is None:
        message = answer_count_mismatch(label, framing.count_answers(output), len(records), framing, output)
        raise RecordFailure("mismatch", message, stderr_tail=child.stderr_tail(), alone=alone)
    return [framing.answer_to(record, answer) for record, answer in zip(records, answers, strict=True)]


async def run_batch(command: Sequence[str], records: list[bytes], framing: Framing, *,
                    cwd: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None,
                    options: ProcessOptions | None = None, label: str | None = None,
                    timeout_s: float | None = None) -> list[bytes | RecordFailure]:
    """An answer or a `RecordFailure` per record; a failing batch is halved until the failure is found."""
    if not records:
        return []
    try:
        return list(await run_once(command, records, framing, cwd=cwd, env=env, options=options, label=label,
                                   timeout_s=timeout_s))
    except RecordFailure as failure:
        if failure.kind == "unavailable" or len(records) == 1:
            return [failure] * len(records)
    middle = len(records) // 2
    halves = [records[:middle], records[middle:]]
    first, second = [await run_batch(command, half, framing, cwd=cwd, env=env, options=options, label=label,
                                     timeout_s=timeout_s) for half in halves]
    return first + second
