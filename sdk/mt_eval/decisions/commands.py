"""Arguments of ``mt-eval decide`` (run, check) and ``mt-eval grade``; the work is imported when a command runs."""

from __future__ import annotations

import argparse
import sys

from mt_eval.harness.commands import (
    add_call_arguments,
    add_model_arguments,
    add_run_directory_arguments,
    positive_float,
    positive_int,
)

DECIDE_EPILOG = """\
examples:
  mt-eval decide check --corpus examples/data/adequacy-decisions.jsonl
  mt-eval decide run --method examples/rules-grader --corpus examples/data/adequacy-decisions.jsonl
  mt-eval decide run --method examples/rules-grader --corpus examples/data/adequacy-decisions.jsonl \\
      --out runs/judge1 --resume --tolerance 0.01 --resamples 2000
"""


def add_decide_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Typed decisions: run a decision method over a corpus of noul, choice and score questions "
                          "with gold answers, and score it (accuracy, KL, Brier, ECE; expected-value error for score "
                          "questions) with case-level bootstrap intervals. The scorer is first checked on the "
                          "Uniform baseline against closed forms.")
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = DECIDE_EPILOG
    sub = parser.add_subparsers(dest="decide_command", metavar="COMMAND", required=True)
    run = sub.add_parser("run", help="decide every row of a corpus with a method and write a decision card",
                         description="Decide every row of a typed-decision corpus with a method plugin, score the "
                                     "answers against the gold and write a decision card. Results are saved as they "
                                     "complete; an interrupted run continues with --resume.",
                         epilog=DECIDE_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    what = run.add_argument_group("what to run")
    what.add_argument("--method", metavar="DIR", required=True, help="decision method plugin directory")
    what.add_argument("--corpus", metavar="FILE", required=True,
                      help="typed-decision corpus: .jsonl, a JSON array, or a JSON object with rows")
    what.add_argument("--isolate", action="store_true", help="run a Python method in its own process")
    add_run_directory_arguments(run.add_argument_group("where results go"), "runs/decisions/METHOD__CORPUS")
    how = run.add_argument_group("how to run")
    add_call_arguments(how, "row", "rows")
    how.add_argument("--tolerance", type=positive_float, default=1e-3, metavar="T",
                     help="how far from 1 a distribution may sum (default 0.001); never renormalised")
    scoring = run.add_argument_group("scoring")
    _scoring_arguments(scoring)
    model = run.add_argument_group("passed to the method (its config)")
    add_model_arguments(model)
    model.add_argument("--source-lang", metavar="CODE", help="language of the sources, when it matters")
    model.add_argument("--target-lang", metavar="CODE", help="language of the candidates, when it matters")
    run.add_argument("--quiet", action="store_true", help="no progress or summary output")
    check = sub.add_parser("check", help="check the scorer on the Uniform baseline against closed forms",
                           description="Score the Uniform baseline (every option equally likely) on a corpus with "
                                       "the metric engine and compare every metric with its closed form. Exit 0 "
                                       "when they agree, 1 when they do not.",
                           epilog=DECIDE_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    check.add_argument("--corpus", metavar="FILE", required=True, help="typed-decision corpus with gold answers")
    check.add_argument("--ece-bins", type=positive_int, default=10, metavar="B", help="ECE bins (default 10)")
    check.add_argument("--json", action="store_true", help="print the check as JSON")


def _scoring_arguments(group: argparse._ArgumentGroup, *, seed: bool = True) -> None:
    group.add_argument("--resamples", type=int, default=1000, metavar="N",
                       help="bootstrap resamples (default 1000; 0: no intervals)")
    if seed:
        group.add_argument("--seed", type=int, default=12345, help="bootstrap seed, also passed to the method")
    group.add_argument("--ece-bins", type=positive_int, default=10, metavar="B",
                       help="equal-width confidence bins of the ECE (default 10)")


def decide_command(args: argparse.Namespace) -> int:
    from mt_eval.decisions.corpus import DecisionCorpusError
    from mt_eval.harness.run_directory import RunError
    from mt_eval.locks import Busy
    from mt_eval.problems import ProblemsError

    try:
        if args.decide_command == "check":
            return _check(args)
        from mt_eval.decisions.session import decide_run

        card = decide_run(args)
    except DecisionCorpusError as exc:
        print(f"mt-eval decide: {exc}", file=sys.stderr)
        return 1
    except Busy as exc:
        print(f"mt-eval decide: {exc}. Wait for it to finish (or stop it), or give --wait to wait; a run directory "
              "is used by one process at a time", file=sys.stderr)
        return 75
    except (RunError, ProblemsError, ValueError) as exc:
        print(f"mt-eval decide: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nmt-eval decide: interrupted; finished rows are saved. Continue with the same command and --resume.",
              file=sys.stderr)
        return 130
    print(f"decision card: {card}")
    return 0


def _check(args: argparse.Namespace) -> int:
    import msgspec

    from mt_eval.decisions.corpus import read_decision_corpus
    from mt_eval.decisions.selfcheck import describe_self_check, run_self_check

    check = run_self_check(read_decision_corpus(args.corpus), args.ece_bins)
    if args.json:
        print(msgspec.json.format(msgspec.json.encode(check), indent=2).decode())
    else:
        print(describe_self_check(check))
    return 0 if check.passed else 1


GRADE_EPILOG = """\
examples:
  mt-eval run --demo --out runs/demo --force
  mt-eval grade runs/demo/card.json --grader examples/rules-grader
  mt-eval grade runs/demo/card.json --grader examples/rules-grader --labels examples/data/demo-adequacy-labels.jsonl
  mt-eval grade runs/demo/card.json --grader examples/rules-grader --no-reference --seed 7 --out runs/demo/blind
  mt-eval grade export runs/demo/card.json --out runs/demo/sheets --format both
  mt-eval grade import runs/demo/card.json --key runs/demo/sheets/key.json --sheet runs/demo/sheets/sheet.csv
"""


def add_grade_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Grade a translation run blind: its entries become shuffled, anonymous score questions from "
                          "a rubric (default: 0–4 adequacy); the method's identity, route and model are never shown to "
                          "the grader. `grade CARD --grader DIR` uses a decision method; `grade export` and `grade "
                          "import` do the same with sheets for people. Writes a grading card.")
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = GRADE_EPILOG
    parser.add_argument("words", nargs="+", metavar="[export|import] CARD",
                        help="the run card to grade, after `export` or `import` for sheets")
    parser.add_argument("--grader", metavar="DIR", help="decision method plugin that grades (grade CARD)")
    parser.add_argument("--rubric", metavar="FILE", help="rubric JSON: name, instructions, ordered levels "
                                                         "(default: 0–4 adequacy)")
    parser.add_argument("--seed", type=int, help="shuffle seed (default: a fresh one; recorded in the card)")
    parser.add_argument("--no-reference", action="store_true", help="do not show the reference translation")
    parser.add_argument("--corpus", metavar="FILE", help="the run's corpus, if it moved (checked by sha256)")
    parser.add_argument("--labels", metavar="FILE",
                        help="human labels to judge the grader against: a grading card from `grade import`, or "
                             'JSONL {"id": ENTRY, "label": LEVEL}')
    parser.add_argument("--out", metavar="DIR", help="where the grading card (or, for export, the sheets) go "
                                                     "(default: RUN_DIR/grading/GRADER)")
    sheets = parser.add_argument_group("sheets for people (export, import)")
    sheets.add_argument("--format", choices=["csv", "jsonl", "both"], default="both", help="sheet format (export)")
    sheets.add_argument("--key", metavar="FILE", help="key.json written by export (import)")
    sheets.add_argument("--sheet", action="append", default=[], metavar="FILE",
                        help="a filled sheet, .csv or .jsonl (import; repeatable: answers are averaged per item)")
    how = parser.add_argument_group("how the grader runs")
    add_call_arguments(how, "item", "items")
    how.add_argument("--tolerance", type=positive_float, default=1e-3, metavar="T",
                     help="how far from 1 a distribution may sum (default 0.001)")
    how.add_argument("--isolate", action="store_true", help="run a Python grader in its own process")
    add_model_arguments(how)
    _scoring_arguments(parser.add_argument_group("scoring (the bootstrap uses the shuffle seed)"), seed=False)
    parser.add_argument("--quiet", action="store_true", help="print only the card's path")
    parser.set_defaults(print_grade_help=parser.print_usage)


def grade_command(args: argparse.Namespace) -> int:
    from mt_eval.decisions.blinding import GradingError
    from mt_eval.problems import ProblemsError

    words = list(args.words)
    mode = words.pop(0) if words[0] in ("export", "import") and len(words) > 1 else "grade"
    if len(words) != 1:
        print("mt-eval grade: give one run card: `mt-eval grade CARD --grader DIR`, `mt-eval grade export CARD "
              "--out DIR` or `mt-eval grade import CARD --key KEY --sheet FILE`", file=sys.stderr)
        return 2
    args.card = words[0]
    needed = {"grade": ("grader", "--grader DIR"), "export": ("out", "--out DIR"), "import": ("key", "--key FILE")}
    attribute, option = needed[mode]
    if not getattr(args, attribute) or (mode == "import" and not args.sheet):
        missing = option if getattr(args, attribute) is None or mode != "import" or args.key is None else "--sheet FILE"
        print(f"mt-eval grade: {mode} needs {missing}", file=sys.stderr)
        return 2
    try:
        if mode == "export":
            from mt_eval.decisions.sheets import export_sheets

            out = export_sheets(args)
            print(f"sheets: {out} (send the sheet and rubric.md to the graders; keep key.json)")
            return 0
        if mode == "import":
            from mt_eval.decisions.sheets import import_sheets

            path = import_sheets(args)
        else:
            from mt_eval.decisions.grading import grade_with_method

            path = grade_with_method(args)
    except (GradingError, ProblemsError, ValueError) as exc:
        print(f"mt-eval grade: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nmt-eval grade: interrupted; no grading card was written", file=sys.stderr)
        return 130
    print(f"grading card: {path}")
    return 0
