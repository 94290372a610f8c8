"""The translator-program adapter: framings, one persistent process driven record by record, restarts that
fail only the affected entries, one process per batch, concurrency, and a shutdown that leaves nothing."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from mt_eval.adapters import LINES, NULL_FLUSH, FramingError, ProcessOptions, ProcessTranslator, Stage
from mt_eval.adapters.framing import Framing

PROGRAM = str(Path(__file__).parent / "programs" / "record_translator.py")
FAST = ProcessOptions(timeout_s=2.0, shutdown_grace_s=0.5)


def program(*flags: str) -> list[str]:
    return [sys.executable, PROGRAM, *flags]


def translator_for(*flags: str, **options: object) -> ProcessTranslator:
    """The test program as a translator labelled "record_translator.py"."""
    options.setdefault("options", FAST)
    return ProcessTranslator(program(*flags), label="record_translator.py", **options)  # type: ignore[arg-type]


def expected(text: str) -> str:
    return "T:" + text.upper()


def group_members(group: int) -> list[int]:
    """Processes of a process group that are running (not zombies waiting to be reaped)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[2] == str(group) and fields[0] not in ("Z", "X"):
            found.append(int(entry))
    return found


async def texts_through(translator: ProcessTranslator, texts: list[str]) -> list[tuple[str | None, str | None]]:
    return [(r.text, r.error) for r in await translator.translate_texts(texts)]


# ---- framings ----------------------------------------------------------------------------------


def test_line_framing_sends_each_line_as_a_record_and_joins_the_answers():
    assert LINES.records("one\ntwo\n") == [b"one", b"two", b""]
    assert LINES.join([b"uno", b"dos", b""]) == "uno\ndos\n"
    assert LINES.records("") == [b""]


def test_null_flush_framing_keeps_newlines_and_refuses_nul():
    assert NULL_FLUSH.records("a\nb") == [b"a\nb"]
    with pytest.raises(FramingError, match=r'contains "\\x00", which ends a record in null-flush framing'):
        NULL_FLUSH.records("a\0b")
    with pytest.raises(FramingError, match="not valid Unicode"):
        NULL_FLUSH.records("lone \ud800 surrogate")


def test_batch_output_tolerates_a_missing_final_terminator_and_trailing_flushes():
    assert NULL_FLUSH.split_output(b"a\0b\0\0\0", 2) == [b"a", b"b"]
    assert LINES.split_output(b"a\nb", 2) == [b"a", b"b"]
    assert LINES.split_output(b"a\nb\nc\n", 2) is None
    assert NULL_FLUSH.split_output(b"a\0\0b\0", 2) is None  # an empty answer inside is not a trailing flush
    assert LINES.split_output(b"banner\na\n\n", 2) is None  # an empty line is an answer, never a trailing flush
    with pytest.raises(ValueError):
        Framing("tab", b"\t", per_line=True)


# ---- one persistent process ----------------------------------------------------------------------


async def test_many_records_in_flight_through_one_process_in_order():
    translator = translator_for("--null", framing=NULL_FLUSH)
    texts = [f"record {i}\nwith a second line ¿é? 🙂" for i in range(300)] + ["", "tab\tand\r\nCRLF"]
    try:
        assert await texts_through(translator, texts) == [(expected(t), None) for t in texts]
        first = translator.runners[0].pid
        assert await texts_through(translator, ["again"]) == [("T:AGAIN", None)]
        assert translator.runners[0].pid == first  # one process for everything
    finally:
        await translator.aclose()


async def test_line_framing_round_trips_sources_with_newlines():
    translator = translator_for(framing=LINES)
    try:
        results = await texts_through(translator, ["one\ntwo", "single", "trailing\n"])
        assert results == [("T:ONE\nT:TWO", None), ("T:SINGLE", None), ("T:TRAILING\nT:", None)]
    finally:
        await translator.aclose()


