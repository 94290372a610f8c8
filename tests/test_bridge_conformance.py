"""Both reference guests pass every conformance transcript; the runner itself catches failures."""

from __future__ import annotations

import asyncio
import logging
import shutil
import sys
import time
from pathlib import Path

import pytest

from mt_eval.bridge.conformance import run_vector
from mt_eval.bridge.runtimes import node_command, node_guest_script, python_command
from mt_eval.bridge.transcripts import load_vectors, mismatch, requests_of

REVERSE = Path(__file__).parent / "fixtures" / "reverse"
DECIDES_ONLY = Path(__file__).parent.parent / "examples" / "rules-grader"
VECTORS = load_vectors()
# Each transcript once, or once per request its by_request steps are written for (the reverse fixture does both).
RUNS = [(vector, request) for vector in VECTORS for request in requests_of(vector) or [None]]
GUESTS = {
    "python": python_command(REVERSE),
    "node": node_command(REVERSE),
}


def test_there_are_transcripts_for_the_documented_cases():
    names = {v["name"] for v in VECTORS}
    assert {"handshake", "translate", "parse-error", "version-mismatch", "not-initialized", "many-in-flight",
            "shutdown", "unicode-and-newlines", "initialize-twice", "requests-after-shutdown"} <= names


@pytest.mark.parametrize("runtime", list(GUESTS))
@pytest.mark.parametrize(("vector", "request_kind"), RUNS, ids=lambda v: v["name"] if isinstance(v, dict) else v)
async def test_reference_guest_passes(runtime: str, vector, request_kind: str | None):
    """Before (the decide runs): a whole-number float in a decide request's config (64.0) was refused by the
    Python guest, which reads it as 64 in translate's."""
    if runtime == "node" and (shutil.which("node") is None or not node_guest_script().is_file()):
        pytest.fail(f"the Node guest runner {node_guest_script()} (and node) are required")
    outcome = await run_vector(vector, GUESTS[runtime], request=request_kind)
    assert outcome.passed, f"{outcome.failure}\nstderr:\n{outcome.stderr_tail}"
    assert outcome.skipped is None or "unless" in vector or "requires_capability" in vector


def _requires(vector) -> list[str]:
    required = vector.get("requires", [])
    return [required] if isinstance(required, str) else required


@pytest.mark.parametrize("vector", [v for v in VECTORS if "decide" in _requires(v) or "unless" in v],
                         ids=lambda v: v["name"])
async def test_a_guest_that_only_translates_skips_the_decide_transcripts_and_refuses_decide(vector):
    outcome = await run_vector(vector, python_command(Path(__file__).parent.parent / "examples" / "lexicon-eng-spa"))
    assert outcome.passed, f"{outcome.failure}\nstderr:\n{outcome.stderr_tail}"
    assert outcome.skipped == {"decide": None, "translate": "the guest implements translate"}.get(
        vector.get("unless"), "the guest does not implement decide")


@pytest.mark.parametrize("runtime", ["python", "node"])
def test_check_passes_a_guest_that_only_decides_running_the_protocol_transcripts_with_decide(runtime: str):
    """Before: 16 of the 29 transcripts failed a correct decision-only guest, as each sent it translate."""
    import subprocess

    guest = python_command(DECIDES_ONLY) if runtime == "python" else node_command(DECIDES_ONLY)
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "bridge", "check", "--", *guest],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    translate_only = [v["name"] for v in VECTORS if "translate" in _requires(v)]
    assert {"translate", "invalid-params", "extra-entry-fields", "decide-and-translate-in-flight"} <= \
        set(translate_only)
    for name in translate_only:  # (translate's own semantics: skipped, and said so)
        assert f"  skip  {name}: the guest does not implement translate" in done.stdout
    for vector in VECTORS:
        if requests_of(vector):  # (the protocol's: run with decide)
            assert f"  ok    {vector['name']} (decide)" in done.stdout
    skipped = len(translate_only) + 1  # (and decide-not-implemented)
    assert f"conformance: {len(VECTORS) - skipped} passed, 0 failed, {skipped} not applicable" in done.stdout
    assert "(translate)" not in done.stdout


