"""``mt-eval contamination``: its arguments, and running it.

`mt_eval.cli` imports this module only when the command runs; the engine is imported after parsing.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import Any

EXIT_CLEAN, EXIT_CONTAMINATED, EXIT_CANNOT_RUN, EXIT_UNVERIFIED = 0, 1, 2, 3

EPILOG = """\
examples:
  mt-eval contamination --method examples/lexicon-eng-spa --corpus examples/data/eng-spa-demo.json
  mt-eval contamination --method my-method --corpus test.json --corpus test2.tsv --json > report.json
  mt-eval contamination --against dev.jsonl --corpus test.json     a development set against the test set
  mt-eval contamination --method my-method --corpus test.json --near-duplicate 0.7 --plant 50 --seed 7

exit status: 0 clean; 1 contaminated; 3 unverified (no hits, but the planted control's recall is under the
floor or part of the bundle could not be read); 2 the check could not run.
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    import textwrap

    from mt_eval.contamination.settings import CheckSettings

    d = CheckSettings()
    parser.description = textwrap.fill(
        "Check that a method's bundle does not contain the evaluation data: every string literal, data file, "
        "prompt and archive in the plugin directory is compared with the corpus's sources and references "
        "(exact matches, near-duplicates, long shared n-grams). Before it says clean, it plants a seeded "
        "sample of corpus texts into a copy of the bundle and proves it finds them.", 100)
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EPILOG
    what = parser.add_argument_group("what to check")
    what.add_argument("--method", metavar="DIR", help="the method plugin directory (its bundle)")
    what.add_argument("--corpus", action="append", default=[], metavar="FILE",
                      help="evaluation corpus (repeatable): upstream JSON, JSON list, .jsonl or .tsv")
    what.add_argument("--against", metavar="FILE",
                      help="instead of a bundle, another corpus (e.g. a development set) checked for --corpus texts")
    limits = parser.add_argument_group("thresholds (in normalised words)")
    limits.add_argument("--ngram", type=int, default=d.ngram, metavar="N",
                        help=f"words per indexed n-gram; a hit shares at least one such run (default {d.ngram})")
    limits.add_argument("--near-duplicate", type=float, default=d.near_duplicate, metavar="F",
                        help="coverage making a near-duplicate: share of the entry's words in shared runs of "
                             f"--ngram or more words (default {d.near_duplicate})")
    limits.add_argument("--long-ngram", type=int, default=d.long_ngram, metavar="N",
                        help=f"a shared run this long is a hit whatever the entry's length (default {d.long_ngram})")
    limits.add_argument("--min-words", type=int, default=d.min_words, metavar="N",
                        help=f"entries with fewer words are not checked (default {d.min_words})")
    limits.add_argument("--standalone-below", type=int, default=d.standalone_below, metavar="N",
                        help="shorter entries count only as exact matches set off by punctuation, a line end or "
                             f"a string edge (default {d.standalone_below})")
    limits.add_argument("--common-ngram", type=int, default=d.common_ngram, metavar="N",
                        help=f"n-grams in more corpus texts than this are not looked up (default {d.common_ngram})")
    control = parser.add_argument_group("planted control")
    control.add_argument("--plant", type=int, default=d.plant, metavar="N",
                         help=f"corpus texts planted in a copy of the bundle (default {d.plant}; 0 skips the "
                              "control, so the verdict is at best unverified)")
    control.add_argument("--seed", type=int, default=d.seed, help=f"seed of the control (default {d.seed})")
    control.add_argument("--recall-floor", type=float, default=d.recall_floor, metavar="F",
                         help=f"recall below which the verdict is unverified (default {d.recall_floor})")
    files = parser.add_argument_group("files")
    files.add_argument("--max-file-size", type=size, default=d.max_file_bytes, metavar="SIZE",
                       help="larger files and archive members are listed, not read (default 1G)")
    files.add_argument("--max-archive-size", type=size, default=d.max_archive_bytes, metavar="SIZE",
                       help="decompressed bytes read from one archive (default 4G)")
    files.add_argument("--max-code-size", type=size, default=d.max_code_bytes, metavar="SIZE",
                       help="larger source files are read as text instead of parsed (default 8M)")
    files.add_argument("--max-archive-depth", type=int, default=d.max_archive_depth, metavar="N",
                       help=f"levels of archives inside archives opened (default {d.max_archive_depth})")
    output = parser.add_argument_group("output")
    output.add_argument("--json", action="store_true", help="print the whole report as JSON")
    output.add_argument("--report", metavar="FILE", help="also write the JSON report to FILE")
    output.add_argument("--show", type=int, default=20, metavar="N", help="hits listed (default 20; 0: all)")
    output.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.set_defaults(print_contamination_help=parser.print_help)


