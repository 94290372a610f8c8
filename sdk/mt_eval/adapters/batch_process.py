"""One process per batch, for translator programs that answer only once their input has ended.

`run_batch` starts the program, writes every record of the batch (each followed by the framing's
terminator), closes stdin, and splits the whole output into one answer per record. When the program
fails on a batch — it exits with an error, runs past its allowance (``timeout_s`` per record), or gives
the wrong number of answers — the batch is split in halves and each half runs again, down to single
records, so only the records the program really fails on fail, each with the program's stderr tail.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Mapping, Sequence

from mt_eval.adapters.framing import Framing
from mt_eval.adapters.record_process import ProcessOptions, RecordFailure, program_log
from mt_eval.process_group import StderrTail, exit_status, reap_group, signal_group


async def run_once(command: Sequence[str], records: list[bytes], framing: Framing, *,
                   cwd: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None,
                   options: ProcessOptions | None = None, label: str | None = None) -> list[bytes]:
    """Run the program once over ``records``; one answer per record, or `RecordFailure` for the batch."""
    options = options or ProcessOptions()
    label = label or os.path.basename(command[0])
    try:
        process = await asyncio.create_subprocess_exec(
            *command, cwd=cwd, env=env, start_new_session=True, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    except OSError as exc:
        raise RecordFailure("unavailable", f"cannot start {label} ({command[0]}): {exc.strerror or exc}") from exc
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    stdin, stdout, stderr = process.stdin, process.stdout, process.stderr
    tail = StderrTail(program_log, label, max_bytes=options.stderr_tail_bytes, max_lines=options.stderr_tail_lines)

    async def write() -> None:
        try:
            stdin.write(b"".join(record + framing.terminator for record in records))
            await stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass  # it exited early; its exit status says why
        finally:
            stdin.close()

    async def drain_stderr() -> None:
        while chunk := await stderr.read(65536):
            tail.feed(chunk)

    allowance = options.timeout_s * max(1, len(records))
    try:
        _, output, _, code = await asyncio.wait_for(
            asyncio.gather(write(), stdout.read(), drain_stderr(), process.wait()), allowance)
    except TimeoutError:
        signal_group(process.pid, signal.SIGKILL)
        await process.wait()
        raise RecordFailure("timeout", f"{label} did not finish {len(records)} record(s) within {allowance:g} s",
                            stderr_tail=tail.tail(), alone=len(records) == 1) from None
    finally:
        await reap_group(process.pid, options.shutdown_grace_s)  # whatever it started and left behind
    if code != 0:
        raise RecordFailure("exited", f"{label} {exit_status(code)}", stderr_tail=tail.tail(),
                            alone=len(records) == 1)
    answers = framing.split_output(output, len(records))
    if answers is None:
        found = len(output.split(framing.terminator))
        raise RecordFailure("mismatch", f"{label} gave about {found} answers for {len(records)} record(s) "
                            f"({framing.name} framing)", stderr_tail=tail.tail(), alone=len(records) == 1)
    return answers


async def run_batch(command: Sequence[str], records: list[bytes], framing: Framing, *,
                    cwd: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None,
                    options: ProcessOptions | None = None, label: str | None = None
                    ) -> list[bytes | RecordFailure]:
    """An answer or a `RecordFailure` per record; a failing batch is halved until the failure is found."""
    if not records:
        return []
    try:
        return list(await run_once(command, records, framing, cwd=cwd, env=env, options=options, label=label))
    except RecordFailure as failure:
        if failure.kind == "unavailable" or len(records) == 1:
            return [failure] * len(records)
    middle = len(records) // 2
    halves = [records[:middle], records[middle:]]
    first, second = [await run_batch(command, half, framing, cwd=cwd, env=env, options=options, label=label)
                     for half in halves]
    return first + second
