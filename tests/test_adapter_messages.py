"""What a wrapped program's entries say when it fails in a way its author can fix: the cause, and the fix."""

from __future__ import annotations

import errno
import logging
import sys
import time

import pytest

from mt_eval.adapters import LINES, NULL_FLUSH, ProcessOptions, ProcessTranslator
from mt_eval.adapters.framing import Framing
from mt_eval.child_process import ChildProcess

FAST = ProcessOptions(timeout_s=2.0, shutdown_grace_s=0.5)

BANNER_PROGRAM = """import sys
print("Loading model... done", flush=True)
for line in sys.stdin:
    print("T:" + line.rstrip("\\n").upper(), flush=True)
"""

# Reads one line, answers it and exits (with "--quiet", answers nothing; with "--say", says why on stderr).
ONE_SHOT_PROGRAM = """import sys
line = sys.stdin.readline()
if "--say" in sys.argv:
    sys.stderr.write("done\\n")
print("T:" + line.rstrip("\\n").upper(), flush=True)
"""

ONE_SHOT_NULL_PROGRAM = """import sys
record = b""
while not record.endswith(b"\\0") and (byte := sys.stdin.buffer.read(1)):
    record += byte
sys.stdout.buffer.write(b"T:" + record.rstrip(b"\\0").upper() + b"\\0")
"""

CLOSING_PROGRAM = "import os, sys, time\nsys.stdin.readline()\nos.close(0)\ntime.sleep(60)\n"


def translator(tmp_path, name: str, source: str, *args: str, **kwargs: object) -> ProcessTranslator:
    script = tmp_path / name
    script.write_text(source, encoding="utf-8")
    kwargs.setdefault("options", FAST)
    return ProcessTranslator([sys.executable, str(script), *args], **kwargs)  # type: ignore[arg-type]


async def outcomes_of(translator: ProcessTranslator, texts: list[str]) -> list[tuple[str | None, str | None]]:
    return [(r.text, r.error) for r in await translator.translate_texts(texts)]


async def outcomes(translator: ProcessTranslator, texts: list[str]) -> list[tuple[str | None, str | None]]:
    """The texts' outcomes, the program stopped after them."""
    try:
        return await outcomes_of(translator, texts)
    finally:
        await translator.aclose()


# ---- one process per batch: a banner on stdout -----------------------------------------------------


async def test_a_banner_in_batch_mode_is_shown_with_the_fix(tmp_path):
    """Before: "banner.py gave 2 answers for 1 record(s) (line framing)", not saying what the lines were."""
    banner = translator(tmp_path, "banner.py", BANNER_PROGRAM, persistent=False)
    results = await outcomes(banner, ["a", "b", "c"])
    assert results == [(None, f"banner.py gave 2 answers for 1 record(s) (line framing): 'Loading model... done', "
                              f"'T:{text}'. More answers than records: a banner or warnings on its stdout? Fix: print "
                              "them to stderr, or, if it answers each line as it reads it, run it persistent (the "
                              "default) with LINES framing, whose markers tell a banner from answers")
                       for text in "ABC"]


async def test_a_banner_in_batch_mode_never_becomes_a_text_ending_in_a_newline(tmp_path):
    """Before: "a\\n" (two lines, the last empty) came back as "Loading model... done\\nA": the empty answer of its
    last line was taken for a flush at the end of the output, and the banner for the first line's answer."""
    banner = translator(tmp_path, "banner.py", BANNER_PROGRAM.replace('"T:" + ', ""), persistent=False)
    (text, error), = await outcomes(banner, ["a\n"])
    assert text is None and error is not None
    assert error.startswith("banner.py gave 2 answers for 1 record(s) (line framing): 'Loading model... done', 'A'.")


async def test_the_answers_shown_are_short_and_escaped_and_persistent_mode_is_offered_only_when_aligned(tmp_path):
    program = "import sys\nsys.stdin.read()\nsys.stdout.write('\\x1b[1m' + 'x' * 200 + '|two|three|')\n"
    bars = translator(tmp_path, "bars.py", program, persistent=False, framing=Framing("bars", b"|", aligned=False))
    (_, error), = await outcomes(bars, ["a"])
    assert error == (f"bars.py gave 3 answers for 1 record(s) (bars framing): '\\x1b[1m{'x' * 76}', 'two', …. More "
                     "answers than records: a banner or warnings on its stdout? Fix: print them to stderr")


async def test_no_answer_in_batch_mode_is_said_plainly(tmp_path):
    silent = translator(tmp_path, "silent.py", "import sys\nsys.stdin.read()\n", persistent=False, framing=NULL_FLUSH)
    assert await outcomes(silent, ["a"]) == [(None, "silent.py gave 0 answers for 1 record(s) (null-flush framing)")]


# ---- a persistent program that reads one record and exits ------------------------------------------