def size(text: str) -> int:
    """``512M``, ``1G``, ``100k`` or a number of bytes."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)i?[bB]?\s*", text)
    if not match:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size: write e.g. 500M, 2G or 1048576")
    scale = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[match.group(2).lower()]
    return int(float(match.group(1)) * scale)


def settings_from(args: argparse.Namespace) -> Any:
    """`CheckSettings` from the parsed arguments (ValueError naming the bad one)."""
    import msgspec

    from mt_eval.contamination.settings import CheckSettings

    fields = {"ngram": args.ngram, "near_duplicate": args.near_duplicate, "long_ngram": args.long_ngram,
              "min_words": args.min_words, "standalone_below": args.standalone_below,
              "common_ngram": args.common_ngram, "plant": args.plant, "seed": args.seed,
              "recall_floor": args.recall_floor, "max_file_bytes": args.max_file_size,
              "max_archive_bytes": args.max_archive_size, "max_code_bytes": args.max_code_size,
              "max_archive_depth": args.max_archive_depth}
    try:
        return msgspec.convert(fields, CheckSettings)
    except msgspec.ValidationError as exc:
        flag = re.sub(r".*`\$\.(\w+)`.*", r"\1", str(exc))
        raise ValueError(f"{exc} (--{flag.replace('_', '-')})") from exc


def run(args: argparse.Namespace) -> int:
    if bool(args.method) == bool(args.against) or not args.corpus:
        print("mt-eval contamination: give --method DIR (or --against FILE) and at least one --corpus FILE\n",
              file=sys.stderr)
        args.print_contamination_help(sys.stderr)
        return EXIT_CANNOT_RUN
    import msgspec

    from mt_eval.contamination.engine import CheckError, check_bundle, check_corpora
    from mt_eval.contamination.render import render

    progress = None if args.quiet else _progress_printer()
    try:
        settings = settings_from(args)
        if args.method:
            report = check_bundle(args.method, args.corpus, settings, progress)
        else:
            report = check_corpora(args.against, args.corpus, settings, progress)
    except (CheckError, ValueError) as exc:
        print(f"mt-eval contamination: {exc}", file=sys.stderr)
        return EXIT_CANNOT_RUN
    document = msgspec.json.format(msgspec.json.encode(report), indent=2)
    if args.report:
        with open(args.report, "wb") as out:
            out.write(document + b"\n")
    try:
        if args.json:
            sys.stdout.write(document.decode() + "\n")
        else:
            print(render(report, show=args.show))
        sys.stdout.flush()
    except BrokenPipeError:  # the reader (e.g. head) has stopped reading
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return {"clean": EXIT_CLEAN, "contaminated": EXIT_CONTAMINATED}.get(report.status, EXIT_UNVERIFIED)


def _progress_printer() -> Any:
    import time

    last = [0.0]

    def progress(message: str) -> None:
        now = time.monotonic()
        if now - last[0] >= 2.0 or not message.startswith("read "):
            last[0] = now
            print(f"contamination: {message}", file=sys.stderr, flush=True)

    return progress
