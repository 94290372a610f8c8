"""``mt-eval serve DIR``: serve a Python method plugin over stdin/stdout as a bridge guest.

Stdout is diverted at the file-descriptor level before the plugin is imported: the protocol keeps a
private duplicate of fd 1, and fd 1 itself is pointed at stderr, so a ``print()`` anywhere in a method
(or in a C extension writing to fd 1) lands in the host's logs instead of corrupting the protocol.

A host talks to it over pipes, and it exits when its stdin closes, abandoning what is in flight (nobody is
left to read it). Run by hand, files work too: ``mt-eval serve DIR < requests.jsonl > answers.jsonl``
answers every request before it exits, and on a terminal it says what it expects.
"""

from __future__ import annotations

import asyncio
import io
import os
import stat
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import msgspec

from mt_eval import __version__
from mt_eval.bridge import messages as m
from mt_eval.bridge.lines import LineSplitter, Oversized, id_in
from mt_eval.records import RunConfig
from mt_eval.results import ResultNotes, compact, error_result, normalise_returned
from mt_eval.strict import value_in_words

MAX_CONCURRENCY = 8


def divert_stdout() -> int:
    """Point fd 1 (and ``sys.stdout``) at stderr; return a private fd for the protocol."""
    sys.stdout.flush()
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", closefd=False), line_buffering=True)
    return protocol_fd


def runtime_card(method: Any) -> dict[str, Any] | None:
    """What the method itself reports with ``method_card()`` (None without one); the host merges it with the
    card from the plugin's files, as it does for a method loaded in-process."""
    card = getattr(method, "method_card", None)
    if not callable(card):
        return None
    value = card()
    return value if isinstance(value, dict) else None


def serve(directory: Path) -> int:
    """Load the plugin and serve it until stdin closes; the exit status for the process."""
    from mt_eval.loader import PluginLoadError, load_method

    protocol_fd = divert_stdout()
    try:
        loaded = load_method(directory)
    except PluginLoadError as exc:
        print(exc, file=sys.stderr)
        return 1
    server = GuestServer(loaded.method, name=loaded.manifest.name, method_id=loaded.method_id,
                         card=runtime_card(loaded.method), implements=loaded.manifest.implements)
    if os.isatty(0):
        print(f"mt-eval serve: serving {loaded.method_id} as a bridge guest (mt-eval-bridge/1, bridge/PROTOCOL.md): "
              "type JSON-RPC requests, one per line, starting with initialize; Ctrl-D ends. A host (mt-eval run, "
              "Node's loadMethodPlugin) normally starts this command itself.", file=sys.stderr)
    try:
        asyncio.run(server.run(protocol_fd))
    except KeyboardInterrupt:
        return 130
    return 0


def _streams(fd: int) -> bool:
    """Whether ``fd`` is a stream the event loop can wait on — a pipe, a socket or a terminal — rather than a
    file (or a device such as /dev/null), which is read or written directly."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)


class _Output(Protocol):
    def write(self, data: bytes) -> None: ...
    def is_closing(self) -> bool: ...
    def close(self) -> None: ...


class _FileOutput:
    """The protocol's output when it is a regular file (``> answers.jsonl``): each line written at once."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.closed = False

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view):]

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            os.close(self.fd)


class _StdinProtocol(asyncio.Protocol):
    def __init__(self, server: GuestServer) -> None:
        self.server = server

    def data_received(self, data: bytes) -> None:
        self.server.on_data(data)

    def eof_received(self) -> bool:
        self.server.closed.set()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.server.closed.set()


