"""`BridgeMethod`: a guest process wrapped as an ordinary `TranslationMethod` (and `DecisionMethod`).

Batches are split to the guest's ``max_batch`` and at most ``max_concurrency`` requests are in flight,
however many callers share the method. A failed request never raises out of ``translate``: its entries
get per-entry errors and every other entry keeps its result. The entries a failure belongs to are found:

- a request the method failed (it raised), or whose answer was too large, unreadable or without a results
  list, is split in halves and sent again, down to single entries, so only the entries that fail get the error;
  a request the guest refused for its config (``invalid config: …``), which every entry shares, is not: its
  entries all fail at once with the guest's message;
- after the guest crashed, hung or was stopped with several entries in flight, each of them is sent again
  alone, one at a time, so the entry the guest fails on is found and fails alone (one refused for its config
  fails the entries still to be sent with it, at once);
- an entry (or row) whose text no guest can read — a lone surrogate — fails at once with where it is, and the
  others are sent (`mt_eval.lone_surrogates`).

A config given to ``translate`` or ``decide`` that the guest would refuse (``invalid config: $.field: …``) is a
`TypeError` in those words, and so are entries or rows no guest takes (``entries[1].id "a" appears twice in the
request``, ``rows[0].questions: a row needs at least one question``, as the Node host words them): nothing is sent,
and the guest serves the next call.

A guest that died is restarted on the next request, within a crash-loop budget (`HostOptions.restart_budget` restarts
per `restart_window_s`; a guest that completed work before it died is not crash-looping and costs nothing). A guest
that never started — its method does not load, it exits or does not answer initialize — is not retried: every later
call fails at once with the same reason (`start` raises it). One still starting at its start timeout, first or
restarted, fails with ``start_timeout_fix`` after the reason, when given. Calls running when `aclose` ends the guest
fail as ``the guest was closed``, and are not sent again; a call after it starts a new guest: no restart.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard

import msgspec

from mt_eval.bridge import messages as m
from mt_eval.bridge.answers import DECIDE, TRANSLATE, RequestKind, WithoutResults, entries_to_send, refuse_unshaped
from mt_eval.bridge.connection import GuestConnection, HostOptions
from mt_eval.bridge.guest_requests import config_refusal
from mt_eval.bridge.slots import Slots
from mt_eval.bridge.start_failures import with_slow_start_fix
from mt_eval.child_policy import RestartBudget, SoloGate
from mt_eval.child_stderr import telling_lines
from mt_eval.concurrency import all_of
from mt_eval.guarded_calls import method_failure
from mt_eval.lone_surrogates import merged, without_unsendable
from mt_eval.results import ResultNotes

log = logging.getLogger("mt_eval.bridge")
_GUEST_LOST = (m.GUEST_EXITED, m.TIMEOUT)  # the guest crashed, hung or was stopped


def split_fix(message: str) -> tuple[str, str | None]:
    """A guest's message and the fix it gives (``…\n  fix: …``, as the Node guest words a method that does not load),
    apart; (message, None) when it gives none."""
    found = _FIX.search(message)
    if found is None:
        return message, None
    return message[:found.start()], message[found.end():].strip() or None


_FIX = re.compile(r"\n[ \t]*fix: ")


def per_entry_error(exc: m.BridgeError, *, with_fix: bool = True) -> str:
    """The text each affected entry carries, on one line: what happened (a method's failure as `method_failure`
    words it; a code frame's lines joined by " / ", its caret dropped; the guest's fix after it, unless not
    ``with_fix``), the exit code and the stderr tail (less what the guest said already, as one not loading does)."""
    data = exc.data if isinstance(exc.data, dict) else {}
    said, fix = split_fix(exc.message)
    said = " / ".join(line.strip() for line in said.splitlines() if line.strip(" \t^~")) if "\n" in said else said
    text = method_failure(said, data.get("type")) if exc.code == m.METHOD_FAILED else said
    if fix is not None and with_fix:
        text += f"; fix: {' '.join(fix.split())}"
    tail = [line for line in telling_lines(str(data.get("stderr_tail") or "")) if _said(line) not in exc.message]
    if tail:
        text += " | stderr: " + " / ".join(tail)
    return text


def _said(line: str) -> str:
    """A stderr line without its program's name (``mt-eval-guest: …``) and indentation."""
    return line.strip().removeprefix("mt-eval-guest: ")


