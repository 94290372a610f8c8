"""Human labels for judging a grader: how its distributions compare with people's grades of the same entries.

Labels come from a grading card of people's grades (``mt-eval grade import``), or from a JSONL file with one
line per entry: ``{"id": ENTRY_ID, "label": LEVEL}`` or ``{"id": ENTRY_ID, "distribution": {LEVEL: p, ...}}``.
The grader is scored on the entries both graded with the decision metrics (`mt_eval.decisions.metrics`):
accuracy, KL, Brier, ECE and the expected-value error.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import msgspec

from mt_eval.decisions import grading_card as gc
from mt_eval.decisions.blinding import GradingError
from mt_eval.decisions.corpus import gold_distribution
from mt_eval.decisions.json_lines import read_line
from mt_eval.decisions.metrics import Judged, score_decisions
from mt_eval.decisions.rubric import Rubric
from mt_eval.json_input import not_utf8


def read_labels(path: str | Path, rubric: Rubric, run_content_sha256: str | None = None
                ) -> tuple[dict[str, list[float]], gc.LabelSource]:
    """Entry id → the people's distribution over the rubric's levels, and where the labels came from. A grading
    card must be people's (`mt-eval grade import`), of the run ``run_content_sha256`` names when given: another
    run's entries carry the same ids but other translations."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise GradingError(f"cannot read the labels {path}: {exc.strerror or exc}") from exc
    source = gc.LabelSource(path=str(path), sha256=hashlib.sha256(raw).hexdigest(), kind="labels")
    question = rubric.question()
    labels: dict[str, list[float]] = {}
    problems: list[str] = []
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:  # (read as U+FFFD, an id would name no entry, its label lost unsaid)
        raise GradingError(f"the labels cannot be used:\n  {path}: {not_utf8(raw, exc)}: save the file as UTF-8"
                           ) from None
    try:
        whole = json.loads(text)
    except (ValueError, RecursionError):
        whole = None
    if isinstance(whole, dict) and str(whole.get("card_version", "")).startswith("grading-card/"):
        try:
            card = msgspec.convert(whole, gc.GradingCard)
        except msgspec.ValidationError as exc:
            raise GradingError(f"{path} looks like a grading card but cannot be read as one: {exc}") from exc
        from mt_eval.harness.verify import canonical_sha256

        if canonical_sha256(whole) != card.content_sha256:  # (as a run card is checked: the grades are certified)
            raise GradingError(f"{path} does not verify: it was changed after `mt-eval grade import` sealed it (its "
                               "content does not hash to its content_sha256); give the grading card as it wrote it")
        if card.grader is not None or card.human_graders is None:
            who = f"the grader method {card.grader.method_id}" if card.grader is not None else "no people's sheets"
            raise GradingError(f"{path} holds the grades of {who}, not people's: give the grading card "
                               "`mt-eval grade import` wrote from their sheets")
        if run_content_sha256 is not None and card.run.card_content_sha256 != run_content_sha256:
            raise GradingError(f"{path} grades run {card.run.run_id}, not the run graded here: its entries have the "
                               "same ids but other translations; give the people's grading card of this run")
        theirs = [level.name for level in card.rubric.levels]
        if theirs != question.option_names:
            raise GradingError(f"{path} grades on other levels ({', '.join(theirs)}) than the rubric "
                               f"({', '.join(question.option_names)})")
        source.kind = "grading-card"
        for entry in card.entries:
            if entry.distribution is not None:
                labels[entry.entry_id] = [entry.distribution[name] for name in question.option_names]
        return labels, source
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        item, unread = read_line(line, where, 'write each label as {"id": ENTRY_ID, "label": LEVEL}')
        if unread is not None:
            problems.append(unread)
            continue
        if not isinstance(item, dict) or not _entry_id(item.get("id")):
            problems.append(f'{where}: expected {{"id": ENTRY_ID, "label": LEVEL}} or {{"id", "distribution"}}, '
                            "ENTRY_ID an entry's id as the corpus writes it (a string or an integer)")
            continue
        item["id"] = str(item["id"])  # (an integer id is the corpus's, as grading compares ids: as text)
        given = [key for key in ("label", "distribution") if key in item]
        if len(given) != 1:  # (both: one would be dropped unsaid; neither: a key misspelled, say which)
            keys = ", ".join(json.dumps(key, ensure_ascii=False) for key in item)
            said = 'both "label" and "distribution": give one of them' if given else \
                f'no "label" or "distribution" (the line has {keys}): give the level as "label", or people\'s ' \
                'shares of the levels as "distribution"'
            problems.append(f'{where} (entry "{item["id"]}"): {said}')
            continue
        distribution, problem = gold_distribution(question, item[given[0]])
        if problem is not None:
            problems.append(f'{where} (entry "{item["id"]}", question "{rubric.name}"): {problem}')
        elif item["id"] in labels:
            problems.append(f'{where}: entry "{item["id"]}" is labelled twice')
        else:
            assert distribution is not None
            labels[item["id"]] = distribution
    if problems:
        raise GradingError("the labels cannot be used:\n  " + "\n  ".join(problems))
    return labels, source


def _entry_id(value: Any) -> bool:
    """Whether a label's id can name an entry: a string, or an integer as corpora may write ids."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def usable_labels(path: str | Path, rubric: Rubric, run_content_sha256: str, graded: set[str]) -> list[str]:
    """Check the labels before any grading (`read_labels`): at least one must be of an entry to be graded
    (``graded``), or the grading would be done for nothing. Returns what to warn of: labels of other entries."""
    labels, _ = read_labels(path, rubric, run_content_sha256)
    usable = labels.keys() & graded
    if not usable:
        raise GradingError(f"no entry to grade has a label in {path} ({len(labels)} labels, {len(graded)} entries to "
                           "grade): are they labels of this run's entries? Give the labels of this run, or leave "
                           "--labels out")
    others = sorted(labels.keys() - graded)
    return [f"{len(others)} of the {len(labels)} labels in {path} are of entries this grading does not grade (e.g. "
            f"{json.dumps(others[0], ensure_ascii=False)}): they are left out"] if others else []


def quality_against(path: str | Path, entries: list[gc.GradedEntry], rubric: Rubric, bins: int, resamples: int,
                    seed: int, run_content_sha256: str | None = None) -> gc.Quality | None:
    """The grader's accuracy, KL, Brier, ECE and expected-value error against the labels in ``path`` (of the run
    ``run_content_sha256`` names, when they are a grading card); None when the grader graded none of the labelled
    entries (its calls failed): the grading card is still written."""
    labels, source = read_labels(path, rubric, run_content_sha256)
    names = [level.name for level in rubric.levels]
    values = [level.value for level in rubric.levels]
    graded = [(e.entry_id, e.distribution) for e in entries if e.distribution is not None and e.entry_id in labels]
    judged = [Judged(case=i, kind="score", predicted=[distribution[name] for name in names], gold=labels[entry_id],
                     values=values) for i, (entry_id, distribution) in enumerate(graded)]
    if not judged:
        return None
    metrics = score_decisions(judged, len(judged), bins=bins, resamples=resamples, seed=seed)
    labelled = sum(1 for e in entries if e.item is not None and e.entry_id in labels)
    return gc.Quality(labels=source, entries=len(judged), metrics=metrics.groups["score"], ece_bins=bins,
                      labelled=labelled)
