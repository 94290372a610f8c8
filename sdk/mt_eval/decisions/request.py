"""What ``mt-eval decide run`` and ``mt-eval grade`` were asked to do, typed and immutable.

The command line (`mt_eval.cli.decide`, `mt_eval.cli.grade`) builds them; `mt_eval.decisions.session`,
`mt_eval.decisions.grading` and `mt_eval.decisions.sheets` take only these.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import msgspec

from mt_eval.harness.request import MethodSettings, RunDirectory


class Calls(msgspec.Struct, frozen=True, kw_only=True):
    """How the decision method is called: rows (or items) per call, calls in flight, seconds per row, and how far
    from 1 a distribution may sum."""

    batch_size: int = 8
    concurrency: int = 8
    timeout_s: float = 120.0
    tolerance: float = 1e-3


class DecideRequest(msgspec.Struct, frozen=True, kw_only=True):
    """One decision run (``mt-eval decide run``)."""

    method: Path
    corpus: Path
    isolate: bool = False
    directory: RunDirectory = msgspec.field(default_factory=RunDirectory)  # out None: runs/decisions/METHOD__CORPUS
    calls: Calls = msgspec.field(default_factory=Calls)
    settings: MethodSettings = msgspec.field(default_factory=MethodSettings)
    source_lang: str | None = None
    target_lang: str | None = None
    resamples: int = 1000
    seed: int = 12345
    ece_bins: int = 10
    quiet: bool = False
    command: tuple[str, ...] = ("decide", "run")  # the words after mt-eval that started it: the lock's holder


class GradeRequest(msgspec.Struct, frozen=True, kw_only=True):
    """Grading one run card blind (``mt-eval grade``, ``grade export``, ``grade import``)."""

    card: Path
    grader: Path | None = None  # grade: the decision method that grades
    rubric: Path | None = None  # None: 0-4 adequacy
    seed: int | None = None  # the shuffle seed; None: a fresh one
    with_reference: bool = True
    corpus: Path | None = None  # the run's corpus, if it moved
    labels: Path | None = None
    out: Path | None = None  # None: RUN_DIR/grading/GRADER
    format: Literal["csv", "jsonl", "both"] = "both"  # export
    force: bool = False  # export: replace the sheets and key of an earlier export in ``out``
    key: Path | None = None  # import
    sheets: tuple[Path, ...] = ()  # import
    calls: Calls = msgspec.field(default_factory=Calls)
    isolate: bool = False
    settings: MethodSettings = msgspec.field(default_factory=MethodSettings)
    resamples: int = 1000
    ece_bins: int = 10
    quiet: bool = False
