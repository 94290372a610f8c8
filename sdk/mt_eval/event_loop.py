"""The event loop mt-eval runs methods on: uvloop's where it is installed, else asyncio's.

A round trip through the bridge is mostly the event loop's own work (waking up, reading, scheduling the task
that waits): on uvloop it costs a sequential request about half as much as on asyncio's loop
(``benchmarks/bridge.py``). `mt-eval run`, `mt-eval translate`, `mt-eval locales`, the decision sessions and a
Python guest (`mt-eval serve`) run on it; a method that needs asyncio's own loop gets it with
``MT_EVAL_EVENT_LOOP=asyncio``.

`run` closes the loop as ``asyncio.run`` does — it cancels the tasks left, then finishes async generators and
the default executor — except that it waits at most ``SHUTDOWN_GRACE_S`` for each step: a task that catches
``CancelledError`` and carries on (a method's background task, say) would otherwise hold the process up for
ever. Such a task, and a method's call that `mt_eval.deadlines` gave up on before (`abandon`), is left behind
on the closed loop, never resumed.
"""

from __future__ import annotations

import os

from mt_eval.errors import UsageError

TYPE_CHECKING = False  # see mt_eval/__init__.py (the command line imports this module on every start)
if TYPE_CHECKING:
    import asyncio
    from collections.abc import Awaitable, Callable
    from concurrent.futures import Executor
    from typing import Any, TypeVar, TypeVarTuple

    T = TypeVar("T")
    Args = TypeVarTuple("Args")

CHOICE_VARIABLE = "MT_EVAL_EVENT_LOOP"
CHOICES = ("uvloop", "asyncio")
SHUTDOWN_GRACE_S = 2.0

_abandoned: set[asyncio.Task[Any]] = set()


def chosen() -> str:
    """The loop ``MT_EVAL_EVENT_LOOP`` asks for (``uvloop`` when unset); `UsageError` for one mt-eval does not know.
    Cheap (nothing is imported): the command line checks it before any work."""
    choice = os.environ.get(CHOICE_VARIABLE, "").strip().lower() or "uvloop"
    if choice not in CHOICES:
        raise UsageError(f"{CHOICE_VARIABLE}={os.environ[CHOICE_VARIABLE]!r} is not an event loop mt-eval knows: "
                         f"use {' or '.join(CHOICES)}")
    return choice


def use_uvloop() -> bool:
    """Whether to run on uvloop: it is installed and ``MT_EVAL_EVENT_LOOP`` does not say ``asyncio``."""
    if chosen() == "asyncio":
        return False
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return False
    return True


def run(func: Callable[[*Args], Awaitable[T]], *args: *Args) -> T:
    """``anyio.run(func, *args)`` on the loop this module chooses (anyio's asyncio backend is asyncio's own
    `asyncio.Runner`, Ctrl-C included), closed without waiting for ever for a task that ignores cancellation."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from mt_eval.background_threads import block_process_signals

    try:
        asyncio.get_running_loop()
    except RuntimeError:  # (none: as it should be)
        pass
    else:  # (asyncio's own words would be "Cannot run the event loop while another loop is running")
        raise RuntimeError("this runs on an event loop of its own, and one is already running in this thread (a "
                           "notebook, or code under asyncio.run): call it from another thread, e.g. `await "
                           "asyncio.to_thread(validate_plugin, path)`")

    async def main() -> T:
        return await func(*args)

    runner = asyncio.Runner(loop_factory=_loop_factory())
    loop = runner.get_loop()
    loop.set_exception_handler(_quiet_on_interrupt)
    # (as asyncio's own, but for the signals: a method's ``asyncio.to_thread`` is not to take Ctrl-C from the loop)
    executor = ThreadPoolExecutor(thread_name_prefix="asyncio", initializer=block_process_signals)
    loop.set_default_executor(executor)
    try:
        return runner.run(main())
    finally:  # (instead of runner.close(), which would wait for every task to end)
        _close(loop, executor)


def _quiet_on_interrupt(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The loop's report of an error in a callback, except for Ctrl-C (a second one, raised wherever the loop was):
    the command says it was interrupted; a transport's traceback for it ("Fatal error on transport") says nothing."""
    error = context.get("exception")
    if isinstance(error, KeyboardInterrupt | SystemExit):
        return
    if isinstance(error, BaseExceptionGroup) and error.split((KeyboardInterrupt, SystemExit))[1] is None:
        return  # (a task group's, holding that alone)
    loop.default_exception_handler(context)