WRONG_PARSE_ERROR = """import json, subprocess, sys, threading
guest = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE)


def forward():  # (in a thread of its own: a guest that sits single-threaded in read() would be taken for a filter)
    for line in sys.stdin.buffer:
        try:
            json.loads(line)
        except ValueError:
            print('{"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "invalid request"}}', flush=True)
            continue
        guest.stdin.write(line)
        guest.stdin.flush()
    guest.stdin.close()


threading.Thread(target=forward, daemon=True).start()
sys.exit(guest.wait())
"""


def test_check_fails_a_guest_that_only_decides_for_a_protocol_fault_naming_the_transcript(tmp_path: Path):
    """Before: every guest that only decides failed parse-error, for its translate request, whatever its fault."""
    import subprocess

    wrapper = tmp_path / "wrong_parse_error.py"
    wrapper.write_text(WRONG_PARSE_ERROR)
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "bridge", "check", "--", sys.executable, str(wrapper),
                           *python_command(DECIDES_ONLY)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert ("  FAIL  parse-error (decide): a line that is not JSON gets -32700 with a null id, and the guest keeps "
            "serving.\n        step 4 (expect): $.error.code: expected -32700, got -32600") in done.stdout
    assert "  ok    string-request-ids (decide)" in done.stdout


def test_every_message_a_transcript_compares_word_for_word_is_written_in_the_protocol():
    """Before: a guest written from bridge/PROTOCOL.md failed four transcripts on error messages it never stated."""
    protocol = (Path(__file__).parent.parent / "bridge" / "PROTOCOL.md").read_text(encoding="utf-8")
    steps = [each for v in VECTORS for step in v["steps"] for each in step.get("by_request", {}).values() or [step]]
    patterns = [step.get("expect") for step in steps]
    patterns += [p for step in steps for p in step.get("expect_unordered", [])]
    messages = {p["error"]["message"] for p in patterns if isinstance(p, dict) and isinstance(p.get("error"), dict)
                and isinstance(p["error"].get("message"), str) and not p["error"]["message"].startswith("$")}
    assert len(messages) >= 10
    assert [message for message in sorted(messages) if f"`{message}`" not in protocol] == []


def test_the_decide_transcripts_exist():
    names = {v["name"]: v for v in VECTORS}
    assert names["decide"]["requires"] == names["decide-invalid-params"]["requires"] == "decide"
    assert names["decide-not-implemented"]["unless"] == "decide"


async def test_a_broken_guest_fails_with_the_step_and_reason(tmp_path: Path):
    script = tmp_path / "bad_guest.py"
    script.write_text("import sys\nfor line in sys.stdin:\n    print('hello', flush=True)\n")
    [handshake] = [v for v in VECTORS if v["name"] == "handshake"]
    outcome = await run_vector(handshake, [sys.executable, str(script)], step_timeout_s=5)
    assert outcome.failure == ("step 2 (expect): stdout line is not JSON: 'hello\\n' (a host would log and skip it, "
                               "but the protocol forbids it: stdout carries protocol lines only; write anything "
                               "else to stderr)")


async def test_a_silent_guest_times_out_instead_of_hanging(tmp_path: Path):
    script = tmp_path / "silent.py"
    script.write_text("import time\ntime.sleep(60)\n")
    [handshake] = [v for v in VECTORS if v["name"] == "handshake"]
    outcome = await run_vector(handshake, [sys.executable, str(script)], step_timeout_s=0.5)
    assert outcome.failure == "step 2 (expect): nothing within 0.5 s (the guest did not answer initialize)"
    assert outcome.initialize_unanswered


@pytest.mark.parametrize(("pattern", "actual", "problem"), [
    ({"a": "$string"}, {"a": "x", "b": 1}, None),
    ({"a": "$string"}, {"a": 1}, "$.a: expected string, got 1"),
    ({"a": [1, "$any"]}, {"a": [1]}, "$.a: expected a list of 2, got [1]"),
    ({"id": None}, {"id": 0}, "$.id: expected null, got 0"),
    ({"ok": True}, {"ok": 1}, "$.ok: expected true, got 1"),
    ({"n": "$integer"}, {"n": 1.5}, "$.n: expected integer, got 1.5"),
    ({"x": "$null_or_string"}, {}, "$: missing 'x', got {}"),
    ({"error": "$object"}, {"id": 4, "result": None}, "$: missing 'error', got {\"id\": 4, \"result\": null}"),
])
def test_patterns(pattern, actual, problem):
    assert mismatch(pattern, actual) == problem


