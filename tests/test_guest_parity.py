"""Both reference guests, the Python one (`mt-eval serve`) and the Node one (`mt-eval-guest`), answer the same
lines alike: each malformed request gets the same error code with the same id, and each sound one a result;
decision rows are refused with the same words."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from guest_lines import guest_replies
from mt_eval.bridge import messages as m
from mt_eval.bridge.runtimes import node_command, python_command

REVERSE = Path(__file__).parent / "fixtures" / "reverse"
CONFIG = {"source_lang": "eng", "target_lang": "spa"}
INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocol_versions": ["mt-eval-bridge/1"], "config": CONFIG}}
pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


def translate(entries: Any, **params: Any) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "translate", "params": {"entries": entries, **params}})


CASES = {
    "entries not a list": (translate({}), [(1, m.INVALID_PARAMS)]),
    "an entry twice": (translate([{"id": "a", "source": "x"}, {"id": "a", "source": "y"}]), [(1, m.INVALID_PARAMS)]),
    "an empty entry id": (translate([{"id": "", "source": "x"}]), [(1, m.INVALID_PARAMS)]),
    "an entry id that is a number": (translate([{"id": 7, "source": "x"}]), [(1, m.INVALID_PARAMS)]),
    "a source that is a number": (translate([{"id": "a", "source": 5}]), [(1, m.INVALID_PARAMS)]),
    "an entry that is not an object": (translate(["a"]), [(1, m.INVALID_PARAMS)]),
    "a config of the wrong type": (translate([{"id": "a", "source": "x"}], config={"source_lang": 5}),
                                   [(1, m.INVALID_PARAMS)]),
    "params that are a list": ('{"jsonrpc": "2.0", "id": 1, "method": "translate", "params": [1]}',
                               [(1, m.INVALID_PARAMS)]),
    "an unknown method": ('{"jsonrpc": "2.0", "id": 1, "method": "frobnicate", "params": {}}',
                          [(1, m.METHOD_NOT_FOUND)]),
    "an unknown notification": ('{"jsonrpc": "2.0", "method": "frobnicate", "params": {}}', []),
    "a cancel of nothing": ('{"jsonrpc": "2.0", "method": "cancel", "params": {"id": 99}}', []),
    "an id that is a fraction": ('{"jsonrpc": "2.0", "id": 1.5, "method": "method_card", "params": {}}',
                                 [(None, m.INVALID_REQUEST)]),
    "an id that is a boolean": ('{"jsonrpc": "2.0", "id": true, "method": "method_card", "params": {}}',
                                [(None, m.INVALID_REQUEST)]),
    "an id that is null": ('{"jsonrpc": "2.0", "id": null, "method": "method_card", "params": {}}',
                           [(None, m.INVALID_REQUEST)]),
    "a method that is a number": ('{"jsonrpc": "2.0", "id": 1, "method": 5, "params": {}}',
                                  [(1, m.INVALID_REQUEST)]),
    "JSON-RPC 1.0": ('{"jsonrpc": "1.0", "id": 1, "method": "method_card", "params": {}}',
                     [(1, m.INVALID_REQUEST)]),
    "a batch array": ('[{"jsonrpc": "2.0", "id": 1, "method": "method_card", "params": {}}]',
                      [(None, m.INVALID_REQUEST)]),
    "a number": ("42", [(None, m.INVALID_REQUEST)]),
    "half a message": ('{"jsonrpc":', [(None, m.PARSE_ERROR)]),
    "a blank line": ("   ", []),
    "a response": ('{"jsonrpc": "2.0", "id": 1, "result": {}}', [(1, m.INVALID_REQUEST)]),
    "a sound request with extra entry fields": (translate([{"id": "a", "source": "ab", "domain": "x"}], config=CONFIG),
                                                [(1, "result")]),
    "no params": ('{"jsonrpc": "2.0", "id": 1, "method": "method_card"}', [(1, "result")]),
    "a string id": ('{"jsonrpc": "2.0", "id": "x", "method": "method_card", "params": {}}', [("x", "result")]),
}


def answers(command: list[str], line: str, scratch: Path) -> list[tuple[Any, Any]]:
    """What the guest answers ``line`` with, after initialize: each reply's id and error code (or "result")."""
    replies = guest_replies(command, [INITIALIZE, line], scratch)
    assert replies[0]["id"] == 0 and "result" in replies[0]
    return [(reply["id"], reply["error"]["code"] if "error" in reply else "result") for reply in replies[1:]]


GUESTS = (python_command(REVERSE), node_command(REVERSE))


@pytest.mark.parametrize("case", CASES)
def test_both_guests_answer_alike(case, tmp_path):
    line, expected = CASES[case]
    python, node = (answers(command, line, tmp_path) for command in GUESTS)
    assert python == node == expected


NOUL = {"type": "noul", "instructions": "?"}
DECIDE_CASES = {
    "a sound row": ([{"id": "a", "state": {}, "questions": {"q": NOUL}}], None),
    "rows not a list": ({}, "params.rows must be a list of rows, got an object"),
    "a row twice": ([{"id": "a", "state": {}, "questions": {"q": NOUL}}] * 2, 'params.rows[1].id: "a" appears twice'),
    "a row id with a quote and a backslash twice": ([{"id": 'a"b\\c', "state": {}, "questions": {"q": NOUL}}] * 2,
                                                    'params.rows[1].id: "a\\"b\\\\c" appears twice'),
    "a choice with an option twice": (
        [{"id": "a", "state": {}, "questions": {"q": {"type": "choice", "instructions": "?", "options": ["x", "x"]}}}],
        'params.rows[0].questions.q.options: "x" is listed 2 times'),
    "a rubric out of order": (
        [{"id": "a", "state": {}, "questions": {"q": {"type": "score", "instructions": "?",
                                                       "levels": [{"value": 2}, {"value": 1}]}}}],
        "params.rows[0].questions.q.levels[1].value: the rubric is not in order: level 1 has value 1, not more than "
        "level 0's 2"),
    "a question without instructions": ([{"id": "a", "state": {}, "questions": {"q": {"type": "noul"}}}],
                                        'params.rows[0].questions.q.instructions: required field "instructions" is '
                                        "missing"),
}


@pytest.mark.parametrize("case", DECIDE_CASES)
def test_both_guests_check_decision_rows_alike(case, tmp_path):
    rows, problem = DECIDE_CASES[case]
    request = {"jsonrpc": "2.0", "id": 1, "method": "decide", "params": {"rows": rows}}
    for command in GUESTS:
        reply = guest_replies(command, [INITIALIZE, request], tmp_path)[-1]
        if problem is None:
            assert reply["result"]["results"][0]["id"] == "a"
        else:
            assert reply["error"] == {"code": m.INVALID_PARAMS, "message": problem}


def test_both_guests_name_a_plugin_by_its_method_json(tmp_path):
    """Not by the module's own `name` export (the reverse fixture's translate.js exports "Reverse")."""
    named = [guest_replies(command, [INITIALIZE], tmp_path)[0]["result"]["method"] for command in GUESTS]
    assert named == [{"name": "Reverse (bridge reference method)", "method_id": "reverse"}] * 2
