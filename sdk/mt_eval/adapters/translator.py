"""`ProcessTranslator`: a translator program that knows nothing of the bridge, as the body of a method.

Give it the program (or a pipeline of programs, as `Stage`s) and its framing; it turns texts into
records, drives the program, and turns answers back into texts::

    translator = ProcessTranslator(["my-mt", "--flush-lines"], framing=LINES)
    results = await translator.translate(entries, config)        # result dicts, one per entry
    outcomes = await translator.translate_texts(["Hello."])      # TextResult(text, error, latency_s)
    await translator.aclose()

Persistent (the default): each stage runs as one long-lived process and records are pipelined through
it (`mt_eval.adapters.stage`); a pipeline's programs all start at its first call, their start-ups
overlapping. ``processes`` > 1 runs that many copies of the pipeline and gives each call to the least busy
one. ``persistent=False``: one process per call for programs that answer only at the end
of their input (`mt_eval.adapters.batch_process`); at most ``processes`` run at once. Either way a failure
fails only the entries it concerns, each with the program's stderr tail; a program that cannot be started
(not found, not executable) is tried once, and every later entry fails at once with the same message.
Everything is safe to share between concurrent callers.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from mt_eval.adapters.batch_process import run_batch
from mt_eval.adapters.framing import LINES, Framing, FramingError
from mt_eval.adapters.hints import no_answer_for_blank
from mt_eval.adapters.record_process import ProcessOptions, RecordFailure
from mt_eval.adapters.stage import Stage, StageRunner, argv
from mt_eval.concurrency import all_of


class TextResult(NamedTuple):
    """One text's outcome: its translation, or the error that stopped it."""

    text: str | None
    error: str | None
    latency_s: float