def test_check_command_reports_and_exits(tmp_path: Path):
    import subprocess

    ok = subprocess.run([sys.executable, "-m", "mt_eval.cli", "bridge", "check", "--", *python_command(REVERSE)],
                        capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    unless = sum(1 for v in VECTORS if v.get("unless") in ("decide", "translate"))
    assert f"conformance: {len(RUNS) - unless} passed, 0 failed, {unless} not applicable" in ok.stdout
    assert "  skip  decide-not-implemented: the guest implements decide" in ok.stdout
    assert "  ok    parse-error (translate)\n  ok    parse-error (decide)\n" in ok.stdout  # (it does both: each runs)
    bad = subprocess.run([sys.executable, "-m", "mt_eval.cli", "bridge", "check", "--", "cat"],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 1
    assert bad.stdout.count("FAIL") == 1  # (it stops: every transcript would fail the same way)
    assert "step 2 (expect): cat is not a bridge guest: it sent the initialize request back" in bad.stdout
    assert (f"conformance: stopped: cat is not a bridge guest, so the other {len(VECTORS) - 1} transcripts were not "
            "run (each would fail the same way: every one needs a working handshake)") in bad.stdout


def test_check_stops_at_a_guest_that_exits_before_answering_initialize_and_says_how(tmp_path: Path):
    """Before: 27 failures, each "the guest closed its stdin" or "its stdout", and never the exit status."""
    import subprocess

    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "bridge", "check", "--", "sh", "-c",
                           "echo 'cannot load model' >&2; exit 3"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stdout.startswith("checking `sh -c 'echo '\"'\"'cannot load model'\"'\"' >&2; exit 3'` against ")
    assert done.stdout.count("FAIL") == 1
    assert "(the guest exited with code 3 before answering initialize)" in done.stdout
    assert "guest stderr: cannot load model" in done.stdout
    assert (f"conformance: stopped: the guest exited with code 3 before answering initialize, so the other "
            f"{len(VECTORS) - 1} transcripts were not run") in done.stdout


def test_check_says_what_is_wrong_with_an_initialize_answer_the_guest_exits_after(tmp_path: Path):
    """An answer that ends at the guest's exit, without its newline, was reported as no answer at all ("exited with
    code 0 before answering initialize")."""
    import subprocess

    script = tmp_path / "wrong_answer.py"
    script.write_text("import json, sys\nrequest = json.loads(sys.stdin.readline())\n"
                      "sys.stdout.write(json.dumps({'jsonrpc': '2.0', 'id': request['id'], 'result': {}}))\n")
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "bridge", "check", "--", sys.executable,
                           str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "before answering initialize" not in done.stdout
    assert ("step 2 (expect): $.result: missing 'protocol_version', got {} (in its answer to initialize; then the "
            "guest exited with code 0)") in done.stdout
    assert ("conformance: stopped: the guest's answer to initialize is wrong ($.result: missing 'protocol_version', "
            "got {}), and then it exited with code 0, so the other") in done.stdout


def test_check_stops_after_the_first_unanswered_initialize(tmp_path: Path):
    """A guest that never answers initialize costs one step timeout, not one per transcript (~3 minutes)."""
    import subprocess
    import time

    silent = tmp_path / "silent.py"
    silent.write_text("import sys, time\nsys.stderr.write('warming up forever\\n')\nsys.stderr.flush()\n"
                      "time.sleep(600)\n")
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "bridge", "check", "--", sys.executable, str(silent)],
                          capture_output=True, text=True, timeout=120)
    assert time.monotonic() - started < 30
    assert done.returncode == 1
    assert done.stdout.count("FAIL") == 1
    assert "nothing within 10 s (the guest did not answer initialize)" in done.stdout
    assert "warming up forever" in done.stdout
    assert (f"conformance: stopped: the guest does not answer initialize, so the other {len(VECTORS) - 1} "
            "transcripts were not run") in done.stdout


