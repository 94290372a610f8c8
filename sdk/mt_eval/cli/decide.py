"""``mt-eval decide run`` and ``mt-eval decide check``: typed decisions, scored.

The arguments of ``decide run`` become one `mt_eval.decisions.request.DecideRequest`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mt_eval.cli.arguments import (
    add_call_arguments,
    add_model_arguments,
    add_run_directory_arguments,
    add_seed_argument,
    add_start_timeout_argument,
    positive_float,
    whole_number,
)
from mt_eval.cli.measurement_arguments import resample_count_or_none
from mt_eval.cli.usage_errors import path_operand, plugin_operand

TYPE_CHECKING = False  # see mt_eval/__init__.py
if TYPE_CHECKING:
    from mt_eval.decisions.request import Calls, DecideRequest
    from mt_eval.harness.request import MethodSettings

PROG = "mt-eval decide"
SAVED = "\nmt-eval decide: interrupted; finished rows are saved."
INTERRUPTED = f"{SAVED} Continue with the same command and --resume."
EXPECTED = (ValueError, OSError)  # bad input, and a file that cannot be read or written: the message says which
SHOWS_GUEST_OUTPUT = True  # what a method in a bridge guest writes to stderr is shown (cli/guest_output.py)



DECIDE_EPILOG = """\
examples:
  mt-eval decide check --corpus examples/data/adequacy-decisions.jsonl
  mt-eval decide run --method examples/rules-grader --corpus examples/data/adequacy-decisions.jsonl
  mt-eval decide run --method examples/rules-grader --corpus examples/data/adequacy-decisions.jsonl \\
      --out runs/judge1 --resume --tolerance 0.01 --resamples 2000

