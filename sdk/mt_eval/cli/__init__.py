"""The ``mt-eval`` command: one module per subcommand (``mt_eval/cli/NAME.py``), one table of them, one error policy.

Start-up is kept fast: the top-level parser knows each subcommand only by name and one-line help (`COMMANDS`);
the module of a subcommand — its arguments, how they become a typed request, and what it prints — is imported
only when that subcommand is on the command line, and it imports the work itself only when it runs.

A subcommand's module defines ``add_arguments(parser)`` and ``run(args) -> int`` (the exit status), and may define
``PROG`` (the name its messages start with; ``prog_of(args)`` when it depends on the arguments), ``INTERRUPTED``
(what Ctrl-C prints; without it, ``PROG: interrupted``), ``EXPECTED`` (library exceptions that, for this command,
mean bad input or environment), ``KEEPS_SIGNAL_DEFAULTS`` (SIGTERM and SIGHUP end it at once) and
``SHOWS_GUEST_OUTPUT`` (what a method in a bridge guest writes to stderr is shown: `mt_eval.cli.guest_output`).
`main` is the error policy: an `mt_eval.errors.ExpectedError` — or one of the command's ``EXPECTED`` — is one line,
``PROG: what is wrong and the fix`` (its control and invisible characters escaped: `said_on_stderr`), and its exit
status (1 unless it says otherwise); a usage error exits 2 naming the closest command or option, or
(`mt_eval.cli.usage_errors.OptionError`, raised before any work) the options that cannot go together, with the
command's usage; Ctrl-C exits 130, and SIGTERM (143) and SIGHUP (129) stop a command as Ctrl-C does
(`mt_eval.cli.termination`); output closed by its reader (``| head``) exits 141 quietly; anything else is a bug and
shows its traceback. The README, and each command's ``--help``, list its exit statuses.
"""

from __future__ import annotations

import argparse
import sys

from mt_eval._version import __version__

TYPE_CHECKING = False  # see mt_eval/__init__.py
if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import ModuleType
    from typing import Any, NoReturn

DESCRIPTION = "Build, validate and evaluate machine-translation method plugins."
EPILOG = """\
examples (from the repository's root, after nox -s demo, which writes runs/demo and runs/demo-rules):
  mt-eval run --demo --out runs/demo --force          # evaluate the example method on the example corpus
  mt-eval new my-method                               # start a method plugin: it asks its questions
  mt-eval validate examples/lexicon-eng-spa           # check a plugin and show its dependency class
  mt-eval translate examples/lexicon-eng-spa "Good morning, my friend."
  mt-eval run --method examples/rules-eng-spa --corpus examples/data/eng-spa-demo.json --out runs/rules
  mt-eval compare runs/demo/card.json runs/demo-rules/card.json   # paired significance tests
  mt-eval corpus show examples/data/eng-spa-demo.json # how a corpus file is read: columns, ids, entries
  mt-eval verify runs/demo/card.json                  # recompute a card's metrics and check its hashes
  mt-eval gate runs/demo/card.json                    # does the card's headline pass the gate? (exit 1: no)
  mt-eval freeze init --method examples/lexicon-eng-spa --corpus examples/data/eng-spa-demo.json --out runs/f.json
  mt-eval publish runs/demo/card.json --db runs/board.db --no-input   # add it to a leaderboard store
  mt-eval leaderboard --db runs/board.db --out runs/site               # the leaderboard as a static site
  mt-eval serve examples/lexicon-eng-spa < /dev/null  # a Python plugin as a bridge guest on stdin/stdout
  mt-eval bridge check -- mt-eval serve examples/lexicon-eng-spa   # a guest speaks the bridge protocol
  mt-eval schemas --check bridge/schemas              # fail if the JSON Schemas drifted from the code
  mt-eval locales --config examples/champollion-project --dry-run   # what a champollion project needs
  mt-eval contamination --method examples/lexicon-eng-spa --corpus examples/data/eng-spa-demo.json
  mt-eval gateway --policy examples/coached-llm-eng-spa/gateway-policy.json --check   # the LLM gateway
  mt-eval decide run --method examples/rules-grader --corpus examples/data/adequacy-decisions.jsonl
  mt-eval grade runs/demo/card.json --grader examples/rules-grader

Run `mt-eval COMMAND --help` for a command's options, examples and exit statuses.

exit status: 0 ok; 1 the command's "no" or a failure; 2 usage error; 130 interrupted; 141 output's reader gone
"""