INITIALIZE = {"send": {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                       "params": {"protocol_versions": ["mt-eval-bridge/1"], "config": {}}}}


def check(capsys, vectors: Path, guest: str) -> tuple[int, str]:
    from mt_eval.cli import main

    code = main(["bridge", "check", "--vectors", str(vectors), "--", sys.executable, "-c", guest])
    shown = capsys.readouterr()
    return code, shown.out + shown.err


def test_a_transcript_file_that_is_not_one_is_named(tmp_path: Path, capsys):
    """A truncated or step-less transcript was a Python traceback."""
    for content, says in [('{"name": "x", "steps": [', "cannot be read as a transcript: Expecting value"),
                          ('{"name": "x"}', 'a transcript is an object with a "name" and a list of "steps"')]:
        (tmp_path / "a.json").write_text(content)
        code, out = check(capsys, tmp_path, "pass")
        assert code == 2 and f"mt-eval bridge check: {tmp_path / 'a.json'}: {says}" in out and "Traceback" not in out


@pytest.mark.parametrize("option", ["--vectors", "--cwd"])
@pytest.mark.parametrize("kind", ["missing", "file"])
def test_a_vectors_or_cwd_that_is_no_directory_is_named_not_blamed_on_the_guest(tmp_path: Path, capsys, option,
                                                                                 kind):
    from mt_eval.cli import main

    given = tmp_path / "nowhere"
    if kind == "file":
        given.write_text("")
    code = main(["bridge", "check", option, str(given), "--", sys.executable, "-c", "pass"])
    err = capsys.readouterr().err
    what = "does not exist" if kind == "missing" else "is not a directory"
    assert code == 2 and f"mt-eval bridge check: {option} {given} {what}: give the directory" in err
    assert "give the guest's command" not in err and "no transcripts" not in err


def test_a_line_over_the_protocols_limit_fails_and_a_hang_after_a_raw_request_is_not_blamed_on_initialize(
        tmp_path: Path, capsys):
    """A host refuses a line over 16 MiB, so the check does too (it read up to 64 MiB and passed the guest)."""
    import json

    (tmp_path / "a.json").write_text(json.dumps({"name": "huge", "steps": [INITIALIZE, {"expect": {"id": 1}}]}))
    huge = "import sys\nsys.stdin.readline()\nprint('{\"id\": 1, \"x\": \"' + 'a' * (17 << 20) + '\"}', flush=True)\n"
    code, out = check(capsys, tmp_path, huge)
    assert code == 1 and "the guest sent a 17,825," in out and "over the protocol's 16,777,216-byte limit" in out
    raw = {"send_raw": '{"jsonrpc": "2.0", "id": 2, "method": "translate", "params": {"entries": []}}\n'}
    (tmp_path / "a.json").write_text(json.dumps({"name": "raw", "steps": [INITIALIZE, {"expect": {"id": 1}}, raw,
                                                                          {"expect": {"id": 2}}]}))
    answers_initialize_only = ("import sys\nsys.stdin.readline()\nprint('{\"jsonrpc\": \"2.0\", \"id\": 1, "
                               "\"result\": {}}', flush=True)\nsys.stdin.readline()\nimport time\ntime.sleep(60)\n")
    code, out = check(capsys, tmp_path, answers_initialize_only)
    assert code == 1 and 'nothing within 10 s, expected {"id": 2}' in out and "did not answer initialize" not in out


async def test_what_a_guest_starts_outside_its_process_group_is_ended_with_it(tmp_path: Path, caplog):
    """A guest that starts a process in a session of its own (setsid) holds nothing up: the transcript ends when the
    guest does, the process is ended, and the log names it."""
    from process_support import marked_environment, processes_marked

    guest = tmp_path / "guest.sh"
    guest.write_text(f"#!/bin/sh\nsetsid sleep 60 < /dev/null &\nsleep 1\n{' '.join(python_command(REVERSE))}\n")
    guest.chmod(0o755)
    marker, environment = marked_environment()
    [vector] = [v for v in VECTORS if v["name"] == "translate"]
    with caplog.at_level(logging.WARNING, logger="mt_eval.bridge"):
        outcome = await asyncio.wait_for(run_vector(vector, [str(guest)], env=environment), 30)
    assert outcome.passed, outcome.failure
    assert processes_marked(marker) == []
    assert "left 1 process running outside its process group" in caplog.text and "sleep 60" in caplog.text


