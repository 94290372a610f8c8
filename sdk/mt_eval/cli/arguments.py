"""Flags several commands share, and how they become typed values (`CorpusSpec`, `SelectionRequest`, …).

Only argparse at import time: every ``--help`` imports this module; the types are imported when a command runs.
The corpus flags are shared by ``run``, ``compare``, ``verify``, ``gate``, ``corpus show``, ``contamination`` and
``freeze init``; the run-directory, call and model flags by ``run``, ``freeze init``, ``decide run`` and ``grade``.
How a run is measured (scoring and latency flags): `mt_eval.cli.measurement_arguments`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mt_eval.cli.usage_errors import WAIT_LIMIT, WAIT_VALUES, named_path, path_operand, wait_value

TYPE_CHECKING = False  # see mt_eval/__init__.py
if TYPE_CHECKING:
    from mt_eval.corpus.reader import CorpusSpec
    from mt_eval.corpus.selection import SelectionRequest

# The --help of publish and leaderboard after where the store is, as the README's "Publishing and the leaderboard"
# says it (store_engine)
POSTGRES_CONNECTING = """\
The URL's own libpq settings win over mt-eval's defaults (connect_timeout 10 s, TCP keepalives):
postgresql://USER@HOST/DB?connect_timeout=3 waits 3 s; without one in the URL, $PGCONNECT_TIMEOUT does. A server
that cannot be reached or refuses the connection is said with why (authentication failed, connection refused, an
unknown host, no such database, a permission missing) and the fix, never the password."""


def with_examples(parser: argparse.ArgumentParser, *lines: str, exit_statuses: str = "") -> None:
    """An ``examples:`` block under the options, one command a line, as it is pasted; then, when given, the
    ``exit status:`` paragraph (``exit_statuses``, its lines as they are to be shown)."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = "examples:\n" + "\n".join(f"  {line}" for line in lines)
    if exit_statuses:
        parser.epilog += f"\n\nexit status: {exit_statuses}"


def pair_argument(text: str) -> str:
    """An argparse ``type``: a pair in any accepted spelling (`mt_eval.pairs`), as ``source>target``."""
    from mt_eval.pairs import PairError, parse_pair

    try:
        return parse_pair(text)
    except PairError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


CORPUS_HELP = ("corpus file: .json, .jsonl or .tsv (source<TAB>reference), optionally .gz; without extension, a "
               "pipe such as <(zcat dev.jsonl.gz), or - for standard input, read by its content")


def corpus_file(text: str) -> str:
    """A corpus file as given (not empty), ``-`` being standard input (read as /dev/stdin is; a file named - is ./-)."""
    return "/dev/stdin" if named_path(text) == "-" else text


def add_corpus_arguments(parser: argparse.ArgumentParser, *, file_flag: bool = True, selection: bool = True,
                         title: str = "the corpus") -> None:
    """``--corpus`` (unless the command takes the file as an argument), parallel text, how to read it and,
    with ``selection``, which entries to run."""
    group = parser.add_argument_group(title)
    either = group.add_mutually_exclusive_group() if file_flag else group  # (a corpus file, or parallel text)
    if file_flag:
        either.add_argument("--corpus", metavar="FILE", type=corpus_file, help=CORPUS_HELP)
    either.add_argument("--source-file", metavar="SRC", type=lambda text: Path(corpus_file(text)),
                        help="parallel text instead of --corpus: one source sentence per line (- for standard input)")
    group.add_argument("--reference-file", metavar="REF", type=lambda text: Path(corpus_file(text)),
                       help="the references of --source-file, line by line (optional: without it, translate only)")
    group.add_argument("--columns", metavar="NAMES",
                       help="a .tsv corpus's columns, comma-separated, instead of its header or the "
                            "source,reference convention, e.g. id,source,reference")
    group.add_argument("--accept-doubt", action="append", default=[], type=doubt_code, metavar="CODE",
                       help="read the corpus although this doubt was detected (repeatable; the refusal names it)")
    if selection:
        chosen = parser.add_argument_group("which entries (default: all)")
        chosen.add_argument("--ids", action="append", default=[], metavar="LIST",
                            help="ids and inclusive ranges in corpus order, comma-separated (e.g. 3,7,10..20; "
                                 "A.. to the end, ..B from the start), or @FILE with one id per line")
        chosen.add_argument("--segment", action="append", default=[], metavar="NAME",
                            help="entries whose segment field is NAME (repeatable)")
        chosen.add_argument("--limit", type=positive_int, metavar="N",
                            help="only the first N entries (after --ids/--segment)")


