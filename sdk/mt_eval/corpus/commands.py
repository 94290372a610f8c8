"""``mt-eval corpus show``'s arguments (imported for ``--help``, so only argparse); `show` does the work."""

from __future__ import annotations

import argparse

from mt_eval.corpus.arguments import CORPUS_HELP, add_corpus_arguments
from mt_eval.pairs import pair_argument

SHOW_EXAMPLES = """\
examples:
  mt-eval corpus show examples/data/eng-spa-demo.json
  mt-eval corpus show dev.tsv --json
  mt-eval corpus show dev.tsv --columns id,source,reference --rows 10
  mt-eval corpus show --source-file devtest.eng_Latn --reference-file devtest.spa_Latn --pair 'eng>spa'
  mt-eval corpus show dev.jsonl --ids 10..20 --segment news
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
    show.add_argument("file", nargs="?", metavar="FILE", help=CORPUS_HELP)
    add_corpus_arguments(show, file_flag=False)
    show.add_argument("--pair", type=pair_argument, metavar="'SRC>TGT'",
                      help="the language pair, for the script check: quoted ('eng>spa') or as eng:spa (default: the "
                           "corpus's own)")
    show.add_argument("--rows", type=int, default=5, metavar="N", help="entries to print (default 5)")
    show.add_argument("--json", action="store_true", help="print JSON")
    show.set_defaults(print_show_help=show.print_help)
    parser.set_defaults(print_corpus_help=parser.print_help)


def run(args: argparse.Namespace) -> int:
    if args.corpus_command != "show":
        args.print_corpus_help()
        return 2
    from mt_eval.corpus.show import run_show

    return run_show(args)
