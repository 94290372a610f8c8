"""``mt-eval compare A.json B.json``: paired significance tests between two runs of the same corpus."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from mt_eval.cli.arguments import add_corpus_arguments, card_argument, seed_number
from mt_eval.cli.measurement_arguments import resample_count, trial_count

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    from mt_eval.harness.compare import CompareError

EXPECTED = (ValueError,)


def add_arguments(compare: argparse.ArgumentParser) -> None:
    compare.description = ("Compare two runs on the same corpus with sacrebleu's paired bootstrap resampling and "
                           "paired approximate randomization. A is the baseline. Each metric's row says which run "
                           "scores better (\"B better (lower is better)\" for a TER that B lowers; \"no difference\"), "
                           "then whether the difference is significant at 0.05 (--json: each row's higher_is_better).")
    compare.formatter_class = argparse.RawDescriptionHelpFormatter
    compare.epilog = ("examples (after nox -s demo, which writes runs/demo and runs/demo-rules):\n"
                      "  mt-eval compare runs/demo/card.json runs/demo-rules/card.json\n"
                      "  mt-eval compare runs/demo/card.json runs/demo-rules/card.json --json --trials 2000\n"
                      "\nexit status: 0 the cards compared (whether or not they differ significantly); 1 they cannot "
                      "be compared (one\ncannot be read or does not verify, is a failed run, or they differ in "
                      "corpus, pair, selection, covariates or\nmetrics), or standard output cannot be written; 2 usage "
                      "(an unknown --allow-diff, --columns without --corpus,\nmore than two cards); 130 interrupted; "
                      "141 the reader of standard output went away")
    compare.add_argument("baseline", type=card_argument, metavar="A.json", help="run card of the baseline")
    compare.add_argument("candidate", type=card_argument, metavar="B.json",
                         help="run card of the system compared with it")
    compare.set_defaults(surplus_operands="compare takes exactly two run cards, A.json and B.json; to compare "
                                          "more runs, compare each with the baseline in turn (mt-eval compare A.json "
                                          "C.json), or publish their cards to the leaderboard (mt-eval publish CARD "
                                          "...; mt-eval leaderboard)")
    add_corpus_arguments(compare, selection=False, title="the corpus (default: the one both cards record, read "
                                                         "as they record)")
    compare.add_argument("--bootstrap", type=resample_count, default=1000, metavar="N",
                         help="bootstrap resamples (1000; 10 to 100000)")
    compare.add_argument("--trials", type=trial_count, default=10000, metavar="N",
                         help="randomization trials (10000; at most 1000000)")
    compare.add_argument("--seed", type=seed_number, default=12345, help="seed for both tests")
    compare.add_argument("--allow-diff", action="append", default=[], metavar="NAME",
                         help="accept that this covariate differs between the cards (repeatable): model, "
                              "temperature, tool_permissions, environment, retry_budget, max_tokens, seed, batch_size, "
                              "concurrency, timeout_s, retries_per_entry, params (the --param values the method got); "
                              "hardware compares latencies across hardware labels, latency_plan latencies measured "
                              "with different --latency-warmup, --latency-sample or --latency-repetitions")
    compare.add_argument("--json", action="store_true",
                         help="print JSON (also when the cards are not compared: why, with exit status 1)")
    compare.add_argument("--quiet", action="store_true", help="no progress lines on stderr (each step as it starts, "
                                                               "with the time so far)")
    compare.add_argument("--extension", action="append", default=[], metavar="MODULE",
                         help="enable an extension whose metrics the cards carry, to verify them (repeatable)")



def _stages(quiet: bool) -> Callable[[str], None]:
    """What prints each step of a comparison to stderr as it starts, with the time since the first."""
    import sys
    import time

    from mt_eval.control_chars import escaped_for_terminal
    from mt_eval.durations import format_duration

    started = time.monotonic()

    def stage(what: str) -> None:  # (``what`` names the cards: their control characters are shown escaped)
        if not quiet:
            elapsed = time.monotonic() - started
            print(f"mt-eval compare [{f'{elapsed:.1f} s' if elapsed < 60 else format_duration(elapsed)}]: "
                  f"{escaped_for_terminal(what)}", file=sys.stderr, flush=True)

    return stage


def run(args: argparse.Namespace) -> int:
    import sys
    from pathlib import Path

    from mt_eval.cli.arguments import corpus_instead
    from mt_eval.errors import UsageError
    from mt_eval.harness.compare import CompareError, compare_cards
    from mt_eval.harness.compare_checks import check_allowed

    try:
        corpus = corpus_instead(args)
        allowed = check_allowed(args.allow_diff)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    try:
        report = compare_cards(Path(args.baseline), Path(args.candidate), corpus=corpus,
                               bootstrap=args.bootstrap, trials=args.trials, seed=args.seed, extensions=args.extension,
                               allow_diff=allowed, stage=_stages(args.quiet))
    except CompareError as refused:
        if args.json:  # a reader of the JSON hears of the refusal too (stderr says it, the exit status is 1)
            from mt_eval.cli.json_output import json_text

            sys.stdout.write(json_text(_refusal(Path(args.baseline), Path(args.candidate), refused)))
        raise
    if args.json:
        from mt_eval.cli.json_output import json_text

        sys.stdout.write(json_text(report))  # (a card's name that is not UTF-8 written with its escapes)
        return 0
    from mt_eval.control_chars import escaped_for_terminal
    from mt_eval.harness.compare_report import render

    print(escaped_for_terminal(render(report)))  # (the cards' paths and values: none acts on the terminal)
    return 0


def _refusal(baseline: Path, candidate: Path, refused: CompareError) -> dict[str, Any]:
    """What ``--json`` prints when the cards are not compared: the cards, ``"compared": false`` and the reason, with
    the check of a card that does not verify as ``mt-eval verify --json`` prints it."""
    from mt_eval.harness.verify import as_json

    shown: dict[str, Any] = {"a": str(baseline), "b": str(candidate), "compared": False, "reason": refused.one_line()}
    if refused.verification is not None:
        shown["verification"] = as_json(refused.verification)
    return shown
