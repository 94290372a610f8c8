"""Calling a method so that one bad entry fails alone.

`guarded_translate` awaits a method's ``translate`` under a deadline and turns every way a call can fail
as a whole — it raises, it runs past the deadline, it calls ``sys.exit()`` — into a `CallFailed` whose
message is what the entries carry. `split_on_failure` sends a batch whose call failed again in halves,
down to single entries, so only the entries the method fails on get the error and the others keep their
results. The harness (`mt-eval run`) and `mt-eval locales` both call in-process methods this way; the
bridge hosts do the same for guests (`mt_eval.bridge.method`, and ``bridge/node/lib/host.js``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio

from mt_eval.plugin_import import describe_exit

Entry = TypeVar("Entry")
Result = TypeVar("Result")


REPORT_GRACE_S = 1.0


class CallFailed(Exception):
    """A call failed as a whole; ``message`` is the one-line error its entries carry."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


async def guarded_translate(method: Any, entries: list[dict[str, Any]], config: Any, *, timeout_s: float | None,
                            directory: Path | None = None, backstop_s: float | None = None) -> Any:
    """``method.translate(entries, config)`` within ``timeout_s`` per entry (or ``backstop_s`` in all, for a
    method that times itself out); raises `CallFailed`."""
    limit = backstop_s if backstop_s is not None else timeout_s * len(entries) if timeout_s is not None else None
    # past the limit, a moment more: a method that enforces the same timeout itself (the process adapters do)
    # reports its own, more precise error instead of this generic one
    grace = min(REPORT_GRACE_S, limit / 2) if backstop_s is None and limit is not None else 0.0
    try:
        with anyio.move_on_after(None if limit is None else limit + grace) as scope:
            return await method.translate(entries, config)
    except SystemExit as exc:
        raise CallFailed(f"the method {describe_exit(exc, directory)}: a method must not end the process; raise "
                         "an exception instead") from None
    except Exception as exc:
        raise CallFailed(f"method raised {type(exc).__name__}: {exc}") from exc
    assert scope.cancelled_caught and limit is not None  # the block left without returning: the deadline passed
    per_entry = f" ({timeout_s:g} s per entry)" if backstop_s is None and timeout_s is not None else ""
    raise CallFailed(f"timed out after {limit:g} s{per_entry}")


async def split_on_failure(call: Callable[[list[Entry]], Awaitable[list[Result]]], batch: list[Entry],
                           error_for: Callable[[Entry, str], Result]) -> list[Result]:
    """``call(batch)``; when it fails as a whole, the halves again, down to single entries."""
    try:
        return await call(batch)
    except CallFailed as failure:
        if len(batch) == 1:
            return [error_for(batch[0], failure.message)]
    middle = len(batch) // 2
    return (await split_on_failure(call, batch[:middle], error_for)
            + await split_on_failure(call, batch[middle:], error_for))
