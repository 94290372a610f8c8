"""``mt-eval corpus show``: how mt-eval reads a corpus, exactly as ``mt-eval run`` would (`mt_eval.corpus.show`)."""

from __future__ import annotations

import argparse

from mt_eval.cli.arguments import CORPUS_HELP, add_corpus_arguments, corpus_file, non_negative_int, pair_argument
from mt_eval.cli.usage_errors import path_operand

SHOW_EXAMPLES = """\
examples:
  mt-eval corpus show examples/data/eng-spa-demo.json
  mt-eval corpus show dev.tsv --json
  mt-eval corpus show dev.tsv --columns id,source,reference --rows 10
  mt-eval corpus show --source-file devtest.eng_Latn --reference-file devtest.spa_Latn --pair 'eng>spa'
  mt-eval corpus show dev.jsonl --ids 10..20 --segment news

exit status: 0 the corpus reads as shown; 1 it cannot be read, it would be refused (a doubt --accept-doubt does not
accept), --ids, --segment or --limit select nothing, or standard output cannot be written; 2 usage (no FILE, no
COMMAND: the help is shown); 130 interrupted; 141 the reader of standard output went away
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog, parser.formatter_class = SHOW_EXAMPLES, argparse.RawDescriptionHelpFormatter
    commands = parser.add_subparsers(dest="corpus_command", metavar="COMMAND")
    show = commands.add_parser(
        "show", help="how mt-eval reads a corpus: format, columns and roles, ids, entries, first rows, sha256",
        description="Print how mt-eval reads a corpus, exactly as `mt-eval run` would: the format, the columns "
                    "and their roles, where ids come from, the entry count, the first rows, the sha256, and "
                    "anything doubtful. Exits 1 when the corpus cannot be read or would be refused.",
        epilog=SHOW_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    show.add_argument("file", nargs="?", metavar="FILE", type=lambda text: corpus_file(path_operand(text)),
                      help=CORPUS_HELP)
    add_corpus_arguments(show, file_flag=False)
    show.add_argument("--pair", type=pair_argument, metavar="'SRC>TGT'",
                      help="the language pair, for the script check: quoted ('eng>spa') or as eng:spa (default: the "
                           "corpus's own)")
    show.add_argument("--rows", type=non_negative_int, default=5, metavar="N", help="entries to print (default 5)")
    show.add_argument("--json", action="store_true", help="print JSON")
    show.set_defaults(print_show_help=show.print_help)
    parser.set_defaults(print_corpus_help=parser.print_help)


PROG = "mt-eval corpus show"


def run(args: argparse.Namespace) -> int:
    if args.corpus_command != "show":
        args.print_corpus_help()
        return 2
    return show(args)


def show(args: argparse.Namespace) -> int:
    import sys

    from mt_eval.cli.arguments import corpus_spec, selection_request
    from mt_eval.cli.json_output import json_text
    from mt_eval.corpus.doubts import find_doubts, settle_doubts
    from mt_eval.corpus.model import CorpusError
    from mt_eval.corpus.reader import load_corpus
    from mt_eval.corpus.selection import select
    from mt_eval.corpus.show import build_report, render_text
    from mt_eval.errors import UsageError

    try:
        spec = corpus_spec(args, path=args.file)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    if spec is None:
        args.print_show_help()
        return 2
    def unread(exc: CorpusError, readable: bool = False) -> None:
        """--json: what a reader of the JSON needs to know too (the line on stderr as without it)."""
        if args.json:
            said = {"file": str(spec.main_path), "readable": readable,
                    "refused": [{"message": p.message, "hint": p.hint} for p in exc.problems]}
            sys.stdout.write(json_text(said))

    try:
        corpus = load_corpus(spec)  # CorpusError: one line, exit status 1
    except CorpusError as exc:
        unread(exc)
        raise
    pair = args.pair or corpus.pair
    refused: CorpusError | None = None
    try:
        settle_doubts(corpus, find_doubts(corpus, pair), spec.accept)
    except CorpusError as exc:
        refused = exc
    try:  # (--ids, --segment, --limit: an id the corpus lacks, a selection of nothing)
        selection = select(corpus, selection_request(args))
    except CorpusError as exc:
        unread(exc, readable=True)
        raise
    report = build_report(corpus, selection, pair, refused, rows=args.rows)
    if args.json:
        sys.stdout.write(json_text(report))
    else:
        from mt_eval.lone_surrogates import writable

        sys.stdout.write(writable(render_text(corpus, report)))
    return 1 if refused is not None else 0
