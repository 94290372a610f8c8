"""A served decision engine speaking the System One request format (``POST /v1/systemone``) as a decision method:
the SDK's adapter, `mt_eval.decisions.systemone.SystemOneMethod`, configured by the run (``--base-url``,
``--model``, and ``MT_EVAL_SYSTEMONE_API_KEY`` for the key)."""

from __future__ import annotations

from mt_eval.decisions.systemone import SystemOneMethod


class SystemOneEngine(SystemOneMethod):
    """Any engine that serves the System One format; which one is the run's choice."""