async def test_a_program_that_reads_one_record_and_exits_is_told_to_run_one_process_per_batch(tmp_path):
    """Before: every entry failed with "one_shot.py exited with code 0" and nothing else."""
    one_shot = translator(tmp_path, "one_shot.py", ONE_SHOT_PROGRAM, framing=LINES)
    results = await outcomes(one_shot, ["a", "b", "c"])
    assert results == [(None, "one_shot.py exited with code 0 (again after writing one answer, with nothing on "
                              "stderr): it reads one record and exits. Fix: run it with persistent=False (one process "
                              "per batch), or make it read records until its input ends")] * 3


async def test_the_one_shot_hint_needs_clear_evidence(tmp_path):
    once = translator(tmp_path, "one_shot.py", ONE_SHOT_PROGRAM)
    assert await outcomes(once, ["a"]) == [(None, "one_shot.py exited with code 0")]  # one program: no evidence
    saying = translator(tmp_path, "one_shot.py", ONE_SHOT_PROGRAM, "--say")
    assert await outcomes(saying, ["a", "b"]) == [(None, "one_shot.py exited with code 0 | stderr: done")] * 2


async def test_a_program_answering_one_record_a_process_is_answered_and_warned_about(tmp_path, caplog):
    one_shot = translator(tmp_path, "one_shot.py", ONE_SHOT_NULL_PROGRAM, framing=NULL_FLUSH)
    with caplog.at_level(logging.WARNING, logger="mt_eval.adapters"):
        results = await outcomes(one_shot, ["a", "b", "c"])
    assert results == [("T:A", None), ("T:B", None), ("T:C", None)]
    warned = [r.getMessage() for r in caplog.records if "one answer" in r.getMessage()]
    assert warned == ["one_shot.py exited after one answer twice, and is started again for each record: it reads one "
                      "record and exits. Fix: run it with persistent=False (one process per batch), or make it read "
                      "records until its input ends"]


# ---- a persistent program that closes its input ----------------------------------------------------


async def test_a_program_that_closes_its_input_and_runs_on_is_told_so(tmp_path):
    """Before: "closing.py gave no answer within 0.5 s and wrote nothing at all: it buffers its output…"."""
    closing = translator(tmp_path, "closing.py", CLOSING_PROGRAM, options=ProcessOptions(timeout_s=0.5,
                                                                                         shutdown_grace_s=0.3))
    assert await outcomes(closing, ["a"]) == [
        (None, "closing.py gave no answer within 0.5 s: it closed its input and kept running, so it reads no more "
               "records. Fix: make it read records until its input ends, or run it with persistent=False (one "
               "process per batch) if it reads one input and exits")]


# ---- a program slower to start than the timeout ---------------------------------------------------

# Loads a model for 1.5 s the first time it runs (it leaves the file named by its argument behind), then answers.
SLOW_START_PROGRAM = """import os, sys, time
if not os.path.exists(sys.argv[1]):
    open(sys.argv[1], "w").close()
    time.sleep(1.5)
for line in sys.stdin:
    print("T:" + line.rstrip("\\n").upper(), flush=True)
"""


async def test_a_program_still_starting_at_the_timeout_is_told_to_take_a_longer_one_and_is_started_again(tmp_path):
    """Before: "slow.py gave no answer within 0.5 s and wrote nothing at all: it buffers its output …", and as no
    restart was thought to cure that, every later record failed so at once, without starting it again."""
    slow = translator(tmp_path, "slow.py", SLOW_START_PROGRAM, str(tmp_path / "started-once"),
                      options=ProcessOptions(timeout_s=0.5, shutdown_grace_s=0.3))
    try:
        first = await outcomes_of(slow, ["a"])
        second = await outcomes_of(slow, ["b"])  # a fresh program, quick to start this time
    finally:
        await slow.aclose()
    assert first == [(None, "slow.py gave no answer within 0.5 s and wrote nothing at all, busy without reading more "
                            "input: still starting (loading a model)? Fix: a longer timeout (mt-eval run --timeout, or "
                            "ProcessOptions.timeout_s), which covers its start")]
    assert second == [("T:B", None)]


# ---- a program that cannot be started --------------------------------------------------------------


@pytest.mark.parametrize("persistent", [True, False])
async def test_a_program_that_cannot_be_started_is_told_with_the_fix(tmp_path, persistent: bool):
    script = tmp_path / "word-mt.py"
    script.write_text("print('hi')\n", encoding="utf-8")  # (no execute permission)
    said = {}
    for case, command in {"not installed": ["word-mt-not-installed"], "not executable": [str(script)],
                          "no such file": [str(tmp_path / "bin" / "word-mt")]}.items():
        said[case] = (await outcomes(ProcessTranslator(command, persistent=persistent, options=FAST), ["a"]))[0][1]
    assert said["not installed"] == ("cannot start word-mt-not-installed (word-mt-not-installed): it is not "
                                     "installed, or not on PATH (install it, or give its full path)")
    assert said["not executable"] == (f"cannot start word-mt.py ({script}): it is not executable (make it so: "
                                      f"chmod +x {script}, or run it with its interpreter: python3 {script})")
    assert said["no such file"] is not None and said["no such file"].endswith(
        ': no such file (a program in the plugin: build its path from the plugin directory, directory / "bin" / '
        'NAME, which holds wherever the run starts)')


