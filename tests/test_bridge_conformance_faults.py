"""`mt-eval bridge check` against guests that misbehave: it says what went wrong, and each transcript ends promptly."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import pytest

from mt_eval.bridge.conformance import run_vector
from mt_eval.bridge.transcripts import load_vectors

VECTORS = {v["name"]: v for v in load_vectors()}
ANSWERS_INITIALIZE_ONLY = """import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") != "initialize":
        sys.exit(4)
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {
        "protocol_version": "mt-eval-bridge/1", "method": {"name": "x", "method_id": "x"}, "card": None,
        "capabilities": {}, "guest": {"name": "g", "version": "1", "runtime": "python"}}}), flush=True)
"""


async def test_a_guest_that_floods_stdout_is_ended_without_waiting_for_its_pipe():
    """Before: the reader stopped taking the flood at its limit, so the pipe never closed and each transcript waited
    5 s more for it (over two minutes for the bundled transcripts)."""
    flood = "import sys\nsys.stdin.readline()\nwhile True:\n    sys.stdout.write('x' * 1000 + '\\n')\n"
    started = time.monotonic()
    outcome = await asyncio.wait_for(run_vector(VECTORS["translate"], [sys.executable, "-c", flood]), 30)
    assert outcome.failure.startswith("step 2 (expect): stdout line is not JSON: 'xxx")
    assert time.monotonic() - started < 4


async def test_a_guest_that_exits_after_the_handshake_says_how_it_ended():
    """Before: "the guest closed its stdout (did it crash? see its stderr)", never its exit status."""
    outcome = await asyncio.wait_for(run_vector(VECTORS["translate"], [sys.executable, "-c", ANSWERS_INITIALIZE_ONLY]),
                                     30)
    assert outcome.failure == "step 4 (expect): the guest closed its stdout: it exited with code 4 (see its stderr)"


async def test_a_guest_that_exits_before_a_later_request_is_written_says_how_it_ended(tmp_path: Path):
    steps = [{"send": {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                       "params": {"protocol_versions": ["mt-eval-bridge/1"], "config": {}}}},
             {"expect": {"id": 1}}, {"send": {"jsonrpc": "2.0", "id": 2, "method": "method_card", "params": {}}}]
    for _ in range(2000):  # (until a write finds the pipe closed)
        steps.append({"send_raw": json.dumps({"jsonrpc": "2.0", "method": "nothing"}) + " " * 60000 + "\n"})
    vector = {"name": "late", "steps": steps}
    outcome = await asyncio.wait_for(run_vector(vector, [sys.executable, "-c", ANSWERS_INITIALIZE_ONLY]), 60)
    assert outcome.failure is not None and outcome.failure.endswith(
        ": the guest closed its stdin: it exited with code 4 (see its stderr)"), outcome.failure


async def test_a_line_nested_too_deeply_to_read_fails_the_step_not_the_check():
    """Before: a RecursionError traceback ended `mt-eval bridge check`."""
    deep = "import sys, time\nsys.stdin.readline()\nprint('[' * 200000 + ']' * 200000, flush=True)\ntime.sleep(60)\n"
    outcome = await asyncio.wait_for(run_vector(VECTORS["translate"], [sys.executable, "-c", deep]), 30)
    assert outcome.failure.startswith("step 2 (expect): the guest sent a line of JSON nested too deeply to read "
                                      "('[[[[")


def test_a_program_that_cannot_be_started_is_said_why(tmp_path: Path, capsys):
    """Before: "Permission denied" for a directory, a script without execute permission and an empty name alike."""
    from mt_eval.cli import main

    script = tmp_path / "guest.py"
    script.write_text("print('hi')\n")
    for program, says in [(str(tmp_path), "it is a directory, not a program"),
                          (str(script), f"it is not executable (make it so: chmod +x {script}, or run it with its "
                                        f"interpreter: python3 {script})"),
                          ("", "the program's name is empty")]:
        assert main(["bridge", "check", "--", program]) == 1
        err = capsys.readouterr().err
        assert f"mt-eval bridge check: cannot start {program!r}: {says}: give the guest's command after --" in err


def test_a_guest_that_answers_initialize_with_an_error_is_quoted_once(capsys):
    """Before: "$: missing 'result'" for each of 24 transcripts, never the guest's own error (a method that failed to
    load, say)."""
    from mt_eval.cli import main

    refuses = ("import json, sys\nfor line in sys.stdin:\n    message = json.loads(line)\n    print(json.dumps("
               "{'jsonrpc': '2.0', 'id': message.get('id'), 'error': {'code': -32603, 'message': "
               "'cannot load the method: boom\\n  fix: repair it'}}), flush=True)\n")
    assert main(["bridge", "check", "--", sys.executable, "-c", refuses]) == 1
    out = capsys.readouterr().out
    assert out.count("FAIL") == 1, out
    assert ("step 2 (expect): the guest answered with an error, not a result: -32603 cannot load the method: boom | "
            "fix: repair it") in out
    assert "conformance: stopped: the guest answers initialize with an error, so the other" in out


def test_a_guest_that_does_not_end_its_answer_with_a_newline_is_told_so(capsys):
    """Before: "python3 is not a bridge guest: it read the initialize request and waits for more input without
    answering, as a text filter does", with advice to wrap it as a translator program."""
    from mt_eval.cli import main

    unended = ANSWERS_INITIALIZE_ONLY.replace("}}), flush=True)", "}}), end='', flush=True)")
    assert unended != ANSWERS_INITIALIZE_ONLY
    started = time.monotonic()
    assert main(["bridge", "check", "--", sys.executable, "-c", unended]) == 1
    out = capsys.readouterr().out
    assert out.count("FAIL") == 1, out
    assert "step 2 (expect): the guest wrote '{\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": {" in out
    assert "and no newline after it: end each message with \"\\n\" and flush stdout" in out
    assert "not a bridge guest" not in out and "wrap it" not in out
    assert "conformance: stopped: the guest does not end its messages with a newline, so the other" in out
    assert time.monotonic() - started < 30


def test_a_transcript_step_that_is_not_one_is_named(tmp_path: Path, capsys):
    """Before: an AttributeError or a StopIteration traceback, once the guest had been started."""
    from mt_eval.cli import main

    for steps in ([1], [{}], [{"sned": {}}], [{"send": {}, "expect": {}}], [{"by_request": {}}],
                  [{"by_request": {"decide": {"sned": {}}}}], [{"by_request": {"decide": {"by_request": {}}}}]):
        (tmp_path / "a.json").write_text(json.dumps({"name": "x", "steps": steps}))
        assert main(["bridge", "check", "--vectors", str(tmp_path), "--", sys.executable, "-c", "pass"]) == 2
        err = capsys.readouterr().err
        assert f"mt-eval bridge check: {tmp_path / 'a.json'}: $.steps[0] is not a step: give an object with one of " \
               "send, send_raw, expect, expect_unordered, close_stdin, expect_exit" in err
        assert "Traceback" not in err


ANSWERS_WITH = """import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize":
        result = {"protocol_version": "mt-eval-bridge/1", "method": {"name": "x", "method_id": "x"}, "card": None,
                  "capabilities": {}, "guest": {"name": "g", "version": "1", "runtime": "python"}}
    else:
        result = {"results": [RESULT for entry in message["params"]["entries"]]}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"""


@pytest.mark.parametrize(("result", "problem"), [
    ('{"id": entry["id"], "predicted": len(entry["source"])}', '$.predicted: expected a string, got the number'),
    ('{"id": entry["id"]}', 'a result needs "predicted" or, when the entry failed, "error"'),
    ('{"id": entry["id"], "abstained": True}', 'an abstained result needs "abstain_reason" saying why'),
], ids=["predicted-a-number", "nothing-but-the-id", "abstained-without-a-reason"])
@pytest.mark.parametrize("transcript", ["translate", "many-in-flight"])
async def test_results_a_host_cannot_use_fail_the_transcript(result: str, problem: str, transcript: str):
    """Before: results were matched by id only, so a guest whose every entry a host fails passed every transcript."""
    guest = ANSWERS_WITH.replace("RESULT", result)
    outcome = await asyncio.wait_for(run_vector(VECTORS[transcript], [sys.executable, "-c", guest]), 30)
    assert outcome.failure is not None and "$.result.results[0]: a host cannot use this result, and fails entry " \
        in outcome.failure, outcome.failure
    assert problem in outcome.failure and "(the result: {\"id\": " in outcome.failure


@pytest.mark.parametrize("result", ['{"id": entry["id"], "predicted": "x"}', '{"id": entry["id"], "error": "no"}',
                                    '{"id": entry["id"], "abstained": True, "abstain_reason": "unsupported"}'])
async def test_a_translation_an_error_or_an_abstention_each_passes(result: str):
    guest = ANSWERS_WITH.replace("RESULT", result)
    outcome = await asyncio.wait_for(run_vector(VECTORS["translate"], [sys.executable, "-c", guest]), 30)
    assert outcome.passed, outcome.failure


DROPS_CANCELLED = """import json, os, sys
pending, buffered = {}, b""
while chunk := os.read(0, 1 << 20):
    buffered += chunk
    *lines, buffered = buffered.split(b"\\n")
    for line in lines:
        message = json.loads(line)
        if message.get("method") == "cancel":
            pending.pop(message["params"]["id"], None)  # (given up, so left unanswered)
        elif message.get("method") == "initialize":
            pending[message["id"]] = {"protocol_version": "mt-eval-bridge/1", "method": {"name": "x", "method_id": "x"},
                                      "card": None, "capabilities": {"cancel": CANCEL},
                                      "guest": {"name": "g", "version": "1", "runtime": "python"}}
        else:
            pending[message["id"]] = {"results": [{"id": e["id"], "predicted": "x"}
                                                  for e in message["params"]["entries"]]}
    for request_id, result in pending.items():
        print(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}), flush=True)
    pending.clear()
"""


async def test_a_guest_that_leaves_a_cancelled_request_unanswered_fails():
    """Before: no transcript cancelled a request in flight, so a guest a host kills at its first timeout passed."""
    guest = DROPS_CANCELLED.replace("CANCEL", "True")
    outcome = await asyncio.wait_for(run_vector(VECTORS["cancel"], [sys.executable, "-c", guest], step_timeout_s=2), 30)
    assert outcome.failure == 'step 4 (expect): nothing within 2 s, expected {"jsonrpc": "2.0", "id": 2}', \
        outcome.failure


async def test_the_cancel_transcript_does_not_apply_to_a_guest_that_cannot_cancel():
    guest = DROPS_CANCELLED.replace("CANCEL", "False")
    outcome = await asyncio.wait_for(run_vector(VECTORS["cancel"], [sys.executable, "-c", guest]), 30)
    assert outcome.passed and outcome.skipped == "the guest does not declare capabilities.cancel"


@pytest.mark.parametrize(("answer", "failure", "stopped"), [
    ("sys.stdout.write('Loading model...\\n')", "stdout line is not JSON: 'Loading model...\\n'",
     "the guest answers initialize with a line that is not JSON"),
    ("sys.stdout.buffer.write(b'{\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": \"caf\\xe9\"}\\n')",
     "the guest sent a line that is not valid UTF-8 (byte 0xe9 at offset 42): write every line as UTF-8",
     "the guest answers initialize with a line that is not valid UTF-8 (byte 0xe9 at offset 42)"),
])
def test_a_guest_whose_answer_to_initialize_cannot_be_read_stops_the_check(answer: str, failure: str, stopped: str,
                                                                            capsys):
    """Before: each of the ~31 transcripts failed the same way, a second apiece (a line not UTF-8 was called not
    JSON); the check stops at the first, as for a guest that never answers initialize."""
    from mt_eval.cli import main

    guest = f"import sys\nfor line in sys.stdin:\n    {answer}\n    sys.stdout.flush()\n"
    started = time.monotonic()
    assert main(["bridge", "check", "--", sys.executable, "-c", guest]) == 1
    out = capsys.readouterr().out
    assert out.count("FAIL") == 1, out
    assert f"step 2 (expect): {failure}" in out
    assert (f"conformance: stopped: {stopped}, so the other {len(VECTORS) - 1} transcripts were not run (each would "
            "fail the same way: every one needs a working handshake)") in out
    assert time.monotonic() - started < 10


async def test_a_line_past_what_is_read_names_the_protocols_limit_alone(monkeypatch):
    """Before: "a line over 67,108,864 bytes (the protocol's limit is 16,777,216)", two limits for one."""
    from mt_eval.bridge import conformance

    monkeypatch.setattr(conformance, "READ_LIMIT", 1 << 20)
    huge = "import sys\nsys.stdin.readline()\nsys.stdout.write('x' * (2 << 20) + '\\n')\nsys.stdout.flush()\n"
    outcome = await asyncio.wait_for(run_vector(VECTORS["handshake"], [sys.executable, "-c", huge]), 30)
    assert outcome.failure == ("step 2 (expect): the guest sent a line of more than 1,048,576 bytes (read no further), "
                               "over the protocol's 16,777,216-byte limit")
    assert outcome.no_handshake == ("the guest answers initialize with a line of more than 1,048,576 bytes (read no "
                                    "further), over the protocol's 16,777,216-byte limit")


def test_a_check_of_one_transcript_that_stops_does_not_speak_of_the_other_zero(tmp_path: Path, capsys):
    """Before: "so the other 0 transcripts were not run" with a --vectors directory of one transcript."""
    from mt_eval.cli import main

    one = next(v for v in VECTORS.values() if v["steps"][0].get("send", {}).get("method") == "initialize")
    (tmp_path / "one.json").write_text(json.dumps(one), encoding="utf-8")
    guest = "import sys\nfor line in sys.stdin:\n    sys.stdout.write('Loading model...\\n')\n    sys.stdout.flush()\n"
    assert main(["bridge", "check", "--vectors", str(tmp_path), "--", sys.executable, "-c", guest]) == 1
    out = capsys.readouterr().out
    assert "conformance: stopped: the guest answers initialize with a line that is not JSON\n" in out
    assert "other 0" not in out
