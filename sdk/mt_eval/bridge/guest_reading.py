"""A line the Python guest (`mt_eval.bridge.guest`) reads: the JSON-RPC request or notification it holds, or the
error line that answers it — not JSON, nested too deeply, over the size limit, or not a request."""

from __future__ import annotations

from typing import Any, NamedTuple

import msgspec

from mt_eval.bridge import messages as m
from mt_eval.bridge.lines import HEAD_BYTES, Oversized, id_in
from mt_eval.js_text import SAFE_INTEGER
from mt_eval.lone_surrogates import escaped_lone_surrogate
from mt_eval.value_words import value_in_words

INVALID_REQUEST = ('invalid request: expected a JSON-RPC 2.0 object with "jsonrpc": "2.0", a "method" and an '
                   'integer or string "id" (none in a notification)')


class Message(NamedTuple):
    """A request (its id, and its params: an object) or a notification (no id, its params as given)."""

    request_id: int | str | None
    method: str
    params: Any


def oversized_answer(line: Oversized, limit: int) -> bytes:
    """The error line answering a request longer than ``limit`` bytes (under its id, when its head holds one)."""
    return m.error_line(id_in(line.head), m.MESSAGE_TOO_LARGE,
                        f"request of {line.length} bytes is over the {limit}-byte limit")


def read_message(line: bytes) -> Message | bytes:
    """The message ``line`` holds, or the error line that answers it."""
    try:
        message = m.decode_request(line)
    except msgspec.ValidationError:  # (a message that is not an object, or a field of the wrong type)
        reread, request_id = reread_request(line)
        if reread is None:
            return m.error_line(request_id, m.INVALID_REQUEST, INVALID_REQUEST)
        message = reread
    except (msgspec.DecodeError, RecursionError) as exc:
        lone = escaped_lone_surrogate(line) if isinstance(exc, msgspec.DecodeError) else None
        said = ("arrays or objects nested too deeply to read" if isinstance(exc, RecursionError)
                else f"not valid JSON: {exc}" if lone is None
                else f"not valid JSON: a lone surrogate escaped at byte {lone[1]} ({lone[0]}), which is not "
                     "Unicode text; send the character itself (one beyond U+FFFF escaped as its pair)")
        # Valid JSON nested too deeply answers the request it is, when its id comes before the depth (as a line
        # over the size limit does): the host fails that request now rather than at its deadline.
        return m.error_line(id_in(line[:HEAD_BYTES]) if isinstance(exc, RecursionError) else None, m.PARSE_ERROR, said)
    request_id = None if message.id is msgspec.UNSET else message.id
    if isinstance(request_id, int) and abs(request_id) > SAFE_INTEGER:  # (PROTOCOL.md, "Integers")
        request_id = message.id = None
    if message.jsonrpc != "2.0" or message.method is None or message.id is None:
        return m.error_line(request_id, m.INVALID_REQUEST, INVALID_REQUEST)
    if request_id is None:
        return Message(None, message.method, message.params)
    params = {} if message.params is msgspec.UNSET else message.params  # (absent: none given, as in Node)
    if not isinstance(params, dict):
        return m.error_line(request_id, m.INVALID_PARAMS, f"params must be an object, got {value_in_words(params)}")
    return Message(request_id, message.method, params)


def valid_id(given: Any) -> int | str | None:
    """``given`` as an id to answer under: a string, or an integer JSON holds exactly (PROTOCOL.md, "Integers"),
    written with or without a fraction of zero (``1.0`` is 1, as in JavaScript); else None."""
    if isinstance(given, float) and given.is_integer():
        given = int(given)
    return given if isinstance(given, str) or (type(given) is int and abs(given) <= SAFE_INTEGER) else None


def reread_request(line: bytes) -> tuple[m.Request | None, int | str | None]:
    """A line that is not a request as it is written: the request it is with a whole-number ``id`` such as
    ``1.0`` read as the integer (else None), and the id to answer it under."""
    try:
        message = msgspec.json.decode(line)
    except (msgspec.DecodeError, RecursionError):
        return None, None
    if not isinstance(message, dict):
        return None, None
    given = valid_id(message.get("id"))
    if isinstance(message.get("id"), float) and given is not None:
        try:
            return msgspec.convert({**message, "id": given}, m.Request), given
        except msgspec.ValidationError:
            pass
    return None, given
