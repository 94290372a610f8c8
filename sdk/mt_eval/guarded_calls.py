"""Calling a method so that one bad entry fails alone.

`guarded_translate` awaits a method's ``translate`` under a deadline (`mt_eval.deadlines`: one the method cannot
swallow by catching ``CancelledError``) and turns every way a call can fail
as a whole — it raises, it runs past the deadline, it calls ``sys.exit()`` — into a `CallFailed` whose
message is what the entries carry (`call_failure`: every other call of a method — the latency calls, a
substitution replay — says it in the same words). `split_on_failure` sends a batch whose call failed again in
halves, down to single entries (after a timeout, one entry per call straight away), so only the entries the
method fails on get the error and the others keep their results. The harness (`mt-eval run`) and `mt-eval
locales` both call in-process methods this way; the bridge hosts do the same for guests
(`mt_eval.bridge.method`, and ``bridge/node/lib/host.js``).

`guarded_close` is the last call: ``aclose()``, shielded from cancellation and bounded (`CLOSE_TIMEOUT_S`). A
method that raises, calls ``sys.exit()`` or hangs there costs one warning line naming it, never the work done:
the command goes on (a run to its card). Every command that closes a method closes it this way.

`working_directory_kept` is around each call of a method's code in this process (its constructor, ``translate``,
``decide``): one that changes the working directory has it changed back, with one warning, so the command's relative
paths (``--out runs/x``) keep meaning what the user typed.

`prints_to_stderr` is around all of a method's code that runs in this process — its import, its constructor,
its calls and its ``aclose()``: what it prints goes to stderr, for standard output is the command's result
(``mt-eval run … > result.txt``, ``--json``). Both ``sys.stdout`` and file descriptor 1 point at stderr in the
block, so the output of a program the method runs (``subprocess.run(["tool", ...])``, which inherits fd 1),
of C code or of ``os.write(1, ...)`` does not reach the result either, as in a guest process (``mt-eval serve``
diverts fd 1 for its whole life: `mt_eval.bridge.guest.divert_stdout`).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from mt_eval.deadlines import ISOLATE, CancelledItself, Overran, RaisedBase, raised_by_a_signal, within
from mt_eval.lone_surrogates import capped, writable
from mt_eval.plugin_import import describe_exception, describe_exit, exception_words

if TYPE_CHECKING:
    from mt_eval.method_protocol import TranslationMethod
    from mt_eval.records import RunConfig

Entry = TypeVar("Entry")
Result = TypeVar("Result")


REPORT_GRACE_S = 1.0
CLOSE_TIMEOUT_S = 10.0  # a guest's own shutdown escalates to SIGKILL well within it


_fd1_saved: list[int] = []  # the command's own fd 1 while a block points fd 1 at stderr (blocks may nest)


@contextlib.contextmanager
def prints_to_stderr() -> Iterator[None]:
    """``sys.stdout`` and fd 1 pointed at stderr until the block ends (around a method's code, in this process)."""
    with contextlib.suppress(Exception):  # what the command wrote before goes out first, where it was going
        sys.stdout.flush()
    saved = None if _fd1_saved else _point_fd1_at_stderr()
    try:
        with contextlib.redirect_stdout(_Unclosable(sys.stderr)):
            yield
    finally:
        if saved is not None:
            _fd1_saved.remove(saved)
            with contextlib.suppress(Exception):
                sys.stderr.flush()
            with contextlib.suppress(OSError):
                os.dup2(saved, 1)
            os.close(saved)


class _Unclosable:
    """``sys.stderr`` as a method's ``sys.stdout``: its ``sys.stdout.close()`` leaves stderr open, where the command
    still says how it ended."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _point_fd1_at_stderr() -> int | None:
    """fd 1 made a copy of fd 2 (of /dev/null when this process has no stderr: fd 2 may then be a file it opened,
    such as a run directory's lock); the copy of the old fd 1 to restore (None when fd 1 is closed: nothing done)."""
    try:
        saved = os.dup(1)
    except OSError:
        return None
    try:
        if _has_stderr():
            os.dup2(2, 1)
        else:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.close(null)
    except OSError:
        os.close(saved)
        return None
    _fd1_saved.append(saved)
    return saved


def _has_stderr() -> bool:
    """Whether fd 2 is this process's stderr: Python had one when it started (with fd 2 closed, sys.stderr is None)."""
    try:
        return sys.stderr is not None and sys.stderr.fileno() == 2
    except (OSError, ValueError):  # (replaced by an object without a descriptor, or closed)
        return sys.__stderr__ is not None


class CallFailed(Exception):
    """A call failed as a whole; ``message`` is the one-line error its entries carry, ``timed_out`` whether it
    ran past its deadline."""

    def __init__(self, message: str, *, timed_out: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.timed_out = timed_out


def exit_failure(exc: SystemExit, directory: Path | None = None) -> str:
    """``the method called sys.exit(5) (pipeline.py:38): a method must not end the process; …``"""
    return (f"the method {describe_exit(exc, directory)}: a method must not end the process; raise an exception "
            "instead")  # (`describe_exit` makes what the method gave writable)


def call_failure(exc: BaseException, directory: Path | None = None) -> str:
    """The one line a call of a method that raised or called ``sys.exit()`` gives its entries. (Cancellation and a
    KeyboardInterrupt from Ctrl-C are never a call's failure: they stop the run; one the method raised itself is.)
    The message is the method's own text, made writable and capped (`mt_eval.lone_surrogates`)."""
    if isinstance(exc, SystemExit):
        return capped(exit_failure(exc, directory))
    if isinstance(exc, CancelledItself):  # (it says what the method did)
        return str(exc)
    if isinstance(exc, RaisedBase):  # (said as what the method raised)
        exc = exc.raised
    sibling = _sibling_named(exc, directory)
    if sibling is not None and directory is not None:
        name, file = sibling
        return capped(f"{METHOD_FAILED}{describe_exception(exc, directory)}: {file} is in the plugin's directory "
                      f"{directory}, whose modules can be imported by name only as the plugin is imported: import "
                      f"it at the top of the module, or write `from . import {name}` here")
    return capped(f"{METHOD_FAILED}{exception_words(exc)}")


METHOD_FAILED = "the method failed: "


def _sibling_named(exc: BaseException, directory: Path | None) -> tuple[str, str] | None:
    """The name and file (``utils``, ``utils.py``) of the plugin's own module that a ``ModuleNotFoundError`` says is
    missing: importing it by name inside ``translate()`` fails, for the plugin's directory is on ``sys.path`` only
    while the plugin is imported (`mt_eval.plugin_import`)."""
    name = getattr(exc, "name", None) if isinstance(exc, ModuleNotFoundError) else None
    if directory is None or not isinstance(name, str) or not name.isidentifier():
        return None
    for sibling in (f"{name}.py", f"{name}/__init__.py", name):
        if (directory / sibling).exists():
            return name, sibling
    return None


class working_directory_kept:  # (used as a function: ``with working_directory_kept("translate()"):``)
    """Around each call of a method's code in this process: a call that changes the working directory (``os.chdir``)
    has it changed back as it returns, and the first time says so; the command's relative paths (``--out runs/x``,
    the corpus, the run's files) are the user's. Calls may overlap: the directory kept is the one the first of them
    started in."""

    home: str | None = None
    open_calls = 0
    warned: set[str] = set()  # noqa: RUF012 (shared by every call)

    def __init__(self, what: str) -> None:
        self.what = what

    def __enter__(self) -> None:
        kept = working_directory_kept
        if kept.open_calls == 0:
            try:
                kept.home = os.getcwd()
            except OSError:  # (the directory the command started in is gone)
                kept.home = None
        kept.open_calls += 1

    def __exit__(self, *exc_info: object) -> None:
        kept = working_directory_kept
        kept.open_calls -= 1
        if kept.home is None:
            return
        try:
            now = os.getcwd()
        except OSError:  # (changed to a directory since removed)
            now = "a directory since removed"
        if now == kept.home:
            return
        with contextlib.suppress(OSError):
            os.chdir(kept.home)
        if self.what not in kept.warned:
            kept.warned.add(self.what)
            print(f"mt-eval: warning: the method's {self.what} changed the working directory to {now}; it is changed "
                  "back (open the plugin's files by their path: its directory is given to __init__ "
                  "as `directory`)", file=sys.stderr, flush=True)


def method_failure(message: str, error_type: object = None) -> str:
    """What an entry carries when a guest says its method failed (``message``, and the exception's ``error_type``
    when it names one): the words an in-process call gives (`call_failure`), whichever host and runtime ran it —
    ``the method failed: ValueError: boom``. A message that already says what the method did (``the method
    called sys.exit(5) …``) stands alone. A guest's message is `capped`, as one raised in process is.
    ``bridge/node/lib/host-failures.js`` says it in the same words."""
    message = writable(message)
    if message.startswith("the method "):
        return capped(message)
    named = isinstance(error_type, str) and error_type and not message.startswith(error_type)
    return capped(f"{METHOD_FAILED}{error_type}: {message}" if named else f"{METHOD_FAILED}{message}")


def backstop_for(method: object, timeout_s: float, entries: int) -> float | None:
    """The deadline of a call of ``entries`` entries to a method that enforces its own (a bridge guest's host times
    each request out and isolates the entries it fails on): a generous backstop against a host that never would.
    None for any other method, which `guarded_translate` gives ``timeout_s`` per entry."""
    if not getattr(method, "enforces_deadlines", False):
        return None
    return timeout_s * entries * 4 + 900.0


def with_report_grace(limit: float) -> float:
    """A call's deadline for a time limit of ``limit`` seconds: a moment more, so that a method that enforces the
    same timeout itself (the process adapters do, and the decision endpoint) reports its own, more precise error
    instead of the generic one of the deadline."""
    return limit + min(REPORT_GRACE_S, limit / 2)


async def guarded_translate(method: TranslationMethod, entries: list[dict[str, Any]], config: RunConfig, *,
                            timeout_s: float | None, directory: Path | None = None,
                            backstop_s: float | None = None, unstoppable_fix: str = ISOLATE) -> object:
    """``method.translate(entries, config)`` within ``timeout_s`` per entry (or ``backstop_s`` in all, for a
    method that times itself out); raises `CallFailed` (``unstoppable_fix`` ends the message of a call that did
    not stop when cancelled). What the method returned is unchecked: `mt_eval.results` makes results of it."""
    limit = backstop_s if backstop_s is not None else timeout_s * len(entries) if timeout_s is not None else None
    try:
        deadline = limit if limit is None or backstop_s is not None else with_report_grace(limit)
        with working_directory_kept("translate()"):
            return await within(deadline, lambda: method.translate(entries, config))
    except Overran as overran:
        per_entry = f" ({timeout_s:g} s per entry)" if backstop_s is None and timeout_s is not None else ""
        raise CallFailed(overran.said(f"timed out after {limit:g} s{per_entry}", unstoppable_fix),
                         timed_out=True) from None
    except SystemExit as exc:
        raise CallFailed(call_failure(exc, directory)) from None
    except KeyboardInterrupt as exc:
        if raised_by_a_signal(exc):  # Ctrl-C (or SIGTERM): it stops the run
            raise
        raise CallFailed(call_failure(exc, directory)) from None  # the method's own `raise KeyboardInterrupt`
    except Exception as exc:
        raise CallFailed(call_failure(exc, directory)) from exc


async def split_on_failure(call: Callable[[list[Entry]], Awaitable[list[Result]]], batch: list[Entry],
                           error_for: Callable[[Entry, str], Result], *, at_once: int = 1) -> list[Result]:
    """``call(batch)``; when it fails as a whole, the halves again, down to single entries. A call that timed out
    is sent again one entry per call instead, ``at_once`` of those calls at a time (1: one after another, for a
    method that takes one call at a time): each part of it would wait out its own deadline again, so halves would
    cost a hanging entry its whole batch's time at every level (15 times ``--timeout`` in a batch of 8, against 9
    one at a time, and 2 all at once), as the bridge hosts do for a guest that hung."""
    try:
        return await call(batch)
    except CallFailed as failure:
        if len(batch) == 1:
            return [error_for(batch[0], failure.message)]
        if failure.timed_out:
            return await _each_alone(call, batch, error_for, at_once)
    middle = len(batch) // 2
    return (await split_on_failure(call, batch[:middle], error_for)
            + await split_on_failure(call, batch[middle:], error_for))


async def _each_alone(call: Callable[[list[Entry]], Awaitable[list[Result]]], batch: list[Entry],
                      error_for: Callable[[Entry, str], Result], at_once: int) -> list[Result]:
    """Each entry of ``batch`` in a call of its own, ``at_once`` calls at a time; the results in ``batch``'s order.
    What a call raises (not a `CallFailed`: a bug) stops the others and is raised as it is."""
    if at_once <= 1:
        return [result for entry in batch for result in await split_on_failure(call, [entry], error_for)]
    results: list[list[Result]] = [[] for _ in batch]
    raised: list[Exception] = []
    limiter = anyio.CapacityLimiter(at_once)

    async def alone(index: int, entry: Entry) -> None:
        try:
            async with limiter:
                results[index] = await split_on_failure(call, [entry], error_for)
        except Exception as exc:
            raised.append(exc)
            group.cancel_scope.cancel()

    async with anyio.create_task_group() as group:
        for index, entry in enumerate(batch):
            group.start_soon(alone, index, entry)
    if raised:
        raise raised[0]
    return [result for part in results for result in part]


async def guarded_close(method: object, label: str, *, prog: str, directory: Path | None = None,
                        timeout_s: float | None = None) -> str | None:
    """``method.aclose()``, when it has one, shielded from cancellation and for at most ``timeout_s`` (by default
    `CLOSE_TIMEOUT_S`), blocking the event loop included (a synchronous ``client.close()`` or ``time.sleep``: a
    `mt_eval.loop_watchdog.LoopWatchdog` interrupts it). When it raises, calls ``sys.exit()`` or runs past that, one
    line goes to stderr — ``PROG: warning: LABEL's aclose() …`` — and what it says is returned (None when the method
    closed)."""
    from mt_eval.loop_watchdog import LoopBlocked, LoopWatchdog

    close = getattr(method, "aclose", None)
    if not callable(close):
        return None
    timeout_s = CLOSE_TIMEOUT_S if timeout_s is None else timeout_s
    problem = None
    watchdog = LoopWatchdog(timeout_s, hard_limit_s=5.0, hard_exit_code=1,
                            hard_message=f"{prog}: {label}'s aclose() blocked the event loop and could not be "
                                         "interrupted; the process ends (what was finished is kept)")
    with anyio.CancelScope(shield=True):
        try:
            with anyio.move_on_after(timeout_s) as scope, watchdog:
                await close()
        except LoopBlocked as blocked:
            problem = (f"aclose() blocked the event loop for {blocked.seconds:.1f} s (a synchronous call: time.sleep, "
                       "a blocking client) and was interrupted")
        except SystemExit as exc:
            problem = f"aclose() {describe_exit(exc, directory)}"
        except Exception as exc:
            problem = f"aclose() raised {describe_exception(exc, directory)}"
        else:
            if scope.cancelled_caught:
                problem = f"aclose() did not return within {timeout_s:g} s"
    if problem is not None:
        print(f"{prog}: warning: {label}'s {problem}; carried on without it", file=sys.stderr, flush=True)
    return problem
