"""The conformance transcripts (bridge/vectors/conformance): reading them, and the pattern language their
``expect`` steps are written in (bridge/PROTOCOL.md, "Conformance"); `mt_eval.bridge.conformance` replays them."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

_STEPS = ("send", "send_raw", "expect", "expect_unordered", "close_stdin", "expect_exit")
BY_REQUEST = "by_request"  # a step written once per request the transcript can be run with (bridge/PROTOCOL.md)
_TYPES: dict[str, Any] = {
    "$string": lambda v: isinstance(v, str),
    "$integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "$number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "$object": lambda v: isinstance(v, dict),
    "$array": lambda v: isinstance(v, list),
    "$null_or_string": lambda v: v is None or isinstance(v, str),
    "$any": lambda v: True,
}


def vectors_directory() -> Path:
    """The conformance transcripts: packaged with the SDK, or in the source tree."""
    from mt_eval.resources import resource

    return resource("conformance")


class VectorError(ValueError):
    """A transcript file that cannot be used; the message names the file and what is wrong."""


def load_vectors(directory: Path | None = None) -> list[dict[str, Any]]:
    """The transcripts in ``directory`` (each a ``{"name", "steps": [...]}`` object); `VectorError` for one that
    is not."""
    directory = directory or vectors_directory()
    loaded = []
    for path in sorted(directory.glob("*.json")):
        try:
            vector = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise VectorError(f"{path}: cannot be read as a transcript: {exc}") from None
        if not isinstance(vector, dict) or not isinstance(vector.get("name"), str) or \
                not isinstance(vector.get("steps"), list):
            raise VectorError(f'{path}: a transcript is an object with a "name" and a list of "steps", e.g. '
                              '{"name": "...", "steps": [{"send": {...}}, {"expect": {...}}]}')
        odd = next((i for i, step in enumerate(vector["steps"]) if not _is_step(step, by_request=True)), None)
        if odd is not None:
            raise VectorError(f"{path}: $.steps[{odd}] is not a step: give an object with one of "
                              f"{', '.join(_STEPS)}, or {BY_REQUEST} naming such a step for each request, e.g. "
                              '{"by_request": {"translate": {"send": {...}}, "decide": {"send": {...}}}} '
                              '(bridge/PROTOCOL.md, "Conformance")')
        loaded.append(vector)
    return loaded


def _is_step(step: Any, *, by_request: bool = False) -> bool:
    if not isinstance(step, dict) or len(step) != 1:
        return False
    if by_request and isinstance(step.get(BY_REQUEST), dict):
        return bool(step[BY_REQUEST]) and all(_is_step(each) for each in step[BY_REQUEST].values())
    return next(iter(step)) in _STEPS


def requests_of(vector: Mapping[str, Any]) -> list[str]:
    """The requests a transcript can be run with: those its ``by_request`` steps name, first named first (none: it
    runs one way only)."""
    named: dict[str, None] = {}
    for step in vector["steps"]:
        named.update(dict.fromkeys(step.get(BY_REQUEST, {})))
    return list(named)


def step_for(step: Mapping[str, Any], request: str | None) -> Mapping[str, Any] | None:
    """The step as run with ``request``: a ``by_request`` step's own step for it (None: it has none, so the run
    leaves it out); any other step as it is."""
    return step[BY_REQUEST].get(request) if BY_REQUEST in step else step


def mismatch(pattern: Any, actual: Any, path: str = "$") -> str | None:
    """Why ``actual`` does not match ``pattern`` (None when it does)."""
    if isinstance(pattern, str) and pattern in _TYPES:
        return None if _TYPES[pattern](actual) else f"{path}: expected {pattern[1:]}, got {json.dumps(actual)}"
    if isinstance(pattern, dict):
        if not isinstance(actual, dict):
            return f"{path}: expected an object, got {json.dumps(actual)}"
        for key, sub in pattern.items():
            if key not in actual:
                return f"{path}: missing {key!r}, got {json.dumps(actual, ensure_ascii=False)[:300]}"
            found = mismatch(sub, actual[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(pattern, list):
        if not isinstance(actual, list) or len(actual) != len(pattern):
            return f"{path}: expected a list of {len(pattern)}, got {json.dumps(actual)[:200]}"
        for i, (sub, item) in enumerate(zip(pattern, actual, strict=True)):
            found = mismatch(sub, item, f"{path}[{i}]")
            if found:
                return found
        return None
    if pattern != actual or isinstance(pattern, bool) != isinstance(actual, bool):
        return f"{path}: expected {json.dumps(pattern)}, got {json.dumps(actual)[:200]}"
    return None


def unordered_assignment(patterns: list[Any], messages: list[Any]) -> list[int] | None:
    """For ``expect_unordered``: the index of the message each pattern takes, each message taken once (None when
    no order matches). Every assignment is tried (augmenting paths), so a pattern that matches several messages
    does not take the one another pattern needs."""
    matches = [[j for j, message in enumerate(messages) if mismatch(pattern, message) is None] for pattern in patterns]
    taken_by: dict[int, int] = {}  # message index → pattern index

    def place(i: int, seen: set[int]) -> bool:
        for j in matches[i]:
            if j not in seen:
                seen.add(j)
                if j not in taken_by or place(taken_by[j], seen):
                    taken_by[j] = i
                    return True
        return False

    if not all(place(i, set()) for i in range(len(patterns))):
        return None
    by_pattern = {i: j for j, i in taken_by.items()}
    return [by_pattern[i] for i in range(len(patterns))]


def implemented_requests(initialize_result: Any) -> list[str]:
    """The requests a guest answers, as its initialize result declares them (``implements``; translate when absent)."""
    declared = initialize_result.get("implements") if isinstance(initialize_result, dict) else None
    return declared if isinstance(declared, list) else ["translate"]


def not_applicable(vector: Mapping[str, Any], initialize_result: Any, request: str | None = None) -> str | None:
    """Why a transcript (run with ``request``, for one with ``by_request`` steps) does not apply to a guest with
    this initialize result (None when it does): ``requires`` names a request (or a list of them) the guest must
    implement, ``unless`` one it must not, ``requires_capability`` a capability it must declare true
    (bridge/PROTOCOL.md)."""
    implemented = implemented_requests(initialize_result)
    capabilities = initialize_result.get("capabilities") if isinstance(initialize_result, dict) else None
    if (wanted := vector.get("requires_capability")) and \
            not (isinstance(capabilities, dict) and capabilities.get(wanted) is True):
        return f"the guest does not declare capabilities.{wanted}"
    required = vector.get("requires") or []
    for name in [required] if isinstance(required, str) else required:
        if name not in implemented:
            return f"the guest does not implement {name}"
    if vector.get("unless") and vector["unless"] in implemented:
        return f"the guest implements {vector['unless']}"
    if request is not None and request not in implemented:
        return f"the guest does not implement {request}"
    if (runs_with := requests_of(vector)) and not set(runs_with) & set(implemented):
        return f"the guest implements none of {', '.join(runs_with)}"
    return None


def requests_to_run(vector: Mapping[str, Any], initialize_result: Any) -> list[str]:
    """The requests a transcript with ``by_request`` steps is run with against this guest: each it implements
    (none for a transcript without such steps)."""
    implemented = implemented_requests(initialize_result)
    return [name for name in requests_of(vector) if name in implemented]
