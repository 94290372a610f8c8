"""``--param KEY=VALUE`` options → a method's config.params (``run``, ``freeze init``, ``decide run``, ``grade``).

The command line refuses a ``--param`` these would refuse as it is parsed (`mt_eval.cli.arguments.param_argument`):
a usage error, before anything runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable


def method_params(items: list[str]) -> dict[str, object]:
    """``--param KEY=VALUE`` options → config.params; a VALUE that parses as JSON is that JSON value (its numbers
    read as every runtime reads them: `mt_eval.json_input`). ValueError says what is wrong."""
    params: dict[str, object] = {}
    for item in items:
        try:
            key, value = read_param(item)
        except ValueError as exc:
            raise ValueError(f"--param {exc}") from None
        if key in params:
            raise ValueError(f"--param {given_twice(key, items, item)}")
        params[key] = value
    return params


def given_twice(key: str, items: list[str], item: str) -> str:
    """What is wrong with ``item``, whose ``key`` one of ``items`` already gave (after the option's name)."""
    earlier = next(i for i in items if i.partition("=")[0] == key)
    return f"{key} is given twice ({earlier!r}, then {item!r}): give each parameter once"


def read_param(item: str) -> tuple[str, object]:
    """One ``KEY=VALUE``: the key and the value; ValueError says what is wrong (after the option's name)."""
    import json

    from mt_eval.json_input import js_float, js_int

    key, sep, value = item.partition("=")
    if not sep or not key:
        raise ValueError(f"must be KEY=VALUE, e.g. --param beam=5 (VALUE is read as JSON when it can be), got "
                         f"{item!r}")
    try:
        return key, json.loads(value, parse_int=_finite(js_int), parse_float=_finite(js_float),
                               parse_constant=_not_json)
    except _NotJson as exc:
        raise ValueError(f"{item!r}: {exc} is not a JSON value (a config could not be written or read back with "
                         f"it); for the text, quote it: --param '{key}=\"{value}\"'") from None
    except ValueError:
        return key, value


class _NotJson(ValueError):
    """``NaN``, ``Infinity`` or ``-Infinity``: Python's json reads them; JSON has no such value."""


def _not_json(constant: str) -> object:
    raise _NotJson(constant)


def _finite(read: Callable[[str], int | float]) -> Callable[[str], int | float]:
    """``read``, refusing a number past any float (1e400), which every reader takes as Infinity, as NaN is."""
    def finite(text: str) -> int | float:
        value = read(text)
        if isinstance(value, float) and math.isinf(value):
            raise _NotJson(f"{text[:40]} (a number past any float: Infinity)")
        return value

    return finite
