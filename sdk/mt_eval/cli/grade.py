"""``mt-eval grade CARD --grader DIR``, ``grade export`` and ``grade import``: grade a translation run blind.

The arguments become one `mt_eval.decisions.request.GradeRequest`."""

from __future__ import annotations

import argparse
from pathlib import Path

from mt_eval.cli.arguments import (
    add_call_arguments,
    add_model_arguments,
    add_start_timeout_argument,
    seed_number,
)
from mt_eval.cli.decide import scoring_arguments, sum_tolerance
from mt_eval.cli.usage_errors import named_path, named_plugin, path_operand

PROG = "mt-eval grade"
INTERRUPTED = "\nmt-eval grade: interrupted; no grading card was written"
EXPECTED = (ValueError, OSError)  # bad input, and a file that cannot be read or written: the message says which
SHOWS_GUEST_OUTPUT = True  # what a method in a bridge guest writes to stderr is shown (cli/guest_output.py)


GRADE_EPILOG = """\
examples:
  mt-eval run --demo --out runs/demo --force
  mt-eval grade runs/demo/card.json --grader examples/rules-grader
  mt-eval grade runs/demo/card.json --grader examples/rules-grader --labels examples/data/demo-adequacy-labels.jsonl
  mt-eval grade runs/demo/card.json --grader examples/rules-grader --no-reference --seed 7 --out runs/demo/blind
  mt-eval grade export runs/demo/card.json --out runs/demo/sheets --format both
  mt-eval grade import runs/demo/card.json --key runs/demo/sheets/key.json --sheet runs/demo/sheets/sheet.csv

exit status: 0 the grading card (or the sheets) written; 1 cannot grade; 4 no entry graded: the grader failed on
each, or every translation had failed (its card written, with the reasons; an import of sheets not answered yet is
0, its card saying so); 130 interrupted (no grading card is written)
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Grade a translation run blind: its entries become shuffled, anonymous score questions from "
                          "a rubric (default: 0–4 adequacy); the method's identity, route and model are never shown to "
                          "the grader. `grade CARD --grader DIR` uses a decision method; `grade export` and `grade "
                          "import` do the same with sheets for people. Writes a grading card.")
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = GRADE_EPILOG
    parser.add_argument("words", type=path_operand, nargs="+", metavar="[export|import] CARD",
                        help="the run card to grade, after `export` or `import` for sheets")
    parser.add_argument("--grader", metavar="DIR", help="decision method plugin that grades (grade CARD)",
                        type=named_plugin)
    parser.add_argument("--rubric", metavar="FILE", help="rubric JSON: name, instructions, ordered levels "
                                                         "(default: 0–4 adequacy)", type=named_path)
    parser.add_argument("--seed", type=seed_number, metavar="N",
                        help="shuffle seed (default: a fresh one; recorded in the card)")
    parser.add_argument("--no-reference", action="store_true", help="do not show the reference translation")
    parser.add_argument("--corpus", metavar="FILE", help="the run's corpus, if it moved (checked by sha256)",
                        type=named_path)
    parser.add_argument("--labels", metavar="FILE", type=named_path,
                        help="human labels to judge the grader against: a grading card from `grade import`, or "
                             'JSONL {"id": ENTRY, "label": LEVEL}')
    parser.add_argument("--out", metavar="DIR", help="where the grading card (or, for export, the sheets) go "
                                                     "(default: RUN_DIR/grading/GRADER)", type=named_path)
    sheets = parser.add_argument_group("sheets for people (export, import)")
    sheets.add_argument("--format", choices=["csv", "jsonl", "both"], default="both", help="sheet format (export)")
    sheets.add_argument("--force", action="store_true",
                        help="replace what --out holds: an earlier export's sheets and key.json (export), or "
                             "another grader's grading card (grade, import)")
    sheets.add_argument("--key", metavar="FILE", type=named_path, help="key.json written by export (import)")
    sheets.add_argument("--sheet", action="append", default=[], metavar="FILE", type=named_path,
                        help="a filled sheet, .csv or .jsonl (import; repeatable: answers are averaged per item)")
    how = parser.add_argument_group("how the grader runs")
    add_call_arguments(how, "item", "items")
    how.add_argument("--tolerance", type=sum_tolerance, default=1e-3, metavar="T",
                     help="how far from 1 a distribution may sum (default 0.001; below 1)")
    how.add_argument("--isolate", action="store_true", help="run a Python grader in its own process")
    add_start_timeout_argument(how, "a grader run as a guest (a Node entry, a command, a Python entry with --isolate)")
    add_model_arguments(how)
    scoring_arguments(parser.add_argument_group("scoring (the bootstrap uses the shuffle seed)"), seed=False)
    parser.add_argument("--quiet", action="store_true", help="print only the card's path (no progress)")
    parser.set_defaults(print_grade_help=parser.print_usage)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from mt_eval.cli.decide import calls, method_settings
    from mt_eval.control_chars import escaped_for_terminal
    from mt_eval.decisions.request import GradeRequest
    from mt_eval.errors import UsageError

    words = list(args.words)
    if words in (["export"], ["import"]) and not Path(words[0]).is_file():  # (else "grade needs --grader DIR")
        raise UsageError(f"{words[0]} needs the run card: `mt-eval grade {_USAGE[words[0]]}`")
    mode = words.pop(0) if words[0] in ("export", "import") and len(words) > 1 else "grade"
    if len(words) != 1:
        raise UsageError("give one run card: `mt-eval grade CARD --grader DIR`, `mt-eval grade export CARD --out "
                         "DIR` or `mt-eval grade import CARD --key KEY --sheet FILE`")
    needed = {"grade": (args.grader, "--grader DIR"), "export": (args.out, "--out DIR"), "import": (args.key,
                                                                                                  "--key FILE")}
    given, option = needed[mode]
    if not given or (mode == "import" and not args.sheet):
        missing = option if given is None or mode != "import" or args.key is None else "--sheet FILE"
        raise UsageError(f"{mode} needs {missing}")
    unused = [flag for name, flag in _UNUSED[mode][0] if getattr(args, name) not in (None, [])
              and getattr(args, name) is not False]  # (a --seed of 0 is given)
    if unused:
        raise UsageError(f"{' and '.join(unused)}: not used by `mt-eval {_COMMAND[mode]}` ({_UNUSED[mode][1]})")
    request = GradeRequest(
        card=Path(words[0]), grader=Path(args.grader) if args.grader else None,
        rubric=Path(args.rubric) if args.rubric else None, seed=args.seed, with_reference=not args.no_reference,
        corpus=Path(args.corpus) if args.corpus else None, labels=Path(args.labels) if args.labels else None,
        out=Path(args.out) if args.out else None, format=args.format, force=args.force,
        key=Path(args.key) if args.key else None, sheets=tuple(Path(sheet) for sheet in args.sheet), calls=calls(args),
        isolate=args.isolate,
        settings=method_settings(args), resamples=args.resamples, ece_bins=args.ece_bins, quiet=args.quiet)
    if mode == "export":
        from mt_eval.decisions.sheets import export_sheets

        out = export_sheets(request)
        print(escaped_for_terminal(f"sheets: {out} (send the sheet and rubric.md to the graders; keep key.json)"))
        return 0
    if mode == "import":
        from mt_eval.decisions.sheets import import_sheets

        path = import_sheets(request)
    else:
        from mt_eval.decisions.grading import grade_with_method

        path = grade_with_method(request)
    print(escaped_for_terminal(f"grading card: {path}"))  # (a path's control characters escaped)
    return _nothing_graded(path) if mode != "import" else 0  # (a sheet may come back with nothing graded yet)


_USAGE = {"export": "export CARD --out DIR", "import": "import CARD --key KEY --sheet FILE"}
_COMMAND = {"grade": "grade CARD --grader DIR", "export": "grade export", "import": "grade import"}
# Options a mode would otherwise drop without a word, and why (a mode's own are in its `--help` line).
_UNUSED: dict[str, tuple[tuple[tuple[str, str], ...], str]] = {
    "grade": ((("key", "--key"), ("sheet", "--sheet")), "`mt-eval grade import` reads people's sheets"),
    "export": ((("grader", "--grader"), ("labels", "--labels"), ("key", "--key"), ("sheet", "--sheet")),
               "it writes the sheets; a grader and labels are for grading, a key and filled sheets for `mt-eval grade "
               "import`"),
    "import": ((("grader", "--grader"), ("rubric", "--rubric"), ("seed", "--seed"), ("no_reference", "--no-reference")),
               "the rubric, the shuffle seed and whether references were shown are the export's, read from --key"),
}


def _nothing_graded(card: Path) -> int:
    """`EXIT_FAILED` when no entry was graded (the grader failed on every one, or every translation had failed, so
    none was given to it), with the first reason not said already (the items the grader failed on are listed
    before: `mt_eval.decisions.summary.grading_failure_lines`); else 0."""
    import msgspec

    from mt_eval.cli import said_on_stderr
    from mt_eval.harness.outcome import EXIT_FAILED

    data = msgspec.json.decode(card.read_bytes())
    summary = data.get("summary") or {}
    if not summary.get("graded") and (summary.get("failed") or summary.get("not_graded")):
        first = next((e["error"] for e in data.get("entries") or [] if e.get("error") and e.get("item") is None),
                     None)  # (an entry never given to the grader: not translated)
        counts = ", ".join(f"{summary[key]} {said}" for key, said in (("failed", "failed"), ("not_graded", "not "
                           "graded: not translated")) if summary.get(key))
        said_on_stderr(f"mt-eval grade: no entry was graded ({counts})" + (f": {first}" if first else ""))
        return EXIT_FAILED
    return 0
