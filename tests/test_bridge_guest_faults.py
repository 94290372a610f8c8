"""The Python host against a config every entry shares and a guest that closes its input: each is one failure,
found at once, not one found entry by entry or at a request's deadline; a config given to a call that does not fit
is refused before anything is sent."""

from __future__ import annotations

import asyncio
import re
import sys
import textwrap
import time
from pathlib import Path

import pytest

from mt_eval.bridge.connection import GuestConnection, HostOptions
from mt_eval.bridge.method import BridgeMethod
from mt_eval.bridge.runtimes import node_command
from mt_eval.records import RunConfig

REVERSE = Path(__file__).parent / "fixtures" / "reverse"
CONFIG = {"source_lang": "eng", "target_lang": "spa"}
FAST = HostOptions(start_timeout_s=10, request_timeout_s=5, shutdown_grace_s=1, restart_budget=2)
GUESTS = {"python": lambda: [sys.executable, "-m", "mt_eval.cli", "serve", str(REVERSE)],
          "node": lambda: node_command(REVERSE)}


def entries(*sources: object) -> list[dict[str, object]]:
    return [{"id": f"e{i}", "source": s} for i, s in enumerate(sources)]


@pytest.fixture
def batches_sent(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[int]]:
    """How many entries each translate request carried, and rows each decide request, as the host sent them."""
    sent: dict[str, list[int]] = {"translate": [], "decide": []}
    request = GuestConnection.request

    async def counted(self: GuestConnection, method: str, params: object, **kwargs: object) -> object:
        if method in sent:
            sent[method].append(len(params["entries" if method == "translate" else "rows"]))  # type: ignore[index]
        return await request(self, method, params, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(GuestConnection, "request", counted)
    return sent


@pytest.fixture
def translate_requests(batches_sent: dict[str, list[int]]) -> list[int]:
    """How many entries each translate request carried, as the host sent them."""
    return batches_sent["translate"]


@pytest.mark.parametrize("runtime", sorted(GUESTS))
async def test_an_invalid_config_fails_every_entry_at_once_with_the_guests_message(runtime, translate_requests):
    method = BridgeMethod(GUESTS[runtime](), options=FAST, label=f"reverse-{runtime}")
    try:
        await method.start()  # (initialize without a config: a request's own is the only one)
        # (a RunConfig is sent as it is: one built with a seed that is no integer reaches the guest)
        results = await method.translate(entries(*"abcdefgh"), RunConfig(**CONFIG, seed="x"))  # type: ignore[arg-type]
        errors = {r["error"] for r in results}
        assert len(errors) == 1 and errors.pop().startswith("invalid config: $.seed: "), results
        assert [r["predicted"] for r in results] == [None] * 8
        assert translate_requests == [8]  # one request, not 15 (the batch halved down to single entries)
        missing = await method.translate(entries("a", "b", "c"), None)
        assert {r["error"] for r in missing} == {"params.config is missing and initialize gave none"}
        assert translate_requests == [8, 3]
        # an entry no guest takes is refused before anything is sent, in the guests' words (`params.` aside)
        with pytest.raises(TypeError, match=r"^entries\[1\]\.source must be a string, got the number 5$"):
            await method.translate(entries("ab", 5, "cd"), CONFIG)
        assert translate_requests == [8, 3]
        assert method.restarts == 0
    finally:
        await method.aclose()


NOT_RUN_CONFIGS = [
    ({**CONFIG, "source_lang": 5}, "invalid config: $.source_lang: expected a string, got the number 5"),
    ({**CONFIG, "target_lang": ""}, 'invalid config: $.target_lang: "" is not a language code'),
    ({**CONFIG, "temprature": 0.3}, 'invalid config: $.temprature: unknown field "temprature"'),
    ({**CONFIG, "timeout_s": -1}, "invalid config: $.timeout_s: must be > 0, got -1"),
    ("eng-spa", 'invalid config: expected an object, got the string "eng-spa"'),
    ([CONFIG], "invalid config: expected an object, got an array"),
]
ROWS = [{"id": "r1", "state": {}, "questions": {"n": {"type": "noul", "instructions": "?"}}}]


async def test_a_config_given_to_translate_or_decide_that_does_not_fit_is_refused_unsent_as_by_the_node_host(
        batches_sent):
    method = BridgeMethod(GUESTS["python"](), options=FAST, label="reverse-python")
    try:
        await method.start(CONFIG)
        pid = method._connection.pid  # type: ignore[union-attr]
        without_pair = ({"temperature": 0}, 'invalid config: $.source_lang: required field "source_lang" is missing')
        for config, message in [*NOT_RUN_CONFIGS, without_pair]:
            with pytest.raises(TypeError) as refused:
                await method.translate(entries("ab", "cd"), config)
            assert str(refused.value) == message, config
        for config, message in NOT_RUN_CONFIGS:
            with pytest.raises(TypeError, match="^" + re.escape(message) + "$"):
                await method.decide(ROWS, config)
        assert batches_sent == {"translate": [], "decide": []}  # nothing sent
        assert (method._connection.pid, method.restarts) == (pid, 0)  # type: ignore[union-attr]
        # the same guest takes a config that fits, given again or its own; and a dict refused, once it is fixed
        fits = {**CONFIG, "temperature": 0}
        assert [r["predicted"] for r in await method.translate(entries("ab"), fits)] == ["spa:ba"]
        assert [r["predicted"] for r in await method.translate(entries("cd"), fits)] == ["spa:dc"]
        assert [r["predicted"] for r in await method.translate(entries("ef"), None)] == ["spa:fe"]
        fixed = {**CONFIG, "source_lang": 5}
        with pytest.raises(TypeError, match=r"^invalid config: \$\.source_lang: "):
            await method.translate(entries("gh"), fixed)
        fixed["source_lang"] = "eng"
        assert [r["predicted"] for r in await method.translate(entries("gh"), fixed)] == ["spa:hg"]
        assert "answers" in (await method.decide(ROWS, {"temperature": 0}))[0]
        assert batches_sent == {"translate": [1, 1, 1, 1], "decide": [1]}
        assert (method._connection.pid, method.restarts) == (pid, 0)  # type: ignore[union-attr]
    finally:
        await method.aclose()


QUESTION = ROWS[0]["questions"]
NOT_SENT_ROWS = [  # (a row each guest would refuse; the host said nothing, sent them, and some came back answered)
    ([*ROWS, *ROWS], 'rows[1].id: "r1" appears twice'),
    ([{"id": 7, "state": {}, "questions": QUESTION}], "rows[0].id: expected a string, got the number 7"),
    ([{"id": "", "state": {}, "questions": QUESTION}], "rows[0].id: must not be empty"),
    ([{"id": "r", "state": "a cat", "questions": QUESTION}],
     'rows[0].state: expected an object, got the string "a cat"'),
    ([{"id": "r", "state": {}, "questions": ["n"]}], "rows[0].questions: expected an object, got an array"),
    ([{"id": "r", "state": {}, "questions": {}}], "rows[0].questions: a row needs at least one question"),
    ([{"id": "r", "state": {}, "questions": {"n": {"type": "choice", "instructions": "?"}}}],
     'rows[0].questions.n: a "choice" question needs "options"'),
    ([{**ROWS[0], "gold": {"n": "true"}}], 'rows[0].gold: unknown field "gold"'),
    ([*ROWS, None], "rows[1]: expected an object, got null"),
]


async def test_rows_a_guest_would_refuse_are_refused_unsent_in_the_node_hosts_words(batches_sent):
    """The host checks a caller's rows before it sends them, as the Node host's decide() does (`rowsProblem`), in
    the words a guest refuses them with, ``params.`` aside: a row with gold never reaches the guest."""
    method = BridgeMethod(GUESTS["python"](), options=FAST, label="reverse-python")
    try:
        for started in (False, True):  # (the guest not started yet, then running)
            for rows, message in NOT_SENT_ROWS:
                with pytest.raises(TypeError) as refused:
                    await method.decide(rows, {})
                assert str(refused.value) == message, rows
            assert batches_sent["decide"] == [1] * started  # nothing sent
            assert "answers" in (await method.decide(ROWS, {}))[0]
        assert method.restarts == 0
    finally:
        await method.aclose()


# Answers initialize, then closes its stdin and keeps running (it never exits on its own).
CLOSES_ITS_INPUT = textwrap.dedent("""
    import json, os, sys, time
    request = json.loads(sys.stdin.buffer.readline())
    answer = {"protocol_version": "mt-eval-bridge/1", "method": {"name": "closes", "method_id": "closes"},
              "capabilities": {"cancel": True}}
    os.write(1, (json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": answer}) + "\\n").encode())
    os.close(0)
    print("closed my stdin", file=sys.stderr, flush=True)
    time.sleep(600)
""")


async def test_a_guest_that_closes_its_input_is_gone_at_once_and_replaced(tmp_path):
    script = tmp_path / "closes_its_input.py"
    script.write_text(CLOSES_ITS_INPUT)
    method = BridgeMethod([sys.executable, str(script)], options=FAST, label="closes")
    try:
        await method.start(CONFIG)
        first = method._connection
        started = time.monotonic()
        results = await method.translate(entries("a", "b"), CONFIG)
        assert time.monotonic() - started < 4  # not the 5 s request timeout, let alone one per entry
        assert [r["predicted"] for r in results] == [None, None]
        assert all("the guest was stopped: it closed its input (stdin)" in r["error"] for r in results), results
        assert first is not None and not first.alive
        # a guest that never completed a request is charged to the crash-loop budget as one that exited
        exhausted = await method.translate(entries("c"), CONFIG)
        assert "the guest's crash-loop budget is exhausted (2 restarts within 60 s)" in exhausted[0]["error"]
        assert "the guest was stopped: it closed its input (stdin)" in exhausted[0]["error"]
        assert method.restarts == 2
    finally:
        await method.aclose()


# Crashes on a request of several entries; refuses the config of any other (as a guest restarted with a config it
# cannot take would).
CRASHES_THEN_REFUSES_THE_CONFIG = textwrap.dedent("""
    import json, os, sys
    for line in sys.stdin:
        request = json.loads(line)
        if "id" not in request:  # (a notification)
            continue
        if request["method"] == "initialize":
            answer = {"result": {"protocol_version": "mt-eval-bridge/1", "capabilities": {},
                                 "method": {"name": "refuses", "method_id": "refuses"}}}
        elif request["method"] == "translate" and len(request["params"]["entries"]) > 1:
            os._exit(3)
        elif request["method"] == "translate":
            answer = {"error": {"code": -32602, "message": "invalid config: $.seed: expected an integer"}}
        else:
            answer = {"result": None}
        print(json.dumps({"jsonrpc": "2.0", "id": request["id"], **answer}), flush=True)
""")


async def test_a_config_refused_while_entries_are_sent_alone_fails_the_others_unsent(tmp_path, translate_requests):
    script = tmp_path / "crashes_then_refuses.py"
    script.write_text(CRASHES_THEN_REFUSES_THE_CONFIG)
    method = BridgeMethod([sys.executable, str(script)], options=FAST, label="refuses")
    try:
        results = await method.translate(entries(*"abcdef"), CONFIG)
        assert [r["error"] for r in results] == ["invalid config: $.seed: expected an integer"] * 6, results
        assert translate_requests == [6, 1]  # (before: [6, 1, 1, 1, 1, 1, 1], each alone failing alike)
        assert method.restarts == 1
    finally:
        await method.aclose()


async def test_an_exhausted_crash_loop_budget_names_how_the_guest_last_ended_for_calls_made_at_once():
    misbehaving = Path(__file__).parent / "guests" / "misbehaving.py"
    method = BridgeMethod([sys.executable, str(misbehaving), "crash-always"], options=FAST, label="crash-always")
    try:
        started = time.monotonic()
        calls = await asyncio.gather(*(method.translate(entries(str(i)), CONFIG) for i in range(16)))
        assert time.monotonic() - started < 4  # (before: a call sent to a guest still starting was lost: 5 s)
        errors = [call[0]["error"] for call in calls]
        exhausted = [error for error in errors if "crash-loop budget is exhausted" in error]
        assert exhausted, errors
        # what ended the guest, not "the guest is not running" (what a call found when it came too late to send)
        assert all("it last failed: the guest exited with code 4" in error for error in exhausted), exhausted
        assert not any("not running" in error for error in errors), errors
    finally:
        await method.aclose()


# Answers initialize, then answers its first translate without the newline that ends a line, and exits.
ANSWERS_LAST_WITHOUT_A_NEWLINE = textwrap.dedent("""
    import json, sys
    for line in sys.stdin:
        request = json.loads(line)
        if request["method"] == "initialize":
            answer = {"protocol_version": "mt-eval-bridge/1", "method": {"name": "last", "method_id": "last"}}
            print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": answer}), flush=True)
        else:
            results = [{"id": e["id"], "predicted": e["source"].upper()} for e in request["params"]["entries"]]
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {"results": results}}))
            break
""")


async def test_a_last_answer_without_its_newline_counts_as_the_node_host_counts_it(tmp_path):
    script = tmp_path / "answers_last_without_a_newline.py"
    script.write_text(ANSWERS_LAST_WITHOUT_A_NEWLINE)
    method = BridgeMethod([sys.executable, str(script)], options=FAST, label="last")
    try:
        results = await method.translate(entries("ab", "cd"), CONFIG)
        assert [(r["predicted"], r["error"]) for r in results] == [("AB", None), ("CD", None)]
        assert method.restarts == 0  # (before: "the guest exited with code 0", then each entry sent alone, anew)
    finally:
        await method.aclose()


# Takes half a second to answer initialize; echoes each source.
SLOW_TO_START = textwrap.dedent("""
    import json, sys, time
    for line in sys.stdin:
        request = json.loads(line)
        if request["method"] == "initialize":
            time.sleep(0.5)
            answer = {"protocol_version": "mt-eval-bridge/1", "method": {"name": "slow", "method_id": "slow"}}
        else:
            answer = {"results": [{"id": e["id"], "predicted": e["source"]} for e in request["params"]["entries"]]}
        print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": answer}), flush=True)
""")


async def test_a_call_made_while_the_guest_starts_waits_for_its_handshake(tmp_path):
    script = tmp_path / "slow_to_start.py"
    script.write_text(SLOW_TO_START)
    method = BridgeMethod([sys.executable, str(script)], options=FAST, label="slow")

    async def later() -> list[dict[str, object]]:
        await asyncio.sleep(0.2)  # (the guest is running, its initialize not yet answered)
        return await method.translate(entries("b"), CONFIG)

    try:  # (before: the later call was sent ahead of the handshake, and raised AssertionError)
        first, second = await asyncio.gather(method.translate(entries("a"), CONFIG), later())
        assert [first[0]["predicted"], second[0]["predicted"]] == ["a", "b"]
    finally:
        await method.aclose()


NOT_UTF8_GUEST = """import json, sys
for line in sys.stdin:
    request = json.loads(line)
    if request["method"] == "initialize" and sys.argv[1] == "initialize":
        sys.stdout.buffer.write(b'{"jsonrpc": "2.0", "id": %d, "result": "caf\\xe9"}\\n' % request["id"])
    elif request["method"] == "initialize":
        print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {
            "protocol_version": "mt-eval-bridge/1", "method": {"name": "x", "method_id": "x"}, "capabilities": {},
            "guest": {"name": "g", "version": "1", "runtime": "python"}}}))
    elif request["method"] == "translate":
        sys.stdout.buffer.write(b'{"jsonrpc": "2.0", "id": %d, "error": {"code": -32603, "message": "caf\\xe9"}}\\n'
                                % request["id"])
    sys.stdout.flush()
"""


@pytest.mark.parametrize(("answers_badly", "status", "said"), [
    ("initialize", 1, "mt-eval translate: cmd cannot start: guest cmd sent an invalid initialize result: not valid "
                      "UTF-8 (byte 0xe9 at offset 4 of the result)"),
    ("translate", 1, "[error] guest sent a line that is not valid UTF-8 (byte 0xe9 at offset 69)"),
])
def test_a_guest_line_that_is_not_utf8_is_refused_naming_the_byte(tmp_path: Path, capsys, answers_badly: str,
                                                                    status: int, said: str):
    """Before: an initialize result that is not UTF-8 was refused for its shape ("Expected `object`, got `str`") and
    an answer "not valid JSON (or not UTF-8)"; the protocol's lines are UTF-8, and both hosts say where one is not."""
    from mt_eval.cli import main

    (tmp_path / "guest.py").write_text(NOT_UTF8_GUEST)
    (tmp_path / "method.json").write_text(
        '{"name": "Cmd", "method_id": "cmd", "class": "custom-plugin", "dependency_class": "S", "dependencies": [], '
        f'"supported_pairs": ["eng>spa"], "command": ["{sys.executable}", "guest.py", "{answers_badly}"]}}')
    assert main(["translate", str(tmp_path), "Hello"]) == status
    out, err = capsys.readouterr()
    assert said in out + err, (out, err)