class ProcessTranslator:
    """Translate texts with an external program (see the module docstring)."""

    def __init__(self, command: Sequence[str | os.PathLike[str]] | None = None, *,
                 stages: Sequence[Stage] | None = None, framing: Framing = LINES, persistent: bool = True,
                 processes: int | None = None,
                 cwd: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None,
                 options: ProcessOptions | None = None, label: str | None = None) -> None:
        if (command is None) == (stages is None):
            raise ValueError("give either command (one program) or stages (a pipeline of programs)")
        self.stages = [Stage(argv(command), label=label)] if command is not None else list(stages or [])
        if not self.stages:
            raise ValueError("a pipeline needs at least one stage")
        if not persistent and len(self.stages) != 1:
            raise ValueError("one process per batch runs a single command; make a pipeline one command (a shell "
                             "pipeline), or keep the stages persistent")
        self.framing = framing
        self.persistent = persistent
        self.processes = max(1, processes if processes is not None else 1 if persistent else os.cpu_count() or 1)
        self.cwd = cwd
        self.env = env
        self.options = options or ProcessOptions()
        self._replicas = [[StageRunner(stage, framing, cwd=cwd, env=env, options=self.options)
                           for stage in self.stages] for _ in range(self.processes)] if persistent else []
        self._load = [0] * len(self._replicas)
        self._begun = [False] * len(self._replicas)
        self._batch_slots = asyncio.Semaphore(self.processes)
        self._cannot_start: RecordFailure | None = None  # (one process per batch) no later batch tries again

    @property
    def runners(self) -> list[StageRunner]:
        """Every stage runner of every copy of the pipeline (persistent mode)."""
        return [runner for replica in self._replicas for runner in replica]

    async def translate(self, entries: list[dict[str, Any]], config: Any = None) -> list[dict[str, Any]]:
        """One result dict per entry: ``predicted`` from the entry's ``source``, or ``error``. Each record has
        the run's timeout per entry (``config.timeout_s``, ``mt-eval run --timeout``) unless the options set one."""
        timeout_s = self.options.timeout_s or getattr(config, "timeout_s", None)
        outcomes = await self.translate_texts([str(entry["source"]) for entry in entries], timeout_s=timeout_s)
        return [result_dict(str(entry["id"]), outcome) for entry, outcome in zip(entries, outcomes, strict=True)]

    async def translate_texts(self, texts: Sequence[str], *, timeout_s: float | None = None) -> list[TextResult]:
        """One `TextResult` per text, in order; this never raises for what a program does. ``timeout_s`` per
        record (default: `ProcessOptions.timeout_s`, else 30 s)."""
        if not texts:
            return []
        if self.persistent:
            return await self._through_pipeline(texts, timeout_s)
        return await self._in_one_process(texts, timeout_s)

    async def _through_pipeline(self, texts: Sequence[str], timeout_s: float | None) -> list[TextResult]:
        index = min(range(len(self._replicas)), key=self._load.__getitem__)
        replica = self._replicas[index]
        if not self._begun[index]:  # the first call: every program of the pipeline starts at once (not each when
            self._begun[index] = True  # the first record reaches it), so their start-ups overlap
            if len(replica) > 1:
                await all_of(lambda runner: runner.start_early(), replica)
        self._load[index] += len(texts)

        async def answer(record: bytes) -> bytes:
            for runner in replica:
                record = await runner.ask(record, timeout_s)
            return record

        async def answer_or_failure(record: bytes) -> bytes | RecordFailure:
            try:
                return await answer(record)
            except RecordFailure as failure:  # returned, not raised: the text's other lines still get answered,
                return failure  # and two failed lines are one failed text, not an exception group

        async def one(text: str) -> TextResult:
            started = time.perf_counter()
            try:
                records = self.framing.records(text)
                if len(records) == 1:
                    answers = [await answer(records[0])]
                else:
                    outcomes = await all_of(answer_or_failure, records)
                    answers = [o for o in outcomes if isinstance(o, bytes)]
                    if len(answers) < len(records):
                        return TextResult(None, failed_text(outcomes, records), time.perf_counter() - started)
                translation = self.framing.join(answers, self.stages[-1].name)
            except FramingError as exc:
                return TextResult(None, str(exc), time.perf_counter() - started)
            except RecordFailure as failure:
                return TextResult(None, failed_text([failure], records), time.perf_counter() - started)
            return TextResult(translation, None, time.perf_counter() - started)

        try:
            return await all_of(one, texts)
        finally:
            self._load[index] -= len(texts)

    async def _in_one_process(self, texts: Sequence[str], timeout_s: float | None) -> list[TextResult]:
        framed: list[list[bytes] | FramingError] = []
        for text in texts:
            try:
                framed.append(self.framing.records(text))
            except FramingError as exc:
                framed.append(exc)
        records = [record for item in framed if not isinstance(item, FramingError) for record in item]
        started = time.perf_counter()
        async with self._batch_slots:
            answers = await self._run_batch(records, timeout_s)
        share = (time.perf_counter() - started) / len(texts)
        results: list[TextResult] = []
        position = 0
        for item in framed:
            if isinstance(item, FramingError):
                results.append(TextResult(None, str(item), 0.0))
                continue
            mine = answers[position:position + len(item)]
            position += len(item)
            if any(isinstance(a, RecordFailure) for a in mine):
                results.append(TextResult(None, failed_text(mine, item), share))
                continue
            try:
                results.append(TextResult(self.framing.join([a for a in mine if isinstance(a, bytes)],
                                                            self.stages[-1].name), None, share))
            except FramingError as exc:
                results.append(TextResult(None, str(exc), share))
        return results

    async def _run_batch(self, records: list[bytes], timeout_s: float | None) -> list[bytes | RecordFailure]:
        """The batch's answers; a program that could not be started for a lasting reason (not found, not
        executable) is not tried again: each later batch fails at once with the same message."""
        if self._cannot_start is not None:
            return [self._cannot_start.again() for _ in records]
        stage = self.stages[0]
        answers = await run_batch(stage.command, records, self.framing, cwd=self.cwd, env=self.env,
                                  options=self.options, label=stage.name, timeout_s=timeout_s)
        lasting = next((a for a in answers if isinstance(a, RecordFailure) and a.lasting), None)
        if lasting is not None:
            self._cannot_start = lasting
        return answers

    async def aclose(self) -> None:
        """Stop every program (closing stdin first, so each finishes what it has)."""
        await all_of(lambda runner: runner.aclose(), self.runners)


def failed_text(outcomes: Sequence[bytes | RecordFailure], records: Sequence[bytes]) -> str:
    """A text's error: its first record's failure, saying which line of the text failed when it has several, and
    what to do when a program wrote nothing for an empty or blank one."""
    number, failure = next((n, o) for n, o in enumerate(outcomes, 1) if isinstance(o, RecordFailure))
    where = f" (line {number} of the text's {len(records)})" if len(records) > 1 else ""
    record = records[number - 1]
    if not record.strip() and _no_answer(failure):
        message = f"{failure.message}, {no_answer_for_blank(record, where)}"
    elif where:
        message = failure.message + where
    else:
        return failure.entry_error()
    return RecordFailure(failure.kind, message, stderr_tail=failure.stderr_tail).entry_error()


def _no_answer(failure: RecordFailure) -> bool:
    """Whether the program wrote nothing for the record (as `RecordProcess` and `run_once` word it)."""
    return failure.kind == "mismatch" and (failure.message.endswith(" wrote no answer for it")
                                           or " gave 0 answers for 1 record(s)" in failure.message)


def result_dict(entry_id: str, outcome: TextResult) -> dict[str, Any]:
    """A result in the shape of `mt_eval.records.TranslationResult`, built as `mt_eval.results` builds them."""
    import msgspec

    from mt_eval.results import error_result

    if outcome.error is not None:
        return msgspec.to_builtins(error_result(entry_id, outcome.error, outcome.latency_s))  # type: ignore[no-any-return]
    return {"id": entry_id, "predicted": outcome.text, "latency_s": outcome.latency_s}