async def test_translate_gives_result_dicts_and_framing_errors_per_entry():
    translator = translator_for("--null", framing=NULL_FLUSH)
    try:
        results = await translator.translate([{"id": "a", "source": "hola"}, {"id": "b", "source": "x\0y"}])
    finally:
        await translator.aclose()
    assert results[0]["id"] == "a" and results[0]["predicted"] == "T:HOLA" and results[0]["latency_s"] >= 0
    assert results[1]["predicted"] is None and "which ends a record" in results[1]["error"]


async def test_a_crash_fails_only_the_record_that_caused_it_with_the_stderr_tail():
    translator = translator_for("--null", framing=NULL_FLUSH)
    texts = [f"before {i}" for i in range(20)] + ["!crash now"] + [f"after {i}" for i in range(20)]
    try:
        results = await texts_through(translator, texts)
        runner = translator.runners[0]
        assert runner.restarts >= 1
    finally:
        await translator.aclose()
    for text, (predicted, error) in zip(texts, results, strict=True):
        if text.startswith("!crash"):
            assert predicted is None
            assert error == "record_translator.py exited with code 3 | stderr: crashing on purpose"
        else:
            assert (predicted, error) == (expected(text), None)


async def test_a_stray_or_missing_line_fails_only_its_own_entry_never_shifting_the_others():
    translator = translator_for()  # LINES: aligned by a marker after each record
    try:
        texts = ["one", "!warn two", "three", "!skip four", "five", "six\n!warn seven", "eight"]
        for _ in range(2):  # in one call (pipelined), then one text per call at once
            outcomes = await texts_through(translator, texts) if _ == 0 else [
                (r.text, r.error) for rs in await asyncio.gather(*(translator.translate_texts([t]) for t in texts))
                for r in rs]
            assert [text for text, _ in outcomes] == [expected("one"), None, expected("three"), None,
                                                      expected("five"), None, expected("eight")]
            assert outcomes[1][1] == ("record_translator.py: the program wrote 2 lines for it instead of one "
                                      "('warning: low confidence', 'T:!WARN TWO')")
            assert outcomes[3][1] == "record_translator.py: the program wrote no answer for it"
            assert "2 lines" in (outcomes[5][1] or "")
        assert translator.runners[0].restarts == 0
    finally:
        await translator.aclose()

BANNER_PROGRAM = ("import sys, time\ntime.sleep(0.3)\nprint('Loading model... done', flush=True)\n"
                  "print('ready', flush=True)\nfor line in sys.stdin:\n    print(line.rstrip('\\n').upper(), "
                  "flush=True)\n")


async def test_a_banner_printed_at_start_fails_no_record(tmp_path):
    """Before: the first record, sent while the program was loading, got the banner's lines too and failed
    ("wrote 3 lines for it instead of one")."""
    script = tmp_path / "banner.py"
    script.write_text(BANNER_PROGRAM, encoding="utf-8")
    translator = ProcessTranslator([sys.executable, str(script)], framing=LINES, options=FAST)
    try:
        assert await texts_through(translator, ["one", "two"]) == [("ONE", None), ("TWO", None)]
        assert translator.runners[0].restarts == 0
    finally:
        await translator.aclose()


MANGLING_PROGRAM = ("import sys\nfor line in sys.stdin:\n    print(line.rstrip('\\n').upper().translate("
                    "str.maketrans('0123456789', 'abcdefghij')), flush=True)\n")


async def test_a_program_that_alters_the_marker_lines_is_told_so_not_that_it_gave_no_answer(tmp_path):
    """Before: "gave no answer within 1 s", for a program that answered every line (and changed the markers')."""
    script = tmp_path / "mangling.py"
    script.write_text(MANGLING_PROGRAM, encoding="utf-8")
    translator = ProcessTranslator([sys.executable, str(script)], framing=LINES,
                                   options=ProcessOptions(timeout_s=1, shutdown_grace_s=0.3))
    try:
        [(text, error)] = await texts_through(translator, ["one"])
    finally:
        await translator.aclose()
    assert text is None and error.startswith("mangling.py wrote lines but passed back no marker line (⟦")
    assert "within 1 s, so none can be matched to a record: a program that changes or drops such lines runs with " \
           "persistent=False (one process per batch)" in error


