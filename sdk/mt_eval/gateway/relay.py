"""One forwarded request: the upstream's answer relayed to the method as it arrives, then its log record
completed (`Relay`), and the token usage read from an answer (`usage_of`).

A relay is an upstream `Exchange` and a `Listener` of the method's connection at once, so it hears both
ends: the answer's head, body and end or failure from the upstream; a slow reader (pause the upstream), or
a client gone, from the method. A non-streamed answer is sent whole once complete; a streamed one (the
request said ``"stream": true``) is passed on piece by piece. Either way the gateway's log gets the SHA-256
of the body the method received and the usage the upstream reported (``usage_unknown`` when none came).
"""

from __future__ import annotations

import hashlib
import re
import time
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from mt_eval.gateway.http import ServerConnection, error_body
from mt_eval.gateway.upstream import PASSED_BACK, AnswerTooLarge, Exchange, UpstreamError

if TYPE_CHECKING:
    from mt_eval.gateway.policy import GatewayPolicy


class Gateway(Protocol):
    """What a relay needs of the gateway it works for (`mt_eval.gateway.server.Gateway`): its policy, and to be
    told when it is done."""

    policy: GatewayPolicy

    def finished(self, relay: Relay) -> None: ...

JSON = b"application/json"
# The most of one answer the gateway holds (it keeps an answer whole, to send it and read its usage): beyond it, an
# upstream that answers without end would take the memory of the gateway, and of the run it serves.
MAX_ANSWER = 256 * 1024 * 1024


class _Answer(msgspec.Struct):
    """What the gateway reads of an answer (the rest is skipped unread): its ``usage``, or that of the
    ``response`` a Responses-API stream event carries (``response.completed``)."""

    usage: Any = None
    response: Any = None


_answer_decoder = msgspec.json.Decoder(_Answer)


def _tokens(value: Any) -> int:
    """A count of tokens as reported: a positive integer, or a float with an integral value (``500.0``, as some
    servers write it); anything else (negative, a fraction, NaN, a boolean) counts 0."""
    if isinstance(value, float) and value.is_integer() and value > 0:
        return int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


_HEADER_VALUE = re.compile(rb"[\x20-\x7e]*")  # (what a header line can carry as it is)
_EVENT_END = re.compile(rb"\r\n\r\n|\n\n|\r\r")


def _usage_only(event: bytes) -> bool:
    """Whether an SSE event is the usage chunk a chat or text completion stream ends with when asked for it
    (``{"choices": [], "usage": {...}}``)."""
    if b'"usage"' not in event:
        return False
    for line in event.splitlines():
        if line.startswith(b"data:"):
            try:
                chunk = msgspec.json.decode(line[5:].strip())
            except msgspec.DecodeError:
                return False
            return isinstance(chunk, dict) and chunk.get("choices") == [] and isinstance(chunk.get("usage"), dict)
    return False


def _usages(body: bytes, *, event_stream: bool) -> list[dict[str, Any]]:
    """The usage objects reported in a response body (JSON, or the events of an SSE stream), in order."""
    chunks = [body] if not event_stream else \
        [line[5:].strip() for line in body.splitlines() if line.startswith(b"data:") and b'"usage"' in line]
    usages = []
    for chunk in chunks:
        try:
            answer = _answer_decoder.decode(chunk)
        except msgspec.DecodeError:
            continue
        usage = answer.usage
        if usage is None and isinstance(answer.response, dict):
            usage = answer.response.get("usage")
        if isinstance(usage, dict):
            usages.append(usage)
    return usages


def usage_of(body: bytes, *, event_stream: bool = False) -> tuple[int, int]:
    """(prompt, completion) tokens reported in a response body: JSON, or the last usage of an SSE stream."""
    return _token_counts(_usages(body, event_stream=event_stream))


def _token_counts(usages: list[dict[str, Any]]) -> tuple[int, int]:
    """(prompt, completion) tokens of the last of ``usages`` to report each (chat and embeddings name them
    ``prompt_tokens``/``completion_tokens``, the Responses API ``input_tokens``/``output_tokens``)."""
    prompt = completion = 0
    for usage in usages:
        prompt = _tokens(usage.get("prompt_tokens") or usage.get("input_tokens")) or prompt
        completion = _tokens(usage.get("completion_tokens") or usage.get("output_tokens")) or completion
    return prompt, completion


def _last_event_end(stream: bytes) -> int:
    """Where the last complete event of an SSE stream ends (0: none is complete)."""
    return max((m.end() for m in _EVENT_END.finditer(stream)), default=0)


