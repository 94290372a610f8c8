"""Translator programs that end by themselves between records: the record sent next is not the one they failed on."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mt_eval.adapters import NULL_FLUSH, ProcessOptions, ProcessTranslator, Stage

FAST = ProcessOptions(timeout_s=2.0, shutdown_grace_s=0.5)

# Ends, with status 0, after a few records (as a worker with a request limit does); "boom" makes it crash, and
# "skip" gets no answer.
LIMITED_PROGRAM = """import sys
limit = int(sys.argv[1])
for n, line in enumerate(sys.stdin, 1):
    if line.startswith("boom"):
        sys.stderr.write("cannot handle boom\\n")
        sys.exit(4)
    if not line.startswith("skip"):
        print("T:" + line.rstrip("\\n").upper(), flush=True)
    if n == limit:
        break
"""


def limited(tmp_path, lines: int, *, lockstep: bool = False) -> ProcessTranslator:
    """The program ending after ``lines`` lines read (a record and its marker line are two)."""
    script = tmp_path / "limited.py"
    script.write_text(LIMITED_PROGRAM, encoding="utf-8")
    stage = Stage((sys.executable, str(script), str(lines)), lockstep=lockstep)
    return ProcessTranslator(stages=[stage], options=FAST)


@pytest.mark.parametrize("lockstep", [False, True])
async def test_a_program_that_ends_after_answering_does_not_fail_the_next_record(tmp_path, lockstep: bool):
    """Before: one record a call (as `mt-eval run --concurrency 1` sends them) failed every other record with
    "limited.py exited with code 0", a record the program never read."""
    translator = limited(tmp_path, 3, lockstep=lockstep)  # marker 0, one record and its marker: then it ends
    texts = ["a", "b", "c", "d", "e", "f"]
    try:
        one_by_one = [(r.text, r.error) for text in texts for r in await translator.translate_texts([text])]
        at_once = [(r.text, r.error) for r in await translator.translate_texts(texts)]
    finally:
        await translator.aclose()
    assert one_by_one == at_once == [(f"T:{text.upper()}", None) for text in texts]


async def test_a_record_after_one_that_got_no_answer_is_not_blamed_for_the_program_ending(tmp_path):
    translator = limited(tmp_path, 3)  # marker 0, "skip" (no answer) and its marker: then it ends
    try:
        outcomes = [(r.text, r.error) for text in ["skip", "a"] for r in await translator.translate_texts([text])]
    finally:
        await translator.aclose()
    assert outcomes == [(None, "limited.py: the program wrote no answer for it"), ("T:A", None)]


async def test_records_that_make_the_program_crash_still_fail_alone_and_are_no_crash_loop(tmp_path):
    """Each bad record is sent to a fresh program to be sure; that program's failure is not charged to the
    crash-loop budget (5 restarts a minute), as the record's first failure was not."""
    translator = limited(tmp_path, 1000)
    texts = ["a", "boom 1", "b"] + [f"boom {n}" for n in range(2, 8)] + ["c"]
    try:
        one_by_one = [(r.text, r.error) for text in texts for r in await translator.translate_texts([text])]
        at_once = [(r.text, r.error) for r in await translator.translate_texts(texts)]
    finally:
        await translator.aclose()
    crashed = (None, "limited.py exited with code 4 | stderr: cannot handle boom")
    assert one_by_one == at_once == [crashed if text.startswith("boom") else (f"T:{text.upper()}", None)
                                     for text in texts]


async def test_a_program_that_fails_at_start_is_still_stopped_by_the_crash_loop_budget(tmp_path):
    script = tmp_path / "broken.py"
    script.write_text("import sys\nsys.stderr.write('no model\\n')\nsys.exit(2)\n", encoding="utf-8")
    translator = ProcessTranslator([sys.executable, str(script)], options=FAST)
    try:
        errors = [r.error or "" for text in "abcdefg" for r in await translator.translate_texts([text])]
        errors += [r.error or "" for r in await translator.translate_texts(list("hijk"))]
    finally:
        await translator.aclose()
    assert errors[0] == "broken.py exited with code 2 | stderr: no model"
    assert all(error.startswith("broken.py keeps failing: 5 restarts within 60 s") for error in errors[6:])


async def test_a_null_flush_program_that_ends_after_answering_does_not_fail_the_next_record(tmp_path):
    script = tmp_path / "limited_null.py"
    script.write_text("import sys\nrecord = sys.stdin.buffer.read1(65536).split(b'\\0')[0]\n"
                      "sys.stdout.buffer.write(b'T:' + record.upper() + b'\\0')\n", encoding="utf-8")
    translator = ProcessTranslator([sys.executable, str(script)], framing=NULL_FLUSH, options=FAST)
    try:
        outcomes = [(r.text, r.error) for text in "abcd" for r in await translator.translate_texts([text])]
    finally:
        await translator.aclose()
    assert outcomes == [(f"T:{text.upper()}", None) for text in "abcd"]


async def test_a_program_ending_slowly_after_closing_its_stdin_fails_no_record(tmp_path):
    """Before: every record sent between the program closing its stdin and its exit failed at once with
    "ending.py is not running" (`mt-eval run --concurrency 8` lost 23 of 33 entries so)."""
    script = tmp_path / "ending.py"
    script.write_text("import os, sys, time\nfor n, line in enumerate(sys.stdin, 1):\n"
                      "    print('T:' + line.rstrip('\\n').upper(), flush=True)\n"
                      "    if n == 3:\n        os.close(0)\n        time.sleep(0.3)\n        break\n", encoding="utf-8")
    translator = ProcessTranslator([sys.executable, str(script)], options=FAST)
    try:
        outcomes = [(r.text, r.error) for text in "abcd" for r in await translator.translate_texts([text])]
    finally:
        await translator.aclose()
    assert outcomes == [(f"T:{text.upper()}", None) for text in "abcd"]


# Closes a program that started a process in its group and exits at the end of its input, in a process that adopts
# orphans as the mt-eval program does; prints how long the close took.
CLOSE_IN_ADOPTING_PROCESS = """import asyncio, sys, time
from mt_eval import process_exit
from mt_eval.adapters import ProcessOptions, ProcessTranslator, Stage
PROGRAM = ("import subprocess, sys\\nsubprocess.Popen(['sleep', '60'])\\n"
           "for line in sys.stdin:\\n    print(line, end='', flush=True)\\n")
async def main():
    process_exit.adopts_orphans = True
    translator = ProcessTranslator(stages=[Stage((sys.executable, '-c', PROGRAM))],
                                   options=ProcessOptions(shutdown_grace_s=6.0))
    assert [r.text for r in await translator.translate_texts(['a'])] == ['a']
    started = time.monotonic()
    await translator.aclose()
    print(time.monotonic() - started)
asyncio.run(main())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a child subreaper is Linux's")
def test_a_process_the_program_left_in_its_group_does_not_hold_up_its_close_once_ended():
    """Before, the group's process ended by SIGTERM stayed a zombie of the mt-eval program (which adopts orphans), a
    signal to the group still found it, and every close — so every Ctrl-C of a run — waited out the whole grace."""
    done = subprocess.run([sys.executable, "-c", CLOSE_IN_ADOPTING_PROCESS], capture_output=True, text=True,
                          timeout=60, check=True)
    assert float(done.stdout) < 3.0, done.stdout
