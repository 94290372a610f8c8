"""The gateway's audit log, reopened: a torn last line is cut off before the next record is appended (so no
record is glued to it and lost from the totals), and a line that is not a request record is named, not skipped
or a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mt_eval.cli import main
from mt_eval.gateway.audit import AuditLog, AuditLogError

RECORD = {"seq": 1, "model": "m-1", "refused": None, "prompt_tokens": 50, "completion_tokens": 50}


def reopened(path: Path) -> AuditLog:
    log = AuditLog(path)
    log.write({"model": "m-1", "refused": None, "prompt_tokens": 4, "completion_tokens": 4})
    log.close()
    return AuditLog(path)


@pytest.mark.parametrize("tail", [b'{"seq":2,"pa', b"\0\0\0\0", b'{"seq": 2, "prompt_tokens": 3'])
def test_a_torn_last_line_is_cut_off_and_the_next_record_counts(tmp_path: Path, tail: bytes):
    """Before: the next record was written on the torn line (`{"seq":2,"pa{"time":…`), so the log's next reader
    skipped it: a request and its tokens lost from the totals and the budget."""
    path = tmp_path / "gateway.jsonl"
    path.write_bytes(json.dumps(RECORD).encode() + b"\n" + tail)
    log = AuditLog(path)
    log.close()
    assert log.torn_bytes == len(tail) and log.requests == 1
    again = reopened(path)
    again.close()
    assert (again.requests, again.tokens, again.torn_bytes) == (2, 108, 0)
    assert [json.loads(line)["seq"] for line in path.read_text().splitlines()] == [1, 2]


def test_a_last_record_whose_newline_was_lost_is_kept_and_its_line_ended(tmp_path: Path):
    path = tmp_path / "gateway.jsonl"
    path.write_text(json.dumps(RECORD))
    again = reopened(path)
    again.close()
    assert (again.requests, again.tokens, again.torn_bytes) == (2, 108, 0)
    assert len(path.read_text().splitlines()) == 2


@pytest.mark.parametrize(("line", "why"), [
    ("[]", "a JSON list, not an object"),
    ("5", "a JSON int, not an object"),
    ('{"prompt_tokens": 1e400}', "prompt_tokens is Infinity, not a number of tokens"),
    ('{"completion_tokens": "12"}', 'completion_tokens is "12", not a number of tokens'),
    ("not json", "not JSON (Expecting value: line 1 column 1 (char 0))"),
    ('{"prompt_tokens": 1' + "0" * 5000 + "}", "holds an integer of 5,001 digits, more than can be read "
     "(4,300 at most): write it as a string, in double quotes, or remove it"),
])
def test_a_line_that_is_not_a_request_record_is_named(tmp_path: Path, capsys, line: str, why: str):
    """Before: a traceback (AttributeError, OverflowError), or the line skipped and the totals short."""
    path = tmp_path / "gateway.jsonl"
    path.write_text(f"{json.dumps(RECORD)}\n{line}\n{json.dumps(RECORD)}\n")
    with pytest.raises(AuditLogError) as caught:
        AuditLog(path)
    assert str(caught.value) == f"{path}: line 2 is not a request record: {why}"
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"base_url": "https://api.example.com/v1", "models": [{"id": "m-1"}]}))
    before = path.read_bytes()
    assert main(["gateway", "--policy", str(policy), "--listen", "127.0.0.1:0", "--log", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"mt-eval gateway: {path}: line 2 is not a request record: {why}. An audit log is not "
                          "rewritten: move it aside")
    assert path.read_bytes() == before
