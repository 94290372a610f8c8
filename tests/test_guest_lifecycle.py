"""The Python guest (`mt-eval serve`) through a request's life, as the Node guest: requests read from a file
start as they would from a host, a cancel finds the request before it, a second initialize and anything after
shutdown are refused, an id already in flight is refused, a request without a config takes initialize's; and a
host whose start is cancelled leaves no guest behind and starts afresh on its next call."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from guest_lines import by_id, guest_replies
from mt_eval import event_loop
from mt_eval.bridge import messages as m
from mt_eval.bridge.connection import HostOptions
from mt_eval.bridge.method import BridgeMethod
from mt_eval.bridge.runtimes import python_command
from process_support import marked_environment, processes_marked

CONFIG = {"source_lang": "eng", "target_lang": "spa"}
SLOW_METHOD = """
import asyncio, os, time

time.sleep(float(os.environ.get("SLOW_IMPORT_S", "0")))

class Method:
    async def translate(self, entries, config):
        await asyncio.sleep(float(entries[0]["source"]) if entries[0]["source"][:1].isdigit() else 0)
        return [{"id": e["id"], "predicted": e["source"][::-1]} for e in entries]
"""


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    directory = tmp_path / "slow"
    directory.mkdir()
    (directory / "pipeline.py").write_text(SLOW_METHOD)
    (directory / "method.json").write_text(json.dumps({"name": "Slow", "entry_point": "pipeline:Method",
                                                       "dependencies": []}))
    return directory


def initialize(request_id: Any = 0) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize",
            "params": {"protocol_versions": ["mt-eval-bridge/1"], "config": CONFIG}}


def translate(request_id: Any, source: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "translate",
            "params": {"entries": [{"id": "e", "source": source}], "config": CONFIG}}


def served(plugin: Path, tmp_path: Path, *messages: dict[str, Any] | str) -> list[dict[str, Any]]:
    """Every answer `mt-eval serve` gives to ``messages`` read from a file, in the order given."""
    return guest_replies(python_command(plugin), list(messages), tmp_path)


def test_a_cancel_read_from_a_file_finds_the_request_before_it(plugin, tmp_path):
    answers = by_id(served(plugin, tmp_path, initialize(), translate(1, "0.5"),
                           {"jsonrpc": "2.0", "method": "cancel", "params": {"id": 1}}, translate(2, "ab")))
    assert answers[1]["error"]["code"] == m.CANCELLED
    assert answers[2]["result"]["results"][0]["predicted"] == "ba"


@pytest.mark.parametrize("given", ["file", "pipe"])
def test_a_last_request_without_its_newline_is_answered(plugin, tmp_path, given):
    """An editor that saves without a final newline, or a host that ends its input mid-line (`printf '%s'`): the
    last request was dropped without a word; it is answered, from a pipe as from a file."""
    import subprocess

    requests = json.dumps(initialize(1)) + "\n" + json.dumps(translate(2, "ab"))
    (tmp_path / "requests.jsonl").write_text(requests)
    with (tmp_path / "requests.jsonl").open("rb") as file:
        stdin: dict[str, Any] = {"stdin": file} if given == "file" else {"input": requests.encode()}
        done = subprocess.run(python_command(plugin), **stdin, capture_output=True, timeout=60)
    answers = by_id([json.loads(line) for line in done.stdout.splitlines()])
    assert set(answers) == {1, 2} and done.returncode == 0, answers
    assert answers[2]["result"]["results"][0]["predicted"] == "ba"


def test_requests_in_flight_as_a_pipe_ends_are_finished_and_one_that_runs_on_is_cancelled(plugin):
    """As the Node guest does, `printf ... | mt-eval serve DIR` answers the calls still running when its input ends
    (it cancelled them, where a file of the same requests had them answered); a call that is still running
    `FINISH_S` later is answered cancelled, with a line on stderr, and the guest exits."""
    import subprocess
    import time

    from mt_eval.bridge.host_gone import FINISH_S

    requests = "".join(json.dumps(message) + "\n" for message in (initialize(1), translate(2, "0.3"),
                                                                   translate(3, "600")))
    started = time.monotonic()
    done = subprocess.run(python_command(plugin), input=requests.encode(), capture_output=True, timeout=60)
    answers = by_id([json.loads(line) for line in done.stdout.splitlines()])
    assert answers[2]["result"]["results"][0]["predicted"] == "3.0", answers
    assert answers[3]["error"] == {"code": m.CANCELLED, "message": "cancelled"}
    assert done.returncode == 0 and time.monotonic() - started < FINISH_S + 20
    assert (f"the input ended and 1 request(s) did not finish within {FINISH_S:g} s: cancelled"
            in done.stderr.decode())


def test_after_shutdown_what_is_in_flight_finishes_and_nothing_new_starts(plugin, tmp_path):
    answers = by_id(served(plugin, tmp_path, initialize(), translate(1, "0.2"),
                           {"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": {}}, translate(3, "ab"),
                           {"jsonrpc": "2.0", "id": 4, "method": "method_card", "params": {}}))
    assert answers[1]["result"]["results"][0]["predicted"] == "2.0"
    assert answers[2]["result"] is None
    for late in (3, 4):
        assert answers[late]["error"] == {"code": m.INVALID_REQUEST,
                                          "message": "the guest is shutting down: no new requests"}


def test_a_second_initialize_and_an_id_already_in_flight_are_refused(plugin, tmp_path):
    answers = served(plugin, tmp_path, initialize(), initialize("again"), translate("dup", "0.2"),
                     translate("dup", "ab"), translate("after", "cd"))
    assert by_id(answers[:2])["again"]["error"] == {"code": m.INVALID_REQUEST, "message": "already initialized"}
    duplicates = [answer for answer in answers if answer["id"] == "dup"]
    assert [answer.get("error") for answer in duplicates] == [
        {"code": m.INVALID_REQUEST, "message": 'request id "dup" is already in flight'}, None]
    assert duplicates[1]["result"]["results"][0]["predicted"] == "2.0"  # the first one, served
    assert by_id([a for a in answers if a["id"] == "after"])["after"]["result"]["results"][0]["predicted"] == "dc"


def test_a_translate_without_a_config_takes_initializes(plugin, tmp_path):
    bare = {"jsonrpc": "2.0", "id": 1, "method": "translate", "params": {"entries": [{"id": "e", "source": "ab"}]}}
    with_config = by_id(served(plugin, tmp_path, initialize(), bare))
    assert with_config[1]["result"]["results"][0]["predicted"] == "ba"
    without = initialize()
    del without["params"]["config"]
    refused = by_id(served(plugin, tmp_path, without, bare))
    assert refused[1]["error"] == {"code": m.INVALID_PARAMS,
                                   "message": "params.config is missing and initialize gave none"}
    not_a_config = initialize()
    not_a_config["params"]["config"] = "eng-spa"
    answers = by_id(served(plugin, tmp_path, not_a_config, bare))
    assert answers[0]["error"]["code"] == m.INVALID_PARAMS
    assert answers[0]["error"]["message"].startswith("invalid config: expected an object")
    assert answers[1]["error"]["code"] == m.NOT_INITIALIZED


@pytest.mark.parametrize("turns", [0, 3, 30])
def test_a_start_cancelled_leaves_no_guest_and_the_next_call_starts_one(plugin, monkeypatch, turns):
    """Cancelled while its guest is started (``turns`` loop turns in: spawning, or waiting for initialize), the
    first call raises CancelledError, no guest is left running, and the next call is served."""
    monkeypatch.setenv("SLOW_IMPORT_S", "0.3")
    marker, env = marked_environment()
    method = BridgeMethod(python_command(plugin), env=env, options=HostOptions(start_timeout_s=20, shutdown_grace_s=1),
                          label="slow")

    async def scenario() -> tuple[list[str], list[dict[str, Any]], list[str]]:
        first = asyncio.ensure_future(method.translate([{"id": "a", "source": "xy"}], CONFIG))
        for _ in range(turns):
            await asyncio.sleep(0.01 if turns > 3 else 0)
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first
        for _ in range(100):
            await asyncio.sleep(0.02)
            if not processes_marked(marker):
                break
        left = processes_marked(marker)
        try:
            results = await method.translate([{"id": "b", "source": "ab"}], CONFIG)
        finally:
            await method.aclose()
        return left, results, processes_marked(marker)

    left, results, after = event_loop.run(scenario)
    assert left == []
    assert results[0]["predicted"] == "ba" and results[0]["error"] is None
    assert after == []
    assert method.restarts == 0


def test_a_request_over_the_line_limit_is_answered_by_its_own_id_never_an_entrys(plugin, tmp_path):
    """Its entries come before its id here: the id is not in the bytes kept, so the answer names no request (null),
    rather than the entry id "a" that a request still in flight has too."""
    big = {"params": {"entries": [{"id": "a", "source": "x" * (17 << 20)}], "config": CONFIG}, "jsonrpc": "2.0",
           "id": "big", "method": "translate"}
    answers = served(plugin, tmp_path, initialize(), translate("a", "0.3"), big, translate("after", "cd"))
    too_large = [answer for answer in answers if "error" in answer]
    assert [(answer["id"], answer["error"]["code"]) for answer in too_large] == [(None, m.MESSAGE_TOO_LARGE)]
    assert by_id([answer for answer in answers if answer["id"] in ("a", "after")])["a"]["result"]


def test_a_request_nested_too_deep_to_read_is_answered_and_the_guest_serves_on(plugin, tmp_path):
    """It had ended the guest at once (exit 0, nothing answered, not even the requests after it). The answer names
    the request when its id comes before the depth (it named none, and the host waited for its deadline), and
    none when it does not."""
    deep = {"jsonrpc": "2.0", "id": "deep", "method": "translate", "params": {"entries": [{"id": "e", "source": "x"}]}}
    text = json.dumps(deep).replace('"source": "x"', '"source": "x", "deep": ' + "[" * 5000 + "]" * 5000)
    late = '{"params": {"entries": ' + "[" * 5000 + "]" * 5000 + '}, "jsonrpc": "2.0", "id": "late", "method": "x"}'
    answers = served(plugin, tmp_path, initialize(), text, late, translate("after", "cd"))
    too_deep = {"code": m.PARSE_ERROR, "message": "arrays or objects nested too deeply to read"}
    assert [(a["id"], a.get("error")) for a in answers if a["id"] in ("deep", None)] == [("deep", too_deep),
                                                                                         (None, too_deep)]
    assert by_id([a for a in answers if a["id"] == "after"])["after"]["result"]["results"][0]["predicted"] == "dc"


@pytest.mark.parametrize("escaped", ["\\ud800", "\\ud800x", "x\\udc00", "\\ude00\\ud83d"])
def test_a_request_holding_a_lone_surrogate_is_said_to_and_the_guest_serves_on(plugin, tmp_path, escaped):
    """At the end of a string it was "not valid JSON: Input data was truncated", though nothing was cut short."""
    text = json.dumps(translate("lone", "@")).replace("@", escaped)
    answers = served(plugin, tmp_path, initialize(), text, translate("after", "cd"))
    [refused] = [a["error"] for a in answers if a["id"] is None]
    assert refused["code"] == m.PARSE_ERROR
    lone = escaped.replace("x", "")[:6] if escaped != "\\ude00\\ud83d" else "\\ude00"
    assert refused["message"].startswith(f"not valid JSON: a lone surrogate escaped at byte {text.index(lone)} "
                                         f"({lone}), which is not Unicode text; send the character itself")
    assert by_id([a for a in answers if a["id"] == "after"])["after"]["result"]["results"][0]["predicted"] == "dc"


def test_answers_piped_to_a_reader_that_goes_away_stop_the_guest_quietly(plugin, tmp_path):
    """``mt-eval serve DIR < requests.jsonl | head -1``: it went on calling the method for every request, for
    nobody, and then exited 0; now it stops at once, quietly, with 141 as other commands do."""
    import subprocess

    requests = tmp_path / "requests.jsonl"
    requests.write_text("".join(json.dumps(r) + "\n" for r in [initialize(), translate(1, "30"), translate(2, "30")]))
    with requests.open("rb") as given, subprocess.Popen(python_command(plugin), stdin=given, stdout=subprocess.PIPE,
                                                        stderr=subprocess.PIPE) as guest:
        try:
            assert json.loads(guest.stdout.readline())["id"] == 0
            guest.stdout.close()
            _, said = guest.communicate(timeout=15)
        finally:
            guest.kill()
    assert (guest.returncode, said) == (141, b"")


def test_requests_typed_into_a_terminal_are_each_answered(plugin):
    """On a terminal, the answers' output watched by the event loop read the terminal's input too, and dropped it:
    of two requests pasted at once, the second was never answered."""
    import os
    import pty
    import select
    import subprocess
    import time

    main, terminal = pty.openpty()
    guest = subprocess.Popen(python_command(plugin), stdin=terminal, stdout=terminal, stderr=subprocess.DEVNULL)
    os.close(terminal)
    try:
        os.write(main, (json.dumps(initialize()) + "\n" + json.dumps(translate(1, "ab")) + "\n").encode())
        said, deadline = b"", time.monotonic() + 20
        while b'"id":1,' not in said and time.monotonic() < deadline:
            if select.select([main], [], [], 0.1)[0]:
                said += os.read(main, 1 << 16)
        assert b'{"jsonrpc":"2.0","id":1,"result":{"results":[{"id":"e","predicted":"ba"' in said, said
    finally:
        guest.kill()
        guest.wait()
        os.close(main)
