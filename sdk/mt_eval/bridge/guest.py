"""The Python guest: a method served over stdin/stdout as a bridge guest (``mt-eval serve DIR``).

Stdout is diverted at the file-descriptor level before the plugin is imported: the protocol keeps a private
duplicate of fd 1, and fd 1 itself is pointed at stderr, so a ``print()`` anywhere in a method (or in a C
extension writing to fd 1) lands in the host's logs instead of corrupting the protocol. A host talks to it over
pipes, and it exits when its stdin closes, once what is in flight is answered (from a pipe, what still runs 5 s
later is cancelled). Run by hand, files work too: ``mt-eval serve DIR < requests.jsonl > answers.jsonl`` answers
every request before it exits, and on a terminal it says what it expects.
"""

from __future__ import annotations

import asyncio
import io
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

import msgspec

from mt_eval import event_loop
from mt_eval._version import __version__
from mt_eval.bridge import messages as m
from mt_eval.bridge.eager import start_eagerly
from mt_eval.bridge.guest_io import FileInput, FileOutput, Output, PipeOutput, StdinProtocol, streams
from mt_eval.bridge.guest_reading import oversized_answer, read_message
from mt_eval.bridge.guest_requests import (
    MethodCardError,
    card_answer,
    decide_params,
    decision_answer,
    runtime_card,
    translate_answer,
    translate_params,
)
from mt_eval.bridge.input_poll import PollWorth, can_poll, poll_input, poll_seconds
from mt_eval.bridge.lines import LineSplitter, Oversized
from mt_eval.bridge.slots import Slots
from mt_eval.js_text import js_string
from mt_eval.lone_surrogates import writable
from mt_eval.method_protocol import declared_max_concurrency
from mt_eval.plugin_import import exception_words
from mt_eval.value_words import value_in_words

# Calls run at once: an asyncio method overlaps its calls while it awaits, as a Node method does (its guest takes
# 64), or the N it declares (``capabilities = {"max_concurrency": N}``, as a Node method exports them).
MAX_CONCURRENCY = 64


def divert_stdout() -> int:
    """Point fd 1 (and ``sys.stdout``, ``sys.__stdout__`` too) at stderr; return a private fd for the protocol. (The
    stream replaced may have closed the one ``sys.__stdout__`` was: unbuffered, `mt_eval.cli` wraps its file.)"""
    sys.stdout.flush()
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", closefd=False), line_buffering=True)
    sys.__stdout__ = sys.stdout  # type: ignore[misc]  # (Final to typeshed; a method may write to it)
    return protocol_fd


def serve_method(method: Any, protocol_fd: int, *, name: str, method_id: str, implements: Sequence[str],
                 module_file: Path | None = None) -> int:
    """Serve ``method`` on ``protocol_fd`` (see `divert_stdout`) and stdin until stdin closes; the exit status."""
    server = GuestServer(method, name=name, method_id=method_id, module_file=module_file, implements=implements)
    try:
        event_loop.run(server.run, protocol_fd)
    except KeyboardInterrupt:
        return 130
    if server.interrupted:
        return 130
    if isinstance(server.output_error, BrokenPipeError):  # the reader went away (`| head`): quietly, as tools do
        return 141
    return 1 if server.output_error is not None or server.load_failed else 0


STUCK = "mt-eval serve: interrupted, but the method blocks the event loop and could not be stopped; ending it"