@pytest.mark.parametrize("persistent", [True, False])
async def test_a_program_that_cannot_be_started_is_tried_once_and_every_later_entry_fails_at_once(
        tmp_path, monkeypatch, caplog, persistent):
    """Before: started again for each entry (persistent: "restarting …" each time, until the restart budget ran
    out; one process per batch: again for each batch)."""
    starts = count_starts(monkeypatch)
    missing = ProcessTranslator([str(tmp_path / "bin" / "word-mt")], persistent=persistent, options=FAST)
    with caplog.at_level(logging.WARNING, logger="mt_eval.adapters"):
        results = [r for texts in (["a"], ["b", "c", "d"], ["e"]) for r in await outcomes_of(missing, texts)]
    await missing.aclose()
    assert {error for _, error in results} == {f"cannot start word-mt ({tmp_path / 'bin' / 'word-mt'}): no such file "
                                               '(a program in the plugin: build its path from the plugin directory, '
                                               'directory / "bin" / NAME, which holds wherever the run starts)'}
    assert len(results) == 5 and len(starts) == 1 and not caplog.records


@pytest.mark.parametrize("persistent", [True, False])
async def test_a_start_that_failed_for_want_of_file_descriptors_is_tried_again(tmp_path, monkeypatch, persistent):
    starts = count_starts(monkeypatch, fail_first=OSError(errno.EMFILE, "Too many open files"))
    upper = translator(tmp_path, "upper.py", BANNER_PROGRAM.replace('print("Loading model... done", flush=True)\n',
                                                                   ""), persistent=persistent)
    try:
        first, second = [await outcomes_of(upper, [text]) for text in "ab"]
    finally:
        await upper.aclose()
    assert first == [(None, f"cannot start upper.py ({sys.executable}): Too many open files")]
    assert second == [("T:B", None)] and len(starts) == 2


def count_starts(monkeypatch, *, fail_first: OSError | None = None) -> list[None]:
    """Every attempt to start the program (persistent, or once per batch), listed (the first one failing with
    ``fail_first``)."""
    starts: list[None] = []
    spawn = ChildProcess.spawn

    async def counted(process: ChildProcess) -> None:
        starts.append(None)
        if fail_first is not None and len(starts) == 1:
            raise fail_first
        await spawn(process)

    monkeypatch.setattr(ChildProcess, "spawn", counted)
    return starts


# ---- a program that changes the marker lines ------------------------------------------------------

# Answers every line upper-cased with its digits made letters: the markers' numbers never come back.
MANGLING_PROGRAM = ("import sys\nfor line in sys.stdin:\n    print(line.rstrip('\\n').upper().translate("
                    "str.maketrans('0123456789', 'abcdefghij')), flush=True)\n")


async def test_a_program_that_never_passes_back_a_marker_fails_every_record_in_one_timeout(tmp_path):
    """Before: each record waited out its timeout and restarted the program, which changed the markers again
    (a run of 30 entries at the default 120 s saved nothing for 10 minutes)."""
    translator = ProcessTranslator([sys.executable, "-c", MANGLING_PROGRAM], framing=LINES,
                                   options=ProcessOptions(timeout_s=1, shutdown_grace_s=0.3))
    started = time.perf_counter()
    try:
        said = await outcomes_of(translator, ["one", "two", "three", "four", "five", "six"])
    finally:
        await translator.aclose()
    assert time.perf_counter() - started < 4
    assert all(text is None and "passed back no marker line" in (error or "") for text, error in said), said
    assert translator.runners[0].restarts <= 1


async def test_a_text_of_several_lines_failing_at_once_fails_as_its_own_entry(tmp_path):
    """Before: both lines' failures escaped as an exception group, and the method failed the whole batch."""
    translator = ProcessTranslator([sys.executable, "-c", MANGLING_PROGRAM], framing=LINES,
                                   options=ProcessOptions(timeout_s=0.5, shutdown_grace_s=0.3))
    try:
        results = await translator.translate([{"id": "a", "source": "one\ntwo"}, {"id": "b", "source": "three"}])
    finally:
        await translator.aclose()
    assert [r["id"] for r in results] == ["a", "b"]
    assert all(r["predicted"] is None and "passed back no marker line" in r["error"] for r in results), results
