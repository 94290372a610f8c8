"""``mt-eval contamination``: check that a method's bundle (or a corpus) holds no text of the evaluation corpus.

Its options come from one table of flags and `CheckSettings` fields (`OPTIONS`), so an error names the flag to
change; the engine (`mt_eval.contamination`) is imported when the command runs.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mt_eval.cli.usage_errors import method_directory
from mt_eval.errors import ExpectedError

EXIT_CLEAN, EXIT_CONTAMINATED, EXIT_CANNOT_RUN, EXIT_UNVERIFIED = 0, 1, 2, 3


class CannotCheck(ExpectedError):
    """The check could not run (a corpus or the bundle cannot be read, a bad setting): exit status 2."""

    exit_status = EXIT_CANNOT_RUN

EPILOG = """\
examples:
  mt-eval contamination --method examples/lexicon-eng-spa --corpus examples/data/eng-spa-demo.json
  mt-eval contamination --method my-method --corpus test.json --corpus test2.tsv --json > report.json
  mt-eval contamination --against dev.jsonl --corpus test.json     # a development set against the test set
  mt-eval contamination --method my-method --corpus test.json --near-duplicate 0.7 --plant 50 --seed 7

exit status: 0 clean; 1 contaminated; 3 unverified (no hits, but the planted control's recall is under the
floor or part of the bundle could not be read); 2 the check could not run (or ran, and --report or standard
output could not be written: the verdict is in the other all the same); 130 interrupted (no verdict).
"""


def size(text: str) -> int:
    """``512M``, ``1G``, ``100k`` or a number of bytes."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)i?[bB]?\s*", text)
    if not match:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size: write e.g. 500M, 2G or 1048576")
    scale = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[match.group(2).lower()]
    return int(float(match.group(1)) * scale)


