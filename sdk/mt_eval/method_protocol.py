"""The method protocols, `TranslationMethod` and `DecisionMethod`, and a check that reports every deviation.

Structural typing: a method needs no base class, only an ``async def translate(entries, config)``
returning one result dict per entry (see `mt_eval.records`), or — when its method.json lists ``"decide"``
in ``implements`` — an ``async def decide(rows, config)`` returning one result dict per row (see
`mt_eval.decisions.records`), or both. Optional members:

- ``method_card()`` → dict: card fields known only at run time (see `mt_eval.method_card`);
- ``async aclose()``: release resources (processes, connections) when the host is done;
- ``capabilities`` → ``{"max_concurrency": N}``: the calls it takes at once, as a Node method's export says it
  (`declared_max_concurrency`); the only capability a method declares.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from mt_eval.value_words import value_in_words

if TYPE_CHECKING:
    from mt_eval.records import RunConfig


# each request's protocol, and the README section that shows a method implementing it
PROTOCOL_SECTIONS = {"translate": ("TranslationMethod", "Writing a method plugin"),
                     "decide": ("DecisionMethod", "Judging")}


class TranslationMethod(Protocol):
    async def translate(self, entries: list[dict[str, Any]], config: RunConfig) -> list[dict[str, Any]]: ...


class DecisionMethod(Protocol):
    async def decide(self, rows: list[dict[str, Any]], config: RunConfig) -> list[dict[str, Any]]: ...


class Deviation(NamedTuple):
    """One way a method falls short of its protocol, and the fix when it is particular to it (else the loader's
    general pointer to the protocol applies)."""

    text: str
    fix: str | None = None


def where_protocols_are(implements: Sequence[str]) -> str:
    """'see the README: the TranslationMethod protocol in "Writing a method plugin"' (each protocol implemented)."""
    sections = (PROTOCOL_SECTIONS[request] for request in dict.fromkeys(implements))
    return "see the README: " + ", ".join(f'the {protocol} protocol in "{section}"' for protocol, section in sections)


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


def protocol_deviations(method: object, implements: Sequence[str] = ("translate",)) -> list[Deviation]:
    """Every way ``method`` falls short of the protocols it ``implements`` (empty when it conforms)."""
    kind = type(method).__name__
    found: list[Deviation] = []
    for request, items in (("translate", "entries"), ("decide", "rows")):
        if request in implements:
            found.extend(_request_deviations(method, kind, request, items))
    card = getattr(method, "method_card", None)
    if card is not None:
        if not callable(card):
            found.append(Deviation(f"{kind}.method_card must be a method returning a dict, not a "
                                   f"{type(card).__name__}"))
        elif not _accepts(card, 0):
            found.append(Deviation(f"{kind}.method_card{_signature(card)} must be callable with no arguments"))
    aclose = getattr(method, "aclose", None)
    if aclose is not None and not (callable(aclose) and _is_async(aclose)):
        found.append(Deviation(f"{kind}.aclose must be `async def aclose(self)`"))
    return found + _capability_deviations(getattr(method, "capabilities", None), kind)


DECLARABLE_CAPABILITIES = ("max_concurrency",)
CAPABILITIES_FIX = ('set `capabilities = {"max_concurrency": N}` on the method, N the calls it takes at once: a whole '
                    "number from 1 (without it, 64 in a guest, and as many as --concurrency asks in process)")


def _capability_deviations(declared: Any, kind: str) -> list[Deviation]:
    """What is wrong with the capabilities a method declares (in the Node method loader's words): not a dict, a
    field it does not declare, or a count that is not a whole number of calls from 1."""
    if declared is None:
        return []
    if not isinstance(declared, dict):
        return [Deviation(f"{kind} declares capabilities as {_got(declared)}, not a dict", CAPABILITIES_FIX)]
    found = []
    for field, value in declared.items():
        if field not in DECLARABLE_CAPABILITIES:
            found.append(Deviation(f"{kind} declares capabilities.{field}, which a method does not declare (it "
                                   f"declares {', '.join(DECLARABLE_CAPABILITIES)})", CAPABILITIES_FIX))
        elif not isinstance(value, int) or isinstance(value, bool) or value < 1:
            found.append(Deviation(f"{kind} declares capabilities.{field} = {_got(value)}: it must be a whole number "
                                   "of calls from 1", CAPABILITIES_FIX))
    return found


def _got(value: Any) -> str:
    """A value in words: a JSON value's as the Node loader says it, any other by its type."""
    if value is None or isinstance(value, bool | int | float | str | list | dict):
        return value_in_words(value)
    kind = type(value).__name__
    return f"a{'n' * (kind[0] in 'aeiou')} {kind}"


def declared_max_concurrency(method: object) -> int | None:
    """The calls at once a method declares (its ``capabilities["max_concurrency"]``, checked at load by
    `protocol_deviations`), or None."""
    declared = getattr(method, "capabilities", None)
    count = declared.get("max_concurrency") if isinstance(declared, dict) else None
    return count if isinstance(count, int) and not isinstance(count, bool) and count >= 1 else None


def calls_at_once(method: object, asked: int) -> int:
    """``asked`` calls at once (``--concurrency``), or fewer when the method declares fewer."""
    return min(asked, declared_max_concurrency(method) or asked)


def _request_deviations(method: object, kind: str, request: str, items: str) -> list[Deviation]:
    define = f"`async def {request}(self, {items}, config)`"
    func = getattr(method, request, None)
    if func is None:
        other = "decide" if request == "translate" else "translate"  # (a decision method that did not say so)
        fix = (f'if {kind} only {other}s, set "implements": ["{other}"] in method.json; if it {request}s too, '
               f"define {request} ({where_protocols_are([request])})" if callable(getattr(method, other, None))
               else None)
        return [Deviation(f"{kind} has no {request} method: define {define}", fix)]
    if not callable(func):
        return [Deviation(f"{kind}.{request} is a {type(func).__name__}, not a method: define {define}")]
    found = []
    where = defined_at(func)
    if not _is_async(func):
        found.append(Deviation(f"{kind}.{request} is not async: write {define}",
                               f"make the `def {request}` at {where} {define}" if where else None))
    if not _accepts(func, 2):
        found.append(Deviation(f"{kind}.{request}{_signature(func)} cannot be called as {request}({items}, config)",
                               f"give the `def {request}` at {where} the parameters (self, {items}, config)"
                               if where else None))
    return found


def defined_at(func: Any) -> str | None:
    """``pipeline.py:42``: the file and line of a method's ``def`` (its first decorator's line when decorated), or
    None when its source cannot be found (a builtin, code made at run time)."""
    try:
        target = inspect.unwrap(func)
        file = inspect.getsourcefile(target)
        line = inspect.getsourcelines(target)[1]
    except (TypeError, OSError, ValueError):
        return None
    return f"{os.path.basename(file)}:{line}" if file else None


def _signature(func: Any) -> str:
    try:
        return str(inspect.signature(func))
    except (TypeError, ValueError):
        return "(...)"


def request_function(found: object, name: str, requests: Sequence[str]) -> str | None:
    """The request (``translate`` or ``decide``) that ``found``, the function an entry point names, is itself — an
    ``async def translate(entries, config)`` at module level, where a class belongs — or None (a class, or a
    factory that returns a method)."""
    if not inspect.isfunction(found):
        return None
    try:
        parameters = inspect.signature(found).parameters
    except (TypeError, ValueError):
        return None
    required = [p for p in parameters.values() if p.default is inspect.Parameter.empty
                and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)]
    request = name if name in requests else "decide" if "rows" in parameters and "decide" in requests else requests[0]
    mistaken = (inspect.iscoroutinefunction(found) or bool({"entries", "rows"} & set(parameters))
                or (name in requests and bool(required)))
    return request if mistaken else None


def function_not_class(name: str, module: str, file: str, request: str, classes: list[str], methods: list[str]
                       ) -> tuple[str, str]:
    """What is wrong, and the fix, when the entry point ``module:name`` names a function that is itself the method's
    ``request``: the class of ``file`` (``classes``) that has it (``methods``) to point at, else how to write one."""
    define = f"`async def {request}(self, {'rows' if request == 'decide' else 'entries'}, config)`"
    if methods:
        others = f" (or {', '.join(methods[1:])})" if methods[1:] else ""
        hint = f'point it at the class that has {request}: "entry_point": "{module}:{methods[0]}"{others}'
    else:
        defined = f"{file} defines {', '.join(classes)}, none with {request}" if classes else f"{file} defines no class"
        hint = (f'move {name} into a class as {define} and point at that class, e.g. "entry_point": '
                f'"{module}:MyMethod" ({defined})')
    return (f'"{name}" is a function, not a class: the entry point names a class (or a factory that returns a '
            f"method) whose instances have {define}", hint)
