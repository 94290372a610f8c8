"""The `TranslationMethod` protocol every method implements, and a check that reports every deviation.

Structural typing: a method needs no base class, only an ``async def translate(entries, config)``
returning one result dict per entry (see `mt_eval.records`). Optional members:

- ``method_card()`` → dict: card fields known only at run time (see `mt_eval.card`);
- ``async aclose()``: release resources (processes, connections) when the host is done.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from mt_eval.records import RunConfig


class TranslationMethod(Protocol):
    async def translate(self, entries: list[dict[str, Any]], config: RunConfig) -> list[dict[str, Any]]: ...


def _accepts(func: Any, count: int) -> bool:
    try:
        inspect.signature(func).bind(*([None] * count))
    except TypeError:
        return False
    except ValueError:  # no signature available (some builtins): give it the benefit of the doubt
        return True
    return True


def _is_async(func: Any) -> bool:
    if inspect.iscoroutinefunction(func):
        return True
    call = vars(type(func)).get("__call__")  # an object with an async __call__
    return not inspect.isroutine(func) and inspect.iscoroutinefunction(call)


def protocol_deviations(method: object) -> list[str]:
    """Every way ``method`` falls short of `TranslationMethod` (empty when it conforms)."""
    kind = type(method).__name__
    found: list[str] = []
    translate = getattr(method, "translate", None)
    if translate is None:
        found.append(f"{kind} has no translate method: define `async def translate(self, entries, config)`")
    elif not callable(translate):
        found.append(f"{kind}.translate is a {type(translate).__name__}, not a method: "
                     "define `async def translate(self, entries, config)`")
    else:
        if not _is_async(translate):
            found.append(f"{kind}.translate is not async: write `async def translate(self, entries, config)`")
        if not _accepts(translate, 2):
            found.append(f"{kind}.translate{_signature(translate)} cannot be called as translate(entries, config)")
    card = getattr(method, "method_card", None)
    if card is not None:
        if not callable(card):
            found.append(f"{kind}.method_card must be a method returning a dict, not a {type(card).__name__}")
        elif not _accepts(card, 0):
            found.append(f"{kind}.method_card{_signature(card)} must be callable with no arguments")
    aclose = getattr(method, "aclose", None)
    if aclose is not None and not (callable(aclose) and _is_async(aclose)):
        found.append(f"{kind}.aclose must be `async def aclose(self)`")
    return found


def _signature(func: Any) -> str:
    try:
        return str(inspect.signature(func))
    except (TypeError, ValueError):
        return "(...)"
