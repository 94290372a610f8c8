"""Starting a loaded method before its first call, so that one that cannot start fails once, at once.

A method running as a bridge guest is started (spawned, handshake) by `start_method`; a guest that cannot start
— its ``translate.js`` does not load, it exits or never answers initialize — raises `StartFailed`, whose message
is `start_failure`'s: the reason, the guest's last stderr lines and the fix (one that is still starting when its
start timeout ends is told of ``--start-timeout``, then and when it is restarted: `slow_start_fix`). An in-process
method has nothing to start.
``mt-eval run``, ``mt-eval translate``, ``mt-eval locales``, ``mt-eval decide run`` and ``mt-eval grade`` start their
methods this way.
"""

from __future__ import annotations

import time
from typing import Any

from mt_eval.errors import ExpectedError
from mt_eval.loader import LoadedMethod


class StartFailed(ExpectedError):
    """The method cannot start (or go on); the message has the reason, the guest's stderr and the fix."""


async def start_method(loaded: LoadedMethod, config: Any, *, name: str | None = None, by_translate: bool = False
                       ) -> float:
    """Start a guest now (nothing to do in-process); the seconds it took. Raises `StartFailed`, naming the method
    ``name`` (default: its method_id); ``by_translate``: started by ``mt-eval translate``, which its fix then does not
    suggest trying."""
    start = getattr(loaded.method, "start", None)
    if start is None:
        return 0.0
    from mt_eval.bridge import messages as m

    told_of_the_option(loaded)
    started = time.perf_counter()
    try:
        await start(config)
    except m.BridgeError as exc:
        raise StartFailed(start_failure(loaded, exc, name=name, by_translate=by_translate)) from None
    return time.perf_counter() - started


def slow_start_fix(loaded: LoadedMethod) -> str:
    """The fix for a guest still starting when its start timeout ended: more time (--start-timeout), or a quicker
    start."""
    from mt_eval.bridge.start_failures import slow_start_fix as fix

    return fix(loaded.manifest.entry_in_words(), "with --start-timeout SECONDS")


def told_of_the_option(loaded: LoadedMethod) -> None:
    """Make a guest still starting at its start timeout, now or restarted later, say the fix that names
    --start-timeout (`slow_start_fix`) rather than the Python API's way (`mt_eval.loader.bridge_method`)."""
    from mt_eval.bridge.method import BridgeMethod

    if isinstance(loaded.method, BridgeMethod):
        loaded.method.start_timeout_fix = slow_start_fix(loaded)


def start_failure(loaded: LoadedMethod, exc: Any, *, name: str | None = None, by_translate: bool = False) -> str:
    """``METHOD cannot start: REASON`` with the guest's last stderr lines (those the reason does not already
    say) and what to do about it (trying it with ``mt-eval translate``, unless that failed: ``by_translate``)."""
    from mt_eval.bridge import messages as m
    from mt_eval.bridge.method import split_fix
    from mt_eval.child_stderr import stderr_lines

    data = exc.data if isinstance(exc.data, dict) else {}
    lines = stderr_lines(str(data.get("stderr_tail") or ""))
    tail = [line for line in lines if line.strip().split(": ", 1)[-1] not in exc.message][-12:]
    said, fix = split_fix(exc.message)  # a guest that says how to fix it (a Node module that does not load)
    text = f"{name or loaded.method_id} cannot start: {said}"
    if tail:
        text += "\n  guest stderr (last lines):\n    " + "\n    ".join(tail)
    if data.get("not_a_guest"):
        return text  # the message says what it is and how to wrap it
    if data.get("cannot_run"):  # its program could not be started at all (a node the message says how to get)
        if loaded.manifest.command and not loaded.manifest.node_entry:
            text += (f"\n  fix: make \"command\" in method.json start a program that exists and may be run (a path "
                     f"in {loaded.directory}, or a program on PATH)")
        return text
    if fix is not None:
        return f"{text}\n  fix: {fix}"
    entry = loaded.manifest.entry_in_words()
    if exc.code == m.TIMEOUT:  # still starting: slow (a large model loading), or stuck
        return f"{text}\n  fix: {slow_start_fix(loaded)}"
    tried = "" if by_translate else f"try `mt-eval translate {loaded.directory} \"Hello.\"`, and "
    return f"{text}\n  fix: make {entry} load and answer initialize ({tried}`mt-eval bridge check` for a command)"