class GuestServer:
    """The protocol state machine of a guest around one in-process method.

    Requests arrive in the stdin pipe's I/O callback and each translate or decide runs as an asyncio task the
    server tracks by request id, so that a ``cancel`` notification cancels it; when stdin closes, the tasks are
    finished (`mt_eval.bridge.host_gone.finish_in_flight`) and the method is closed. Like the host's futures,
    these tasks belong to the bridge's I/O layer (README, *One async style*): an anyio task and cancel scope per
    request cost a fifth of the guest's throughput."""

    def __init__(self, method: Any, *, name: str, method_id: str, module_file: Path | None = None,
                 implements: Sequence[str] = ("translate",), max_line_bytes: int = m.DEFAULT_MAX_LINE_BYTES) -> None:
        self.method = method
        self.identity = {"name": name, "method_id": method_id}
        self.module_file = module_file  # the method's module, named when its method_card() fails (`runtime_card`)
        self.load_failed = False  # initialize was refused: the method's card cannot be made
        self.implements = list(dict.fromkeys(implements))
        self.initialized = False
        self.shared_latency = False  # the host reads a translate answer's latency_s (initialize's shared_latency)
        self.shutting_down = False
        self.default_config: dict[str, Any] | None = None  # initialize's config, for requests that give none
        self.closed = asyncio.Event()
        self.output_error: OSError | None = None  # the answers could not be written (`_cannot_answer`)
        self.interrupted = False  # Ctrl-C came in a method's call
        self._lines = LineSplitter(max_line_bytes)
        self._tasks: dict[int | str, asyncio.Task[None]] = {}
        self._slots = Slots(declared_max_concurrency(method) or MAX_CONCURRENCY)
        self._out: Output | None = None
        self._pipe_output = PipeOutput(self._cannot_answer)  # (a pipe's reader gone: `_cannot_answer`)
        self._outgoing: list[bytes] = []  # answers not written yet (`send`)
        self._reading = False  # in on_data: its answers go out when the chunk is done
        self._flush_due = False
        self._loop: asyncio.AbstractEventLoop | None = None  # the loop serving: `run` sets it
        self._poll_seconds = poll_seconds()  # after answering everything, the input is polled (`input_poll`)
        self._poll_fd: int | None = None  # the host's pipe, once `run` knows it can be polled
        self._poll_worth = PollWorth()  # (not on one CPU)
        self._poll_due = False

    async def run(self, protocol_fd: int, input_fd: int = 0) -> None:
        from mt_eval.bridge.host_gone import host_watched
        from mt_eval.loop_watchdog import LoopWatchdog

        from_host = streams(input_fd) and streams(protocol_fd)
        # Watched before the first request is read (connecting the input may read it): a host gone ends the guest,
        # and Ctrl-C interrupts it (`mt_eval.loop_watchdog`), even while its method blocks the loop.
        with host_watched(input_fd, from_host), LoopWatchdog(math.inf, hard_limit_s=10.0, hard_exit_code=130,
                                                             hard_message=STUCK):
            await self._serve(from_host, await self._connect(protocol_fd, input_fd, from_host))

    async def _connect(self, protocol_fd: int, input_fd: int, from_host: bool) -> asyncio.BaseTransport | FileInput:
        """Where the answers go (`_out`), and the input from which requests are read from now on."""
        loop = self._loop = asyncio.get_running_loop()
        if streams(protocol_fd) and not os.isatty(protocol_fd):
            self._out, _ = await loop.connect_write_pipe(lambda: self._pipe_output,
                                                         os.fdopen(protocol_fd, "wb", buffering=0))
        else:
            self._out = FileOutput(protocol_fd, self._cannot_answer)
        if not streams(input_fd):
            return FileInput(self, input_fd, loop)
        reader, _ = await loop.connect_read_pipe(lambda: StdinProtocol(self), os.fdopen(input_fd, "rb", buffering=0))
        if from_host and self._poll_seconds and can_poll(input_fd):  # (non-blocking now)
            self._poll_fd = input_fd
        return reader

    def _cannot_answer(self, error: OSError) -> None:
        """The answers cannot be written (a full disk, or their reader gone): said once (a reader gone quietly), and
        the guest stops as when its host is gone, its work in flight cancelled."""
        if self.output_error is not None:
            return
        self.output_error = error
        if not isinstance(error, BrokenPipeError):
            print(f"mt-eval serve: cannot write the answers: {error.strerror or error}; stopping", file=sys.stderr,
                  flush=True)
        self.closed.set()
        for task in list(self._tasks.values()):  # (input that ended first is not waited for either)
            task.cancel()

    async def _serve(self, from_host: bool, reader: asyncio.BaseTransport | FileInput) -> None:
        """Until the input ends; then in-flight work is finished (`finish_in_flight`), and the method closed."""
        from mt_eval.bridge.host_gone import finish_in_flight

        await self.closed.wait()
        if self.output_error is not None:  # nobody can read the answers
            for task in list(self._tasks.values()):
                task.cancel()
        await finish_in_flight(list(self._tasks.values()), bounded=from_host)
        # the method's own processes and connections end with the guest (a bounded wait: a warning, not a hang)
        from mt_eval.guarded_calls import guarded_close

        await guarded_close(self.method, self.identity["method_id"], prog="mt-eval serve")
        self._poll_fd = None
        reader.close()
        self._flush()
        self._pipe_output.done = True
        cast(Output, self._out).close()  # (set by `run`)

    def send(self, line: bytes) -> None:
        """Answers go out together: those of the requests read in one chunk when it is done, the others at the end
        of the loop's turn (one system call, and one wake-up of the host, for many answers)."""
        self._outgoing.append(line)
        if not self._reading and not self._flush_due:
            self._flush_due = True
            (self._loop or asyncio.get_running_loop()).call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_due = False
        lines, self._outgoing = self._outgoing, []
        if lines and self._out is not None and not self._out.is_closing():
            self._out.write(lines[0] if len(lines) == 1 else b"".join(lines))
            if self._poll_fd is not None and not self._poll_due:
                self._poll_due = True  # at the end of this turn, when the tasks that just answered are done
                (self._loop or asyncio.get_running_loop()).call_soon(self._poll)

    def _poll(self) -> None:
        """With nothing in flight, read the host's next request as it arrives instead of sleeping until the kernel
        wakes the loop for it (`mt_eval.bridge.input_poll`)."""
        self._poll_due = False
        if self._poll_fd is None or self.closed.is_set() or not all(t.done() for t in self._tasks.values()) \
                or not self._poll_worth():
            return
        data = poll_input(self._poll_fd, self._poll_seconds)
        if data:
            self.on_data(data)

    def end_of_file(self) -> None:
        """A file of requests has ended: a last request without its newline is answered too, then the input is
        closed."""
        if self._lines.pending:
            self.on_data(b"\n")
        self.closed.set()

    def on_data(self, data: bytes) -> None:
        self._reading = True
        try:
            for line in self._lines.feed(data):
                if isinstance(line, Oversized):
                    self.send(oversized_answer(line, self._lines.max_bytes))
                elif line.strip():
                    self.on_line(line)
        finally:
            self._reading = False
            self._flush()

    def on_line(self, line: bytes) -> None:
        message = read_message(line)
        if isinstance(message, bytes):  # (the error line that answers it)
            self.send(message)
        elif message.request_id is None:
            self.on_notification(message.method, message.params)
        else:
            self.on_request(message.request_id, message.method, message.params)

    def on_notification(self, method: str, params: Any) -> None:
        request_id = params.get("id") if isinstance(params, dict) else None  # (an id of another type: ignored)
        if method == "cancel" and isinstance(request_id, int | str) and (task := self._tasks.get(request_id)):
            task.cancel()

    def on_request(self, request_id: int | str, method: str, params: dict[str, Any]) -> None:
        if method == "initialize" and not self.initialized:
            self.initialize(request_id, params)
        elif not self.initialized:
            self.send(m.error_line(request_id, m.NOT_INITIALIZED, "not initialized: the method failed to load"
                                   if self.load_failed else f'not initialized: send "initialize" before "{method}"'))
        elif method == "initialize":
            self.send(m.error_line(request_id, m.INVALID_REQUEST, "already initialized"))
        elif self.shutting_down and method != "shutdown":
            self.send(m.error_line(request_id, m.INVALID_REQUEST, "the guest is shutting down: no new requests"))
        elif method in ("translate", "decide") and request_id in self._tasks:
            given = msgspec.json.encode(request_id).decode()
            self.send(m.error_line(request_id, m.INVALID_REQUEST, f"request id {given} is already in flight"))
        elif method in ("translate", "decide") and method in self.implements:
            work = self.translate if method == "translate" else self.decide
            # Run at once: a method that answers without waiting is answered in this turn of the loop.
            task = start_eagerly(work(request_id, params), self._loop)
            if task is not None:
                self._tasks[request_id] = task
                task.add_done_callback(lambda _: self._tasks.pop(request_id, None))
        elif method in ("translate", "decide"):
            self.send(m.error_line(request_id, m.METHOD_NOT_FOUND, f"this method does not implement {method} "
                                   f"(it implements {', '.join(self.implements)})"))
        elif method == "method_card":
            self.send(card_answer(request_id, self.method, self.module_file))
        elif method == "shutdown":  # what is in flight is finished; nothing new is started
            self.shutting_down = True
            self.send(m.result_line(request_id, None))
        else:
            self.send(m.error_line(request_id, m.METHOD_NOT_FOUND, f"method not found: {js_string(method)}"))

    def initialize(self, request_id: int | str, params: dict[str, Any]) -> None:
        offered = params.get("protocol_versions")
        if not isinstance(offered, list):
            self.send(m.error_line(request_id, m.INVALID_PARAMS, f"params.protocol_versions must be a list, got "
                                                                 f"{value_in_words(offered)}"))
            return
        chosen = next((v for v in offered if v in m.SUPPORTED_VERSIONS), None)
        if chosen is None:
            self.send(m.error_line(request_id, m.UNSUPPORTED_VERSION, f"unsupported protocol version: offered "
                                   f"{msgspec.json.encode(offered).decode()}, this guest speaks "
                                   f"{', '.join(m.SUPPORTED_VERSIONS)}", {"supported": list(m.SUPPORTED_VERSIONS)}))
            return
        config = params.get("config")
        if config is not None and not isinstance(config, dict):
            self.send(m.error_line(request_id, m.INVALID_PARAMS,
                                   f"invalid config: expected an object, got {value_in_words(config)}"))
            return
        self.default_config = config  # checked, with its defaults filled in, by the requests that use it
        try:
            card = runtime_card(self.method, self.module_file)
        except MethodCardError as exc:  # the start fails (as the Node guest's does), the reason and the fix said
            self.load_failed = True
            self.send(m.error_line(request_id, m.INTERNAL_ERROR, f"cannot load the method: {exc}",
                                   {"type": "MethodCardError"}))
            return
        self.initialized = True
        self.shared_latency = params.get("shared_latency") is True
        self.send(m.result_line(request_id, {
            "protocol_version": chosen, "method": self.identity, "card": card,
            "capabilities": {"max_batch": None, "max_concurrency": self._slots.count, "cancel": True,
                             "progress": False},
            "guest": {"name": "mt-eval serve", "version": __version__,
                      "runtime": f"python {sys.version.split()[0]}"},
            "implements": self.implements,
        }))

    async def translate(self, request_id: int | str, params: Any) -> None:
        await self._answer(request_id, params, lambda given: translate_params(given, self.default_config),
                           self.method.translate, self._translate_answer)

    def _translate_answer(self, raw: Any, items: list[Any], elapsed: float) -> dict[str, Any]:
        return translate_answer(raw, items, elapsed, shared=self.shared_latency)

    async def decide(self, request_id: int | str, params: Any) -> None:
        await self._answer(request_id, params, lambda given: decide_params(given, self.default_config),
                           self.method.decide, decision_answer)

    async def _answer(self, request_id: int | str, params: Any, parse: Callable[[Any], tuple[list[Any], Any]],
                      call: Callable[..., Any], answer: Callable[[Any, list[Any], float], dict[str, Any]]) -> None:
        """Run one translate or decide request: check its params, call the method, send its results."""
        try:
            items, config = parse(params)
        except ValueError as exc:
            self.send(m.error_line(request_id, m.INVALID_PARAMS, str(exc)))
            return
        own_task = asyncio.current_task()
        try:
            if not self._slots.try_take():
                await self._slots.take()
            try:
                started = time.perf_counter()
                raw = await call(items, config)
                elapsed = time.perf_counter() - started
            finally:
                self._slots.give()
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and not task.cancelling():  # nothing cancelled it: the method raised it itself
                from mt_eval.deadlines import CancelledItself

                self.send(m.error_line(request_id, m.METHOD_FAILED, str(CancelledItself()),
                                       {"type": "CancelledError"}))
                return
            self.send(m.error_line(request_id, m.CANCELLED, "cancelled"))
            return
        except (SystemExit, KeyboardInterrupt) as exc:  # the guest keeps serving: the request fails, as a raise does
            from mt_eval.deadlines import raised_by_a_signal
            from mt_eval.guarded_calls import exit_failure

            if isinstance(exc, KeyboardInterrupt) and raised_by_a_signal(exc):  # (Ctrl-C, not the method's own)
                self.interrupted = True  # (a pipe's transport may take it as its own end: `serve_method` exits 130)
                raise
            why = exit_failure(exc) if isinstance(exc, SystemExit) else exception_words(exc)
            self.send(m.error_line(request_id, m.METHOD_FAILED, why, {"type": type(exc).__name__}))
            return
        except BaseException as exc:  # an exception, or a BaseException of the method's own: its call's failure
            from mt_eval.deadlines import closed_from_outside

            if isinstance(exc, GeneratorExit) and closed_from_outside(own_task):
                raise
            self.send(m.error_line(request_id, m.METHOD_FAILED, writable(exception_words(exc)),
                                   {"type": type(exc).__name__}))
            return
        try:
            line = m.result_line(request_id, answer(raw, items, elapsed))
        except (TypeError, ValueError, RecursionError, OverflowError, msgspec.EncodeError) as exc:
            line = m.error_line(request_id, m.METHOD_FAILED, f"the results cannot be sent as JSON: {exc}",
                                {"type": type(exc).__name__})
        self.send(line)