_SIZES = {1 << 30: "1G", 4 << 30: "4G", 8 << 20: "8M"}
# group → (flag, CheckSettings field, type, metavar, help without the default)
OPTIONS: dict[str, list[tuple[str, str, Any, str, str]]] = {
    "thresholds (in normalised words)": [
        ("--ngram", "ngram", int, "N", "words per indexed n-gram; a hit shares at least one such run"),
        ("--near-duplicate", "near_duplicate", float, "F",
         "coverage making a near-duplicate: share of the entry's words in shared runs of --ngram or more words"),
        ("--long-ngram", "long_ngram", int, "N", "a shared run this long is a hit whatever the entry's length"),
        ("--min-words", "min_words", int, "N", "entries with fewer words are not checked"),
        ("--standalone-below", "standalone_below", int, "N",
         "shorter entries count only as exact matches set off by punctuation, a line end or a string edge"),
        ("--common-ngram", "common_ngram", int, "N", "n-grams in more corpus texts than this are not looked up"),
    ],
    "planted control": [
        ("--plant", "plant", int, "N",
         "corpus texts planted in a copy of the bundle; 0 skips the control, so the verdict is at best unverified"),
        ("--seed", "seed", int, "N", "seed of the control's sample, perturbations and places"),
        ("--recall-floor", "recall_floor", float, "F", "recall below which the verdict is unverified"),
    ],
    "files": [
        ("--max-file-size", "max_file_bytes", size, "SIZE", "larger files and archive members are listed, not read"),
        ("--max-archive-size", "max_archive_bytes", size, "SIZE", "decompressed bytes read from one archive"),
        ("--max-code-size", "max_code_bytes", size, "SIZE", "larger source files are read as text, not parsed"),
        ("--max-archive-depth", "max_archive_depth", int, "N",
         "levels of archives inside the bundle's archives opened (0: only the bundle's own; a .tar.gz is one)"),
    ],
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    import textwrap

    from mt_eval.cli.arguments import add_corpus_arguments, non_negative_int
    from mt_eval.contamination.settings import CheckSettings

    def corpus_file(text: str) -> str:  # (an empty one is said below, with what to give)
        return "/dev/stdin" if text == "-" else text

    d = CheckSettings()
    parser.description = textwrap.fill(
        "Check that a method's bundle does not contain the evaluation data: every string literal, data file, "
        "prompt and archive in the plugin directory is compared with the corpus's sources and references "
        "(exact matches, near-duplicates, long shared n-grams). Before it says clean, it plants a seeded "
        "sample of corpus texts into a copy of the bundle and proves it finds them.", 100)
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EPILOG
    what = parser.add_argument_group("what to check")
    what.add_argument("--method", type=method_directory, metavar="DIR", help="the method plugin directory (its bundle)")
    what.add_argument("--corpus", action="append", default=[], metavar="FILE", type=corpus_file,
                      help="evaluation corpus (repeatable): upstream JSON, JSON list, .jsonl or .tsv (a pipe, - for "
                           "standard input, or a name without extension: read by its content)")
    what.add_argument("--against", metavar="FILE", type=corpus_file,
                      help="instead of a bundle, another corpus (e.g. a development set) checked for --corpus texts")
    add_corpus_arguments(parser, file_flag=False, selection=False,
                         title="how corpora are read (as by mt-eval run; --columns applies to .tsv files, pipes "
                               "and names without extension)")
    for title, options in OPTIONS.items():
        group = parser.add_argument_group(title)
        for flag, field, kind, metavar, text in options:
            default = getattr(d, field)
            shown = _SIZES.get(default, default) if kind is size else default
            if field == "long_ngram":  # (unless given, it follows a longer --ngram: see `settings_from`)
                group.add_argument(flag, type=kind, metavar=metavar, help=f"{text} (default {shown}, or --ngram "
                                                                          "when that is longer)")
                continue
            group.add_argument(flag, type=kind, default=default, metavar=metavar, help=f"{text} (default {shown})")
    output = parser.add_argument_group("output")
    output.add_argument("--json", action="store_true", help="print the whole report as JSON")
    output.add_argument("--report", metavar="FILE", help="also write the JSON report to FILE")
    output.add_argument("--show", type=non_negative_int, default=20, metavar="N",
                        help="hits listed (default 20; 0: all)")
    output.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.set_defaults(print_contamination_help=parser.print_help)


def settings_from(args: argparse.Namespace) -> Any:
    """`CheckSettings` from the parsed arguments (ValueError naming the bad one)."""
    import msgspec

    from mt_eval.contamination.settings import CheckSettings

    fields = {field: getattr(args, flag[2:].replace("-", "_")) for options in OPTIONS.values()
              for flag, field, *_rest in options}
    if fields["long_ngram"] is None:  # not given: the default, or a longer --ngram (a run that short is never found)
        fields["long_ngram"] = max(CheckSettings().long_ngram, fields["ngram"]) if isinstance(fields["ngram"], int) \
            else CheckSettings().long_ngram
    try:
        return msgspec.convert(fields, CheckSettings)
    except msgspec.ValidationError as exc:
        flags = {field: flag for options in OPTIONS.values() for flag, field, *_rest in options}
        bound = re.fullmatch(r"Expected `\w+` (>=|<=|>|<) (\S+) - at `\$\.(\w+)`", str(exc))
        if bound and bound.group(3) in flags:  # (said as the other options' limits are)
            words = {">=": "at least", "<=": "at most", ">": "above", "<": "below"}[bound.group(1)]
            given = getattr(args, flags[bound.group(3)][2:].replace("-", "_"))
            raise ValueError(f"{flags[bound.group(3)]} must be {words} {bound.group(2)}, got {given}") from exc
        named = re.search(r"`\$\.(\w+)`", str(exc))
        if named and named.group(1) in flags:
            raise ValueError(f"{exc} ({flags[named.group(1)]})") from exc
        # (a rule between two settings names them as fields: "standalone_below (2) must be at least min_words")
        said, named_two = re.subn(r"\b(\w+) \((\S+)\)", lambda m: f"{flags[m[1]]} {m[2]}" if m[1] in flags
                                  else m[0], str(exc))
        raise ValueError(f"{said}: raise the first or lower the second" if named_two == 2 else said) from exc


# a flag given an empty value ("--report ''", an unset shell variable) -> what to give it
EMPTY_VALUE = {"--method": "the method plugin's directory, e.g. --method examples/lexicon-eng-spa",
               "--against": "the corpus to check, e.g. --against dev.jsonl",
               "--corpus": "the evaluation corpus file, e.g. --corpus test.json",
               "--report": "the file to write the JSON report to, e.g. --report report.json, or leave --report out"}


def run(args: argparse.Namespace) -> int:
    given = [("--method", args.method), ("--against", args.against), *(("--corpus", c) for c in args.corpus),
             ("--report", args.report)]
    empty = next((flag for flag, value in given if value is not None and not value.strip()), None)
    if empty is not None:  # (else an empty --report wrote none, and an empty --corpus was "." of no format)
        raise CannotCheck(f"{empty} is empty: give {EMPTY_VALUE[empty]}")
    if bool(args.method) == bool(args.against) or not (args.corpus or args.source_file):
        said = ("give --method DIR or --against FILE, not both" if args.method and args.against
                else "give --method DIR (or --against FILE) and at least one --corpus FILE")
        print(f"mt-eval contamination: {said}\n", file=sys.stderr)
        args.print_contamination_help(sys.stderr)
        return EXIT_CANNOT_RUN
    corpus_options_fit(args)
    from mt_eval.cli.json_output import json_text
    from mt_eval.contamination.corpora import CorpusUnreadable, load_corpus
    from mt_eval.contamination.engine import CheckError, check_bundle, check_corpora
    from mt_eval.contamination.render import progress_printer, render
    from mt_eval.control_chars import escaped_for_terminal

    printer = None if args.quiet else progress_printer()
    last = ["reading the corpora"]

    def progress(message: str) -> None:  # (the last step is what an interruption reports)
        last[0] = message
        if printer is not None:
            printer(escaped_for_terminal(message))  # (a corpus's or a bundle file's path)

    try:
        if args.report:
            check_report_path(args.report, inputs=[*args.corpus, args.source_file, args.reference_file,
                                                   args.against, args.method])
        settings = settings_from(args)

        def read(spec: Any) -> Any:  # (a large corpus takes seconds to read: say which, and how large)
            progress(f"reading corpus {spec.main_path}{_size_of(spec.main_path)}")
            return load_corpus(spec)

        corpora = [read(spec) for spec in corpus_specs(args, [*args.corpus, None])]
        if args.method:
            report = check_bundle(args.method, corpora, settings, progress)
        else:
            [against] = [read(spec) for spec in corpus_specs(args, [args.against])]
            report = check_corpora(against, corpora, settings, progress)
    except (CheckError, CorpusUnreadable, ValueError) as exc:
        raise CannotCheck(str(exc)) from exc
    except KeyboardInterrupt as exc:  # (the bundle is only read, and the planted control's copy is deleted)
        from mt_eval.errors import InterruptedBefore

        unwritten = f", not even --report {args.report}" if args.report else ""
        raise InterruptedBefore(f"mt-eval contamination: interrupted (last step: {last[0]}): no verdict, and nothing "
                                f"was written{unwritten}; run the command again to check") from exc
    return _deliver(args, report, json_text(report).encode(), render)  # (U+202E of a path written as \u202e)


def _size_of(path: Path) -> str:
    """`` (185.6 MB)`` for a file; nothing for a pipe (its size is not known before it is read) or a missing file."""
    import stat

    from mt_eval.contamination.render import human_size

    try:
        found = os.stat(path)
    except OSError:
        return ""
    return f" ({human_size(found.st_size)})" if stat.S_ISREG(found.st_mode) else ""


def _deliver(args: argparse.Namespace, report: Any, document: bytes, render: Any) -> int:
    """Write the report to --report, then print it: the file is kept when standard output fails, and either
    failure exits 2 (not the verdict's status, which a script would read as the verdict); the text's control and
    invisible characters (of a path, of a corpus's text) escaped."""
    from mt_eval.cli import said_on_stderr
    from mt_eval.control_chars import escaped_for_terminal

    status = {"clean": EXIT_CLEAN, "contaminated": EXIT_CONTAMINATED}.get(report.status, EXIT_UNVERIFIED)
    unwritten = None
    if args.report:
        try:
            write_report(args.report, document)
        except OSError as exc:
            unwritten = exc
    try:
        text = document.decode() if args.json else escaped_for_terminal(render(report, show=args.show)) + "\n"
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # the reader (e.g. head) has stopped reading
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except OSError as exc:  # (a full disk): what is still buffered goes nowhere, rather than failing again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        kept = (f"the report is in {args.report}" if args.report and unwritten is None else
                "give --report FILE to keep the report in a file")
        said_on_stderr(f"mt-eval contamination: the check ran ({report.status}), but its result could not be written "
                       f"to standard output: {exc.strerror or exc}; {kept}")
        status = EXIT_CANNOT_RUN
    if unwritten is not None:
        said_on_stderr(f"mt-eval contamination: the check ran ({report.status}), but its report could not be "
                       f"written to {args.report}: {unwritten.strerror or unwritten}; give --report a writable file, "
                       "or --json to print it")
        status = EXIT_CANNOT_RUN
    return status