def doubt_code(text: str) -> str:
    """An argparse type: a doubt's code (`mt_eval.corpus.doubts.DOUBTS`), the closest one named when mistyped."""
    from mt_eval.corpus.doubts import DOUBTS

    if text not in DOUBTS:
        import difflib

        close = difflib.get_close_matches(text, list(DOUBTS), n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise argparse.ArgumentTypeError(f"no such doubt {text!r}{hint}; give the code a refusal names, one of "
                                         f"{', '.join(DOUBTS)}")
    return text


def corpus_spec(args: argparse.Namespace, path: str | None = None) -> CorpusSpec | None:
    """The corpus the arguments name (None when they name none); `OptionError` for options that cannot go together,
    ValueError for anything else that is wrong."""
    from mt_eval.cli.usage_errors import OptionError
    from mt_eval.corpus.reader import CorpusSpec

    path = path if path is not None else getattr(args, "corpus", None)
    source_file, reference_file = getattr(args, "source_file", None), getattr(args, "reference_file", None)
    if path is None and source_file is None and reference_file is None:
        return None
    if path is not None and source_file is not None:  # (--corpus with it argparse refuses; this is a FILE argument)
        raise OptionError("--source-file", "not allowed with a corpus file: give the corpus file, or parallel text "
                          "with --source-file SRC [--reference-file REF]")
    if source_file is None and reference_file is not None:
        raise OptionError("--reference-file", "needs --source-file SRC, the sentences it translates (a corpus file "
                          "holds its own references)")
    if source_file is not None and source_file == reference_file == Path("/dev/stdin"):  # (read once, it is gone)
        raise OptionError("--reference-file", "standard input is --source-file's already: give one of them as a file")
    if source_file is not None and getattr(args, "columns", None):
        raise OptionError("--columns", "names the columns of a .tsv corpus, and parallel text (--source-file) has "
                          "none: leave --columns out")
    columns = [name.strip() for name in args.columns.split(",")] if getattr(args, "columns", None) else None
    return CorpusSpec(path=Path(path) if path is not None else None, source_file=source_file,
                      reference_file=reference_file, columns=columns, accept=list(args.accept_doubt))


def corpus_instead(args: argparse.Namespace) -> CorpusSpec | None:
    """The corpus given in place of each card's recorded one (verify, gate, compare), or None; --columns and
    --accept-doubt say how a given file is read, so alone they are an error, not ignored. ValueError says so."""
    spec = corpus_spec(args)
    alone = [flag for flag, given in (("--columns", args.columns), ("--accept-doubt", args.accept_doubt)) if given]
    if spec is None and alone:
        raise ValueError(f"{alone[0]} says how a corpus you give is read, and none is given (each card's corpus is "
                         f"read as the card records): give the file with it (--corpus FILE {alone[0]} ...), or "
                         f"leave {alone[0]} out")
    return spec


def selection_request(args: argparse.Namespace) -> SelectionRequest:
    """Which entries the arguments select (--ids, --segment, --limit)."""
    from mt_eval.corpus.selection import SelectionRequest

    return SelectionRequest(ids=list(getattr(args, "ids", []) or []),
                            segments=list(getattr(args, "segment", []) or []), limit=getattr(args, "limit", None))


def add_run_directory_arguments(group: argparse._ArgumentGroup, default: str) -> None:
    """--out, --resume, --force and --wait (see `mt_eval.harness.run_directory`)."""
    group.add_argument("--out", metavar="DIR", type=directory_name, help=f"run directory (default: {default})")
    either = group.add_mutually_exclusive_group()  # (continue the run, or delete it: not both)
    either.add_argument("--resume", action="store_true", help="continue the interrupted run in --out (one that "
                        "finished complete has nothing to resume: every file is left as it was)")
    either.add_argument("--force", action="store_true", help="start over even if --out holds results (not with "
                                                             "--resume)")
    group.add_argument("--wait", nargs="?", type=wait_seconds, const=float("inf"), metavar="SECONDS",
                       help=f"when another process uses --out, wait for it ({WAIT_LIMIT}) instead of refusing at once")


def directory_name(text: str) -> str:
    """An argparse type: a directory's name, not empty (``--out "$DIR"`` with ``DIR`` unset wrote to the default)."""
    if not text:
        raise argparse.ArgumentTypeError("must name a directory, got '' (a variable meant to hold it that is unset or "
                                         "empty?): give the directory, or leave --out out for the default")
    return text


def add_call_arguments(group: argparse._ArgumentGroup, item: str, items: str) -> None:
    """How a method is called: --batch-size ``items`` per call, --concurrency calls, --timeout per ``item``."""
    group.add_argument("--batch-size", type=positive_int, default=8, metavar="N", help=f"{items} per call (default 8)")
    group.add_argument("--concurrency", type=positive_int, default=8, metavar="N", help="calls in flight (default 8)")
    group.add_argument("--timeout", type=positive_float, default=120.0, metavar="S",
                       help=f"seconds per {item} (default 120); past it the call is cancelled, and an in-process "
                            "method that ignores the cancellation is abandoned 1 s later (--isolate runs it where it "
                            "can be killed)")


GUEST_START = "a method run as a guest (a Node entry, a command, a Python entry with --isolate or --sandbox)"


def add_start_timeout_argument(group: argparse._ActionsContainer, what: str = GUEST_START, note: str = "", *,
                               with_timeout: bool = True) -> None:
    """--start-timeout: the seconds ``what`` gets to start, apart from --timeout (``with_timeout``: the command has
    one). Every command that starts methods has it; `mt_eval.cli.main` hands it to the guests the loader makes."""
    group.add_argument("--start-timeout", type=positive_float, default=30.0, metavar="SECONDS", help=f"seconds {what} "
                       f"gets to start (default 30{'; --timeout does not cover the start' * with_timeout}): give more "
                       f"to one that loads a large model as it starts{note}")


def add_retry_arguments(group: argparse._ArgumentGroup) -> None:
    """--retries per failed entry within a run-wide --retry-budget (``run`` and ``freeze init``)."""
    group.add_argument("--retries", type=non_negative_int, default=1, metavar="N",
                       help="retries per failed entry (default 1; 0: none)")
    group.add_argument("--retry-budget", type=non_negative_int, metavar="N",
                       help="retries for the whole run (default: 10%% of entries, at least 10; 0: none)")


def add_seed_argument(group: argparse._ArgumentGroup) -> None:
    """--seed: the bootstrap's, also passed to the method (``run``, ``freeze init`` and ``decide run``)."""
    group.add_argument("--seed", type=seed_number, default=12345, metavar="N",
                       help="bootstrap seed, also passed to the method (default 12345; below 2^53)")


def card_argument(text: str) -> str:
    """A run card (not empty): a run directory stands for the card.json it holds (``mt-eval gate runs/demo``); ``-``
    is a usage error (no command reads a card from standard input: it had been said as a file named - not there)."""
    if text == "-":
        raise argparse.ArgumentTypeError("run cards are read from files, not standard input: give the card's path, "
                                         "or its run directory (write the card to a file first; a file named - is ./-)")
    card = Path(path_operand(text)) / "card.json"
    try:
        return str(card) if Path(text).is_dir() and card.is_file() else text
    except OSError:  # (a path too long for the system): said where the card is read
        return text


def whole_number(text: str, *, least: int = 0, most: int | None = None) -> int:
    """``text`` as a whole number from ``least`` to ``most`` (no bound: None); otherwise an
    `argparse.ArgumentTypeError` that gives the range, which argparse prints after the option's name."""
    allowed = f"at least {least}" if most is None else f"from {least} to {most}"
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number ({allowed}), got {text!r}") from None
    if value < least or (most is not None and value > most):
        raise argparse.ArgumentTypeError(f"must be {allowed}, got {value}")
    from mt_eval.js_text import SAFE_INTEGER

    if value > SAFE_INTEGER:  # (what a method in Node, or any JSON reader, holds exactly)
        raise argparse.ArgumentTypeError(f"must be at most {SAFE_INTEGER}, got {value}")
    return value


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    return whole_number(text, least=1)


def non_negative_int(text: str) -> int:
    """An argparse type: a whole number of at least 0 (where 0 means something: no retries, no warm-up)."""
    return whole_number(text, least=0)


def seed_number(text: str) -> int:
    """An argparse type: a seed, 0 to 2^53 - 1 (the integers JSON readers in every runtime hold exactly, so the seed a
    card or freeze records is the seed read back)."""
    from mt_eval.js_text import SAFE_INTEGER

    return whole_number(text, least=0, most=SAFE_INTEGER)


def port_number(text: str) -> int:
    """An argparse type: a TCP port, 0 (any free one) to 65535."""
    return whole_number(text, least=0, most=65535)


def positive_float(text: str) -> float:
    """An argparse type: a finite number above 0 (not nan, not inf)."""
    import math

    value = _number(text)
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a finite number above 0, got {text}")
    return value


def temperature(text: str) -> float:
    """An argparse type: a sampling temperature, 0 to 2 (what the run configuration holds)."""
    value = _number(text)
    if not 0 <= value <= 2:
        raise argparse.ArgumentTypeError(f"must be a number from 0 to 2, got {text}")
    return value


def wait_seconds(text: str) -> float:
    """An argparse type: seconds to wait, 0 or more; inf waits as long as it takes (`mt_eval.locks.wait_value`)."""
    if (value := wait_value(text)) is None:
        raise argparse.ArgumentTypeError(f"{WAIT_VALUES}; got {text}")
    return value


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None


def add_model_arguments(group: argparse._ArgumentGroup) -> None:
    """The options a method receives in its config: model settings and --param (also for decide and grade)."""
    group.add_argument("--model", help="model name")
    group.add_argument("--base-url", help="OpenAI-compatible (or decision-engine) endpoint")
    group.add_argument("--temperature", type=temperature, help="sampling temperature, 0 to 2")
    group.add_argument("--max-tokens", type=positive_int, help="most tokens a model may generate, at least 1")
    group.add_argument("--param", action=_Params, default=[], type=param_argument, metavar="KEY=VALUE",
                       help="method parameter (repeatable); VALUE is parsed as JSON when it can be")


def param_argument(text: str) -> str:
    """An argparse type: a ``--param`` as `mt_eval.cli.method_params` reads it (kept as given)."""
    from mt_eval.cli.method_params import read_param

    try:
        read_param(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


class _Params(argparse.Action):
    """``--param``, repeatable: each one appended, a key given twice refused (which value was meant?)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        from mt_eval.cli.method_params import given_twice

        items = list(getattr(namespace, self.dest, None) or [])
        item = str(values)
        if any(given.partition("=")[0] == item.partition("=")[0] for given in items):
            raise argparse.ArgumentError(self, given_twice(item.partition("=")[0], items, item))
        setattr(namespace, self.dest, [*items, item])
