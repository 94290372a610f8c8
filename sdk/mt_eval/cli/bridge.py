"""``mt-eval bridge check -- COMMAND…``: run the conformance transcripts against a guest program."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from mt_eval.cli.arguments import positive_float, with_examples
from mt_eval.cli.usage_errors import named_path

CHECK_EXIT_STATUSES = """\
0 every transcript passed (or does not apply); 1 one failed, or the guest cannot be started or does not
answer initialize; 2 usage (no COMMAND; --vectors or --cwd not a directory; transcripts that cannot be read, or
none); 130 interrupted; 141 the reader of standard output went away"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = "Tools for bridge guests."
    bridge_commands = parser.add_subparsers(dest="bridge_command", metavar="COMMAND")
    check = bridge_commands.add_parser(
        "check", help="run the conformance transcripts against a guest command",
        description="Start COMMAND once per conformance transcript and check every answer; a transcript of the "
                    "protocol itself runs once per request the guest implements (translate, decide), and one of "
                    "translate's own semantics is skipped for a guest that only decides. Put the guest's command "
                    "after --, e.g.: mt-eval bridge check -- node my-guest.js")
    check.add_argument("guest", nargs="+", metavar="COMMAND", help="the guest program and its arguments")
    check.add_argument("--vectors", metavar="DIR", help="transcripts to run (default: the bundled ones)",
                       type=named_path)
    check.add_argument("--cwd", metavar="DIR", type=named_path, help="working directory for the guest")
    check.add_argument("--start-timeout", type=positive_float, default=10.0, metavar="SECONDS",
                       help="seconds the guest gets to answer each initialize (default 10, as every other step; hosts "
                            "give 30): give more to one that loads a large model as it starts")
    for each in (parser, check):
        with_examples(each, "mt-eval bridge check -- mt-eval serve examples/lexicon-eng-spa",
                      "mt-eval bridge check -- node bridge/node/bin/mt-eval-guest.js examples/termbase-eng-spa",
                      "mt-eval bridge check --cwd my-guest -- ./my-guest --serve   # a guest in any language",
                      exit_statuses=CHECK_EXIT_STATUSES)
    parser.set_defaults(print_bridge_help=parser.print_help)


def run(args: argparse.Namespace) -> int:
    if args.bridge_command is None:  # (`mt-eval bridge` alone: what it can do, as `mt-eval corpus` says)
        args.print_bridge_help()
        return 2
    return check(args.guest, vectors=args.vectors, cwd=args.cwd, start_timeout_s=args.start_timeout)


def check(command: Sequence[str], *, vectors: str | None, cwd: str | None, start_timeout_s: float = 10.0) -> int:
    from functools import partial

    import anyio

    from mt_eval.bridge.conformance import run_vector
    from mt_eval.bridge.transcripts import VectorError, load_vectors, vectors_directory
    from mt_eval.cli import said_on_stderr
    from mt_eval.control_chars import escaped_for_terminal

    def shown(line: str) -> None:  # (a path, the guest's command and answers: their control characters escaped)
        print(escaped_for_terminal(line))

    directory = Path(vectors) if vectors else vectors_directory()
    for option, given, wanted in (("--vectors", vectors, "the directory of the transcripts (*.json)"),
                                  ("--cwd", cwd, "the directory the guest runs in")):
        if given is not None and not Path(given).is_dir():
            what = "does not exist" if not Path(given).exists() else "is not a directory"
            said_on_stderr(f"mt-eval bridge check: {option} {given} {what}: give {wanted}")
            return 2
    try:
        loaded = load_vectors(directory)
    except VectorError as exc:
        said_on_stderr(f"mt-eval bridge check: {exc}")
        return 2
    if not loaded:
        said_on_stderr(f"no transcripts (*.json) in {directory}")
        return 2
    from mt_eval.child_spawn import not_a_program

    unfit = not_a_program(command[0], cwd)
    if unfit:
        said_on_stderr(f"mt-eval bridge check: cannot start {command[0]!r}: {unfit}: give the guest's command after "
                       "--, as you would run it, e.g. mt-eval bridge check -- node my-guest.js")
        return 1
    import shlex

    shown(f"checking `{shlex.join(command)}` against {len(loaded)} transcripts from {directory}")
    failed = skipped = runs = 0
    for number, vector in enumerate(loaded, start=1):
        to_run: list[str | None] = [None]  # (then each other request the guest implements, for by_request steps)
        while to_run:
            outcome = anyio.run(partial(run_vector, vector, command, cwd=cwd, request=to_run.pop(0),
                                        start_timeout_s=start_timeout_s))
            to_run += outcome.more_requests
            runs += 1
            if outcome.not_started:
                where = f" (in {cwd})" if cwd else ""
                said_on_stderr(f"mt-eval bridge check: {outcome.failure}{where}: give the guest's command after --, as "
                               "you would run it, e.g. mt-eval bridge check -- node my-guest.js")
                return 1
            if outcome.skipped:
                skipped += 1
                shown(f"  skip  {outcome.name}: {outcome.skipped}")
                continue
            if outcome.passed:
                shown(f"  ok    {outcome.name}")
                continue
            failed += 1
            shown(f"  FAIL  {outcome.name}: {outcome.description}\n        {outcome.failure}")
            if outcome.stderr_tail:
                shown("        guest stderr: " + outcome.stderr_tail.replace("\n", "\n                      "))
            rest = len(loaded) - number
            if outcome.initialize_unanswered:
                shown(f"conformance: stopped: the guest does not answer initialize"
                      f"{_the_others(rest, 'each would wait as long')}. Fix: answer initialize as soon as the method "
                      "is loaded (bridge/PROTOCOL.md, \"Lifecycle\"), or, if it loads a large model as it starts, give "
                      "it longer with --start-timeout SECONDS; check what the guest writes to stderr")
                return 1
            if outcome.no_handshake:
                shown(f"conformance: stopped: {outcome.no_handshake}"
                      f"{_the_others(rest, 'each would fail the same way: every one needs a working handshake')}")
                return 1
    skips = f", {skipped} not applicable" if skipped else ""
    shown(f"conformance: {runs - failed - skipped} passed, {failed} failed{skips}")
    return 1 if failed else 0


def _the_others(count: int, why: str) -> str:
    """", so the other 3 transcripts were not run (why)", nothing when there are none."""
    if count == 0:
        return ""
    return f", so the other {count} transcripts were not run ({why})" if count > 1 else \
        f", so the other transcript was not run ({why})"