def abandon(task: asyncio.Task[Any]) -> None:
    """Leave ``task`` to itself: it ignored being cancelled, and neither the loop's shutdown nor the end of the
    process waits for it or reports it (whatever it raises, should it ever end, is dropped).

    It is also never collected, not even as the interpreter exits: collecting a coroutine runs its code once more
    (``GeneratorExit`` is thrown into it), and one that catches ``BaseException`` and awaits again would then
    loop for ever, with no event loop to wait on."""
    if task.done():
        return
    task._log_destroy_pending = False  # type: ignore[attr-defined]  # (asyncio's flag: pending when collected)
    task.add_done_callback(_forget)
    _abandoned.add(task)
    _held(task, for_ever=True)


def _forget(task: asyncio.Task[Any]) -> None:
    _abandoned.discard(task)
    _held(task, for_ever=False)
    if not task.cancelled():
        task.exception()  # retrieved: not "Task exception was never retrieved"


def _held(task: asyncio.Task[Any], *, for_ever: bool) -> None:
    """One reference more to ``task`` that nothing drops (so the interpreter's exit does not collect it), or one
    less: it ended after all."""
    import ctypes

    api = getattr(ctypes, "pythonapi", None)  # (CPython's)
    if api is not None:
        (api.Py_IncRef if for_ever else api.Py_DecRef)(ctypes.py_object(task))


def _close(loop: asyncio.AbstractEventLoop, executor: Executor) -> None:
    """``asyncio.Runner.close()``, each step waiting at most ``SHUTDOWN_GRACE_S``; a task still running after
    it is abandoned."""
    import asyncio

    try:
        left = asyncio.all_tasks(loop)
        for task in left:
            task.cancel()
        _until_done(loop, [task for task in left if task not in _abandoned], report=True)
        _until_done(loop, [loop.create_task(loop.shutdown_asyncgens())])
        _shut_down(executor, loop)
    finally:
        loop.close()


def _shut_down(executor: Executor, loop: asyncio.AbstractEventLoop) -> None:
    """``executor.shutdown()`` (the default executor's: a method's ``asyncio.to_thread``), the loop running
    meanwhile, for ``SHUTDOWN_GRACE_S`` at most; past it, one line says that a thread of the method is still
    running. (The loop's own ``shutdown_default_executor`` would end in a traceback, "Event loop is closed", when
    such a thread ends after the loop is closed: it waits in a thread that then calls the loop back.)"""
    import asyncio
    import contextlib
    import logging
    import threading

    ended = loop.create_future()

    def settle() -> None:
        if not ended.done():
            ended.set_result(None)

    def shut_down() -> None:
        executor.shutdown(wait=True)
        with contextlib.suppress(RuntimeError):  # (the loop is closed: nothing waits for this any more)
            loop.call_soon_threadsafe(settle)

    threading.Thread(target=shut_down, name="mt-eval executor shutdown", daemon=True).start()
    try:
        loop.run_until_complete(asyncio.wait([ended], timeout=SHUTDOWN_GRACE_S))
    finally:  # (Ctrl-C meanwhile ends the wait)
        still_running = ended.cancel()
    if still_running:
        logging.getLogger("mt_eval").warning(
            "mt-eval: warning: a thread of the method (asyncio.to_thread, run_in_executor) was still running %g s "
            "after its calls ended; a method's threads are to end when its calls are cancelled, or in aclose()",
            SHUTDOWN_GRACE_S)


def _until_done(loop: asyncio.AbstractEventLoop, tasks: list[asyncio.Task[Any]], *, report: bool = False) -> None:
    import asyncio

    if not tasks:
        return
    try:
        loop.run_until_complete(asyncio.wait(tasks, timeout=SHUTDOWN_GRACE_S))
    finally:  # (Ctrl-C meanwhile ends the wait)
        for task in tasks:
            abandon(task)
    for task in tasks if report else ():
        if task.done() and not task.cancelled() and task.exception() is not None:  # as asyncio.run reports it
            loop.call_exception_handler({"message": "unhandled exception during asyncio.run() shutdown",
                                         "exception": task.exception(), "task": task})


def new_event_loop() -> asyncio.AbstractEventLoop:
    """A new loop of the kind this module chooses (for code that drives a loop itself, in a thread)."""
    return _loop_factory()()


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop]:
    if use_uvloop():
        import uvloop

        return uvloop.new_event_loop
    import asyncio

    return asyncio.new_event_loop