async def test_without_markers_a_stray_line_would_shift_every_later_answer():
    """Why LINES is aligned: the same program under an unaligned line framing answers the wrong texts."""
    unaligned = Framing("line", b"\n", per_line=True, aligned=False)
    translator = translator_for(framing=unaligned)
    try:
        outcomes = await texts_through(translator, ["!warn one", "two", "three"])
        assert [text for text, _ in outcomes] == ["warning: low confidence", expected("!warn one"), expected("two")]
    finally:
        await translator.aclose()


async def test_a_stuck_program_is_killed_and_only_the_stuck_record_times_out():
    translator = translator_for("--null", framing=NULL_FLUSH,
                                   options=ProcessOptions(timeout_s=0.5, shutdown_grace_s=0.5))
    try:
        results = await texts_through(translator, ["a", "!hang", "b", "c"])
        assert await texts_through(translator, ["d"]) == [("T:D", None)]
    finally:
        await translator.aclose()
    assert results[0] == ("T:A", None) and results[2:] == [("T:B", None), ("T:C", None)]
    assert results[1] == (None, "record_translator.py gave no answer within 0.5 s")


async def test_an_oversized_answer_fails_its_record_only():
    translator = translator_for("--null", framing=NULL_FLUSH,
                                   options=ProcessOptions(timeout_s=2, max_record_bytes=1024, shutdown_grace_s=0.5))
    try:
        results = await texts_through(translator, ["!big", "fine"])
    finally:
        await translator.aclose()
    oversized = ("record_translator.py sent an answer over 1,024 bytes without ending it. Fix: make it end each "
                 "answer with the framing's terminator (and flush it), or, if its answers are that long, raise "
                 "ProcessOptions.max_record_bytes")
    assert results == [(None, oversized), ("T:FINE", None)]


async def test_restart_when_keeps_state_from_leaking_between_records():
    leaky = ProcessTranslator(stages=[Stage(tuple(program("--null")))], framing=NULL_FLUSH)
    exact = ProcessTranslator(stages=[Stage(tuple(program("--null")), restart_when="state changed")],
                              framing=NULL_FLUSH)
    texts = ["one", "!taint", "two", "three", "!taint again", "four"]
    try:
        assert [t for t, _ in await texts_through(leaky, texts)][2] == "tainted T:TWO"
        results = await texts_through(exact, texts)
        assert [t for t, _ in results] == ["T:ONE", "tainted T:!TAINT", "T:TWO", "T:THREE",
                                           "tainted T:!TAINT AGAIN", "T:FOUR"]
        assert exact.runners[0].renewals == 2 and exact.runners[0].restarts == 0
    finally:
        await leaky.aclose()
        await exact.aclose()


async def test_a_pipeline_of_stages_passes_each_record_through_every_program():
    stages = [Stage(tuple(program("--null")), label="first"), Stage(tuple(program("--null")), lockstep=True)]
    translator = ProcessTranslator(stages=stages, framing=NULL_FLUSH)
    try:
        assert await texts_through(translator, ["ab", "c\nd"]) == [("T:T:AB", None), ("T:T:C\nD", None)]
    finally:
        await translator.aclose()


async def test_concurrent_callers_share_one_process_safely():
    translator = translator_for("--null", framing=NULL_FLUSH)
    batches = [[f"batch {b} entry {i}" for i in range(8)] for b in range(8)]
    try:
        results = await asyncio.gather(*(texts_through(translator, batch) for batch in batches))
    finally:
        await translator.aclose()
    assert results == [[(expected(t), None) for t in batch] for batch in batches]