class BridgeMethod:
    """Runs ``command`` as a guest and translates through it (see the module docstring)."""

    enforces_deadlines = True  # every request has a deadline: callers need no timeout of their own

    def __init__(self, command: Sequence[str], *, cwd: str | os.PathLike[str] | None = None,
                 env: Mapping[str, str] | None = None, options: HostOptions | None = None,
                 label: str | None = None, start_timeout_fix: str | None = None) -> None:
        self.command, self.cwd, self.env = list(command), cwd, env
        self.options, self.label = options or HostOptions(), label
        self.start_timeout_fix = start_timeout_fix  # what a guest still starting at its start timeout is told to do
        self.restarts, self._gate = 0, SoloGate()
        self._connection: GuestConnection | None = None
        self._budget = RestartBudget(self.options.restart_budget, self.options.restart_window_s)
        self._start_lock: asyncio.Lock | None = None
        self._slots: Slots | None = None
        self._name = label or os.path.basename(self.command[0])
        self._card: dict[str, Any] | None = None
        self._last_failure: m.BridgeError | None = None
        self._start_failure: m.BridgeError | None = None
        self._started_once = self._closed_by_caller = False  # (closed: `aclose` ended the guest, it did not die)
        self._loop: asyncio.AbstractEventLoop | None = None  # the event loop its guest was started on
        self.result_notes = ResultNotes()  # what was changed to accept the results (`mt_eval.results`)
        self._fitting: dict[str, Any] = {}  # per request: the config its last call was given, which fits it

    @property
    def info(self) -> m.InitializeResult | None:
        return self._connection.info if self._connection is not None else None

    @property
    def card_label(self) -> str:
        """Where the card `method_card` returns comes from, for problems found in it."""
        return f"the card guest {self._label()} sent at initialize"

    def method_card(self) -> dict[str, Any]:
        """The card the guest sent at its handshake (empty before the guest has started: see `start`)."""
        return dict(self._card or {})

    async def start(self, config: Any = None) -> m.InitializeResult:
        """Start the guest now rather than on the first translate call; raises `BridgeError` when it cannot."""
        self._check_loop()
        connection = await self._ensure(_builtins(config))
        assert connection.info is not None
        return connection.info

    def _check_loop(self) -> None:
        """A guest started on an event loop that has ended (a caller's first ``asyncio.run``) cannot be reached from
        another: it is ended, and the next call starts one on this loop. One whose loop still runs (another
        thread's) is that loop's: `RuntimeError` saying so."""
        if self._loop is None or self._loop is asyncio.get_running_loop():
            return
        if not self._loop.is_closed():
            raise RuntimeError(f"{self._label()}'s guest runs on another event loop, which still runs (another "
                               "thread's): use one method object per event loop")
        connection, self._connection, self._loop = self._connection, None, None
        if connection is not None:
            connection.end_from_outside()
        self._start_lock, self._slots, self._gate = None, None, SoloGate()

    async def _ensure(self, config: Any) -> GuestConnection:
        if _ready(self._connection):
            return self._connection
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        async with self._start_lock:  # (a guest another call is starting is waited for: it has not said initialize)
            if _ready(self._connection):
                return self._connection
            if self._start_failure is not None:
                raise self._start_failure  # it never started: starting it again fails the same way
            if self._connection is not None and not self._closed_by_caller:  # a restart
                if not self._budget.allow(productive=self._connection.completed > 0):
                    last = per_entry_error(self._last_failure) if self._last_failure else "unknown"
                    raise m.BridgeError(m.GUEST_EXITED, f"the guest's crash-loop budget is exhausted "
                                        f"({self.options.restart_budget} restarts within "
                                        f"{self.options.restart_window_s:g} s); it last failed: {last}")
                self.restarts += 1
                log.warning("restarting guest %s (restart %d) after: %s", self._label(), self.restarts,
                            self._connection.gone_because())
                await self._connection.aclose()  # what the dead guest started in its group ends with it
            connection = GuestConnection(self.command, cwd=self.cwd, env=self.env, options=self.options,
                                         label=self.label)
            self._connection, self._loop, self._closed_by_caller = connection, asyncio.get_running_loop(), False
            try:
                info = await connection.start(config)
            except m.BridgeError as exc:
                failure = with_slow_start_fix(exc, self.start_timeout_fix)
                self._last_failure = failure
                if not self._started_once:
                    self._start_failure = failure
                raise failure from exc.__cause__
            except BaseException:  # its start was cancelled (the guest is gone): the next call starts one afresh
                self._connection = None
                raise
            self._started_once = True
            self._card = info.card
            self._slots = Slots(max(1, info.capabilities.max_concurrency))
            return connection

    def _label(self) -> str:
        return self._name

    async def translate(self, entries: list[dict[str, Any]], config: Any) -> list[dict[str, Any]]:
        if self._loop is not None and self._loop is not asyncio.get_running_loop():
            self._check_loop()
        sent = entries_to_send(entries)  # (without the gold; entries no guest takes are refused here, unsent)
        connection = self._connection
        info = connection.info if connection is not None and connection.running else None
        if info is not None and sent and "translate" in info.implements and (
                info.capabilities.max_batch is None or len(sent) <= info.capabilities.max_batch):
            # The usual call, to a running guest in one request: straight to it, one coroutine less.
            return await self._run_batch(TRANSLATE, sent, self._sendable(TRANSLATE, config))
        return await self._request_all(TRANSLATE, sent, config)

    async def decide(self, rows: list[dict[str, Any]], config: Any) -> list[dict[str, Any]]:
        """One result per row, in row order. Answers are passed on as the guest gave them: the caller checks them
        against the questions (`mt_eval.decisions.answers`); rows the guest left out get a row error. Rows no guest
        takes (a row with ``gold`` among them) are a `TypeError`, as the Node host's, and nothing is sent."""
        self._check_loop()
        refuse_unshaped(DECIDE, rows)
        return await self._request_all(DECIDE, rows, config)

    async def _request_all(self, kind: RequestKind, items: list[dict[str, Any]], config: Any
                           ) -> list[dict[str, Any]]:
        """Send ``items`` in requests of at most ``max_batch`` each; a failed request fails only its items."""
        config = self._sendable(kind, config)
        if not items:
            return []
        connection = self._connection
        if not _ready(connection):
            if isinstance(started := await self._connected(kind, items, config), list):
                return started
            connection = started
        assert connection.info is not None
        if kind.request not in connection.info.implements:
            return [kind.fail(str(item["id"]), f"the guest does not implement {kind.request} (it "
                              f"implements {', '.join(connection.info.implements)})") for item in items]
        size = connection.info.capabilities.max_batch or len(items)
        if len(items) <= size:
            return await self._run_batch(kind, items, config)
        batches = [items[i:i + size] for i in range(0, len(items), size)]
        done = await all_of(lambda batch: self._run_batch(kind, batch, config), batches)
        return [result for batch in done for result in batch]

    async def _run_batch(self, kind: RequestKind, batch: list[dict[str, Any]], config: Any, *, alone: bool = False,
                         tries: int = 3) -> list[dict[str, Any]]:
        connection = self._connection
        if not _ready(connection):
            if isinstance(started := await self._connected(kind, batch, config), list):
                return started
            connection = started
        slots = self._slots
        assert slots is not None
        params = {kind.key: batch, "config": config}
        timeout_s = self._timeout_for(config, len(batch))
        try:
            if alone:
                async with self._gate.alone():
                    await slots.take()
                    try:
                        raw = await connection.request(kind.request, params, timeout_s=timeout_s)
                    finally:
                        slots.give()
            else:  # the hot path: no context managers, and no await before the request while a slot is free
                gate = self._gate
                if not gate.try_enter_shared():
                    await gate.enter_shared()
                try:
                    if not slots.try_take():
                        await slots.take()
                    try:
                        raw = await connection.request(kind.request, params, timeout_s=timeout_s)
                    finally:
                        slots.give()
                finally:
                    gate.leave_shared()
        except m.BridgeError as exc:
            unsent = isinstance(exc.data, dict) and exc.data.get("unsent")
            if unsent and tries > 1:  # the guest had just died
                return await self._run_batch(kind, batch, config, alone=alone, tries=tries - 1)
            if isinstance(exc.data, dict) and exc.data.get("unencodable"):
                return await self._without_unsendable(kind, batch, config, exc, alone)
            self._last_failure = self._last_failure if unsent else exc  # ("not running" says not how it ended)
            return await self._after_failure(kind, batch, config, exc, alone)
        try:
            return kind.match(batch, raw, self._name, self.result_notes)
        except WithoutResults as exc:
            return await self._after_failure(kind, batch, config, exc, alone)

    async def _without_unsendable(self, kind: RequestKind, batch: list[dict[str, Any]], config: Any,
                                  exc: m.BridgeError, alone: bool) -> list[dict[str, Any]]:
        """The request could not be written (text that is not valid Unicode): the items that hold such text fail
        with where it is, and the others are sent (`mt_eval.lone_surrogates`)."""
        sendable, failed = without_unsendable(batch, config, kind.owner,
                                              lambda item, problem: kind.fail(str(item["id"]), problem))
        if not failed:  # nothing found to blame: the request as a whole
            return [kind.fail(str(item["id"]), exc.message) for item in batch]
        sent = await self._run_batch(kind, sendable, config, alone=alone) if sendable else []
        return merged(sent, failed)

    async def _connected(self, kind: RequestKind, items: list[dict[str, Any]], config: Any
                         ) -> GuestConnection | list[dict[str, Any]]:
        """The guest, started (or restarted) now; when it cannot be, each item's failure instead."""
        try:
            return await self._ensure(config)
        except m.BridgeError as exc:
            return [kind.fail(str(item["id"]), per_entry_error(exc)) for item in items]

    def _sendable(self, kind: RequestKind, config: Any) -> Any:
        """``config`` as it is sent: `TypeError` in the guest's words for a dict (or other value) that does not fit
        ``kind``, as it would refuse it, before anything is sent (`guest_requests.config_refusal`); a Struct, or the
        dict the last call was given, is taken as it is."""
        if config is None or config is self._fitting.get(kind.request):
            return config
        if isinstance(config, msgspec.Struct):
            return msgspec.to_builtins(config)
        if problem := config_refusal(config, decides=kind is DECIDE):
            raise TypeError(problem)
        self._fitting[kind.request] = config
        return config

    def _timeout_for(self, config: Any, entries: int) -> float:
        """A request's deadline: the config's ``timeout_s`` per entry, else the host's request timeout."""
        per_entry = config.get("timeout_s") if type(config) is dict or isinstance(config, Mapping) else None
        if per_entry is None:
            return self.options.request_timeout_s
        if isinstance(per_entry, int | float) and per_entry > 0:
            return float(per_entry) * max(1, entries)
        return self.options.request_timeout_s

    async def _after_failure(self, kind: RequestKind, batch: list[dict[str, Any]], config: Any, exc: m.BridgeError,
                             alone: bool) -> list[dict[str, Any]]:
        """A request failed as a whole: find the entries the failure belongs to (see the module docstring)."""
        data = exc.data if isinstance(exc.data, dict) else {}
        if data.get("closed"):  # `aclose` ended the guest: nothing is sent again (nor a guest started again)
            return [kind.fail(str(e["id"]), exc.message) for e in batch]
        if m.about_config(exc.code, exc.message):  # every item carries the config: all fail alike, none is sent again
            if alone:  # (nor are the entries still to be sent alone: the loop sending them fails them alike)
                raise m.ConfigRefused(exc.message)
            return [kind.fail(str(e["id"]), exc.message) for e in batch]
        if exc.code in _GUEST_LOST:
            if alone or (data.get("alone") and len(batch) == 1):
                return [kind.fail(str(e["id"]), per_entry_error(exc)) for e in batch]
            log.info("guest %s %s with %d entries in flight; sending each alone", self._label(), exc.message,
                     len(batch))
            results: list[dict[str, Any]] = []
            for sent, entry in enumerate(batch):
                try:
                    results += await self._run_batch(kind, [entry], config, alone=True)
                except m.ConfigRefused as refused:  # the config every entry carries: the others fail alike, unsent
                    return results + [kind.fail(str(e["id"]), str(refused)) for e in batch[sent:]]
            return results
        if len(batch) > 1 and exc.code != m.CANCELLED:
            middle = len(batch) // 2
            return (await self._run_batch(kind, batch[:middle], config, alone=alone)
                    + await self._run_batch(kind, batch[middle:], config, alone=alone))
        return [kind.fail(str(e["id"]), per_entry_error(exc)) for e in batch]

    async def aclose(self) -> None:
        self._check_loop()
        if self._connection is not None:
            self._closed_by_caller = True
            await self._connection.aclose()


def _ready(connection: GuestConnection | None) -> TypeGuard[GuestConnection]:  # (one starting is sent nothing)
    return connection is not None and connection.alive and connection.info is not None


def _builtins(config: Any) -> Any:
    if config is None or type(config) is dict or isinstance(config, Mapping):
        return config
    return msgspec.to_builtins(config)
