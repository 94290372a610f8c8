"""What the Python host makes of a guest's answers that are not what the protocol says, in words that say what the
guest sent (`mt_eval.bridge.answers`, `GuestConnection`): an answer without a results list fails its request, which
is split until the entry it concerns fails alone; answers with ids no request in flight has are said once."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sys

import msgspec
import pytest

from mt_eval.bridge.answers import WithoutResults, match_results
from mt_eval.bridge.connection import HostOptions
from mt_eval.bridge.method import BridgeMethod

BATCH = [{"id": "a", "source": "x"}, {"id": "b", "source": "y"}]
CONFIG = {"source_lang": "eng", "target_lang": "spa"}


@pytest.mark.parametrize(("answer", "got"), [
    ({}, "nothing"), ({"results": {"a": "x"}}, "an object"), ({"results": None}, "null"),
    ({"results": "a, b"}, 'the string "a, b"'), (None, "nothing"), ([], "nothing"),
])
def test_an_answer_without_a_results_list_is_a_failure_of_the_request_saying_what_it_held(answer, got):
    with pytest.raises(WithoutResults) as raised:
        match_results(BATCH, msgspec.Raw(msgspec.json.encode(answer)), "g")
    assert raised.value.message == f'the guest answered translate without a "results" list (got {got})'


# Answers the request holding the source "bad" with the answer given as its argument, the others as it should.
ANSWERS_BADLY = """
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    if "id" not in request:
        continue
    if request["method"] == "initialize":
        out = {"protocol_version": "mt-eval-bridge/1", "method": {"name": "B", "method_id": "b"}, "capabilities": {}}
    elif request["method"] == "shutdown":
        out = None
    elif any(e["source"] == "bad" for e in request["params"]["entries"]):
        out = json.loads(sys.argv[1])
    else:
        out = {"results": [{"id": e["id"], "predicted": e["source"].upper()} for e in request["params"]["entries"]]}
    print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": out}), flush=True)
"""


@pytest.mark.parametrize(("answer", "got"), [({}, "nothing"), (None, "nothing"), ({"results": "lots"},
                                                                                   'the string "lots"')])
async def test_an_answer_without_a_results_list_fails_only_the_entry_it_concerns(answer, got):
    method = BridgeMethod([sys.executable, "-c", ANSWERS_BADLY, json.dumps(answer)], label="cmdbad",
                          options=HostOptions(start_timeout_s=15, request_timeout_s=10, shutdown_grace_s=1))
    sources = ["one", "two", "bad", "four", "five", "six", "seven"]
    try:
        results = await method.translate([{"id": f"e{i}", "source": s} for i, s in enumerate(sources)], CONFIG)
    finally:
        await method.aclose()
    assert [(r["predicted"], r["error"]) for r in results] == [
        (None, f'the guest answered translate without a "results" list (got {got})') if s == "bad" else (s.upper(),
                                                                                                              None)
        for s in sources]


ERROR_WITHOUT_MESSAGE = """
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    if "id" not in request:
        continue
    if request["method"] == "initialize":
        out = {"result": {"protocol_version": "mt-eval-bridge/1", "method": {"name": "E", "method_id": "e"},
                          "capabilities": {}}}
    elif request["method"] == "shutdown":
        out = {"result": None}
    else:
        out = {"error": {"code": -32007}}
    print(json.dumps({"jsonrpc": "2.0", "id": request["id"], **out}), flush=True)
"""


async def test_an_error_without_a_message_is_named_as_such_not_as_a_line_that_is_not_json():
    method = BridgeMethod([sys.executable, "-c", ERROR_WITHOUT_MESSAGE], label="e",
                          options=HostOptions(start_timeout_s=15, request_timeout_s=10, shutdown_grace_s=1))
    try:
        results = await method.translate(BATCH[:1], CONFIG)
    finally:
        await method.aclose()
    error = results[0]["error"]
    assert error.startswith("guest sent a message that is not JSON-RPC 2.0")
    assert "`message`" in error and "not valid JSON" not in error


# Answers every translate with its request's id as a string; two requests at once.
STRING_IDS = """
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    if "id" not in request:
        continue
    answer_id = request["id"]
    if request["method"] == "initialize":
        out = {"protocol_version": "mt-eval-bridge/1", "method": {"name": "S", "method_id": "s"},
               "capabilities": {"max_concurrency": 2, "cancel": True}}
    elif request["method"] == "shutdown":
        out = None
    else:
        out = {"results": [{"id": e["id"], "predicted": "x"} for e in request["params"]["entries"]]}
        answer_id = str(answer_id)
    print(json.dumps({"jsonrpc": "2.0", "id": answer_id, "result": out}), flush=True)