class GuestServer:
    """The protocol state machine of a guest around one in-process method."""

    def __init__(self, method: Any, *, name: str, method_id: str, card: dict[str, Any] | None,
                 implements: Sequence[str] = ("translate",), max_line_bytes: int = m.DEFAULT_MAX_LINE_BYTES) -> None:
        self.method = method
        self.identity = {"name": name, "method_id": method_id}
        self.card = card
        self.implements = list(dict.fromkeys(implements))
        self.initialized = False
        self.closed = asyncio.Event()
        self._lines = LineSplitter(max_line_bytes)
        self._tasks: dict[int | str, asyncio.Task[None]] = {}
        self._slots = asyncio.Semaphore(MAX_CONCURRENCY)
        self._out: _Output | None = None

    async def run(self, protocol_fd: int, input_fd: int = 0) -> None:
        loop = asyncio.get_running_loop()
        from_host = _streams(input_fd) and _streams(protocol_fd)
        if _streams(protocol_fd):
            self._out, _ = await loop.connect_write_pipe(asyncio.Protocol, os.fdopen(protocol_fd, "wb", buffering=0))
        else:
            self._out = _FileOutput(protocol_fd)
        reader: asyncio.BaseTransport | asyncio.Task[None]
        if _streams(input_fd):
            reader, _ = await loop.connect_read_pipe(lambda: _StdinProtocol(self), os.fdopen(input_fd, "rb",
                                                                                            buffering=0))
        else:
            reader = loop.create_task(self._read_file(input_fd))
        await self.closed.wait()
        if from_host:
            for task in list(self._tasks.values()):  # a host closed stdin: nobody will read the answers
                task.cancel()
        if self._tasks:  # requests from a file, or answers into one: each is answered before the end
            await asyncio.gather(*self._tasks.values(), return_exceptions=True)
        close = getattr(self.method, "aclose", None)
        if callable(close):  # the method's own processes and connections end with the guest
            try:
                await close()
            except Exception as exc:
                print(f"mt-eval serve: the method's aclose() failed: {exc!r}", file=sys.stderr)
        if isinstance(reader, asyncio.Task):
            reader.cancel()
        else:
            reader.close()
        self._out.close()

    async def _read_file(self, fd: int) -> None:
        """Requests from a regular file: read to its end, then the input is closed."""
        while chunk := os.read(fd, 1 << 16):
            self.on_data(chunk)
            await asyncio.sleep(0)
        self.closed.set()

    def send(self, line: bytes) -> None:
        if self._out is not None and not self._out.is_closing():
            self._out.write(line)

    def on_data(self, data: bytes) -> None:
        for line in self._lines.feed(data):
            if isinstance(line, Oversized):
                limit = self._lines.max_bytes
                self.send(m.error_line(id_in(line.head), m.MESSAGE_TOO_LARGE,
                                       f"request of {line.length} bytes is over the {limit}-byte limit"))
            elif line.strip():
                self.on_line(line)

    def on_line(self, line: bytes) -> None:
        try:
            message = m.decode_incoming(line)
        except msgspec.ValidationError:
            self.send(m.error_line(None, m.INVALID_REQUEST, "expected a JSON-RPC 2.0 request object"))
            return
        except msgspec.DecodeError as exc:
            self.send(m.error_line(None, m.PARSE_ERROR, f"not valid JSON: {exc}"))
            return
        if message.jsonrpc != "2.0" or message.method is None:
            self.send(m.error_line(message.id, m.INVALID_REQUEST, 'expected "jsonrpc": "2.0" and a "method"'))
            return
        if message.id is None:
            self.on_notification(message.method, message.params)
            return
        self.on_request(message.id, message.method, message.params)

    def on_notification(self, method: str, params: Any) -> None:
        if method == "cancel" and isinstance(params, dict):
            task = self._tasks.get(params.get("id"))  # type: ignore[arg-type]
            if task is not None:
                task.cancel()

    def on_request(self, request_id: int | str, method: str, params: Any) -> None:
        if method == "initialize":
            self.initialize(request_id, params)
        elif not self.initialized:
            self.send(m.error_line(request_id, m.NOT_INITIALIZED, "send initialize first"))
        elif method in ("translate", "decide") and method in self.implements:
            work = self.translate if method == "translate" else self.decide
            task = asyncio.get_running_loop().create_task(work(request_id, params))
            self._tasks[request_id] = task
            task.add_done_callback(lambda _: self._tasks.pop(request_id, None))
        elif method in ("translate", "decide"):
            self.send(m.error_line(request_id, m.METHOD_NOT_FOUND, f"this method does not implement {method} "
                                   f"(it implements {', '.join(self.implements)})"))
        elif method == "method_card":
            self.send(m.result_line(request_id, {"card": self.card}))
        elif method == "shutdown":
            self.send(m.result_line(request_id, None))
        else:
            self.send(m.error_line(request_id, m.METHOD_NOT_FOUND, f"unknown method {method!r}"))

    def initialize(self, request_id: int | str, params: Any) -> None:
        offered = params.get("protocol_versions") if isinstance(params, dict) else None
        if not isinstance(offered, list):
            self.send(m.error_line(request_id, m.INVALID_PARAMS, "initialize needs protocol_versions (a list)"))
            return
        chosen = next((v for v in offered if v in m.SUPPORTED_VERSIONS), None)
        if chosen is None:
            self.send(m.error_line(request_id, m.UNSUPPORTED_VERSION,
                                   f"none of {offered} is supported", {"supported": list(m.SUPPORTED_VERSIONS)}))
            return
        self.initialized = True
        self.send(m.result_line(request_id, {
            "protocol_version": chosen, "method": self.identity, "card": self.card,
            "capabilities": {"max_batch": None, "max_concurrency": MAX_CONCURRENCY, "cancel": True,
                             "progress": False},
            "guest": {"name": "mt-eval serve", "version": __version__,
                      "runtime": f"python {sys.version.split()[0]}"},
            "implements": self.implements,
        }))

    async def translate(self, request_id: int | str, params: Any) -> None:
        await self._answer(request_id, params, _translate_params, self.method.translate, translate_answer)

    async def decide(self, request_id: int | str, params: Any) -> None:
        await self._answer(request_id, params, _decide_params, self.method.decide, decision_answer)

    async def _answer(self, request_id: int | str, params: Any, parse: Callable[[Any], tuple[list[Any], Any]],
                      call: Callable[..., Any], answer: Callable[[Any, list[Any], float], dict[str, Any]]) -> None:
        """Run one translate or decide request: check its params, call the method, send its results."""
        try:
            items, config = parse(params)
        except ValueError as exc:
            self.send(m.error_line(request_id, m.INVALID_PARAMS, str(exc)))
            return
        try:
            async with self._slots:
                started = time.perf_counter()
                raw = await call(items, config)
                elapsed = time.perf_counter() - started
        except asyncio.CancelledError:
            self.send(m.error_line(request_id, m.CANCELLED, "cancelled"))
            return
        except SystemExit as exc:  # the guest keeps serving: the request fails, as a raise does
            from mt_eval.plugin_import import describe_exit

            self.send(m.error_line(request_id, m.METHOD_FAILED, f"the method {describe_exit(exc)}: a method must "
                                   "not end the process; raise an exception instead", {"type": "SystemExit"}))
            return
        except Exception as exc:
            self.send(m.error_line(request_id, m.METHOD_FAILED, f"{type(exc).__name__}: {exc}",
                                   {"type": type(exc).__name__}))
            return
        try:
            line = m.result_line(request_id, answer(raw, items, elapsed))
        except (TypeError, ValueError, msgspec.EncodeError) as exc:
            line = m.error_line(request_id, m.METHOD_FAILED, f"the results cannot be sent as JSON: {exc}",
                                {"type": type(exc).__name__})
        self.send(line)


