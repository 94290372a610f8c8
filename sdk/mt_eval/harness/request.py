"""`RunRequest`: everything ``mt-eval run`` was asked to do, typed and immutable.

The command line (`mt_eval.cli.run`) builds one; the harness (`mt_eval.harness.session.run_evaluation`) takes
only that — no argparse namespace crosses into the harness. ``mt-eval freeze init`` builds the same request to
freeze what a run would use.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import msgspec

from mt_eval.champollion.evaluate import ChampollionSelection
from mt_eval.corpus.reader import CorpusSpec
from mt_eval.corpus.selection import SelectionRequest
from mt_eval.harness.execution import RunSettings
from mt_eval.harness.latency import LatencyPlan
from mt_eval.harness.outcome import MaxErrors


class MethodSettings(msgspec.Struct, frozen=True, kw_only=True):
    """What the method is given in its RunConfig besides the pair and the call settings (``--model``, …)."""

    model: str | None = None
    base_url: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    params: dict[str, Any] = msgspec.field(default_factory=dict)


class Fairness(msgspec.Struct, frozen=True, kw_only=True):
    """How the run is confined and checked (the README's *Fair by construction*)."""

    sandbox: bool = False
    official: bool = False
    sandbox_ro: tuple[str, ...] = ()
    gateway_policy: Path | None = None
    substitution_sample: int = 5
    contamination_check: bool = True


class RunDirectory(msgspec.Struct, frozen=True, kw_only=True):
    """Where the run lives and what to do with what is there (`mt_eval.harness.run_directory`)."""

    out: Path | None = None  # None: runs/METHOD__CORPUS
    resume: bool = False
    force: bool = False
    wait_s: float | None = None  # None: refuse at once when another process holds it


class RunRequest(msgspec.Struct, frozen=True, kw_only=True):
    """One evaluation to run (or resume): the method, the corpus and how to read and select it, the pair, what
    the method is given, how it is called, what the run is held to, and where its results go."""

    method: Path
    corpus: CorpusSpec
    selection: SelectionRequest = msgspec.field(default_factory=SelectionRequest)
    method_card: Path | None = None  # --method-card: used instead of the plugin's method_card.json
    pair: str | None = None  # None: the corpus's, else the method's first supported pair
    champollion: ChampollionSelection | None = None  # the method and settings came from a champollion pair
    settings: MethodSettings = msgspec.field(default_factory=MethodSettings)
    seed: int = 12345
    calls: RunSettings = msgspec.field(default_factory=RunSettings)
    max_errors: MaxErrors = msgspec.field(default_factory=MaxErrors)
    resamples: int = 1000
    bootstrap: Literal["fast", "upstream"] = "fast"  # how resamples are drawn (upstream: the upstream harness's draws)
    embed_results: Literal["auto", "always", "never"] = "auto"  # the card lists its results, or references the log
    isolate: bool = False
    fairness: Fairness = msgspec.field(default_factory=Fairness)
    latency: LatencyPlan = msgspec.field(default_factory=LatencyPlan)
    policy: Path | None = None  # the headline gate's policy file (None: the shipped one)
    freeze: Path | None = None  # a freeze manifest the run must match
    extensions: tuple[str, ...] = ()
    directory: RunDirectory = msgspec.field(default_factory=RunDirectory)
    quiet: bool = False
    command: tuple[str, ...] = ("run",)  # the words after mt-eval that started it: the lock's holder, resume hint

    def command_line(self, drop: tuple[str, ...] = (), add: tuple[str, ...] = ()) -> str:
        """How this run was started (``mt-eval run --method ...``), without the ``drop`` options and with ``add``."""
        import shlex

        return shlex.join(["mt-eval", *[w for w in self.command if w not in drop], *add])