def write_report(path: str, document: bytes) -> None:
    """Write the report whole or not at all when ``path`` is a file (a failure part-way, e.g. a full disk, leaves
    the file as it was); a pipe or device (``>(jq .)``, /dev/stdout) is written to directly, and a named pipe
    that no process is reading is an error rather than a wait that never ends."""
    import errno
    import fcntl
    import stat

    from mt_eval.atomic_files import write_atomically

    try:
        regular = stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        regular = True
    if regular:  # (through a symbolic link, its target: the link keeps pointing at the report)
        write_atomically(Path(os.path.realpath(path)), document)
        return
    try:  # (without O_NONBLOCK, opening a named pipe waits for a reader, forever if none comes)
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno != errno.ENXIO:
            raise
        raise OSError(errno.ENXIO, f"it is a named pipe that no process is reading (start its reader first, e.g. "
                      f"cat {path})") from exc
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)  # (a slow reader is waited for)
    with open(fd, "wb") as out:
        out.write(document)


def check_report_path(path: str, inputs: Sequence[str | None] = ()) -> None:
    """Refuse, before a long check, a --report that cannot be a file (a directory, or one in no directory), or
    that is one of the check's own inputs (writing it would replace a corpus)."""
    target = Path(path)
    same = next((given for given in inputs if given and Path(given).exists() and target.exists()
                 and os.path.samefile(given, target)), None)
    if same is not None:
        raise CannotCheck(f"--report {path} is {same}, which the check reads: writing the report there would replace "
                          "it; give another file, e.g. --report contamination-report.json")
    if target.is_dir():
        raise CannotCheck(f"--report {path} is a directory: give a file, e.g. --report {target / 'report.json'}")
    if not target.parent.is_dir():
        raise CannotCheck(f"--report {path}: there is no directory {target.parent}: create it, or give a file in "
                          "an existing directory")