# name → one-line help; the command's module is mt_eval.cli.NAME (mt_eval.cli.new for `new`, and so on)
COMMANDS: dict[str, str] = {
    "run": "evaluate a method on a corpus and write a run card",
    "compare": "paired significance tests between two run cards of the same corpus",
    "corpus": "how mt-eval reads a corpus file: format, columns, ids, entries, first rows, sha256 (corpus show)",
    "verify": "re-verify run cards: content hash, schema, corpus sha256, every metric recomputed",
    "gate": "apply the headline gate to run cards: canaries, negative controls, denominator, covariates",
    "freeze": "freeze a run's inputs before it runs (init), check a manifest (validate), print one (show)",
    "publish": "verify run cards and publish them to the leaderboard store (SQLite or PostgreSQL)",
    "leaderboard": "show the leaderboard (table, JSON, HTML), write it as a static site, or serve it",
    "new": "create a new method plugin from the template (interactive, or --no-input for scripts)",
    "validate": "check method plugins: every problem at once, and the dependency class each earns",
    "translate": "translate a few sentences with a method plugin (a quick try, not an evaluation)",
    "serve": "serve a Python method plugin over stdin/stdout (a bridge guest)",
    "bridge": "bridge tools (conformance check)",
    "schemas": "write or check the JSON Schemas generated from the SDK's types",
    "locales": "translate a champollion project's locale files with the method plugins its config names",
    "contamination": "check that a method's bundle (or a corpus) holds no text of the evaluation corpus",
    "gateway": "serve the LLM gateway: an OpenAI-compatible proxy for allowlisted, pinned models, logged",
    "decide": "run a decision method on a typed-decision corpus and score its calibrated answers",
    "grade": "grade a translation run blind on a rubric, by a decision method or by people (sheets)",
}


def command_module(name: str) -> ModuleType:
    """The module of subcommand ``name`` (imported now)."""
    import importlib

    return importlib.import_module(f"mt_eval.cli.{name}")


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; only the subcommand named in ``argv`` (all of them when ``argv`` is None) gets its
    arguments defined."""
    words = [word for word in (argv or []) if not word.startswith("-")]
    chosen = {words[0]} if argv is not None and words and words[0] in COMMANDS else set()
    if argv is None:
        chosen = set(COMMANDS)
    parser = _Parser(prog="mt-eval", description=DESCRIPTION, epilog=EPILOG,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"mt-eval {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, summary in COMMANDS.items():
        sub = commands.add_parser(name, help=summary, description=summary)
        if name in chosen:
            command_module(name).add_arguments(sub)
    return parser


class _Parser(argparse.ArgumentParser):
    """The parser of ``mt-eval`` and of each command (its subparsers are of its class): a usage error never shows
    the password of a database URL typed where another word goes (``mt-eval leaderboard postgresql://...``,
    ``--dbb=postgresql://...``), and an option is only ever its whole name: ``--lim`` is an unknown option (did you
    mean --limit?), not --limit, which a later option starting the same would quietly have changed."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        self._given: list[str] = []  # the words this parser was given

    def error(self, message: str) -> NoReturn:
        import re

        from mt_eval.control_chars import escaped_for_terminal
        from mt_eval.leaderboard.address import passwords_hidden

        if wanted := re.fullmatch(r"argument (?:\S+/)?(--\S+): expected one argument", message):
            from itertools import pairwise

            dashed = [after for option, after in pairwise(self._given) if option == wanted[1] and after[:1] == "-"]
            # (a value "-x" reads as an option; an option of this command after it is a value left out)
            if dashed and dashed[0] != "--" and dashed[0].partition("=")[0] not in self._option_string_actions:
                message += (f" ({dashed[0]} begins with a dash, so it reads as an option: give it as "
                            f"{wanted[1]}={dashed[0]})")
        super().error(escaped_for_terminal(passwords_hidden(message)))

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self._given = [str(word) for word in (sys.argv[1:] if args is None else args)]  # (for `error`)
        return super().parse_known_args(args, namespace)


def console_main() -> NoReturn:
    """The ``mt-eval`` program: `main` with the process's arguments, then an exit that nothing a method left
    running can hold up (`mt_eval.cli.leftovers`)."""
    import codecs
    import io

    from mt_eval import process_exit

    _open_closed_standard_streams()
    # what stdout cannot encode is shown with its escapes, as on stderr: a name not UTF-8 (strict, a UTF-8 locale),
    # any accent under LC_ALL=C with PYTHONUTF8=0 (ASCII with surrogateescape) — not a UnicodeEncodeError traceback
    if isinstance(sys.stdout, io.TextIOWrapper) and (sys.stdout.errors == "strict" or (
            sys.stdout.errors == "surrogateescape" and codecs.lookup(sys.stdout.encoding).name != "utf-8")):
        sys.stdout.reconfigure(errors="backslashreplace")
    sys.stdout = _OutputChecked(sys.stdout)
    sys.stderr = _DiagnosticsLost(sys.stderr)
    process_exit.adopts_orphans = True
    try:
        status = main()
    except KeyboardInterrupt:  # (while the options were read, which imports what the command needs: a few 100 ms)
        print("\nmt-eval: interrupted before the command started; nothing was done", file=sys.stderr)
        status = 130
    # a method's code ran here, or a program the command started (`bridge check`'s guests) may have left orphans
    if "mt_eval.plugin_import" in sys.modules or "mt_eval.extensions" in sys.modules or process_exit.adopted_orphans:
        from mt_eval.cli.leftovers import leave

        command = next((word for word in sys.argv[1:] if not word.startswith("-")), None)
        leave(status, f"mt-eval {command}" if command in COMMANDS else "mt-eval")
    sys.exit(status)


