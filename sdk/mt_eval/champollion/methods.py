"""A champollion pair's method plugin as the translate function `mt_eval.champollion.sync` calls.

The plugin runs in this process (a Python entry) or through the bridge (a Node entry or a command), started
before the first string is sent: one that cannot load or start raises `MethodCannotStart`, naming the pair. A
call that raises or times out (the pair's ``timeout_s`` per entry) is split until the entries it fails on are
found, so one bad string fails alone; a string that is not valid Unicode fails before it is sent
(`mt_eval.lone_surrogates`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from mt_eval.errors import ExpectedError

if TYPE_CHECKING:
    from mt_eval.champollion.sync import PairMethod, Translate
    from mt_eval.loader import LoadedMethod


PAIR_AT_WORK: ContextVar[str | None] = ContextVar("champollion_pair_at_work", default=None)
"""The key of the pair whose method is starting or translating here: what its host warns of names it (with several
pairs, which one a warning concerns could not be told otherwise)."""


@contextmanager
def _at_work(pair_key: str) -> Iterator[None]:
    token = PAIR_AT_WORK.set(pair_key)
    try:
        yield
    finally:
        PAIR_AT_WORK.reset(token)


class MethodCannotStart(ExpectedError):
    """A pair's method plugin cannot start; the message says which, why, and how to fix it."""


async def open_pair_method(method: PairMethod, opened: list[LoadedMethod],
                           stopped: Callable[[], bool] = lambda: False) -> Translate:
    """The pair's plugin as a translate function, started now (appended to ``opened``, which the caller closes).
    Once ``stopped()`` (Ctrl-C), the method is not called again: what is left of a call fails at once (a call
    interrupted while it blocked the event loop is not sent again in halves, each blocking it anew). While it starts
    and translates, `PAIR_AT_WORK` is the pair's key."""
    with _at_work(method.pair.key):
        return await _open_pair_method(method, opened, stopped)


async def _open_pair_method(method: PairMethod, opened: list[LoadedMethod], stopped: Callable[[], bool]) -> Translate:
    import anyio
    import msgspec

    from mt_eval.champollion.sync import BATCHES_IN_FLIGHT, StartInterrupted
    from mt_eval.guarded_calls import guarded_translate, split_on_failure
    from mt_eval.loader import PluginLoadError, load_method
    from mt_eval.lone_surrogates import merged, without_unsendable
    from mt_eval.method_protocol import calls_at_once
    from mt_eval.method_start import StartFailed, start_method
    from mt_eval.records import RunConfig, TranslationResult
    from mt_eval.results import ResultNotes, error_result, results_for

    where = f"pair {method.pair.key}: {method.method_id} ({method.directory})"
    try:
        loaded = load_method(method.directory, needs="translate")
    except PluginLoadError as exc:
        if stopped():  # (Ctrl-C interrupted the import, which blocked the event loop)
            raise StartInterrupted from None
        raise MethodCannotStart(f"{where} cannot be loaded: {exc}") from None
    opened.append(loaded)
    try:
        await start_method(loaded, method.run_config, name=where)
    except StartFailed as exc:
        if stopped():
            raise StartInterrupted from None
        raise MethodCannotStart(str(exc)) from None
    own_deadlines = getattr(loaded.method, "enforces_deadlines", False)  # a guest: its host times requests out
    notes = ResultNotes()
    # (every call holds one: the entries of a batch that timed out, sent alone, share them with the other batches)
    calls = anyio.CapacityLimiter(calls_at_once(loaded.method, BATCHES_IN_FLIGHT))

    async def call(entries: list[dict[str, Any]], config: RunConfig) -> list[TranslationResult]:
        async with calls:
            raw = await guarded_translate(_UnlessStopped(loaded.method, stopped), [dict(e) for e in entries], config,
                                          timeout_s=None if own_deadlines else config.timeout_s,
                                          directory=loaded.directory,
                                          unstoppable_fix="let CancelledError propagate out of its translate()")
        paired, unknown = results_for(entries, raw, label="the method", notes=notes)
        if unknown and (said := notes.stray_warning(unknown)):  # (said as a guest's host says it)
            logging.getLogger("mt_eval.champollion").warning("%s", said)
        return paired

    async def translate(entries: list[dict[str, Any]], run_config: dict[str, Any]) -> list[dict[str, Any]]:
        config = msgspec.convert(run_config, RunConfig)
        # text that is not valid Unicode fails its entry before the method sees it (the input is to blame)
        sendable, failed = without_unsendable(entries, run_config, "entry", fail)
        with _at_work(method.pair.key):
            paired = (await split_on_failure(lambda part: call(part, config), sendable, fail,
                                             at_once=int(calls.total_tokens)) if sendable else [])
        return [{"id": r.id, "predicted": r.predicted, "error": r.error} for r in merged(paired, failed)]

    def fail(entry: dict[str, Any], message: str) -> TranslationResult:
        return error_result(str(entry["id"]), message)

    return translate


class _UnlessStopped:
    """A method that is not called once ``stopped()``: its entries fail as not sent. Checked as the call starts
    (in its own task, `mt_eval.deadlines`), so a call that was waiting its turn while another blocked the event
    loop is not made either."""

    def __init__(self, method: Any, stopped: Callable[[], bool]) -> None:
        self.method, self.stopped = method, stopped

    async def translate(self, entries: list[dict[str, Any]], config: Any) -> Any:
        if self.stopped():
            from mt_eval.champollion.sync import NOT_SENT

            return [{"id": entry["id"], "error": NOT_SENT} for entry in entries]
        return await self.method.translate(entries, config)