class Relay(Exchange):
    """See the module docstring. ``record`` is the log record so far; ``body`` the request as the method
    sent it. ``hide_usage``: the gateway asked the upstream for the stream's usage chunk, which the method did not
    ask for: it is read for the log and not passed on (code that reads ``choices[0]`` of every chunk broke on it)."""

    def __init__(self, gateway: Gateway, client: ServerConnection, record: dict[str, Any], body: bytes,
                 started: float, *, hide_usage: bool = False) -> None:
        self.gateway = gateway
        self.client = client
        self.record = record
        self.body = body
        self.started = started
        self.stream: bool = record["stream"]
        self.status = 0
        self.content_type = JSON
        self.passed_back = b""  # (the upstream's `PASSED_BACK` headers, as header lines)
        self.received: list[bytes] = []
        self.size = 0  # bytes of the answer received
        self.digest = hashlib.sha256() if self.stream else None
        self.hide_usage = hide_usage and self.stream
        self.unsplit = b""  # (hide_usage: the part of the stream after its last complete event)
        self.passed: list[bytes] = []  # (hide_usage: what was passed on, for the log)
        self.delivered: bytes | None = None  # (the method hung up: what it had received; the rest is read for usage)
        client.listener = self

    # -- from the upstream ------------------------------------------------------------------------------
    def on_head(self, status: int, headers: dict[bytes, bytes]) -> None:
        self.status = status
        self.content_type = headers.get(b"content-type", JSON)
        self.passed_back = b"".join(b"%s: %s\r\n" % (name, headers[name]) for name in PASSED_BACK
                                    if name in headers and _HEADER_VALUE.fullmatch(headers[name]))
        if self.stream:
            self.client.start_stream(status, self.content_type, self.passed_back)

    def on_body(self, data: bytes) -> None:
        self.size += len(data)
        if self.size > MAX_ANSWER:
            return self._too_large()
        self.received.append(data)
        if self.delivered is not None:
            return self._read_for_usage(data)
        if self.digest is not None:
            if self.hide_usage:
                data = self._without_usage_chunk(data)
            self._forward(data)
            if self.client.writing_paused:
                self.pause()

    def _forward(self, data: bytes) -> None:
        if data:
            self.digest.update(data)  # type: ignore[union-attr]
            if self.hide_usage:
                self.passed.append(data)
            self.client.write_chunk(data)

    def _without_usage_chunk(self, data: bytes) -> bytes:
        """The complete events of the stream so far, but the usage chunk; the rest waits for its end."""
        pending = self.unsplit + data
        ends = [m.end() for m in _EVENT_END.finditer(pending)]
        if not ends:
            self.unsplit = pending
            return b""
        self.unsplit = pending[ends[-1]:]
        starts = [0, *ends[:-1]]
        return b"".join(pending[a:b] for a, b in zip(starts, ends, strict=True) if not _usage_only(pending[a:b]))

    def _read_for_usage(self, data: bytes) -> None:
        """The method hung up: the stream is read on, passed nowhere, until the event that reports its usage."""
        pending = self.unsplit + data
        end = _last_event_end(pending)
        self.unsplit = pending[end:]
        if end and b'"usage"' in pending and _usages(pending[:end], event_stream=True):
            self.abort()
            self._log(b"".join(self.received), self.status)

    def on_done(self) -> None:
        if self.over:
            return
        self.over = True
        received = self.received
        data = received[0] if len(received) == 1 else b"".join(received)
        if self.delivered is not None:
            pass  # (nobody to send the end to)
        elif self.stream:
            self._forward(self.unsplit)  # (an event the stream did not end)
            self.client.end_stream()
        else:
            self.client.respond(self.status, self.content_type, data, self.passed_back)
        self._log(data, self.status, complete=True)

    def on_failed(self, error: OSError) -> None:
        """The upstream cannot be reached, broke off, or ran out of time: the method gets a clear error
        unless its answer had begun, which is then cut short."""
        if self.over:
            return
        self.over = True
        model, timeout = self.record["model"], isinstance(error, TimeoutError)
        policy = self.gateway.policy
        if timeout:
            message = f"the upstream serving {model} did not answer within {policy.timeout_s:g} s (the policy's " \
                      "timeout_s)"
        elif isinstance(error, AnswerTooLarge):
            message = f"the answer of the upstream serving {model} was cut off: {error}"
        elif isinstance(error, UpstreamError):
            message = f"the upstream serving {model} broke off: {error}"
        else:
            message = f"the upstream serving {model} cannot be reached: {type(error).__name__}: {error}"
        self._say(message)
        data = b"".join(self.received)
        status = self.status
        if self.delivered is not None:
            pass  # (the method is gone: nobody to tell)
        elif self.client.started:
            self.client.break_off()
        else:
            status, code = (504, "upstream_timeout") if timeout else \
                (502, "upstream_answer_too_large" if isinstance(error, AnswerTooLarge) else "upstream_unreachable")
            data = error_body(message, code, "api_error")
            self.client.respond(status, JSON, data)
        self._log(data, status)

    def _too_large(self) -> None:
        """The answer is over `MAX_ANSWER`: the method gets a clear error (its stream, begun, is cut short), and the
        upstream request is abandoned."""
        if not self.over:
            self.received = [] if not self.client.started else self.received
            self.on_failed(AnswerTooLarge(f"it is over {MAX_ANSWER // (1024 * 1024)} MiB, the most the gateway "
                                          "holds of one answer; ask for less in one request (fewer inputs, or a "
                                          "lower max_tokens)"))
            self.abort()

    def expire(self) -> None:
        """Its time is up (the policy's ``timeout_s``)."""
        if not self.over:
            self.on_failed(TimeoutError())
            self.abort()

    # -- from the method's connection -------------------------------------------------------------------
    def gone(self) -> None:
        """The method closed its connection before its answer was complete: the upstream request is let go, unless
        its answer is a stream that has begun and has not reported its usage yet. That one is read on (passed
        nowhere, within the timeout and `MAX_ANSWER`) until its usage comes or it ends, so the tokens of an answer
        the method may have had whole count toward the budget."""
        if self.over:
            return
        self.record["error"] = "the method closed the connection before the answer was complete"
        data = b"".join(self.received)
        if self.stream and 200 <= self.status < 400 and not _usages(data, event_stream=True):
            self.delivered = b"".join(self.passed) if self.hide_usage else data
            self.unsplit = data[_last_event_end(data):]
            self.resume()  # (paused if the method read slowly)
            return
        self.abort()
        self._log(data, self.status or None)

    def stopped(self) -> None:
        """The gateway is stopping with this request unanswered: the method gets a clear error (unless its
        answer had begun, which is then cut short), the upstream request is abandoned, and the log says so."""
        if self.over:
            return
        self.abort()
        message = "the gateway stopped before the upstream's answer was complete"
        self._say(message)
        data, status = b"".join(self.received), self.status or None
        if self.delivered is not None:
            pass  # (the method is gone: nobody to tell)
        elif self.client.started:
            self.client.break_off()
        else:
            status, data = 503, error_body(message, "gateway_stopped", "api_error")
            self.client.respond(status, JSON, data)
        self._log(data, status)

    # -- the log ----------------------------------------------------------------------------------------
    def _say(self, message: str) -> None:
        """The log's ``error``: why the answer ended short (after the method's hang-up, when it was read on for its
        usage)."""
        hung_up = self.delivered is not None
        self.record["error"] = f"{self.record['error']}; reading on for its usage: {message}" if hung_up else message

    def _log(self, data: bytes, status: int | None, *, complete: bool = False) -> None:
        """Complete the record and hand it to the gateway. ``complete``: the upstream's answer ended as it should
        (not cut short, timed out or stopped)."""
        record = self.record
        record["status"] = status
        if self.digest is not None and status == self.status:
            digest = self.digest.hexdigest()  # streamed: hashed piece by piece
        else:
            digest = hashlib.sha256(data).hexdigest()
        event_stream = self.content_type.startswith(b"text/event-stream")
        usages = _usages(data, event_stream=event_stream) if status is not None and status < 400 else []
        prompt, completion = _token_counts(usages)
        answered = complete and status is not None and 200 <= status < 300 and "error" not in record
        if not usages and (answered or self.delivered is not None):
            # a whole answer that reports no usage, or a stream the method hung up on whose usage never came: its
            # tokens counted 0, and the audit's summary says how many such requests there were
            record["usage_unknown"] = True
        if self.delivered is not None:  # (the method hung up: the rest was read for its usage alone)
            data = self.delivered
        elif self.hide_usage and status == self.status:
            data = b"".join(self.passed)  # what the method received (the usage chunk was read above)
        record.update(response_sha256=digest, response_bytes=len(data), prompt_tokens=prompt,
                      completion_tokens=completion, latency_s=round(time.perf_counter() - self.started, 6))
        if self.gateway.policy.log_bodies:
            record.update(request_body=self.body.decode("utf-8", "replace"),
                          response_body=data.decode("utf-8", "replace"))
        self.gateway.finished(self)
