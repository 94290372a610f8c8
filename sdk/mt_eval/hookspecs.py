"""Extension points. Hooks are synchronous and observe or register things; the async work stays in ``translate``.

Implement them in a loaded method plugin's entry module or in an extension module enabled explicitly
(`mt_eval.extensions.enable_extension`, ``mt-eval run --extension MODULE``), decorated with ``@hookimpl``.
There is deliberately no hook that provides methods: a method is a plugin directory whose method.json
declares its dependencies and class (see the README's Hooks section).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

hookspec = pluggy.HookspecMarker("mt_eval")
hookimpl = pluggy.HookimplMarker("mt_eval")


@hookspec
def register_metrics(register: Callable[..., None]) -> None:
    """Call ``register(name, scorer)`` for each metric; ``scorer(hypotheses, references)`` returns a score."""


@hookspec
def run_started(run_id: str, method_id: str, config: Any) -> None:
    """The harness is about to translate a corpus with a method under ``config`` (a RunConfig)."""


@hookspec
def entry_completed(run_id: str, result: Any) -> None:
    """One entry's result (a TranslationResult) was recorded."""


@hookspec
def run_finished(run_id: str, card: Any) -> None:
    """The run is over and ``card`` (the run card) has been written."""
