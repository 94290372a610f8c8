"""One guest process: spawn, handshake, requests in flight, and a shutdown that leaves nothing behind.

The connection is driven by asyncio's subprocess protocol callbacks rather than reader tasks: bytes are
split into lines and responses resolve their futures inside the event loop's I/O callback. That keeps a
round trip to a single loop wake-up, and the connection has no background task to own, so it can be
started in one task and closed in another (the harness's workers share one guest).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import signal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from mt_eval import __version__
from mt_eval.bridge import messages as m
from mt_eval.bridge.lines import LineSplitter, Oversized, id_in
from mt_eval.process_group import ChildPipes, StderrTail, close_group, exit_status, signal_group

log = logging.getLogger("mt_eval.bridge")
guest_log = logging.getLogger("mt_eval.bridge.guest")
_LOG_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


@dataclass(frozen=True)
class HostOptions:
    """Limits and timeouts of a host; every value has a safe default."""

    start_timeout_s: float = 30.0
    request_timeout_s: float = 120.0
    hard_timeout_s: float = 600.0
    max_line_bytes: int = m.DEFAULT_MAX_LINE_BYTES
    shutdown_grace_s: float = 2.0
    stderr_tail_bytes: int = 64 * 1024
    stderr_tail_lines: int = 40
    restart_budget: int = 3
    restart_window_s: float = 60.0


class _Pending:
    __slots__ = ("deadline", "future", "hard_deadline", "hard_s", "method", "timeout_s")

    def __init__(self, future: asyncio.Future[msgspec.Raw], method: str, timeout_s: float, hard_s: float,
                 now: float) -> None:
        self.future = future
        self.method = method
        self.timeout_s = timeout_s
        self.hard_s = hard_s
        self.deadline = now + timeout_s
        self.hard_deadline = now + hard_s


class GuestConnection:
    """A running guest speaking ``mt-eval-bridge/1``. Use `start`, then `request`, then `aclose`."""

    def __init__(self, command: Sequence[str], *, cwd: str | os.PathLike[str] | None = None,
                 env: Mapping[str, str] | None = None, options: HostOptions | None = None,
                 label: str | None = None) -> None:
        if not command:
            raise ValueError("a guest command needs at least the program to run")
        self.command = list(command)
        self.cwd = cwd
        self.env = dict(env) if env is not None else None
        self.options = options or HostOptions()
        self.label = label or os.path.basename(self.command[0])
        self.info: m.InitializeResult | None = None
        self.exit_code: int | None = None
        self.junk_lines = 0
        self._ids = itertools.count(1)
        self._pending: dict[int | str, _Pending] = {}
        self._lines = LineSplitter(self.options.max_line_bytes)
        self._stderr = StderrTail(guest_log, self.label, max_bytes=self.options.stderr_tail_bytes,
                                  max_lines=self.options.stderr_tail_lines)
        self._transport: asyncio.SubprocessTransport | None = None
        self._stdin: asyncio.WriteTransport | None = None
        self._sweep: asyncio.TimerHandle | None = None
        self._stdout_closed = False
        self._exited = asyncio.Event()
        self._gone_timer: asyncio.TimerHandle | None = None
        self._gone = False
        self._closing = False
        self.on_gone: Callable[[GuestConnection], None] | None = None

    # ---- lifecycle -------------------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        return self._transport.get_pid() if self._transport is not None else None

    @property
    def alive(self) -> bool:
        return self._transport is not None and not self._gone and not self._closing

    async def start(self, config: Any = None) -> m.InitializeResult:
        """Spawn the guest and complete the handshake within the start timeout."""
        loop = asyncio.get_running_loop()
        try:
            transport, _ = await loop.subprocess_exec(
                lambda: ChildPipes(self), *self.command, cwd=self.cwd, env=self.env, start_new_session=True,
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        except OSError as exc:
            raise m.BridgeError(m.GUEST_EXITED, f"cannot start guest {self.command[0]!r}: {exc.strerror or exc}"
                                ) from exc
        self._transport = transport
        self._stdin = transport.get_pipe_transport(0)  # type: ignore[assignment]
        params = {"protocol_versions": list(m.SUPPORTED_VERSIONS),
                  "host": {"name": "mt-eval", "version": __version__}, "config": config}
        timeout = self.options.start_timeout_s
        try:
            raw = await self.request("initialize", params, timeout_s=timeout, hard_timeout_s=timeout)
            info = msgspec.json.decode(raw, type=m.InitializeResult)
        except (m.BridgeError, msgspec.ValidationError, msgspec.DecodeError) as exc:
            await self.aclose()
            raise self._start_error(exc) from exc
        self.info = info
        return info

    def _start_error(self, exc: Exception) -> m.BridgeError:
        if isinstance(exc, m.BridgeError) and exc.code == m.UNSUPPORTED_VERSION:
            supported = (exc.data or {}).get("supported") if isinstance(exc.data, dict) else None
            return m.BridgeError(exc.code, f"guest {self.label} speaks {', '.join(supported or ['?'])}; this host "
                                 f"speaks {', '.join(m.SUPPORTED_VERSIONS)}: upgrade the older side", exc.data)
        if isinstance(exc, m.BridgeError) and exc.code == m.TIMEOUT:
            message = f"guest {self.label} did not answer initialize within {self.options.start_timeout_s:g} s"
        elif isinstance(exc, m.BridgeError):
            message = f"guest {self.label} failed to start: {exc.message}"
        else:
            message = f"guest {self.label} sent an invalid initialize result: {exc}"
        return m.BridgeError(exc.code if isinstance(exc, m.BridgeError) else m.INTERNAL_ERROR, message,
                             {"exit_code": self.exit_code, "stderr_tail": self.stderr_tail()})

    async def aclose(self) -> None:
        """Shut the guest down, escalating: shutdown → close stdin → SIGTERM → SIGKILL (process group)."""
        if self._transport is None or self._closing:
            return
        grace = self.options.shutdown_grace_s
        try:
            if self.alive and self.info is not None:
                with contextlib.suppress(m.BridgeError):
                    await self.request("shutdown", {}, timeout_s=grace, hard_timeout_s=grace)
            self._closing = True
            await close_group(self.pid, self._close_stdin, self._exited, grace)
        finally:
            self._closing = True
            if not self._exited.is_set():
                signal_group(self.pid, signal.SIGKILL)
            self._fail_all(m.GUEST_EXITED, f"guest {self.label} was shut down")
            self._transport.close()

    def _close_stdin(self) -> None:
        if self._stdin is not None:
            self._stdin.close()

    # ---- requests ------------------------------------------------------------------------------

    async def request(self, method: str, params: Any, *, timeout_s: float | None = None,
                      hard_timeout_s: float | None = None) -> msgspec.Raw:
        """Send a request and wait for its result; failures raise `BridgeError` with a reserved code."""
        if not self.alive:
            raise m.BridgeError(m.GUEST_EXITED, f"guest {self.label} is not running",
                                {"exit_code": self.exit_code, "stderr_tail": self.stderr_tail()})
        loop = asyncio.get_running_loop()
        request_id = next(self._ids)
        timeout = timeout_s if timeout_s is not None else self.options.request_timeout_s
        hard = hard_timeout_s if hard_timeout_s is not None else self.options.hard_timeout_s
        pending = _Pending(loop.create_future(), method, timeout, hard, loop.time())
        self._pending[request_id] = pending
        due = min(pending.deadline, pending.hard_deadline)
        if self._sweep is None or due < self._sweep.when():
            self._schedule_sweep(due)
        self._write(m.request_line(request_id, method, params))
        try:
            return await pending.future
        except asyncio.CancelledError:
            if request_id in self._pending and self.alive:
                self._write(m.notification_line("cancel", {"id": request_id}))
            raise
        finally:
            self._pending.pop(request_id, None)

    def _write(self, data: bytes) -> None:
        if self._stdin is not None and not self._stdin.is_closing():
            self._stdin.write(data)

    def _schedule_sweep(self, when: float) -> None:
        """One timer serves every request: it fires at the earliest deadline and re-arms itself."""
        if self._sweep is not None:
            self._sweep.cancel()
        self._sweep = asyncio.get_running_loop().call_at(when, self._sweep_timeouts)

    def _sweep_timeouts(self) -> None:
        self._sweep = None
        now = asyncio.get_running_loop().time()
        earliest = None
        for request_id, pending in list(self._pending.items()):
            if pending.future.done():
                continue
            due = min(pending.deadline, pending.hard_deadline)
            if due <= now + 1e-3:
                self._time_out(request_id, pending)
            elif earliest is None or due < earliest:
                earliest = due
        if earliest is not None:
            self._schedule_sweep(earliest)

    def _time_out(self, request_id: int | str, pending: _Pending) -> None:
        hard = pending.hard_deadline <= pending.deadline
        reason = (f"hit the hard cap of {pending.hard_s:g} s" if hard
                  else f"got no answer or progress within {pending.timeout_s:g} s")
        pending.future.set_exception(m.BridgeError(m.TIMEOUT, f"{pending.method} request {reason}"))
        if self.alive:
            self._write(m.notification_line("cancel", {"id": request_id}))

    # ---- incoming ------------------------------------------------------------------------------

    def on_started(self, transport: asyncio.SubprocessTransport) -> None:
        self._transport = transport

    def on_stdout_closed(self) -> None:
        self._stdout_closed = True
        self._check_gone()

    def on_stdout(self, data: bytes) -> None:
        for line in self._lines.feed(data):
            if isinstance(line, Oversized):
                self._fail_line(line.head, m.MESSAGE_TOO_LARGE,
                                f"guest sent a {line.length}-byte line, over the {self.options.max_line_bytes}-byte "
                                "limit")
            elif line:
                self._on_line(line)

    def _on_line(self, line: bytes) -> None:
        try:
            message = m.decode_incoming(line)
        except (msgspec.DecodeError, msgspec.ValidationError):
            self._fail_line(line[:256], m.PARSE_ERROR, "guest sent a line that is not valid JSON (or not UTF-8)")
            return
        if message.method is not None:
            if message.id is None:
                self._on_notification(message.method, message.params)
            return
        pending = self._pending.get(message.id) if message.id is not None else None
        if pending is None or pending.future.done():
            log.debug("%s: dropped a response to unknown or finished request %r", self.label, message.id)
            return
        if message.error is not None:
            error = message.error
            pending.future.set_exception(m.BridgeError(error.code, error.message, error.data))
        elif message.result is msgspec.UNSET:
            pending.future.set_exception(m.BridgeError(m.INVALID_REQUEST, "guest sent a response with neither "
                                                       "result nor error"))
        else:
            pending.future.set_result(message.result)

    def _fail_line(self, head: bytes, code: int, message: str) -> None:
        request_id = id_in(head)
        pending = self._pending.get(request_id) if request_id is not None else None
        if pending is not None and not pending.future.done():
            pending.future.set_exception(m.BridgeError(code, message))
            return
        self.junk_lines += 1
        log.warning("%s: skipped stdout line (%s): %r", self.label, message, head[:120])

    def _on_notification(self, method: str, params: Any) -> None:
        if method == "progress" and isinstance(params, dict):
            pending = self._pending.get(params.get("id"))  # type: ignore[arg-type]
            if pending is not None:
                pending.deadline = asyncio.get_running_loop().time() + pending.timeout_s
        elif method == "log" and isinstance(params, dict):
            level = _LOG_LEVELS.get(str(params.get("level")), logging.INFO)
            guest_log.log(level, "%s: %s", self.label, params.get("message"))

    def on_stderr(self, data: bytes) -> None:
        self._stderr.feed(data)

    def stderr_tail(self) -> str:
        """The last lines the guest wrote to stderr (bounded in bytes and lines)."""
        return self._stderr.tail()

    # ---- the guest going away ------------------------------------------------------------------

    def on_exit(self) -> None:
        assert self._transport is not None
        self.exit_code = self._transport.get_returncode()
        self._exited.set()
        self._check_gone()

    def _check_gone(self) -> None:
        """Fail everything once the guest has exited and its stdout is drained (or soon after either)."""
        if self._gone:
            return
        if self._exited.is_set() and self._stdout_closed:
            self._declare_gone()
        elif self._gone_timer is None:
            self._gone_timer = asyncio.get_running_loop().call_later(0.5, self._declare_gone)

    def _declare_gone(self) -> None:
        if self._gone:
            return
        self._gone = True
        if self._gone_timer is not None:
            self._gone_timer.cancel()
        if self._closing:
            return
        status = self._exit_status()
        self._fail_all(m.GUEST_EXITED, f"guest {self.label} {status}")
        if self.on_gone is not None:
            self.on_gone(self)

    def _exit_status(self) -> str:
        return exit_status(self.exit_code)

    def _fail_all(self, code: int, message: str) -> None:
        data = {"exit_code": self.exit_code, "stderr_tail": self.stderr_tail()}
        for pending in list(self._pending.values()):
            if not pending.future.done():
                pending.future.set_exception(m.BridgeError(code, message, data))


def node_executable() -> str:
    """The ``node`` to run Node guests with (``MT_EVAL_NODE`` overrides)."""
    return os.environ.get("MT_EVAL_NODE") or "node"