exit status: run: 0 the decision card written (or, with --resume, complete already); 1 cannot run; 4 no question
answered (its card written, with the reasons); 75 the run directory is in use; 130 interrupted (continue with
--resume). check: 0 the scorer agrees with the closed forms; 1 it does not, or the corpus cannot be read
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Typed decisions: run a decision method over a corpus of noul, choice and score questions "
                          "with gold answers, and score it (accuracy, KL, Brier, ECE; expected-value error for score "
                          "questions) with case-level bootstrap intervals. The scorer is first checked on the "
                          "Uniform baseline against closed forms.")
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = DECIDE_EPILOG
    sub = parser.add_subparsers(dest="decide_command", metavar="COMMAND")
    parser.set_defaults(print_decide_help=parser.print_help)
    run = sub.add_parser("run", help="decide every row of a corpus with a method and write a decision card",
                         description="Decide every row of a typed-decision corpus with a method plugin, score the "
                                     "answers against the gold and write a decision card. Results are saved as they "
                                     "complete; an interrupted run continues with --resume.",
                         epilog=DECIDE_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    what = run.add_argument_group("what to run")
    what.add_argument("--method", type=plugin_operand, metavar="DIR", required=True,
                      help="decision method plugin directory")
    what.add_argument("--corpus", type=path_operand, metavar="FILE", required=True,
                      help="typed-decision corpus: .jsonl, a JSON array, or a JSON object with rows")
    what.add_argument("--isolate", action="store_true", help="run a Python method in its own process")
    add_run_directory_arguments(run.add_argument_group("where results go"), "runs/decisions/METHOD__CORPUS")
    how = run.add_argument_group("how to run")
    add_call_arguments(how, "row", "rows")
    add_start_timeout_argument(how, "a method run as a guest (a Node entry, a command, a Python entry with --isolate)")
    how.add_argument("--tolerance", type=sum_tolerance, default=1e-3, metavar="T",
                     help="how far from 1 a distribution may sum (default 0.001; below 1); never renormalised")
    scoring = run.add_argument_group("scoring")
    scoring_arguments(scoring)
    model = run.add_argument_group("passed to the method (its config)")
    add_model_arguments(model)
    model.add_argument("--source-lang", type=language_argument, metavar="CODE",
                       help="language of the sources, when it matters (e.g. eng)")
    model.add_argument("--target-lang", type=language_argument, metavar="CODE",
                       help="language of the candidates, when it matters (e.g. spa)")
    run.add_argument("--quiet", action="store_true", help="no progress or summary output")
    check = sub.add_parser("check", help="check the scorer on the Uniform baseline against closed forms",
                           description="Score the Uniform baseline (every option equally likely) on a corpus with "
                                       "the metric engine and compare every metric with its closed form. Exit 0 "
                                       "when they agree, 1 when they do not.",
                           epilog=DECIDE_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    check.add_argument("--corpus", type=path_operand, metavar="FILE", required=True,
                       help="typed-decision corpus with gold answers")
    check.add_argument("--ece-bins", type=ece_bins, default=10, metavar="B", help="ECE bins (default 10; at most "
                       f"{MAX_ECE_BINS})")
    check.add_argument("--json", action="store_true", help="print the check as JSON")


def scoring_arguments(group: argparse._ArgumentGroup, *, seed: bool = True) -> None:
    group.add_argument("--resamples", type=resample_count_or_none, default=1000, metavar="N",
                       help="bootstrap resamples (default 1000; 10 to 100000, or 0: no intervals)")
    if seed:
        add_seed_argument(group)
    group.add_argument("--ece-bins", type=ece_bins, default=10, metavar="B",
                       help=f"equal-width confidence bins of the ECE (default 10; at most {MAX_ECE_BINS})")


def language_argument(text: str) -> str:
    """An argparse type: a language code (`mt_eval.pairs.language_code`), refused before anything runs."""
    from mt_eval.pairs import PairError, language_code

    try:
        return language_code(text)
    except PairError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def sum_tolerance(text: str) -> float:
    """An argparse type: how far from 1 a distribution may sum, above 0 and below 1 (at 1, probabilities that are
    all 0 would be taken, and scored, as an answer)."""
    value = positive_float(text)
    if value >= 1:
        raise argparse.ArgumentTypeError(f"must be below 1, got {text}: at 1 or more, probabilities that are all 0 "
                                         "would pass as a distribution (the default is 0.001)")
    return value


MAX_ECE_BINS = 1000  # (more bins than that leave each nearly empty, and the bootstrap holds resamples × bins)


def ece_bins(text: str) -> int:
    """An argparse type: the ECE's bins, 1 to `MAX_ECE_BINS` (a billion allocated terabytes, after the method ran)."""
    return whole_number(text, least=1, most=MAX_ECE_BINS)


def run(args: argparse.Namespace) -> int:
    if args.decide_command is None:  # (`mt-eval decide` alone: what it can do, as `mt-eval corpus` says)
        args.print_decide_help()
        return 2
    if args.decide_command == "check":
        return _check(args)
    from mt_eval.decisions.session import decide_run
    from mt_eval.harness.run_rules import RunFinished

    try:
        card = decide_run(decide_request(args))
    except RunFinished as finished:  # (a --resume of a run complete already: every file left as it was)
        from mt_eval.cli.run import said_finished

        return said_finished("mt-eval decide run", finished)
    except KeyboardInterrupt as interrupted:
        if not args.force or getattr(interrupted, "message", None):
            raise
        from mt_eval.errors import InterruptedBefore  # ("the same command" would start over: --force)

        raise InterruptedBefore(f"{SAVED} Continue with --resume in place of --force{_again()}") from interrupted
    from mt_eval.control_chars import escaped_for_terminal

    print(escaped_for_terminal(f"decision card: {card}"))  # (a path's control characters escaped)
    return _nothing_answered(card)


def _again() -> str:
    """``: mt-eval decide run ... --resume``, the command that started this run with --force made --resume (empty
    when it was not started from the command line)."""
    import shlex

    words = sys.argv[1:] if sys.argv and sys.argv[0].endswith(("mt-eval", "__main__.py")) else []
    if words[:2] != ["decide", "run"]:
        return ""
    return ": " + shlex.join(["mt-eval", *[word for word in words if word != "--force"], "--resume"])


def _nothing_answered(card: Path) -> int:
    """`EXIT_FAILED` when no question was answered (every answer failed: the failures were said before,
    `mt_eval.decisions.summary.failure_lines`); else 0."""
    import msgspec

    from mt_eval.harness.outcome import EXIT_FAILED

    data = msgspec.json.decode(card.read_bytes())
    overall = (data.get("coverage") or {}).get("overall") or {}
    if overall.get("asked") and not overall.get("answered"):
        print(f"mt-eval decide: no question was answered ({overall['failed']} of {overall['asked']} failed)",
              file=sys.stderr)
        return EXIT_FAILED
    return 0


def decide_request(args: argparse.Namespace) -> DecideRequest:
    from pathlib import Path

    from mt_eval.cli.run import command_words
    from mt_eval.decisions.request import DecideRequest
    from mt_eval.harness.request import RunDirectory

    return DecideRequest(
        method=Path(args.method), corpus=Path(args.corpus), isolate=args.isolate,
        directory=RunDirectory(out=Path(args.out) if args.out else None, resume=args.resume, force=args.force,
                               wait_s=args.wait),
        calls=calls(args), settings=method_settings(args), source_lang=args.source_lang,
        target_lang=args.target_lang, resamples=args.resamples, seed=args.seed, ece_bins=args.ece_bins,
        quiet=args.quiet, command=command_words(("decide", "run")))


def calls(args: argparse.Namespace) -> Calls:
    """--batch-size, --concurrency, --timeout and --tolerance (decide run and grade)."""
    from mt_eval.decisions.request import Calls

    return Calls(batch_size=args.batch_size, concurrency=args.concurrency, timeout_s=args.timeout,
                 tolerance=args.tolerance)


def method_settings(args: argparse.Namespace) -> MethodSettings:
    """--model, --base-url, --temperature, --max-tokens and --param (decide run and grade)."""
    from mt_eval.cli.method_params import method_params
    from mt_eval.harness.request import MethodSettings

    return MethodSettings(model=args.model, base_url=args.base_url, temperature=args.temperature,
                          max_tokens=args.max_tokens, params=method_params(args.param))


def _check(args: argparse.Namespace) -> int:
    import msgspec

    from mt_eval.cli.json_output import json_text
    from mt_eval.decisions.corpus import DecisionCorpusError, read_decision_corpus
    from mt_eval.decisions.selfcheck import describe_self_check, run_self_check

    try:
        corpus = read_decision_corpus(args.corpus)  # DecisionCorpusError: every problem, exit status 1
    except DecisionCorpusError as exc:
        if args.json:  # what a reader of the JSON needs to know too (the lines on stderr as without it)
            unread = {"passed": False, "corpus": str(args.corpus), "readable": False,
                      "problems": [msgspec.to_builtins(p) for p in exc.problems]}
            sys.stdout.write(json_text(unread))  # (U+202E of the corpus's name as \u202e)
        raise
    check = run_self_check(corpus, args.ece_bins)
    if args.json:  # (the corpus named and said readable, as the report of one that cannot be read says it)
        report = {"passed": check.passed, "corpus": str(args.corpus), "readable": True, **msgspec.to_builtins(check)}
        sys.stdout.write(json_text(report))
    else:
        print(describe_self_check(check))
    return 0 if check.passed else 1