class OutputFailed(OSError):
    """Standard output could not be written (a full disk, an I/O error): the command's result did not all get out."""


class _OutputChecked:
    """``sys.stdout``, whose writes that fail for another reason than a reader gone (`BrokenPipeError`, which `main`
    takes as ``| head``) are raised as `OutputFailed`: one line then says so, not a traceback."""

    def __init__(self, stream: Any) -> None:
        self._stream, self._flush_each = _whole_writes(stream)
        self.failed: OSError | None = None  # the first failure (what swallowed it, argparse's --help, is told too)

    def write(self, text: str) -> int:
        written = int(self._checked(self._stream.write, text))
        if self._flush_each:
            self._checked(self._stream.flush)
        return written

    def flush(self) -> None:
        self._checked(self._stream.flush)

    def _checked(self, call: Any, *args: Any) -> Any:
        try:
            return call(*args)
        except OSError as exc:
            self.failed = self.failed or exc
            if isinstance(exc, BrokenPipeError):
                raise
            raise OutputFailed(exc.errno, exc.strerror) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _whole_writes(stream: Any) -> tuple[Any, bool]:
    """``stream``, and whether each write is to be flushed. Unbuffered (``python -u``, PYTHONUNBUFFERED), a text
    stream writes to its file itself and drops what a short write left out (a reader gone mid-write, ``| head -c
    100``): the output was cut and the command exited 0. Such a stream gets a buffer, which writes the rest or
    raises (`BrokenPipeError`: 141), flushed after each write so that the output stays unbuffered."""
    import io

    raw = getattr(stream, "buffer", None)
    if not isinstance(stream, io.TextIOWrapper) or not isinstance(raw, io.RawIOBase):
        return stream, False
    return io.TextIOWrapper(io.BufferedWriter(raw), encoding=stream.encoding, errors=stream.errors, newline="\n",
                            write_through=True), True


