"""The corpus flags every command that takes a corpus shares (``run``, ``compare``, ``corpus show``).

Only argparse here: it is imported to build ``--help``; the readers are imported when a command runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path

TYPE_CHECKING = False  # see mt_eval/__init__.py
if TYPE_CHECKING:
    from mt_eval.corpus.reader import CorpusSpec
    from mt_eval.corpus.selection import SelectionRequest

CORPUS_HELP = "corpus file: .json, .jsonl or .tsv (source<TAB>reference), optionally .gz"


def add_corpus_arguments(parser: argparse.ArgumentParser, *, file_flag: bool = True, selection: bool = True,
                         title: str = "the corpus") -> None:
    """``--corpus`` (unless the command takes the file as an argument), parallel text, how to read it and,
    with ``selection``, which entries to run."""
    group = parser.add_argument_group(title)
    if file_flag:
        group.add_argument("--corpus", metavar="FILE", help=CORPUS_HELP)
    group.add_argument("--source-file", metavar="SRC", type=Path,
                       help="parallel text instead of --corpus: one source sentence per line")
    group.add_argument("--reference-file", metavar="REF", type=Path,
                       help="the references of --source-file, line by line (optional: without it, translate only)")
    group.add_argument("--columns", metavar="NAMES",
                       help="a .tsv corpus's columns, comma-separated, instead of its header or the "
                            "source,reference convention, e.g. id,source,reference")
    group.add_argument("--accept-doubt", action="append", default=[], metavar="CODE",
                       help="read the corpus although this doubt was detected (repeatable; the refusal names it)")
    if selection:
        chosen = parser.add_argument_group("which entries (default: all)")
        chosen.add_argument("--ids", action="append", default=[], metavar="LIST",
                            help="ids and inclusive ranges in corpus order, comma-separated (e.g. 3,7,10..20; "
                                 "A.. to the end, ..B from the start), or @FILE with one id per line")
        chosen.add_argument("--segment", action="append", default=[], metavar="NAME",
                            help="entries whose segment field is NAME (repeatable)")
        chosen.add_argument("--limit", type=int, metavar="N", help="only the first N entries (after --ids/--segment)")


def spec_from_args(args: argparse.Namespace, path: str | None = None) -> CorpusSpec | None:
    """The corpus the arguments name (None when they name none); ValueError says what is wrong."""
    from mt_eval.corpus.doubts import DOUBTS
    from mt_eval.corpus.reader import CorpusSpec

    path = path if path is not None else getattr(args, "corpus", None)
    source_file = getattr(args, "source_file", None)
    reference_file = getattr(args, "reference_file", None)
    if path is None and source_file is None and reference_file is None:
        return None
    if path is not None and source_file is not None:
        raise ValueError("give --corpus FILE or --source-file SRC [--reference-file REF], not both")
    unknown = [code for code in args.accept_doubt if code not in DOUBTS]
    if unknown:
        raise ValueError(f"--accept-doubt {unknown[0]}: no such doubt; the codes are {', '.join(DOUBTS)}")
    columns = None
    if getattr(args, "columns", None):
        columns = [name.strip() for name in args.columns.split(",")]
    return CorpusSpec(path=Path(path) if path is not None else None, source_file=source_file,
                      reference_file=reference_file, columns=columns, accept=list(args.accept_doubt))


def selection_from_args(args: argparse.Namespace) -> SelectionRequest:
    from mt_eval.corpus.selection import SelectionRequest

    return SelectionRequest(ids=list(getattr(args, "ids", []) or []),
                            segments=list(getattr(args, "segment", []) or []), limit=getattr(args, "limit", None))