def _translate_params(params: Any) -> tuple[list[dict[str, Any]], RunConfig]:
    if not isinstance(params, dict) or not isinstance(params.get("entries"), list):
        raise ValueError("translate needs params.entries, a list of entries")
    entries = params["entries"]
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str) or \
                not isinstance(entry.get("source"), str):
            raise ValueError(f"entries[{i}] needs a string id and a string source")
    try:
        config = msgspec.convert(params.get("config"), RunConfig)
    except msgspec.ValidationError as exc:
        raise ValueError(config_problem(params.get("config"))) from exc
    return entries, config


def config_problem(config: Any, kind: type[RunConfig] = RunConfig) -> str:
    """Why a RunConfig is refused, in the words the Node guest uses too: ``invalid config: $.path: message``."""
    from mt_eval.strict import decode_value

    if not isinstance(config, dict):
        return f"invalid config: expected an object, got {value_in_words(config)}"
    _value, problems = decode_value(config, kind, file="config")
    first = next((p for p in problems if p.severity == "error"), None)
    return f"invalid config: {first.path}: {first.message}" if first else "invalid config"


def _decide_params(params: Any) -> tuple[list[dict[str, Any]], Any]:
    from mt_eval.decisions.records import DecisionConfig

    if not isinstance(params, dict) or not isinstance(params.get("rows"), list):
        raise ValueError("decide needs params.rows, a list of rows")
    rows = params["rows"]
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or not isinstance(row.get("id"), str) or not row["id"] or \
                not isinstance(row.get("state"), dict) or not isinstance(row.get("questions"), dict):
            raise ValueError(f"rows[{i}] needs a non-empty string id, a state object and a questions object")
    try:
        config = msgspec.convert(params.get("config") or {}, DecisionConfig)
    except msgspec.ValidationError as exc:
        raise ValueError(config_problem(params.get("config"), DecisionConfig)) from exc
    return rows, config


def decision_answer(raw: Any, rows: list[dict[str, Any]], elapsed: float) -> dict[str, Any]:
    """The result of a decide request."""
    return {"results": decision_results(raw, rows, elapsed)}


def decision_results(raw: Any, rows: list[dict[str, Any]], elapsed: float) -> list[Any]:
    """The method's decisions as they go on the wire: passed through (the host checks every answer against the
    questions), with each row's share of the call's time when the method gave none."""
    if not isinstance(raw, list):
        return [{"id": row["id"], "error": f"decide returned {type(raw).__name__}, not a list of results"}
                for row in rows]
    share = elapsed / max(1, len(raw))
    out = []
    for item in raw:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            continue  # the host reports the row as missing a result
        out.append(item if "latency_s" in item else {**item, "latency_s": share})
    return out


def translate_answer(raw: Any, entries: list[dict[str, Any]], elapsed: float) -> dict[str, Any]:
    """The result of a translate request: the method's results in the protocol's compact shape (`mt_eval.results`
    normalises them; an item without a string id is left out, so the host reports its entry as missing one),
    and ``normalised``, what had to be changed to accept them, when anything had."""
    notes = ResultNotes()
    if not isinstance(raw, list):
        error = f"the method returned {value_in_words(raw)}, not a list of results"
        return {"results": [compact(error_result(str(e["id"]), error)) for e in entries]}
    share = elapsed / max(1, len(entries))
    answer: dict[str, Any] = {"results": [compact(r) for r in normalise_returned(raw, notes=notes,
                                                                                default_latency_s=share)]}
    if notes:
        answer["normalised"] = notes.counts
    return answer
