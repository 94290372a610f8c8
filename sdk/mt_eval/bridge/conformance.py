"""Replaying the conformance transcripts (bridge/vectors/conformance) against any guest command.

The step and pattern language is specified in bridge/PROTOCOL.md, "Conformance".
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from mt_eval.bridge.messages import DEFAULT_MAX_LINE_BYTES, not_utf8
from mt_eval.bridge.transcripts import (
    mismatch,
    not_applicable,
    requests_of,
    requests_to_run,
    step_for,
    unordered_assignment,
)
from mt_eval.process_state import outside_group

STEP_TIMEOUT_S = 10.0
EXIT_WAIT_S = 5.0
log = logging.getLogger("mt_eval.bridge")
READ_LIMIT = 64 * 1024 * 1024  # how far a line is read to measure it (the protocol's limit is a quarter of it)
@dataclass
class VectorOutcome:
    name: str
    description: str
    failure: str | None = None
    skipped: str | None = None
    stderr_tail: str = ""
    skipped_lines: list[str] = field(default_factory=list)
    last: Any = None  # the last protocol line read
    initialize_unanswered: bool = False  # the guest never answered initialize: every other transcript would wait
    failed_step: int = 0  # the number of the step that failed (0: none did)
    no_handshake: str | None = None  # why a guest cannot answer initialize (it exited, it is no guest): all would fail
    not_started: bool = False  # the program could not be started at all: no other transcript can run either
    request: str | None = None  # the request a transcript with by_request steps was run with
    more_requests: list[str] = field(default_factory=list)  # the others the guest implements: run it with each too

    @property
    def passed(self) -> bool:
        return self.failure is None


async def run_vector(vector: Mapping[str, Any], command: Sequence[str], *, cwd: str | None = None,
                     env: Mapping[str, str] | None = None, step_timeout_s: float = STEP_TIMEOUT_S,
                     request: str | None = None, start_timeout_s: float | None = None) -> VectorOutcome:
    """Run one transcript against a fresh guest process; one with ``by_request`` steps with ``request``, or (None)
    with the first of its requests the guest implements, naming the others in ``more_requests``. The answer to
    ``initialize`` is waited for ``start_timeout_s`` (a host's start timeout: a guest may load a model first), else
    ``step_timeout_s`` as every other step."""
    from mt_eval.process_exit import adopt_orphans

    outcome = VectorOutcome(vector["name"], vector.get("description", ""), request=request)
    if request is not None:
        outcome.name = f"{vector['name']} ({request})"
    adopt_orphans()  # (what the guest daemonises is ended at the program's end, as a method's is)
    try:
        process = await asyncio.create_subprocess_exec(
            *command, cwd=cwd, env=dict(env) if env is not None else None, start_new_session=True,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            limit=READ_LIMIT)
    except OSError as exc:
        outcome.failure = f"cannot start {command[0]!r}: {exc.strerror or exc}"
        outcome.not_started = True
        return outcome
    stderr = bytearray()
    strays: dict[int, str] = {}  # what the guest started outside its process group (setsid), seen at each step
    async with anyio.create_task_group() as drain:
        drain.start_soon(_drain, process.stderr, stderr)
        try:
            await _steps(vector, process, outcome, (step_timeout_s, start_timeout_s or step_timeout_s), strays,
                         os.path.basename(command[0]))
            if outcome.failed_step in (1, 2) and not (outcome.initialize_unanswered or outcome.no_handshake) and \
                    _opens_with_handshake(vector):
                await _diagnose_handshake(process, outcome, os.path.basename(command[0]))
            elif outcome.failure and not outcome.no_handshake and (outcome.last is _EOF or
                                                                  _CLOSED_STDIN in outcome.failure):
                from mt_eval.child_process import exit_status

                with anyio.move_on_after(1.0):  # (it closed a pipe later on: how it ended, when it did)
                    said = exit_status(await _exit_status(process))
                    outcome.failure = f"{outcome.failure.removesuffix(_SEE_STDERR)}: it {said} (see its stderr)"
        finally:
            with anyio.CancelScope(shield=True):  # (interrupted too: nothing the guest started is left running)
                await _end_guest(process, strays, os.path.basename(command[0]))
            drain.cancel_scope.cancel()
    outcome.stderr_tail = "\n".join(bytes(stderr[-4000:]).decode("utf-8", "replace").splitlines()[-10:])
    return outcome


def _opens_with_handshake(vector: Mapping[str, Any]) -> bool:
    """Whether the transcript begins with an initialize that a guest answers with a result (as every guest must)."""
    steps = vector["steps"]
    return (len(steps) > 1 and isinstance(steps[0].get("send"), dict) and steps[0]["send"].get("method") == "initialize"
            and isinstance(steps[1].get("expect"), dict) and "result" in steps[1]["expect"])


async def _diagnose_handshake(process: asyncio.subprocess.Process, outcome: VectorOutcome, label: str) -> None:
    """A transcript whose first initialize got no answer: say why when it is the guest's own doing — it exited
    (with its status), or it is a plain text program — since every other transcript would fail the same way."""
    from mt_eval.bridge.not_a_guest import echoes_request, not_a_guest_message
    from mt_eval.child_process import exit_status

    message = outcome.last
    echoed = isinstance(message, dict) and message.get("method") == "initialize" and "id" in message
    text = message.encode() if isinstance(message, _Junk) else None
    rpc = isinstance(message, dict) and message.get("jsonrpc") == "2.0"
    if text is None and message not in (None, _EOF) and not rpc:  # JSON, but no JSON-RPC message: the request changed
        text = json.dumps(message, ensure_ascii=False).encode()
    if isinstance(message, dict) and isinstance(message.get("error"), dict) and "result" not in message:
        outcome.no_handshake = "the guest answers initialize with an error"
        return
    if echoed or (text is not None and echoes_request(text)):
        said = not_a_guest_message(label, None if echoed else text, echoed=echoed)
        outcome.no_handshake = f"{label} is not a bridge guest"
        outcome.failure = f"step {outcome.failed_step} (expect): {said}"
        return
    if isinstance(message, _Junk):  # (no answer a host can read: each transcript's handshake would fail alike)
        shown = str(message) if isinstance(message, _TooLong) else "a line that is not JSON"
        outcome.no_handshake = f"the guest answers initialize with {shown.partition(': write')[0]}"
        return
    with anyio.move_on_after(1.0):
        status = exit_status(await _exit_status(process))
        if rpc:  # it did answer (a last line ended by its exit, say), with an answer that is wrong
            wrong = (outcome.failure or "").partition(": ")[2]
            outcome.no_handshake = f"the guest's answer to initialize is wrong ({wrong}), and then it {status}"
            outcome.failure = f"{outcome.failure} (in its answer to initialize; then the guest {status})"
            return
        outcome.no_handshake = f"the guest {status} before answering initialize"
        outcome.failure = f"{outcome.failure} ({outcome.no_handshake})"


async def _end_guest(process: asyncio.subprocess.Process, strays: dict[int, str], label: str) -> None:
    """Kill the guest's process group, end what it started outside it (`mt_eval.child_detached.end_strays`), and wait
    for it; pipes that something still holds open after `EXIT_WAIT_S` are closed."""
    from mt_eval.child_detached import end_strays

    if process.returncode is None:
        strays.update(outside_group(process.pid))
    with contextlib.suppress(ProcessLookupError, PermissionError):  # (a guest that exited may leave its group behind)
        os.killpg(process.pid, signal.SIGKILL)
    await end_strays(list(strays.items()), 1.0, label, log)
    with anyio.move_on_after(EXIT_WAIT_S):
        async with anyio.create_task_group() as reading:
            reading.start_soon(_drain, process.stdout, bytearray())  # (a flood its reader stopped taking at its limit)
            await process.wait()  # (until its pipes close too)
    transport = getattr(process, "_transport", None)  # (asyncio's own; closing it closes the pipes)
    if transport is not None:
        transport.close()


async def _steps(vector: Mapping[str, Any], process: asyncio.subprocess.Process, outcome: VectorOutcome,
                 timeouts: tuple[float, float], strays: dict[int, str], label: str) -> None:
    """Each step of the transcript in turn, each within its timeout (``timeouts``: a step's, and the answer to
    initialize's); the first failure ends it."""
    last_sent = None
    for number, written in enumerate(vector["steps"], start=1):
        step = step_for(written, outcome.request or next(iter(requests_of(vector)), None))
        if step is None:  # (a step of the transcript as run with another request)
            continue
        if process.returncode is None:
            strays.update(outside_group(process.pid))
        if isinstance(step.get("send"), dict):
            last_sent = step["send"].get("method")
        elif isinstance(step.get("send_raw"), str):  # (a hang after a raw request is not initialize's)
            last_sent = _method_of(step["send_raw"])
        step_timeout_s = timeouts[last_sent == "initialize" and "expect" in step]
        try:
            with anyio.fail_after(step_timeout_s):
                if last_sent == "initialize" and "expect" in step:
                    failure = await _initialize_answer(process, step, outcome, label)
                else:
                    failure = await _step(process, step, outcome)
        except TimeoutError:
            outcome.failure = f"step {number} {_describe(step)}: nothing within {step_timeout_s:g} s"
            if unended := _unended(process):
                outcome.failure = f"step {number} {_describe(step)}: {unended}"
                if last_sent == "initialize" and "expect" in step:
                    outcome.no_handshake = _NO_NEWLINE
            elif last_sent == "initialize" and "expect" in step:
                outcome.initialize_unanswered = True
                outcome.failure += " (the guest did not answer initialize)"
            else:
                outcome.failure += _expected(step)
            return
        if outcome.skipped is None and isinstance(outcome.last, dict) and \
                isinstance(outcome.last.get("result"), dict) and "protocol_version" in outcome.last["result"]:
            outcome.skipped = not_applicable(vector, outcome.last["result"], outcome.request)
            if outcome.skipped:
                return
            if outcome.request is None and (runs := requests_to_run(vector, outcome.last["result"])):
                outcome.request, outcome.more_requests = runs[0], runs[1:]
                outcome.name = f"{vector['name']} ({outcome.request})"
        if failure:
            outcome.failure = f"step {number} {_describe(step)}: {failure}"
            outcome.failed_step = number
            return


async def _initialize_answer(process: asyncio.subprocess.Process, step: Mapping[str, Any], outcome: VectorOutcome,
                             label: str) -> str | None:
    """The step that reads the answer to initialize; a text filter that took the request as input and waits for
    more (`mt_eval.bridge.not_a_guest.watch_handshake`) fails it within a second or two, not at the step's timeout."""
    from types import SimpleNamespace

    from mt_eval.bridge.not_a_guest import watch_handshake

    said: list[str] = []
    async with anyio.create_task_group() as group:
        async def watch() -> None:
            await watch_handshake(SimpleNamespace(first_junk=None, label=label, pid=process.pid), said.append)
            if said:
                group.cancel_scope.cancel()

        group.start_soon(watch)
        failure = await _step(process, step, outcome)
        group.cancel_scope.cancel()
    if said:  # (or it answered, but did not end the line)
        unended = _unended(process)
        outcome.no_handshake = _NO_NEWLINE if unended else f"{label} is not a bridge guest"
        return unended or said[0]
    return failure


def _unended(process: asyncio.subprocess.Process) -> str | None:
    """What the guest wrote to stdout after its last line, which is never read without a newline (None: nothing)."""
    pending = bytes(getattr(process.stdout, "_buffer", b""))  # (asyncio's own buffer)
    if not pending.strip():
        return None
    shown = repr(pending[:100].decode("utf-8", "replace")) + ("…" if len(pending) > 100 else "")
    return f"the guest wrote {shown} and no newline after it: end each message with " r'"\n" and flush stdout'


async def _drain(stream: asyncio.StreamReader | None, into: bytearray) -> None:
    assert stream is not None
    while chunk := await stream.read(65536):
        into += chunk
        del into[:-65536]


def _describe(step: Mapping[str, Any]) -> str:
    return f"({next(iter(step))})"


def _expected(step: Mapping[str, Any]) -> str:
    """What a step that timed out waited for, as a mismatch shows what came."""
    if "expect" in step:
        return f", expected {json.dumps(step['expect'], ensure_ascii=False)[:300]}"
    if "expect_unordered" in step:
        return (f", expected {len(step['expect_unordered'])} lines matching, in any order, "
                f"{json.dumps(step['expect_unordered'], ensure_ascii=False)[:300]}")
    if "expect_exit" in step:
        return f", expected the guest to exit with status {step['expect_exit']}"
    return ""


def _method_of(raw: str) -> str | None:
    try:
        message = json.loads(raw.split("\n", 1)[0])
    except ValueError:
        return None
    return message.get("method") if isinstance(message, dict) else None


async def _next_message(process: asyncio.subprocess.Process, outcome: VectorOutcome) -> Any:
    assert process.stdout is not None
    while True:
        try:
            line = await process.stdout.readline()
        except ValueError:  # (a line longer than the reader's limit)
            return _TooLong(f"a line of more than {READ_LIMIT:,} bytes (read no further), over the protocol's "
                            f"{DEFAULT_MAX_LINE_BYTES:,}-byte limit")
        if len(line) > DEFAULT_MAX_LINE_BYTES + 1:
            return _TooLong(f"a {len(line) - 1:,}-byte line, over the protocol's {DEFAULT_MAX_LINE_BYTES:,}-byte "
                            "limit")
        if not line:
            return _EOF
        try:
            message = json.loads(line)
        except RecursionError:
            return _TooLong(f"a line of JSON nested too deeply to read ({line[:60].decode('utf-8', 'replace')!r}…)")
        except UnicodeDecodeError:  # (the protocol's lines are UTF-8: a host refuses the line, as it says)
            return _TooLong(f"a line that is {not_utf8(line)}: write every line as UTF-8")
        except ValueError:
            outcome.skipped_lines.append(line[:200].decode("utf-8", "replace"))
            return _Junk(line[:200].decode("utf-8", "replace"))
        if isinstance(message, dict) and "id" not in message and message.get("method") in ("log", "progress"):
            continue
        return message


class _Junk(str):
    pass


class _TooLong(_Junk):
    """A line over the protocol's limit, nested too deeply to read or not UTF-8, which a host refuses (what it is, in
    words)."""


_EOF = object()
_CLOSED_STDIN = "the guest closed its stdin"
_NO_NEWLINE = "the guest does not end its messages with a newline"
_SEE_STDERR = " (did it crash? see its stderr)"


async def _step(process: asyncio.subprocess.Process, step: Mapping[str, Any], outcome: VectorOutcome) -> str | None:
    assert process.stdin is not None
    if "send" in step or "send_raw" in step:
        data = (json.dumps(step["send"], ensure_ascii=False) + "\n") if "send" in step else step["send_raw"]
        try:
            process.stdin.write(data.encode("utf-8"))
            await process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            return _CLOSED_STDIN
        return None
    if "expect" in step:
        message = await _next_message(process, outcome)
        outcome.last = message
        return _check(step["expect"], message)
    if "expect_unordered" in step:
        patterns = list(step["expect_unordered"])
        messages: list[Any] = []
        for _ in patterns:
            message = await _next_message(process, outcome)
            if message is _EOF or isinstance(message, _Junk):
                return _check(patterns[0], message)
            if all(mismatch(pattern, message) for pattern in patterns):
                return f"no expected message matches {json.dumps(message)[:300]}"
            if isinstance(message, dict) and message.get("id") is not None and any(  # (a host drops the second)
                    isinstance(seen, dict) and seen.get("id") == message["id"] for seen in messages):
                return f"the guest answered request {json.dumps(message['id'])} twice: {json.dumps(message)[:300]}"
            messages.append(message)
        order = unordered_assignment(patterns, messages)
        if order is None:
            return "the lines do not match the patterns in any order: " + \
                " | ".join(json.dumps(message)[:200] for message in messages)
        return next(filter(None, (_unusable_result(pattern, messages[index])
                                  for pattern, index in zip(patterns, order, strict=True))), None)
    if "close_stdin" in step:
        process.stdin.close()
        return None
    if "expect_exit" in step:
        code = await _exit_status(process)
        return None if code == step["expect_exit"] else f"exit status {code}, expected {step['expect_exit']}"
    return f"unknown step {json.dumps(step)}"


async def _exit_status(process: asyncio.subprocess.Process) -> int:
    """The guest's exit status once it has exited (``process.wait()`` waits for its pipes to close too, which a
    process it started and left running still holds open)."""
    while process.returncode is None:  # noqa: ASYNC110 (asyncio sets it on exit; no event says so before the pipes close)
        await asyncio.sleep(0.01)
    return process.returncode


def _check(pattern: Any, message: Any) -> str | None:
    if message is _EOF:
        return f"the guest closed its stdout{_SEE_STDERR}"
    if isinstance(message, _TooLong):
        return f"the guest sent {message}"
    if isinstance(message, _Junk):
        return (f"stdout line is not JSON: {message!r} (a host would log and skip it, but the protocol forbids it: "
                "stdout carries protocol lines only; write anything else to stderr)")
    error = message.get("error") if isinstance(message, dict) and "result" not in message else None
    if isinstance(pattern, dict) and "result" in pattern and isinstance(error, dict):
        said = " | ".join(line.strip() for line in str(error.get("message")).splitlines())
        return f"the guest answered with an error, not a result: {json.dumps(error.get('code'))} {said[:300]}"
    return mismatch(pattern, message) or _unusable_result(pattern, message)


def _unusable_result(pattern: Any, message: Any) -> str | None:
    """Why a translate answer's result that the pattern matched by id is one no host can use (None: each is
    usable): read as both hosts read it (`mt_eval.results.normalise_result`), so a guest whose results a host would
    turn into entry errors — no "predicted", a number for it — does not pass."""
    from mt_eval.results import ResultNotes, normalise_result

    wanted = pattern.get("result") if isinstance(pattern, dict) else None
    if not (isinstance(wanted, dict) and isinstance(wanted.get("results"), list)) or \
            any(isinstance(item, dict) and "answers" in item for item in wanted["results"]):  # (decisions: not these)
        return None
    for index, item in enumerate(message["result"]["results"]):
        outcome = normalise_result(item, notes=ResultNotes())
        if isinstance(outcome, tuple):
            return (f"$.result.results[{index}]: a host cannot use this result, and fails entry {outcome[0]!r} with "
                    f"it: {outcome[1]} (the result: {json.dumps(item, ensure_ascii=False)[:200]})")
    return None
