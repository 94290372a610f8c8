"""One guest process: handshake, requests in flight, deadlines, and a guest that stops answering.

A `GuestConnection` is a `mt_eval.child_process.ChildProcess`: bytes are split into lines and responses resolve
their futures inside the event loop's I/O callback, which keeps a round trip to a single loop wake-up, and there is
no background task to own, so it can be started in one task and closed in another (the harness's workers share one).

A request that times out, or whose caller gives up, is cancelled. A guest must answer a cancelled
request (with the ``cancelled`` error, or its late result) within ``cancel_grace_s``: one that does not
is not reading its input — its event loop is blocked — and is killed, so that it can be replaced. A
guest that cannot cancel is killed as soon as a request times out. Every failure says whether the
request was ``alone`` in flight: only then is it certainly the request the guest failed on. An error without
an id (a line the guest could not read) fails the one request in flight, and is logged when there are several;
a request of this host's sent back fails that request (bridge/PROTOCOL.md, "An error without an id"); an answer
whose id names no request in flight is logged once, with the id. A request that cannot be encoded (text that is
not valid Unicode) raises before it is sent, and leaves nothing waiting. A guest found to have closed its stdin
while it runs is stopped then, as if it had exited, not left to each request's deadline: it can be sent nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from mt_eval._version import __version__
from mt_eval.bridge import GUEST_LOGGER
from mt_eval.bridge import messages as m
from mt_eval.bridge.answers import UnmatchedAnswers
from mt_eval.bridge.lines import LineSplitter, Oversized, id_in
from mt_eval.bridge.not_a_guest import echoes_request, not_a_guest_message, watch_handshake
from mt_eval.bridge.runtimes import cannot_run
from mt_eval.bridge.start_failures import start_error
from mt_eval.child_process import ChildProcess, LazyTimer, exit_status
from mt_eval.child_stderr import last_lines
from mt_eval.process_state import HOST_GUESTS

log = logging.getLogger("mt_eval.bridge")
_LOG_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}
_BATCH_REQUESTS = frozenset({"translate", "decide"})  # the requests that carry a method's work
_CLOSED = "the guest was closed"  # what a call in flight when the host closes the guest fails with
INPUT_CLOSED = "it closed its input (stdin) while running, so nothing more could be sent to it"  # (why it is stopped)


@dataclass(frozen=True)
class HostOptions:
    """Limits and timeouts of a host; every value has a safe default."""

    start_timeout_s: float = 30.0
    request_timeout_s: float = 120.0
    hard_timeout_s: float = 600.0
    cancel_grace_s: float = 2.0
    max_line_bytes: int = m.DEFAULT_MAX_LINE_BYTES
    shutdown_grace_s: float = 2.0
    stderr_tail_bytes: int = 64 * 1024
    stderr_tail_lines: int = 40
    restart_budget: int = 3
    restart_window_s: float = 60.0


class _Pending:
    __slots__ = ("deadline", "future", "hard_deadline", "hard_s", "method", "misnamed", "timed_out_mark",
                 "timeout_s", "unmatched_mark")

    def __init__(self, future: asyncio.Future[msgspec.Raw], method: str, timeout_s: float, hard_s: float,
                 now: float, unmatched_mark: int, timed_out_mark: int) -> None:
        self.future, self.unmatched_mark, self.misnamed = future, unmatched_mark, ""  # (answers.UnmatchedAnswers)
        self.timed_out_mark = timed_out_mark  # the guest's requests timed out before it was sent (`_alone`)
        self.method = method
        self.timeout_s = timeout_s
        self.hard_s = hard_s
        self.deadline = now + timeout_s
        self.hard_deadline = now + hard_s


class GuestConnection(ChildProcess):
    """A running guest speaking ``mt-eval-bridge/1``. Use `start`, then `request`, then `aclose`."""

    def __init__(self, command: Sequence[str], *, cwd: str | os.PathLike[str] | None = None,
                 env: Mapping[str, str] | None = None, options: HostOptions | None = None,
                 label: str | None = None) -> None:
        self.options = options or HostOptions()
        super().__init__(command, cwd=cwd, env=env, label=label, logger=logging.getLogger(GUEST_LOGGER),
                         tail_bytes=self.options.stderr_tail_bytes, tail_lines=self.options.stderr_tail_lines,
                         grace_s=self.options.shutdown_grace_s)
        self.info: m.InitializeResult | None = None
        self.junk_lines = 0
        self.first_junk: bytes | None = None  # the first stdout line that was not a message (not_a_guest.py)
        self.completed = 0  # translate/decide requests answered: a guest that did work is not crash-looping
        self._ids = itertools.count(1)
        self._timed_out = 0  # translate/decide requests that timed out so far
        self._pending: dict[int | str, _Pending] = {}
        self._cancelling: dict[int | str, float] = {}  # cancelled request → when its answer is overdue
        self._cancels_answered = asyncio.Event()  # set while no cancel waits for its answer
        self._cancels_answered.set()
        self._lines = LineSplitter(self.options.max_line_bytes)
        self._timer = LazyTimer(self._sweep)
        self._stopped_because: str | None = None
        self._unmatched = UnmatchedAnswers()  # answers to no request in flight
        self._closed_by_host = False  # `aclose` began: the calls in flight fail as "the guest was closed"

    alive = ChildProcess.running  # (the same property, not one that calls it: checked on every request)

    # ---- lifecycle -------------------------------------------------------------------------------

    async def start(self, config: Any = None) -> m.InitializeResult:
        """Spawn the guest and complete the handshake within the start timeout."""
        try:
            await self.spawn()
        except OSError as exc:
            raise m.BridgeError(m.GUEST_EXITED, cannot_run(self.command[0], exc), {"cannot_run": True}) from exc
        if self.pid is not None:
            HOST_GUESTS.add(self.pid)
        params = {"protocol_versions": list(m.SUPPORTED_VERSIONS),
                  "host": {"name": "mt-eval", "version": __version__}, "config": config,
                  "shared_latency": True}  # (`mt_eval.bridge.answers` reads it)
        timeout = self.options.start_timeout_s
        watch = asyncio.ensure_future(watch_handshake(self, self._not_a_guest))  # a plain program fails at once
        try:
            raw = await self.request("initialize", params, timeout_s=timeout, hard_timeout_s=timeout)
            info = m.decode_initialize_result(raw)
        except (m.BridgeError, msgspec.ValidationError, msgspec.DecodeError) as exc:
            await self.aclose()
            raise start_error(exc, label=self.label, start_timeout_s=timeout, exit_code=self.exit_code,
                              stderr_tail=self.stderr_tail()) from exc
        except BaseException:  # cancelled during the handshake: the guest does not outlive its start
            await self.aclose()  # (its cleanup kills the group even when this await is cancelled too)
            raise
        finally:
            watch.cancel()
        self.info = info
        return info

    def _not_a_guest(self, message: str) -> None:
        """Fail the pending initialize: the guest is a plain text program (`mt_eval.bridge.not_a_guest`)."""
        for pending in self._pending.values():
            if pending.method == "initialize" and not pending.future.done():
                pending.future.set_exception(m.BridgeError(m.INVALID_REQUEST, message, {"not_a_guest": True}))

    async def aclose(self) -> None:
        """Shut the guest down, escalating: shutdown → close stdin → SIGTERM → SIGKILL (process group)."""
        if self._transport is None or self._closing:
            return
        self._closed_by_host = True
        if self.alive and self.info is not None:
            grace = self.options.shutdown_grace_s
            with contextlib.suppress(m.BridgeError):
                await self.request("shutdown", {}, timeout_s=grace, hard_timeout_s=grace)
        await super().aclose()
        HOST_GUESTS.discard(self.pid or 0)

    def on_closed(self) -> None:
        self._timer.cancel()
        self._cancel_settled()
        self._fail_all(m.GUEST_EXITED, _CLOSED, closed=True)

    def _closed_data(self) -> dict[str, Any]:
        """What a call the host's `aclose` ended carries: ``closed`` (it is not to be sent again)."""
        return {**self._failure_data(self._in_flight() <= 1), "closed": True}

    def gone_because(self) -> str:
        """Why the guest no longer runs, for the log line of its restart: what stopped it, or how it ended and the
        last lines of its stderr."""
        if self._stopped_because is not None:
            return f"the guest was stopped: {self._stopped_because}"
        tail = last_lines(self.stderr_tail())
        return f"the guest {exit_status(self.exit_code)}" + (f" | stderr: {tail}" if tail else "")

    def stop(self, reason: str) -> None:
        """Kill the guest now (its group, SIGKILL) and fail every request in flight with ``reason``."""
        if self._gone or self._closing:
            return
        self._stopped_because = reason
        log.warning("stopping guest %s: %s", self.label, reason)
        self.kill()
        self._cancel_settled()
        self._fail_all(m.GUEST_EXITED, f"the guest was stopped: {reason}")

    # ---- requests ------------------------------------------------------------------------------

    async def request(self, method: str, params: Any, *, timeout_s: float | None = None,
                      hard_timeout_s: float | None = None) -> msgspec.Raw:
        """Send a request and wait for its result; failures raise `BridgeError` with a reserved code."""
        if self._cancelling:  # a guest that has not answered a cancel yet may be stuck: wait until it is known
            await self._cancels_answered.wait()
        if not self.running:  # (not sent: the caller may send it to the guest's successor; said as the guest ended)
            gone = _CLOSED if self._closed_by_host and not self.exited else self.gone_because().split(" | stderr: ")[0]
            raise m.BridgeError(m.GUEST_EXITED, f"the request was not sent: {gone}",
                                {**self._failure_data(False), "unsent": True})
        loop = self._loop
        assert loop is not None  # set when the guest was spawned
        request_id = next(self._ids)
        try:  # encoded before anything waits for it: a request that cannot be written leaves nothing behind
            line = m.request_line(request_id, method, params)
        except UnicodeEncodeError as exc:  # a lone surrogate (`mt_eval.lone_surrogates` says where)
            raise m.BridgeError(m.INVALID_PARAMS, f"the {method} request holds text that is not valid Unicode "
                                f"({exc.reason})", {"unencodable": True}) from None
        timeout = timeout_s if timeout_s is not None else self.options.request_timeout_s
        # the hard cap never cuts a request short of its own timeout (entries × the per-entry one, say)
        hard = hard_timeout_s if hard_timeout_s is not None else max(self.options.hard_timeout_s, timeout)
        pending = _Pending(loop.create_future(), method, timeout, hard, loop.time(), self._unmatched.count,
                           self._timed_out)
        self._pending[request_id] = pending
        self._timer.ensure(min(pending.deadline, pending.hard_deadline))
        self.write(line)
        try:
            result = await pending.future
        except asyncio.CancelledError:  # (not when its answer came first: a guest answers no cancel after it)
            if request_id in self._pending and self.alive and (pending.future.cancelled() or not pending.future.done()):
                self._cancel(request_id)
            raise
        finally:
            self._pending.pop(request_id, None)
        if method in _BATCH_REQUESTS:
            self.completed += 1
        return result

    def _cancel(self, request_id: int | str) -> None:
        """Tell the guest to stop a request; it must answer within the grace, or it is stopped."""
        if self.info is not None and not self.info.capabilities.cancel:
            self.stop(f"it cannot cancel, and request {request_id} was given up")
            return
        self.write(m.notification_line("cancel", {"id": request_id}))
        due = asyncio.get_running_loop().time() + self.options.cancel_grace_s
        self._cancelling[request_id] = due
        self._cancels_answered.clear()
        self._timer.ensure(due)

    def _cancel_settled(self, request_id: int | str | None = None) -> None:
        if request_id is None:
            self._cancelling.clear()
        else:
            self._cancelling.pop(request_id, None)
        if not self._cancelling:
            self._cancels_answered.set()

    def _sweep(self) -> None:
        """The one timer's callback: time out overdue requests, stop a guest that ignores a cancel."""
        now = asyncio.get_running_loop().time() + 1e-3
        earliest = None
        for request_id, pending in list(self._pending.items()):
            if pending.future.done():
                continue
            due = min(pending.deadline, pending.hard_deadline)
            if due <= now:
                self._time_out(request_id, pending)
            elif earliest is None or due < earliest:
                earliest = due
        for request_id, due in list(self._cancelling.items()):
            if due <= now:
                self.stop(f"it did not answer the cancel of request {request_id} within "
                          f"{self.options.cancel_grace_s:g} s (is its event loop blocked?)")
                return
            if earliest is None or due < earliest:
                earliest = due
        if earliest is not None and self.alive:
            self._timer.ensure(earliest)

    def _time_out(self, request_id: int | str, pending: _Pending) -> None:
        hard = pending.hard_deadline <= pending.deadline
        reason = (f"hit the hard cap of {pending.hard_s:g} s" if hard
                  else f"got no answer or progress within {pending.timeout_s:g} s")
        alone = self._in_flight() == 1 and pending.timed_out_mark == self._timed_out  # (`_alone`)
        self._timed_out += pending.method in _BATCH_REQUESTS
        reason += self._unmatched.cause(pending)  # (an answer that named no request: why it got none)
        pending.future.set_exception(m.BridgeError(m.TIMEOUT, f"{pending.method} request {reason}",
                                                   {"alone": alone}))
        if self.alive and pending.method != "initialize":
            self._cancel(request_id)

    def _in_flight(self) -> int:
        return sum(1 for p in self._pending.values() if not p.future.done() and p.method in _BATCH_REQUESTS)

    def _alone(self, pending: _Pending, in_flight: int) -> bool:
        """Whether ``pending`` is the one request the guest failed on: alone in flight, and no other timed out while it
        was (requests stuck behind one that blocked the guest time out one by one: the last is not alone)."""
        return in_flight <= 1 and pending.timed_out_mark == self._timed_out

    # ---- incoming ------------------------------------------------------------------------------

    def on_output(self, data: bytes) -> None:
        for line in self._lines.feed(data):
            if isinstance(line, Oversized):
                self._fail_line(line.head, m.MESSAGE_TOO_LARGE, f"guest sent a line of {line.length} bytes, over "
                                f"{m.line_limit(self.options.max_line_bytes)}")
            elif line:
                self._on_line(line)

    def _on_line(self, line: bytes) -> None:
        try:
            message = m.decode_incoming(line)
        except msgspec.ValidationError as exc:  # JSON, but not a message of the protocol (unless its id is 2.0, say)
            if (reread := m.with_whole_number_id(line)) is None:
                self._fail_line(line[:256], m.PARSE_ERROR, f"guest sent a message that is not JSON-RPC 2.0 ({exc})")
                return
            message = reread
        except (msgspec.DecodeError, RecursionError):  # (RecursionError: nested too deep to read)
            self._fail_line(line[:256], m.PARSE_ERROR, m.not_json_line(line))
            return
        if message.method is not None:
            if message.id is None:
                self._on_notification(message.method, message.params)
            else:
                self._on_request(message.id, message.method)
            return
        if message.id is None and message.error is not None:
            self._unmatched.unattributed(self.label, self._pending, message.error)
            return
        cancelled = message.id in self._cancelling
        if cancelled:
            self._cancel_settled(message.id)  # answered: the guest is still reading its input
        pending = self._pending.get(message.id) if message.id is not None else None
        if pending is None or pending.future.done():
            if cancelled:
                log.debug("%s: dropped the late answer to cancelled request %r", self.label, message.id)
            else:  # (said once, with its id; later ones at debug)
                self._unmatched.add(self.label, message.id, self._pending)
            return
        if message.error is not None:
            error = message.error
            if self._closed_by_host and error.code == m.CANCELLED and not cancelled:  # (cancelled as its input ended)
                pending.future.set_exception(m.BridgeError(m.CANCELLED, _CLOSED, self._closed_data()))
                return
            pending.future.set_exception(m.BridgeError(error.code, error.message, error.data))
        elif message.result is msgspec.UNSET:
            pending.future.set_exception(m.BridgeError(m.INVALID_REQUEST, "guest sent a response with neither "
                                                       "result nor error"))
        else:
            pending.future.set_result(message.result)

    def _on_request(self, request_id: int | str, method: str) -> None:
        """A guest sends no requests: one of this host's own, sent back, fails it (the program copies its input)."""
        pending = self._pending.get(request_id)
        if pending is None or pending.method != method or pending.future.done():
            log.debug("%s: ignored a %r request from the guest", self.label, method)
        elif method == "initialize":
            self._not_a_guest(not_a_guest_message(self.label, None, echoed=True))
        else:
            pending.future.set_exception(m.BridgeError(m.INVALID_REQUEST, f"guest {self.label} sent the {method} "
                                                       "request back instead of answering it"))

    def _fail_line(self, head: bytes, code: int, message: str) -> None:
        request_id = id_in(head)
        pending = self._pending.get(request_id) if request_id is not None else None
        if pending is not None and pending.method == "initialize" and echoes_request(head):  # a text filter, id kept
            return self._not_a_guest(not_a_guest_message(self.label, head))
        if pending is not None and not pending.future.done():
            pending.future.set_exception(m.BridgeError(code, message))
            return
        self.junk_lines += 1
        if self.first_junk is None:
            self.first_junk = head[:200]
        log.warning("%s: skipped stdout line (%s): %r", self.label, message, head[:120])

    def _on_notification(self, method: str, params: Any) -> None:
        if method == "progress" and isinstance(params, dict) and isinstance(params.get("id"), int | str):
            pending = self._pending.get(params["id"])
            if pending is not None:
                pending.deadline = asyncio.get_running_loop().time() + pending.timeout_s
        elif method == "log" and isinstance(params, dict):
            level = _LOG_LEVELS.get(str(params.get("level")), logging.INFO)
            logging.getLogger(GUEST_LOGGER).log(level, "%s: %s", self.label, params.get("message"))

    # ---- the guest going away ------------------------------------------------------------------

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1 and self._lines.pending:  # its stdout ended mid-line: a last message without "\n" still counts
            self.on_output(b"\n")
        super().pipe_connection_lost(fd, exc)
        if fd == 0 and not self._gone and not self._closing:  # its stdin closed (a write failed, or it closed it)
            asyncio.get_running_loop().call_later(self.GONE_GRACE_S, self._input_closed)

    def _input_closed(self) -> None:
        """Stop a guest that closed its input (one that is exiting has had the grace to be reported as it ended)."""
        if not (self._gone or self._closing or self._closed_by_host or self.exited):  # (`aclose` ends it its own way)
            self.stop(INPUT_CLOSED)

    def on_gone(self, status: str) -> None:
        self._timer.cancel()
        self._cancel_settled()
        if self._closed_by_host:  # it ended as `aclose` stopped it (SIGTERM, say, for a guest still busy)
            self._fail_all(m.GUEST_EXITED, _CLOSED, closed=True)
        else:
            self._fail_all(m.GUEST_EXITED, f"the guest {status}")

    def _failure_data(self, alone: bool) -> dict[str, Any]:
        return {"exit_code": self.exit_code, "stderr_tail": self.stderr_tail(), "alone": alone}

    def _fail_all(self, code: int, message: str, *, closed: bool = False) -> None:
        in_flight = self._in_flight()
        for pending in list(self._pending.values()):
            if not pending.future.done():
                data = self._closed_data() if closed else self._failure_data(self._alone(pending, in_flight))
                pending.future.set_exception(m.BridgeError(code, message, data))