async def test_a_pool_spreads_concurrent_calls_over_its_processes():
    translator = translator_for("--null", framing=NULL_FLUSH, processes=2)
    try:
        await asyncio.gather(*(texts_through(translator, ["!slow", "x"]) for _ in range(2)))
        pids = {runner.pid for runner in translator.runners}
    finally:
        await translator.aclose()
    assert len(pids) == 2 and None not in pids


async def test_a_caller_that_gives_up_does_not_shift_later_answers():
    translator = translator_for("--null", framing=NULL_FLUSH)
    try:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(translator.translate_texts(["!slow", "!slow too"]), 0.05)
        assert await texts_through(translator, ["next", "and next"]) == [("T:NEXT", None), ("T:AND NEXT", None)]
    finally:
        await translator.aclose()


async def test_a_program_that_cannot_start_fails_each_entry_then_stops_being_retried():
    translator = translator_for("--die-at-start", "--null", framing=NULL_FLUSH,
                                   options=ProcessOptions(timeout_s=2, restart_budget=2, shutdown_grace_s=0.5))
    try:
        first = await texts_through(translator, ["a"])
        assert first == [(None, "record_translator.py exited with code 2 | stderr: cannot load my model")]
        later = [await texts_through(translator, ["b"]) for _ in range(3)]
    finally:
        await translator.aclose()
    assert later[-1][0][1].startswith("record_translator.py keeps failing: 2 restarts within 60 s; last failure: "
                                      "record_translator.py exited with code 2 | stderr: cannot load my model")
    missing = ProcessTranslator(["/nonexistent/translator"])
    assert (await texts_through(missing, ["a"]))[0][1].startswith("cannot start translator (/nonexistent/translator)")
    await missing.aclose()


async def test_shutdown_leaves_nothing_running():
    translator = translator_for("--null", "--child", framing=NULL_FLUSH)
    assert await texts_through(translator, ["a"]) == [("T:A", None)]
    group = translator.runners[0].pid
    assert group is not None and len(group_members(group)) == 2  # the program and its sleep
    await translator.aclose()
    assert group_members(group) == []


# ---- one process per batch -----------------------------------------------------------------------


async def test_batch_mode_answers_each_text_with_one_process_per_call():
    translator = translator_for("--batch", framing=LINES, persistent=False)
    results = await texts_through(translator, ["one", "two\nlines", ""])
    assert results == [("T:ONE", None), ("T:TWO\nT:LINES", None), ("T:", None)]


async def test_batch_mode_finds_the_record_a_program_fails_on():
    translator = translator_for("--batch", "--null", framing=NULL_FLUSH, persistent=False)
    texts = [f"t{i}" for i in range(6)] + ["!crash"] + [f"u{i}" for i in range(5)]
    results = await texts_through(translator, texts)
    for text, (predicted, error) in zip(texts, results, strict=True):
        if text == "!crash":
            assert error == "record_translator.py exited with code 3 | stderr: crashing on purpose"
        else:
            assert (predicted, error) == (expected(text), None)


async def test_batch_mode_reports_a_wrong_number_of_answers_and_timeouts():
    short = translator_for("--batch", framing=NULL_FLUSH, persistent=False)
    (_, error), = await texts_through(short, ["a"])  # answers with newlines: one NUL-less blob
    assert error is not None and error.startswith("record_translator.py gave 2 answers for 1 record(s) (null-flush")
    slow = translator_for("--batch", "--null", framing=NULL_FLUSH, persistent=False,
                          options=ProcessOptions(timeout_s=0.3, shutdown_grace_s=0.3))
    results = await texts_through(slow, ["fine", "!hang"])
    assert results == [("T:FINE", None), (None, "record_translator.py did not finish 1 record(s) within 0.3 s")]


CRLF_PROGRAM = ("import sys\nfor line in sys.stdin.buffer:\n    sys.stdout.buffer.write(line.rstrip(b'\\n').upper() + "
                "b'\\r\\n')\n    sys.stdout.flush()\n")


