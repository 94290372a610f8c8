"""What the Python host makes of a guest's answers that are not what the protocol says: every entry fails with
the reason, in words that say what the guest sent (`mt_eval.bridge.answers`, `GuestConnection`)."""

from __future__ import annotations

import sys

import msgspec
import pytest

from mt_eval.bridge.answers import match_results
from mt_eval.bridge.connection import HostOptions
from mt_eval.bridge.method import BridgeMethod

BATCH = [{"id": "a", "source": "x"}, {"id": "b", "source": "y"}]


@pytest.mark.parametrize(("answer", "got"), [
    ({}, "nothing"), ({"results": {"a": "x"}}, "an object"), ({"results": None}, "null"),
    ({"results": "a, b"}, 'the string "a, b"'), (None, "nothing"), ([], "nothing"),
])
def test_an_answer_without_a_results_list_fails_every_entry_with_what_it_held(answer, got):
    matched = match_results(BATCH, msgspec.Raw(msgspec.json.encode(answer)), "g")
    assert [(r["id"], r["predicted"], r["error"]) for r in matched] == [
        (entry["id"], None, f'guest g answered translate without a "results" list (got {got})') for entry in BATCH]


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
        results = await method.translate(BATCH[:1], {"source_lang": "eng", "target_lang": "spa"})
    finally:
        await method.aclose()
    error = results[0]["error"]
    assert error.startswith("guest sent a message that is not JSON-RPC 2.0")
    assert "`message`" in error and "not valid JSON" not in error
