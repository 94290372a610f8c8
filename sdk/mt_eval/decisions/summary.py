"""Decision and grading cards in words: what ``mt-eval decide run`` and ``mt-eval grade`` print when they finish."""

from __future__ import annotations

from typing import TextIO

from mt_eval.control_chars import escaped_for_terminal
from mt_eval.decisions.card import DecisionCard
from mt_eval.decisions.grading_card import UNANSWERED, GradingCard
from mt_eval.decisions.metrics import MetricValue

SHOWN_FAILURES = 5  # distinct failures the summary shows (the card lists all)
SHOWN_GRADING_FAILURES = 3  # distinct errors a grading shows (the grading card lists every item)
_METRICS = (("accuracy", "accuracy"), ("kl", "KL"), ("brier", "Brier"), ("ece", "ECE"), ("ev_mae", "EV error"))


def metric_text(metric: MetricValue | None) -> str:
    if metric is None or metric.value is None:
        return "-"
    if metric.ci_low is None or metric.ci_high is None:
        return f"{metric.value:.3f}"
    return f"{metric.value:.3f} [{metric.ci_low:.3f}, {metric.ci_high:.3f}]"


def summary_lines(card: DecisionCard) -> list[str]:
    lines = [f"{card.method.method_id} on {card.corpus.name}: {card.corpus.rows} rows, {card.errors} failed row"
             f"{'s' if card.errors != 1 else ''}"
             + (f" ({card.rows_over_limit} over the input limit of {card.settings.max_input_chars:,} characters)"
                if card.rows_over_limit and card.settings.max_input_chars else "")]
    coverage = card.coverage.get("overall")
    if coverage is not None:
        lines.append(f"  questions: {coverage.asked} asked, {coverage.answered} answered, {coverage.failed} failed, "
                     f"{coverage.scored} scored against gold")
    if card.metrics is None:
        lines.append("  not scored: " + ("no answered question has gold" if card.results else "no results"))
        return lines
    metrics = card.metrics
    lines.append(f"  {'group':<8} {'n':>6}  " + "  ".join(f"{label:<22}" for _, label in _METRICS))
    for name, group in metrics.groups.items():
        cells = [metric_text(getattr(group, attribute)) for attribute, _ in _METRICS]
        lines.append(f"  {name:<8} {group.questions:>6}  " + "  ".join(f"{cell:<22}" for cell in cells))
    intervals = (f"95% intervals: {metrics.bootstrap_resamples} case-level bootstrap resamples (seed "
                 f"{metrics.bootstrap_seed})" if metrics.bootstrap_resamples else "no intervals (--resamples 0)")
    lines.append(f"  {intervals}; ECE over {metrics.ece_bins} bins; every number from run {card.run_id}")
    return lines


def failure_lines(card: DecisionCard) -> list[str]:
    """The distinct failures of a decision run (the first few; the card lists every one): said on standard error,
    as ``mt-eval run`` and ``mt-eval grade`` say theirs, apart from the result."""
    if not card.failures:
        return []
    total = sum(f.count for f in card.failures)
    lines = [f"{len(card.failures)} distinct failure{'s' if len(card.failures) > 1 else ''} ({total} in all):"]
    for failure in card.failures[:SHOWN_FAILURES]:  # (a line break in a message or an id: written as \\n)
        where = f'row "{failure.example_id}"' + (f', question "{failure.question}"' if failure.question else "")
        lines.append(f"  failed ×{failure.count}: {escaped_for_terminal(failure.message, one_line=True)} "
                     f"(e.g. {escaped_for_terminal(where, one_line=True)})")
    if len(card.failures) > SHOWN_FAILURES:
        rest = card.failures[SHOWN_FAILURES:]
        lines.append(f"  … and {len(rest)} more distinct failure{'s' if len(rest) > 1 else ''} "
                     f"({sum(f.count for f in rest)} in all): the card's \"failures\" lists every one")
    return lines


def print_summary(card: DecisionCard, stdout: TextIO, stderr: TextIO, *, quiet: bool = False) -> None:
    """The result on ``stdout`` (unless ``quiet``), the failures on ``stderr`` (``quiet`` or not); what they show
    of the method, the corpus and the method's error messages with control and invisible characters escaped."""
    if not quiet:
        stdout.write(escaped_for_terminal("\n".join(summary_lines(card))) + "\n")
    if failures := failure_lines(card):
        stderr.write(escaped_for_terminal("\n".join(failures)) + "\n")


def grading_lines(card: GradingCard) -> list[str]:
    """A grading card in words."""
    who = card.grader.method_id if card.grader is not None else (
        f"{len(card.human_graders.sheets)} human sheet(s)" if card.human_graders is not None else "?")
    summary = card.summary
    lines = [f"graded run {card.run.run_id} ({card.run.corpus_name}) on {card.rubric.name} "
             f"({card.rubric.levels[0].name}–{card.rubric.levels[-1].name}) by {who}, blind (shuffle seed "
             f"{card.blinding.seed})",
             f"  {summary.graded} graded, {summary.failed} failed, {summary.not_graded} not graded (not "
             "translated)" + (f", {summary.unanswered} not answered on any sheet" if card.human_graders is not None
                          else "")]
    if not summary.graded:
        lines.append(f"  nothing was graded: no mean expected {card.rubric.name}, no most probable level")
        return lines
    interval = (f"95% interval, {summary.bootstrap_resamples} resamples of entries" if summary.bootstrap_resamples
                else "no interval: --resamples 0")
    lines += [f"  mean expected {card.rubric.name}: {metric_text(summary.mean_expected)} ({interval})",
              "  most probable level: " + ", ".join(f"{label} ×{count}" for label, count in summary.levels.items())]
    if card.quality is not None:
        q = card.quality
        left_out = (q.labelled or q.entries) - q.entries
        counted = (f"{q.entries} of {q.labelled} human labels ({q.labels.path}; {left_out} labelled "
                   f"entr{'ies' if left_out > 1 else 'y'} the grader failed on left out)" if left_out > 0
                   else f"{q.entries} human labels ({q.labels.path})")
        lines.append(f"  against {counted}: " + ", ".join(
            f"{label} {metric_text(getattr(q.metrics, attribute))}" for attribute, label in _METRICS))
    return lines


def grading_failure_lines(card: GradingCard) -> list[str]:
    """The distinct errors of the items the grader failed on (the first few; the card lists every item), each with
    its count and an example item: said on standard error, as ``mt-eval run`` says its failures (in its words),
    apart from the result."""
    from mt_eval.harness.outcome import distinct_count, distinct_failures, failure_lines

    failed = [e for e in card.entries if e.error and e.item is not None and e.error != UNANSWERED]
    if not failed:
        return []
    failures = distinct_failures((str(entry.item), str(entry.error)) for entry in failed)
    sent = sum(entry.item is not None for entry in card.entries)
    header = f"grading failed on {len(failed)} of {sent} items ({distinct_count(failures)}):"
    return [header, *failure_lines(failures, shown=SHOWN_GRADING_FAILURES, entries="items", card="the grading card")]