@pytest.mark.parametrize("persistent", [True, False])
async def test_a_line_program_ending_its_lines_with_crlf_gives_texts_without_the_cr(tmp_path, persistent: bool):
    """Before: every translation ended with "\\r" (a Windows build of a translator, or a script writing \\r\\n)."""
    script = tmp_path / "crlf.py"
    script.write_text(CRLF_PROGRAM, encoding="utf-8")
    translator = ProcessTranslator([sys.executable, str(script)], framing=LINES, persistent=persistent, options=FAST)
    try:
        assert await texts_through(translator, ["one", "two\nlines"]) == [("ONE", None), ("TWO\nLINES", None)]
    finally:
        await translator.aclose()


def test_answers_are_counted_as_they_are_split():
    """Before: "gave about 4 answers" for three, the empty text after the last terminator counted as one."""
    assert NULL_FLUSH.count_answers(b"x\0y\0z\0") == 3 and NULL_FLUSH.count_answers(b"x\0y\0z") == 3
    assert NULL_FLUSH.count_answers(b"x\0\0\0") == 1 and NULL_FLUSH.count_answers(b"") == 0


async def test_batch_mode_ends_a_runaway_program_at_once_without_holding_its_output():
    """Before: its whole output was kept until the timeout (a program printing for ever filled the memory)."""
    limits = ProcessOptions(timeout_s=60, max_record_bytes=1000, shutdown_grace_s=0.3)
    endless_answer = translator_for("--batch", framing=LINES, persistent=False, options=limits)
    (_, error), = await texts_through(endless_answer, ["!big"])
    assert error is not None and error.startswith("record_translator.py sent an answer over 1,000 bytes without "
                                                  "ending it. Fix:")
    endless_answers = ProcessTranslator(["yes"], framing=LINES, persistent=False, options=limits)
    assert await texts_through(endless_answers, ["a"]) == [(None, "yes gave over 18 answers for 1 record(s)")]


def test_a_pipeline_needs_persistent_stages():
    with pytest.raises(ValueError, match="one process per batch runs a single command"):
        ProcessTranslator(stages=[Stage(("a",)), Stage(("b",))], persistent=False)
    with pytest.raises(ValueError, match="either command"):
        ProcessTranslator()
    assert os.cpu_count() is None or ProcessTranslator(["x"], persistent=False).processes == os.cpu_count()


@pytest.mark.parametrize(("command", "name"), [
    (["/usr/bin/python3", "/x/bin/word-mt.py"], "word-mt.py"),
    (["python3", "-X", "utf8", "-u", "mt.py", "--model", "m.bin"], "mt.py"),
    (["python3", "-m", "mymt", "--fast"], "mymt"),
    (["python3", "-c", "print(1)"], "python3"),
    (["node", "translate.js"], "translate.js"),
    (["stdbuf", "-oL", "/opt/my-mt", "--model", "x"], "my-mt"),
    (["env", "LANG=C", "perl", "tr.pl"], "tr.pl"),
    (["apertium", "-u", "eng-spa"], "apertium"),
    (["env", "-u", "LANG", "my-mt"], "my-mt"),  # (before: LANG)
    (["env", "-i", "PATH=/usr/bin", "--", "my-mt", "x"], "my-mt"),
    (["nice", "-n", "10", "my-mt"], "my-mt"),
    (["timeout", "-s", "KILL", "30", "stdbuf", "-o", "L", "python3", "-u", "mt.py"], "mt.py"),
    (["taskset", "-c", "0,1", "/opt/bin/my-mt"], "my-mt"),
    (["env", "-u", "LANG"], "env"),  # (no command after it: itself)
])
def test_a_program_is_named_by_its_script_not_its_interpreter(command: list[str], name: str):
    from mt_eval.adapters.program_names import program_name

    assert program_name(command) == name