class _DiagnosticsLost:
    """``sys.stderr``, whose writes that fail (``2>/dev/full``, a reader gone) are dropped: progress, warnings and
    messages are lost, not the work — a run, a sync, a publish goes on, and its exit status still says how it
    ended (a first failed progress line had stopped the command as if it had failed)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return int(self._stream.write(text))
        except OSError:
            return len(text)

    def flush(self) -> None:
        import contextlib

        with contextlib.suppress(OSError):
            self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _flushed(prog: str, status: int) -> int:
    """``status`` once what is buffered for standard output is written; 141 when its reader is gone, 1 (said on
    stderr) when it cannot be written."""
    try:
        sys.stdout.flush()
        failed = getattr(sys.stdout, "failed", None)
        if failed is not None:
            raise failed
    except OSError as exc:
        return output_lost(prog, exc)
    return status


def output_lost(prog: str, error: OSError, done: str = "") -> int:
    """The exit status of a command whose standard output did not all get out: 141, quietly, when its reader went
    away (``| head``: as other tools stop), else 1 and one line saying why, and what the command did all the same
    (``done``: work that is kept, which the output would have told of). What is left buffered goes nowhere."""
    _stdout_to_nowhere()
    if isinstance(error, BrokenPipeError):
        return 141
    said_on_stderr(f"{prog}: cannot write to standard output: {error.strerror or error}{f'; {done}' if done else ''}")
    return 1


def _stdout_to_nowhere() -> None:
    """Standard output that cannot be written any more is /dev/null: what is left buffered goes nowhere, rather than
    failing again as the process exits."""
    import os

    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


STARTED_CLOSED: set[int] = set()  # the standard streams (0, 1, 2) the program was started without


def _open_closed_standard_streams() -> None:
    """A standard stream the program was started without (``>&-``) is /dev/null: its summary had ended in a
    traceback (sys.stdout was None), and a file it opened took the free descriptor (a run's lock as fd 2). Which
    ones were closed is kept in `STARTED_CLOSED` (``mt-eval serve`` answers on its stdout: it refuses to start)."""
    import os

    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            STARTED_CLOSED.add(fd)
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
    if sys.stdin is None:  # (`mt-eval translate DIR <&-`: read as empty input, not an AttributeError)
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 (the process's, for good)
    if sys.stdout is None:
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115 (the process's, for good)
    if sys.stderr is None:
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``mt-eval`` with ``argv`` (default: the process's arguments); the exit status."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(arguments)
    first = next((word for word in arguments if not word.startswith("-")), None)
    if first is not None and first not in COMMANDS:
        from mt_eval.cli.usage_errors import unknown_command

        unknown_command(parser, first)
    try:
        args, extra = parser.parse_known_args(arguments)  # (--help, --version end here: nothing more imported)
    except SystemExit as done:
        if done.code in (0, None) and (status := _flushed("mt-eval", 0)):  # --help, --version: their text got out,
            return status  # or that it did not is said
        raise
    if extra and args.command == "translate" and not any(e.startswith("-") for e in extra):
        args.texts += extra  # sentences given after an option
    elif extra:
        from mt_eval.cli.usage_errors import unknown_arguments

        unknown_arguments(parser, arguments, extra)
    if args.command is None:
        parser.print_help()
        return 2
    import contextlib

    from mt_eval import event_loop
    from mt_eval.cli import termination
    from mt_eval.cli.usage_errors import OptionError, option_error
    from mt_eval.errors import ExpectedError

    command = command_module(args.command)
    prog = command.prog_of(args) if hasattr(command, "prog_of") else getattr(command, "PROG", f"mt-eval {args.command}")
    expected: tuple[type[BaseException], ...] = getattr(command, "EXPECTED", ())
    try:
        event_loop.chosen()  # a loop mt-eval does not know is named before any work, not after it
        with contextlib.ExitStack() as around:
            if not getattr(command, "KEEPS_SIGNAL_DEFAULTS", False):
                around.enter_context(termination.as_interrupt())
            if getattr(command, "SHOWS_GUEST_OUTPUT", False):  # a method's output, wherever it runs (guest_output.py)
                from mt_eval.cli.guest_output import shown

                around.enter_context(shown())
            if (start_s := getattr(args, "start_timeout", None)) is not None:  # (arguments.add_start_timeout_argument)
                from mt_eval.loader import GUEST_START_TIMEOUT

                around.callback(GUEST_START_TIMEOUT.reset, GUEST_START_TIMEOUT.set(start_s))
            status = termination.exit_status(command.run(args))
        sys.stdout.flush()  # (what is still buffered fails here, where it is said, not as the process exits)
        return status
    except OptionError as exc:  # options that cannot go together, found once parsed: said as argparse says its own
        return option_error(parser, arguments, exc)
    except KeyboardInterrupt as interrupted:  # (`InterruptedBefore` says what it stopped)
        if message := getattr(interrupted, "message", None) or getattr(command, "INTERRUPTED", f"{prog}: interrupted"):
            said_on_stderr(termination.said(message))
        return termination.exit_status(termination.INTERRUPTED)
    except (BrokenPipeError, OutputFailed) as exc:  # the reader went away (`| head`), or a full disk
        return output_lost(prog, exc)
    except ExpectedError as exc:
        said_on_stderr(f"{prog}: {exc.one_line()}")
        return exc.exit_status
    except expected as exc:
        said_on_stderr(f"{prog}: {_in_words(exc)}")
        return 1
    except OSError as exc:  # a path too long for the system, no directory for temporary files: wherever first met
        if (words := _in_words(exc)) == str(exc):  # (any other is a fault: its traceback)
            raise
        said_on_stderr(f"{prog}: {words}")
        return 1


def said_on_stderr(message: str) -> None:
    """Print ``message`` on stderr with the control and invisible characters it holds (of a path, of a value read
    from a file) escaped (`mt_eval.control_chars.escaped_for_terminal`), so that none acts on the terminal; text
    escaped already is left as it is, and a message without such characters is printed as it is."""
    from mt_eval.control_chars import escaped_for_terminal

    print(escaped_for_terminal(message), file=sys.stderr)


def _in_words(exc: BaseException) -> str:
    """An expected error's message; a path too long for the system, named (shortened) with what to check; no
    directory for temporary files (`tempfile.gettempdir`: TMPDIR, /tmp, /var/tmp, /usr/tmp, the current one)."""
    import errno

    if isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:
        name = str(exc.filename or "")
        shown = name if len(name) <= 60 else f"{name[:40]}…{name[-15:]}"
        return (f"{shown}: the path is too long for this system ({exc.strerror}: a name in it over 255 bytes, or "
                "the whole over 4096); check the path you gave")
    if isinstance(exc, FileNotFoundError) and str(exc.strerror).startswith("No usable temporary directory found"):
        return f"{exc.strerror}: none can be written; set TMPDIR to a directory you can write in, and run again"
    return str(exc)
