"""Guests written from bridge/PROTOCOL.md alone, in plain Python without the SDK, as an author in another language
writes them: the Python host reads what the protocol says it reads (an answer's ``jsonrpc`` unchecked), an
``initialize`` answered under the wrong id fails the start at once, saying so, rather than as a guest that never
answered or is no guest, and `mt-eval bridge check` gives a guest that loads a model first the time it asks for."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from pathlib import Path

import pytest

from mt_eval.bridge import messages as m
from mt_eval.bridge.connection import HostOptions
from mt_eval.bridge.method import BridgeMethod

CONFIG = {"source_lang": "eng", "target_lang": "spa"}
FAST = HostOptions(start_timeout_s=3, request_timeout_s=5, shutdown_grace_s=1)


def guest(tmp_path: Path, *, init: str, answer: str, threads: bool = False, exit_code: int | None = None) -> list[str]:
    """A guest program: ``init`` and ``answer`` are the lines it writes for initialize and translate, with ID the
    request's id (as JSON) and EID the first entry's id; ``threads`` keeps a second thread, as many runtimes do;
    ``exit_code``: it exits so after its first answer."""
    script = tmp_path / "guest.py"
    script.write_text(textwrap.dedent(f"""\
        import json, sys, threading, time
        if {threads!r}:
            threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
        for line in sys.stdin:
            msg = json.loads(line)
            rid = json.dumps(msg.get("id"))
            if msg.get("method") == "initialize":
                out = {init!r}.replace("ID", rid)
            elif msg.get("method") == "translate":
                out = {answer!r}.replace("EID", msg["params"]["entries"][0]["id"]).replace("ID", rid)
            elif msg.get("method") == "shutdown":
                out = json.dumps({{"jsonrpc": "2.0", "id": msg["id"], "result": None}})
            else:
                continue
            sys.stdout.write(out + "\\n")
            sys.stdout.flush()
            if {exit_code!r} is not None:
                sys.exit({exit_code!r})
        """))
    return [sys.executable, str(script)]


INIT = ('{"jsonrpc": "2.0", "id": ID, "result": {"protocol_version": "mt-eval-bridge/1", '
        '"method": {"name": "Upper", "method_id": "upper"}}}')


async def translated(command: list[str]) -> list[dict[str, object]]:
    method = BridgeMethod(command, options=FAST, label="upper")
    try:
        return await method.translate([{"id": "e0", "source": "hola"}], CONFIG)
    finally:
        await method.aclose()


async def test_an_answer_whose_jsonrpc_is_a_number_is_read_as_its_answer(tmp_path):
    # PROTOCOL.md, Transport: an answer's "jsonrpc" is not checked, by both hosts alike (2.0 unquoted: a common slip)
    command = guest(tmp_path, init=INIT.replace('"2.0"', "2.0"),
                    answer='{"jsonrpc": 2.0, "id": ID, "result": {"results": [{"id": "EID", "predicted": "HOLA"}]}}')
    results = await translated(command)
    assert [(r["predicted"], r["error"]) for r in results] == [("HOLA", None)]


@pytest.mark.parametrize("threads", [False, True], ids=["single-threaded", "threaded"])
async def test_initialize_answered_under_a_string_id_fails_the_start_saying_so(tmp_path, threads):
    # (single-threaded, it reads on, blocked: it is no text filter; threaded, it is not left to the start timeout)
    command = guest(tmp_path, init=INIT.replace("ID", '"ID"'), answer="", threads=threads)
    method = BridgeMethod(command, options=FAST, label="upper")
    with pytest.raises(m.BridgeError) as raised:
        await method.start()
    assert raised.value.message == ('guest upper failed to start: it answered initialize with id "1", not 1: an answer '
                                    "carries its request's id as it was sent (an integer stays an integer)")
    await method.aclose()


SLOW_START = textwrap.dedent("""\
    import json, sys, time
    time.sleep(float(sys.argv[1]))  # (loading its model)
    for line in sys.stdin:
        msg = json.loads(line)
        if msg.get("method") == "initialize":
            print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {
                "protocol_version": "mt-eval-bridge/1", "method": {"name": "Slow", "method_id": "slow"},
                "capabilities": {}, "guest": {"name": "slow", "version": "0", "runtime": "python"}}}), flush=True)
    """)


async def test_bridge_check_waits_the_start_timeout_for_initialize_not_a_step_timeout():
    # PROTOCOL.md, Lifecycle 1: a host waits the start timeout (30 s) for initialize; a step gets 10 s
    from mt_eval.bridge.conformance import run_vector
    from mt_eval.bridge.transcripts import load_vectors, vectors_directory

    [handshake] = [v for v in load_vectors(vectors_directory()) if v["name"] == "handshake"]
    slow = [sys.executable, "-c", SLOW_START, "1"]
    outcome = await run_vector(handshake, slow, step_timeout_s=0.3, start_timeout_s=10)
    assert outcome.failure is None, outcome.failure
    outcome = await run_vector(handshake, slow, step_timeout_s=0.3)  # (without a start timeout: the step's)
    assert outcome.failure == "step 2 (expect): nothing within 0.3 s (the guest did not answer initialize)"


def test_bridge_check_takes_a_start_timeout_and_names_it_when_initialize_is_late(tmp_path, capsys):
    from mt_eval.bridge.transcripts import vectors_directory
    from mt_eval.cli import main

    (tmp_path / "handshake.json").write_text((vectors_directory() / "handshake.json").read_text())
    code = main(["bridge", "check", "--start-timeout", "0.5", "--vectors", str(tmp_path), "--",
                 sys.executable, "-c", SLOW_START, "30"])
    out = capsys.readouterr().out
    assert code == 1
    assert "step 2 (expect): nothing within 0.5 s (the guest did not answer initialize)" in out
    assert "give it longer with --start-timeout SECONDS" in out


async def test_bridge_check_names_a_request_answered_twice(tmp_path):
    """Before: `the lines do not match the patterns in any order: {"id": 2} | {"id": 2}`, the duplicate left to see."""
    from mt_eval.bridge.conformance import run_vector

    transcript = {"name": "twice", "steps": [{"send": {"jsonrpc": "2.0", "id": 2, "method": "translate"}},
                                             {"send": {"jsonrpc": "2.0", "id": 3, "method": "translate"}},
                                             {"expect_unordered": [{"id": 2}, {"id": 3}]}]}
    answers = "import sys\nsys.stdin.readline()\nprint('{\"id\": 2}\\n{\"id\": 2}\\n{\"id\": 3}', flush=True)\n"
    outcome = await run_vector(transcript, [sys.executable, "-c", answers], step_timeout_s=5)
    assert outcome.failure == 'step 3 (expect_unordered): the guest answered request 2 twice: {"id": 2}'


async def test_a_request_the_guest_was_gone_for_says_how_it_ended(tmp_path):
    """Before: `the guest is not running`, the entries' error when a guest that exits on its own (after N requests,
    say) was restarted three times while they waited their turn."""
    from mt_eval.bridge.connection import GuestConnection

    command = guest(tmp_path, init=INIT, answer="", exit_code=3)
    connection = GuestConnection(command, options=FAST, label="upper")
    try:
        await connection.start()

        async def gone() -> None:
            while connection.running:  # noqa: ASYNC110 (no event says so)
                await asyncio.sleep(0.01)

        await asyncio.wait_for(gone(), 5)
        with pytest.raises(m.BridgeError) as raised:
            await connection.request("translate", {"entries": []})
        assert raised.value.message == "the request was not sent: the guest exited with code 3"
        assert raised.value.data["unsent"] and raised.value.code == m.GUEST_EXITED
        await connection.aclose()  # (as its restart ends it: it still exited on its own, it was not "closed")
        with pytest.raises(m.BridgeError, match=r"^the request was not sent: the guest exited with code 3$"):
            await connection.request("translate", {"entries": []})
    finally:
        await connection.aclose()
