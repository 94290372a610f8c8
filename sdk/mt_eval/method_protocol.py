"""The method protocols, `TranslationMethod` and `DecisionMethod`, and a check that reports every deviation.

Structural typing: a method needs no base class, only an ``async def translate(entries, config)``
returning one result dict per entry (see `mt_eval.records`), or — when its method.json lists ``"decide"``
in ``implements`` — an ``async def decide(rows, config)`` returning one result dict per row (see
`mt_eval.decisions.records`), or both. Optional members:

- ``method_card()`` → dict: card fields known only at run time (see `mt_eval.method_card`);
- ``async aclose()``: release resources (processes, connections) when the host is done.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from mt_eval.records import RunConfig


class TranslationMethod(Protocol):
    async def translate(self, entries: list[dict[str, Any]], config: RunConfig) -> list[dict[str, Any]]: ...


class DecisionMethod(Protocol):
    async def decide(self, rows: list[dict[str, Any]], config: RunConfig) -> list[dict[str, Any]]: ...


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


def protocol_deviations(method: object, implements: Sequence[str] = ("translate",)) -> list[str]:
    """Every way ``method`` falls short of the protocols it ``implements`` (empty when it conforms)."""
    kind = type(method).__name__
    found: list[str] = []
    for request, items in (("translate", "entries"), ("decide", "rows")):
        if request in implements:
            found.extend(_request_deviations(method, kind, request, items))
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


def _request_deviations(method: object, kind: str, request: str, items: str) -> list[str]:
    define = f"`async def {request}(self, {items}, config)`"
    func = getattr(method, request, None)
    if func is None:
        return [f"{kind} has no {request} method: define {define}"]
    if not callable(func):
        return [f"{kind}.{request} is a {type(func).__name__}, not a method: define {define}"]
    found = []
    if not _is_async(func):
        found.append(f"{kind}.{request} is not async: write {define}")
    if not _accepts(func, 2):
        found.append(f"{kind}.{request}{_signature(func)} cannot be called as {request}({items}, config)")
    return found


def _signature(func: Any) -> str:
    try:
        return str(inspect.signature(func))
    except (TypeError, ValueError):
        return "(...)"
