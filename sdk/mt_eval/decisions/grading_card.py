"""The grading card: a translation run graded on a rubric, blind, by a grader method or by people.

It names the run it grades (id, card hash, corpus hash), the grader (its method facts, or the human sheets),
the rubric (with its hash), the shuffle seed and what was withheld from the grader; then each entry's expected
score and distribution, the run-level mean with its interval, and — when human labels are given — the grader's
quality against them (accuracy, KL, Brier, ECE, expected-value error).
"""

from __future__ import annotations

from typing import Any

import msgspec

from mt_eval.decisions.metrics import GroupMetrics, MetricValue
from mt_eval.decisions.rubric import Rubric
from mt_eval.harness.runcard import MethodFacts

GRADING_CARD_VERSION = "grading-card/1"


class GradedRun(msgspec.Struct, kw_only=True):
    run_id: str
    card_path: str
    card_file_sha256: str
    card_content_sha256: str
    corpus_name: str
    corpus_sha256: str
    entries: int


class Sheet(msgspec.Struct, kw_only=True):
    path: str
    sha256: str
    answered: int


class HumanGraders(msgspec.Struct, kw_only=True):
    """Grades from sheets filled in by people (``mt-eval grade import``); several sheets average per item."""

    kind: str = "human"
    sheets: list[Sheet]


class Blinding(msgspec.Struct, kw_only=True):
    seed: int
    sent: list[str]
    withheld: list[str]
    with_reference: bool
    identity_strings_checked: int


class GradedEntry(msgspec.Struct, kw_only=True):
    """One entry's grade: its item id in the shuffled order, the distribution over the rubric's levels, the
    expected score and the most probable level; or why it has none."""

    entry_id: str
    item: str | None
    expected: float | None = None
    distribution: dict[str, float] | None = None
    level: str | None = None
    error: str | None = None


UNANSWERED = "no grader answered it"  # a people's-sheet item left empty on every sheet: not a failure


class GradeSummary(msgspec.Struct, kw_only=True):
    graded: int
    failed: int  # the grader failed on them
    not_graded: int  # no translation (it failed, or the method abstained): never given to a grader
    unanswered: int = 0  # people's sheets: items no grader answered (yet)
    mean_expected: MetricValue
    levels: dict[str, int]
    bootstrap_resamples: int
    bootstrap_seed: int


class LabelSource(msgspec.Struct, kw_only=True):
    path: str
    sha256: str
    kind: str  # "grading-card" (people's grades) or "labels" (a JSONL file of entry id and label)


class Quality(msgspec.Struct, kw_only=True):
    """How the grader's distributions compare with human labels on the entries both graded."""

    labels: LabelSource
    entries: int
    metrics: GroupMetrics
    ece_bins: int
    # the labelled entries sent to the grader: more than ``entries`` when it failed on some, which are left out
    labelled: int | None = None


class GradingCard(msgspec.Struct, kw_only=True):
    card_version: str = GRADING_CARD_VERSION
    grading_id: str
    started_at: str
    finished_at: str
    sdk_version: str
    run: GradedRun
    grader: MethodFacts | None = None  # a grader method, or
    human_graders: HumanGraders | None = None  # people, through sheets
    grader_config: dict[str, Any] | None = None
    rubric: Rubric
    rubric_sha256: str
    question: str
    blinding: Blinding
    tolerance: float
    entries: list[GradedEntry]
    summary: GradeSummary
    quality: Quality | None = None
    content_sha256: str = ""