def _reads_columns(path: str) -> bool:
    """Whether --columns applies to the corpus file ``path``: a .tsv file, or one whose name gives no format."""
    from mt_eval.corpus.files import FORMATS

    return FORMATS.get(Path(path.lower().removesuffix(".gz")).suffix, "tsv") == "tsv"


def corpus_options_fit(args: argparse.Namespace) -> None:
    """Refuse a corpus option that would be ignored: --reference-file without the --source-file it belongs to, or
    --columns with no corpus file it applies to; and standard input given twice (read once, it is gone: the second
    read is empty, or the same texts again when it is a file)."""
    stdin = [flag for flag, given in (*(("--corpus", c) for c in args.corpus), ("--against", args.against),
                                      ("--source-file", args.source_file), ("--reference-file", args.reference_file))
             if given is not None and str(given) == "/dev/stdin"]
    if len(stdin) > 1:
        flags = " and ".join(dict.fromkeys(stdin))
        raise CannotCheck(f"standard input (-) is given {len(stdin)} times ({flags}): it can be read only once; give "
                          "all but one of them as a file")
    if args.reference_file is not None and args.source_file is None:
        raise CannotCheck(f"--reference-file {args.reference_file} needs --source-file SRC, the sentences it holds "
                          "the references of (a --corpus file holds its own references): give both, or leave "
                          "--reference-file out")
    if args.columns and not any(_reads_columns(path) for path in [*args.corpus, args.against] if path):
        raise CannotCheck(f"--columns {args.columns} names the columns of a .tsv corpus, and no --corpus or --against "
                          "file is one (parallel text, JSON and JSON lines have none): leave --columns out")


def corpus_specs(args: argparse.Namespace, paths: list[str | None]) -> list[Any]:
    """A `CorpusSpec` for each path (None: the parallel text of --source-file, if given); --columns for a .tsv
    file and a corpus whose name gives no format (a pipe: its content may be TSV), not for the parallel text.
    ValueError says what is wrong."""
    from mt_eval.cli.arguments import corpus_spec

    specs = []
    for path in paths:
        if path is None and args.source_file is None:
            continue
        tsv = path is not None and _reads_columns(path)  # (parallel text has no columns)
        one = argparse.Namespace(**{**vars(args), "corpus": None, "columns": args.columns if tsv else None,
                                    **({"source_file": None, "reference_file": None} if path is not None else {})})
        spec = corpus_spec(one, path)
        if spec is not None:
            specs.append(spec)
    return specs