async def test_what_a_guest_that_exited_by_itself_left_in_its_group_is_ended(tmp_path: Path):
    """Before: the group was killed only while the guest still ran, so a guest that exited at once (it could not load
    its model) left its helper behind after every transcript."""
    from process_support import marked_environment, processes_marked

    guest = tmp_path / "guest.sh"
    guest.write_text("#!/bin/sh\nsleep 60 < /dev/null > /dev/null 2>&1 &\necho 'cannot load model' >&2\nexit 3\n")
    guest.chmod(0o755)
    marker, environment = marked_environment()
    [vector] = [v for v in VECTORS if v["name"] == "translate"]
    outcome = await asyncio.wait_for(run_vector(vector, [str(guest)], env=environment), 30)
    assert not outcome.passed
    for _ in range(100):  # (SIGKILL was sent: until the kernel has ended it)
        if not processes_marked(marker):
            break
        await asyncio.sleep(0.05)
    assert processes_marked(marker) == []


@pytest.mark.parametrize(("program", "seen"), [
    ("import sys\nfor line in sys.stdin: print(line.upper(), end='', flush=True)",
     "it answered the initialize request with a line of text ('{\"JSONRPC\""),
    ("import sys\nsys.stdout.write(''.join(sorted(sys.stdin)))",
     "it read the initialize request and waits for more input without answering"),
], ids=["answers-text", "waits-for-more-input"])
def test_check_stops_at_a_text_filter_and_says_what_it_did(program: str, seen: str):
    import subprocess

    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "bridge", "check", "--", sys.executable, "-c",
                           program], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.count("FAIL") == 1, done.stdout
    assert f"is not a bridge guest: {seen}" in done.stdout
    assert "wrap it: an entry_point class whose translate() calls mt_eval.adapters.ProcessTranslator" in done.stdout
    assert "transcripts were not run (each would fail the same way: every one needs a working handshake)" in \
        done.stdout
    assert time.monotonic() - started < 30  # (not the start timeout of each transcript)


@pytest.mark.parametrize(("ids", "says"), [
    ((2, 3), None),
    ((3, 4), 'step 4 (expect_unordered): the lines do not match the patterns in any order: {"id": 3} | {"id": 4}'),
])
def test_an_unordered_step_passes_lines_that_fit_its_patterns_in_some_order(tmp_path: Path, capsys, ids, says):
    """Before: each line took the first pattern it matched, so line 2 took "$integer" and line 3 was left with
    nothing (a correct guest failed); lines that each match some pattern but not all together still fail."""
    import json

    unordered = {"expect_unordered": [{"id": "$integer"}, {"id": 2}]}
    (tmp_path / "a.json").write_text(json.dumps({"name": "overlap", "steps": [
        INITIALIZE, {"expect": {"id": 1}}, {"send": {"jsonrpc": "2.0", "id": 2, "method": "method_card"}},
        unordered]}))
    guest = ("import sys\nsys.stdin.readline()\nprint('{\"id\": 1}', flush=True)\nsys.stdin.readline()\n"
             f"print('{{\"id\": {ids[0]}}}\\n{{\"id\": {ids[1]}}}', flush=True)\n")
    code, out = check(capsys, tmp_path, guest)
    assert (code, says is None or says in out) == (0 if says is None else 1, True), out


async def test_a_step_that_gets_nothing_says_what_it_expected():
    """Before: `step 3 (expect_unordered): nothing within 10 s`, without what the guest should have sent."""
    silent = {"name": "silent", "steps": [INITIALIZE, {"expect": {"id": 1}},
                                          {"expect_unordered": [{"id": 2}, {"id": "é"}]}]}
    guest = "import sys, time\nsys.stdin.readline()\nprint('{\"id\": 1}', flush=True)\ntime.sleep(60)\n"
    outcome = await run_vector(silent, [sys.executable, "-c", guest], step_timeout_s=1)
    assert outcome.failure == ('step 3 (expect_unordered): nothing within 1 s, expected 2 lines matching, in any '
                               'order, [{"id": 2}, {"id": "é"}]')