"""


async def test_answers_with_the_id_as_a_string_are_said_once_naming_it_and_each_request_times_out_naming_its_own(
        caplog):
    caplog.set_level(logging.DEBUG, logger="mt_eval.bridge")
    method = BridgeMethod([sys.executable, "-c", STRING_IDS], label="s",
                          options=HostOptions(start_timeout_s=15, request_timeout_s=1, cancel_grace_s=0.3,
                                              shutdown_grace_s=1))
    try:
        await method.start(CONFIG)
        first = method._connection
        results = await asyncio.gather(*(method.translate([entry], {**CONFIG, "timeout_s": 0.5}) for entry in BATCH))
    finally:
        await method.aclose()
    errors = [r["error"] for [r] in results]
    for error in errors:
        assert re.fullmatch(r'translate request got no answer or progress within 0\.5 s; the guest answered with id '
                            r'"(\d+)", which names no request in flight \(request \1 is, with an integer id: an answer '
                            r"carries its request's id as it was sent\)", error), error
    # (both timed out together: neither could be blamed, so each was sent again alone, to a guest of its own, and
    # failed there naming the answer to its own request: 2, the first of each guest)
    assert len(errors) == 2
    said = [(r.levelname, r.getMessage()) for r in caplog.records if "names no request in flight" in r.getMessage()]
    assert said[:2] == [
        ("WARNING", 's: the guest answered with id "2", which names no request in flight (request 2 is, with an '
                    "integer id: an answer carries its request's id as it was sent); dropped (as later such answers "
                    "are, without a warning)"),
        ("DEBUG", 's: dropped an answer with id "3", which names no request in flight')]
    assert first is not method._connection  # (the guest did not answer the cancels, and was replaced)


async def test_entries_whose_answer_came_with_an_id_no_request_has_fail_naming_that_answer_not_a_bare_timeout():
    wrong_ids = STRING_IDS.replace("answer_id = str(answer_id)", "answer_id += 1000")
    method = BridgeMethod([sys.executable, "-c", wrong_ids], label="w",
                          options=HostOptions(start_timeout_s=15, request_timeout_s=1, cancel_grace_s=0.3,
                                              shutdown_grace_s=1))
    try:
        await method.start(CONFIG)
        results = await method.translate(BATCH, {**CONFIG, "timeout_s": 0.25})
    finally:
        await method.aclose()
    for result in results:
        assert re.fullmatch(r"translate request got no answer or progress within 0\.\d+ s; the guest answered with id "
                            r"10\d\d, which names no request in flight", result["error"]), result["error"]


# Answers every request with its id written as a whole number with a fraction (2.0), as a guest that keeps numbers as
# doubles writes it.
FLOAT_IDS = STRING_IDS.replace("answer_id = str(answer_id)", "pass").replace(
    '"id": answer_id', '"id": float(answer_id)').replace('"cancel": True', '"cancel": False')


async def test_answers_whose_id_is_a_whole_number_written_with_a_fraction_answer_that_request(caplog):
    method = BridgeMethod([sys.executable, "-c", FLOAT_IDS], label="f",
                          options=HostOptions(start_timeout_s=15, request_timeout_s=10, shutdown_grace_s=1))
    try:
        results = await asyncio.gather(*(method.translate([entry], CONFIG) for entry in BATCH))
    finally:
        await method.aclose()
    assert [r["predicted"] for [r] in results] == ["x", "x"]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text


@pytest.mark.parametrize(("capabilities", "said"), [
    ('"max_batch": -1', "capabilities.max_batch = -1; using null"),
    ('"max_batch": 0', "capabilities.max_batch = 0; using null"),
    ('"max_concurrency": 0', "capabilities.max_concurrency = 0; using 1"),
])
async def test_a_count_declared_below_one_is_warned_about_and_its_default_used(caplog, capabilities, said):
    declares = STRING_IDS.replace("answer_id = str(answer_id)", "pass").replace(
        '"max_concurrency": 2, "cancel": True', capabilities)
    method = BridgeMethod([sys.executable, "-c", declares], label="c",
                          options=HostOptions(start_timeout_s=15, request_timeout_s=10, shutdown_grace_s=1))
    try:
        results = await method.translate([*BATCH, {"id": "c", "source": "z"}], CONFIG)
    finally:
        await method.aclose()
    assert [r["predicted"] for r in results] == ["x", "x", "x"]
    assert f"the guest declared {said}" in caplog.text


async def test_an_initialize_result_choosing_a_version_not_offered_fails_the_start_in_the_node_hosts_words():
    chooses = STRING_IDS.replace("answer_id = str(answer_id)", "pass").replace('"mt-eval-bridge/1"',
                                                                                 '"mt-eval-bridge/9"')
    method = BridgeMethod([sys.executable, "-c", chooses], label="v",
                          options=HostOptions(start_timeout_s=15, request_timeout_s=10, shutdown_grace_s=1))
    try:
        [result] = await method.translate(BATCH[:1], CONFIG)
    finally:
        await method.aclose()
    assert result["error"] == ('guest v sent an invalid initialize result: protocol_version "mt-eval-bridge/9" is not '
                               "one this host offered (mt-eval-bridge/1)")


@pytest.mark.parametrize(("given", "said"), [
    ([{"source": "x"}], "entries[0].id must be a non-empty string, got null"),  # (a guest's words, `params.` aside)
    ("abc", 'entries must be a list of entries, got the string "abc"'),
    (None, "entries must be a list of entries, got null"),
    ([{"id": "a", "source": "x"}, 5], "entries[1] must be an object, got the number 5"),
    ([{"id": 1, "source": "x"}], "entries[0].id must be a non-empty string, got the number 1"),
    ([{"id": "", "source": "x"}], 'entries[0].id must be a non-empty string, got the string ""'),
    ([{"id": "a", "source": 5}], "entries[0].source must be a string, got the number 5"),
    ([{"id": "a", "source": "x"}, {"id": "a", "source": "y"}], 'entries[1].id "a" appears twice in the request'),
])
async def test_entries_a_caller_gives_in_no_shape_the_host_can_send_are_said_so(given, said):
    """Before: a KeyError 'id', "dictionary update sequence element #0 has length 1", "'NoneType' object is not
    iterable" from inside the host — whether the guest was running yet or not; then a number for an id or a source
    came back as each entry's error, and an id given twice was sent. The Node host refuses the same entries in the
    same words (bridge/node/test/host.test.js)."""
    method = BridgeMethod([sys.executable, "-c", ANSWERS_BADLY, json.dumps({})], label="cmd",
                          options=HostOptions(start_timeout_s=15, request_timeout_s=10, shutdown_grace_s=1))
    try:
        for _ in range(2):  # (the guest not started yet, then running)
            with pytest.raises(TypeError) as raised:
                await method.translate(given, CONFIG)
            assert str(raised.value) == said
            assert (await method.translate(BATCH, CONFIG))[0]["predicted"] == "X"
    finally:
        await method.aclose()


@pytest.mark.parametrize(("given", "said"), [
    ("abc", 'rows must be a list of rows, got the string "abc"'),
    ([{"state": {}, "questions": {}}], 'rows[0].id: required field "id" is missing'),
    ([5], "rows[0]: expected an object, got the number 5"),
])
async def test_rows_a_caller_gives_in_no_shape_are_said_so_in_the_words_a_guest_refuses_them_with(given, said):
    """The host's check of a caller's rows is the guests' (`rows_problem`), `params.` aside."""
    method = BridgeMethod([sys.executable, "-c", ANSWERS_BADLY, json.dumps({})], label="cmd",
                          options=HostOptions(start_timeout_s=15, request_timeout_s=10, shutdown_grace_s=1))
    try:
        with pytest.raises(TypeError) as raised:
            await method.decide(given, {})
        assert str(raised.value) == said
    finally:
        await method.aclose()
