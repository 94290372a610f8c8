"""Wire types of ``mt-eval-bridge/1``: JSON-RPC 2.0 envelopes, the handshake, and error codes."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import msgspec

from mt_eval.js_text import SAFE_INTEGER, js_string
from mt_eval.lone_surrogates import writable

PROTOCOL_VERSION = "mt-eval-bridge/1"
SUPPORTED_VERSIONS = (PROTOCOL_VERSION,)
DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024
_log = logging.getLogger("mt_eval.bridge")

# JSON-RPC 2.0 codes, then the protocol's reserved ones (bridge/PROTOCOL.md, "Error codes").
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
CANCELLED = -32001
TIMEOUT = -32002
GUEST_EXITED = -32003
MESSAGE_TOO_LARGE = -32004
UNSUPPORTED_VERSION = -32005
NOT_INITIALIZED = -32006
METHOD_FAILED = -32007


CONFIG_PROBLEM = ("invalid config", "params.config")  # how an invalid params error about a request's config starts


def about_config(code: int, message: str) -> bool:
    """Whether a guest's error answering a translate or decide request concerns the config the request carries, which
    every item shares, rather than one item: invalid params whose message starts ``invalid config`` (or
    ``params.config``, for one left out), as both reference guests word it (bridge/PROTOCOL.md, *Error codes*)."""
    return code == INVALID_PARAMS and message.startswith(CONFIG_PROBLEM)


class ConfigRefused(Exception):
    """An entry sent alone after a guest was lost (`mt_eval.bridge.method`) was refused for the config (`about_config`),
    which every entry carries: the entries still to be sent alone fail with the same words at once, unsent."""


def entries_problem(entries: Any, where: str = "params.entries") -> str | None:
    """What is wrong with a translate request's entries (a list of objects, each with a non-empty string id, unique in
    the request, and a string source), in the words of both reference guests, ``where`` naming them; None when
    nothing is. A guest checks each request with it; a host, the entries its caller gave, before sending them."""
    if type(entries) is not list and not isinstance(entries, tuple):  # (a host's caller may give a tuple)
        return f"{where} must be a list of entries, got {_in_words(entries)}"
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        if type(entry) is not dict and not isinstance(entry, Mapping):
            return f"{where}[{i}] must be an object, got {_in_words(entry)}"
        entry_id = entry.get("id")
        if not isinstance(entry_id, str) or not entry_id:
            return f"{where}[{i}].id must be a non-empty string, got {_in_words(entry_id)}"
        if not isinstance(entry.get("source"), str):
            return f"{where}[{i}].source must be a string, got {_in_words(entry.get('source'))}"
        if i and entry_id in seen:
            return f"{where}[{i}].id {js_string(entry_id)} appears twice in the request"
        if len(entries) > 1:
            seen.add(entry_id)
    return None


def _in_words(value: Any) -> str:
    from mt_eval.value_words import value_in_words  # (only once something is wrong)

    return value_in_words(value)


def line_limit(limit: int) -> str:
    """``the 16777216-byte line limit`` (the protocol's), or, for a limit a host set lower
    (``HostOptions.max_line_bytes``), that it is this host's own and how to raise it."""
    if limit >= DEFAULT_MAX_LINE_BYTES:
        return f"the {limit}-byte line limit"
    return (f"this host's {limit}-byte line limit (its max_line_bytes option; the protocol allows "
            f"{DEFAULT_MAX_LINE_BYTES} bytes: raise max_line_bytes to take longer lines)")


class ErrorObject(msgspec.Struct, omit_defaults=True):
    code: int
    message: str
    data: Any = None


class Incoming(msgspec.Struct, omit_defaults=True):
    """Any message read from the other side; which fields are set says what it is. Its ``jsonrpc`` is not checked
    (an answer with ``"jsonrpc": 2.0`` is read as the Node host reads it: bridge/PROTOCOL.md, *Transport*)."""

    jsonrpc: Any = ""
    id: int | str | None = None
    method: str | None = None
    params: Any = msgspec.UNSET
    result: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    error: ErrorObject | None = None


class Request(msgspec.Struct):
    """A message read by a guest: a request when it has an ``id`` (an integer or a string), a notification when it
    has none; ``"id": null`` is neither (JSON-RPC 2.0 discourages it; both reference guests refuse it)."""

    jsonrpc: str = ""
    id: int | str | msgspec.UnsetType | None = msgspec.UNSET
    method: str | None = None
    params: Any = msgspec.UNSET


class Capabilities(msgspec.Struct, kw_only=True):
    max_batch: int | None = None
    max_concurrency: int = 1
    cancel: bool = False
    progress: bool = False

    def __post_init__(self) -> None:
        """A count below 1 (``max_batch: -1`` would send batches of nothing) is warned about and its default used, in
        the Node host's words."""
        if self.max_batch is not None and self.max_batch < 1:
            _log.warning("the guest declared capabilities.max_batch = %d; using null", self.max_batch)
            self.max_batch = None
        if self.max_concurrency < 1:
            _log.warning("the guest declared capabilities.max_concurrency = %d; using 1", self.max_concurrency)
            self.max_concurrency = 1


class MethodIdentity(msgspec.Struct, kw_only=True):
    name: str
    method_id: str


class Peer(msgspec.Struct, kw_only=True):
    name: str
    version: str
    runtime: str = ""


class InitializeResult(msgspec.Struct, kw_only=True):
    protocol_version: str
    method: MethodIdentity
    card: dict[str, Any] | None = None
    capabilities: Capabilities = msgspec.field(default_factory=Capabilities)
    guest: Peer | None = None
    implements: list[str] = msgspec.field(default_factory=lambda: ["translate"])

    def __post_init__(self) -> None:
        if self.protocol_version not in SUPPORTED_VERSIONS:  # (in the Node host's words)
            raise ValueError(f"protocol_version {js_string(self.protocol_version)} is not one this host offered "
                             f"({', '.join(SUPPORTED_VERSIONS)})")


class BridgeError(Exception):
    """A request failed: a JSON-RPC error from the guest, or a host-side failure with a reserved code."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def describe(self) -> str:
        """The message, with the exit code and stderr tail when the guest exited."""
        text = self.message
        data = self.data if isinstance(self.data, dict) else {}
        tail = data.get("stderr_tail")
        if tail:
            text += "\n--- guest stderr (last lines) ---\n" + tail.rstrip()
        return text


def request_line(request_id: int | str, method: str, params: Any) -> bytes:
    return _encode({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}) + b"\n"


def notification_line(method: str, params: Any) -> bytes:
    return _encode({"jsonrpc": "2.0", "method": method, "params": params}) + b"\n"


def result_line(request_id: int | str | None, result: Any) -> bytes:
    return _encode({"jsonrpc": "2.0", "id": request_id, "result": result}) + b"\n"


def error_line(request_id: int | str | None, code: int, message: str, data: Any = None) -> bytes:
    """An error response; a lone surrogate in ``message`` (a method's exception said it) is written as its escape in
    words (`mt_eval.lone_surrogates.writable`, as every method's message is)."""
    error: dict[str, Any] = {"code": code, "message": writable(message)}
    if data is not None:
        error["data"] = data
    return _encode({"jsonrpc": "2.0", "id": request_id, "error": error}) + b"\n"


_encode = msgspec.json.Encoder().encode
decode_incoming = msgspec.json.Decoder(Incoming).decode
decode_request = msgspec.json.Decoder(Request).decode


def with_whole_number_id(line: bytes) -> Incoming | None:
    """A message whose ``id`` is a whole number written with a fraction (``2.0``), read with that id as the integer, as
    JavaScript (and the Node host) reads it (PROTOCOL.md, "Integers"); None for any other line."""
    try:
        message = msgspec.json.decode(line)
    except (msgspec.DecodeError, RecursionError):
        return None
    given = message.get("id") if isinstance(message, dict) else None
    if not (isinstance(given, float) and given.is_integer() and abs(given) <= SAFE_INTEGER):
        return None
    try:
        return decode_incoming(_encode({**message, "id": int(given)}))
    except msgspec.ValidationError:
        return None


def not_utf8(data: bytes, of: str = "") -> str | None:
    """Where a line (or ``of`` it) stops being UTF-8, which every protocol line is, in words — ``not valid UTF-8
    (byte 0xff at offset 47)`` as both hosts and `mt-eval bridge check` say it — or None when it is UTF-8."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}{of})"
    return None


def not_json_line(line: bytes) -> str:
    """Why the host cannot read a guest's line (said only once decoding it failed): not UTF-8, or not JSON."""
    return f"guest sent a line that is {not_utf8(line) or 'not valid JSON'}"


def decode_initialize_result(raw: msgspec.Raw) -> InitializeResult:
    """A guest's initialize result, refused when it is not UTF-8 anywhere (a field the host skips too): read once
    per guest, so the check costs no line of its answers."""
    if (fault := not_utf8(bytes(raw), " of the result")) is not None:
        raise msgspec.DecodeError(fault)
    return msgspec.json.decode(raw, type=InitializeResult)
