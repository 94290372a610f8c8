"""The flags of how a run is measured, and their values: its scores' bootstrap intervals (``--resamples``,
``--bootstrap``; compare's ``--bootstrap`` and ``--trials``, decide's ``--resamples``) and the harness's latency
calls (``--latency-*``). Only argparse at import time, as `mt_eval.cli.arguments`."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from mt_eval.cli.arguments import non_negative_int, whole_number


def add_scoring_arguments(group: argparse._ArgumentGroup) -> None:
    """--resamples and --bootstrap: how a run's intervals are drawn (a freeze holds them too)."""
    group.add_argument("--resamples", type=resample_count, default=1000, metavar="N",
                       help="bootstrap resamples (default 1000; 10 to 100000)")
    group.add_argument("--bootstrap", choices=("fast", "upstream"), default="fast",
                       help="how resamples are drawn: fast (default), or upstream, the upstream harness's draws "
                            "exactly (its intervals, for comparing with cards it produced; slower)")


def resample_count(text: str, *, none: bool = False) -> int:
    """An argparse type: bootstrap resamples, from `MIN_RESAMPLES` (a 95% interval from fewer means nothing) to
    `MAX_RESAMPLES` (more move no interval, and scoring takes hours); ``none``: 0 too, for no intervals at all."""
    from mt_eval.harness.metric_statistics import MAX_RESAMPLES, MIN_RESAMPLES

    if none and text.strip() == "0":
        return 0
    try:
        return whole_number(text, least=MIN_RESAMPLES, most=MAX_RESAMPLES)
    except argparse.ArgumentTypeError as exc:
        why = (f": more than {MAX_RESAMPLES} narrow no interval further, while scoring takes hours with nothing to show"
               if _above(text, MAX_RESAMPLES) else
               f"{' (or 0: no intervals)' if none else ''}: a 95% interval from fewer resamples means nothing")
        raise argparse.ArgumentTypeError(f"{exc}{why} (1000 is the default)") from None


def _above(text: str, most: int) -> bool:
    """Whether ``text`` is a whole number past ``most`` (which of a range's two bounds it missed)."""
    try:
        return int(text) > most
    except ValueError:
        return False


def trial_count(text: str) -> int:
    """An argparse type: approximate randomization trials, 1 to `MAX_TRIALS`."""
    from mt_eval.harness.paired_tests import MAX_TRIALS

    try:
        return whole_number(text, least=1, most=MAX_TRIALS)
    except argparse.ArgumentTypeError as exc:
        why = (f": more than {MAX_TRIALS} trials move no p-value shown (4 places), while the test takes hours with "
               "nothing to show" if _above(text, MAX_TRIALS) else "")
        raise argparse.ArgumentTypeError(f"{exc}{why} (10000 is the default)") from None


def resample_count_or_none(text: str) -> int:
    """`resample_count`, or 0 for no intervals at all."""
    return resample_count(text, none=True)


def add_latency_arguments(parser: argparse.ArgumentParser) -> None:
    """How the harness measures latency (``run`` and ``freeze init``; `mt_eval.harness.latency`)."""
    from mt_eval.harness.latency import (
        DEFAULT_REPETITIONS,
        DEFAULT_SAMPLE,
        DEFAULT_WARMUP,
        MAX_REPETITIONS,
        MAX_WARMUP,
    )

    latency = parser.add_argument_group(
        "latency (measured by the harness in extra one-entry calls before the scored run; never scored)")
    latency.add_argument("--latency-warmup", type=_extra_calls(0, MAX_WARMUP, DEFAULT_WARMUP), default=DEFAULT_WARMUP,
                         metavar="N", help=f"untimed warm-up calls after the cold call (default {DEFAULT_WARMUP}; "
                                           f"at most {MAX_WARMUP})")
    latency.add_argument("--latency-sample", type=non_negative_int, default=DEFAULT_SAMPLE, metavar="N",
                         help=f"scored entries timed one call each at concurrency 1 (default {DEFAULT_SAMPLE}; 0: "
                              "no latency calls at all, no latency figures)")
    latency.add_argument("--latency-repetitions", type=_extra_calls(1, MAX_REPETITIONS, DEFAULT_REPETITIONS),
                         default=DEFAULT_REPETITIONS, metavar="N",
                         help=f"times the sample is timed (default {DEFAULT_REPETITIONS}; at most {MAX_REPETITIONS})")


def _extra_calls(least: int, most: int, default: int) -> Callable[[str], int]:
    """An argparse type for a count of latency calls: ``least`` to ``most``, saying why past ``most``."""
    def count(text: str) -> int:
        try:
            return whole_number(text, least=least, most=most)
        except argparse.ArgumentTypeError as exc:
            why = (": latency calls are extra calls made one at a time before the run, so more only delay it (and the "
                   "card lists every timed call)" if _above(text, most) else "")
            raise argparse.ArgumentTypeError(f"{exc}{why} ({default} is the default)") from None

    return count
