"""A pipeline's programs start together at its first call, so their start-ups overlap (before, each started only
when the first record reached it: three programs that each take a while to load made the first text wait for all
three loads one after another); a program that cannot start still fails the record that reaches it, once."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from mt_eval.adapters import LINES, ProcessOptions, ProcessTranslator, Stage

# Echoes each line; with a GATE file named, it answers its first line only once that file exists.
ECHO = """
import os, sys, time
gate = sys.argv[1] if len(sys.argv) > 1 else None
for number, line in enumerate(sys.stdin):
    while number == 0 and gate and not os.path.exists(gate):
        time.sleep(0.01)
    sys.stdout.write(line)
    sys.stdout.flush()
"""
OPTIONS = ProcessOptions(timeout_s=10.0, shutdown_grace_s=0.5)


def echo(*gate: str) -> Stage:
    return Stage((sys.executable, "-c", ECHO, *gate))


async def test_every_program_of_a_pipeline_is_started_before_the_first_record_reaches_it(tmp_path: Path):
    gate = tmp_path / "go"
    translator = ProcessTranslator(stages=[echo(str(gate)), echo(), echo()], framing=LINES, options=OPTIONS)
    try:
        call = asyncio.ensure_future(translator.translate_texts(["hello"]))
        for _ in range(500):  # until the record is held by the first program
            if translator.runners[0].in_flight:
                break
            await asyncio.sleep(0.01)
        first, second, third = translator.runners
        assert first.in_flight == 1 and second.in_flight == third.in_flight == 0
        assert second.pid is not None and third.pid is not None  # (started before any record reached them)
        gate.touch()
        [outcome] = await call
        assert (outcome.text, outcome.error) == ("hello", None)
        assert [runner.restarts for runner in translator.runners] == [0, 0, 0]
    finally:
        await translator.aclose()


async def test_a_program_of_the_pipeline_that_cannot_start_fails_the_record_once_with_the_reason():
    translator = ProcessTranslator(stages=[echo(), Stage(("/nonexistent/tagger",)), echo()], framing=LINES,
                                   options=OPTIONS)
    try:
        [outcome] = await translator.translate_texts(["hello"])
        assert outcome.text is None
        assert outcome.error is not None and outcome.error.startswith("cannot start tagger (/nonexistent/tagger)")
        assert translator.runners[1].restarts == 0  # (its early start is not counted as a restart)
        [again] = await translator.translate_texts(["hello"])
        assert again.error is not None and again.error.startswith("cannot start tagger")
    finally:
        await translator.aclose()
