"""The ``mt-eval`` command: one module per subcommand (``mt_eval/cli/NAME.py``), one table of them, one error policy.

Start-up is kept fast: the top-level parser knows each subcommand only by name and one-line help (`COMMANDS`);
the module of a subcommand — its arguments, how they become a typed request, and what it prints — is imported
only when that subcommand is on the command line, and it imports the work itself only when it runs.

A subcommand's module defines ``add_arguments(parser)`` and ``run(args) -> int`` (the exit status), and may
define ``PROG`` (the name its messages start with), ``INTERRUPTED`` (what Ctrl-C prints) and ``EXPECTED``
(library exceptions that, for this command, mean bad input or environment). `main` is the error policy: an
`mt_eval.errors.ExpectedError` — or one of the command's ``EXPECTED`` — is one line, ``PROG: what is wrong
and the fix``, and its exit status (1 unless it says otherwise; 2 for usage); Ctrl-C exits 130; anything
else is a bug and shows its traceback. The README lists each command's exit statuses.
"""

from __future__ import annotations

import argparse
import sys

from mt_eval._version import __version__

TYPE_CHECKING = False  # see mt_eval/__init__.py
if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import ModuleType

DESCRIPTION = "Build, validate and evaluate machine-translation method plugins."
EPILOG = """\
examples:
  mt-eval run --demo                            evaluate the example method on the example corpus
  mt-eval new my-method                         start a method plugin from the template
  mt-eval validate examples/lexicon-eng-spa     check a plugin and show its dependency class
  mt-eval translate examples/lexicon-eng-spa "Good morning, my friend."
  mt-eval compare runs/a/card.json runs/b/card.json
  mt-eval corpus show dev.tsv                   how a corpus file is read: columns, ids, entries, sha256
  mt-eval verify runs/demo/card.json            recompute a card's metrics and check its hashes
  mt-eval gate runs/demo/card.json              does the card's headline pass the gate? (exit 1: no)
  mt-eval freeze init --method DIR --corpus FILE   fix a run's inputs; then: mt-eval run ... --freeze freeze.json
  mt-eval publish runs/demo/card.json           verify a run card and add it to the leaderboard store
  mt-eval leaderboard --out site                the leaderboard as a static site (or: leaderboard serve)
  mt-eval serve examples/lexicon-eng-spa        serve a Python plugin as a bridge guest on stdio
  mt-eval bridge check -- ./my-guest --flag     prove a guest program speaks the bridge protocol
  mt-eval schemas --check bridge/schemas        fail if the JSON Schemas drifted from the code
  mt-eval locales --config examples/champollion-project   translate a champollion project's locales
  mt-eval contamination --method examples/coached-llm-eng-spa --corpus examples/data/eng-spa-demo.json
  mt-eval gateway --policy examples/coached-llm-eng-spa/gateway-policy.json   the LLM gateway (A1 methods)
  mt-eval decide run --method examples/rules-grader --corpus examples/data/adequacy-decisions.jsonl
  mt-eval grade runs/lexicon-eng-spa__eng-spa-demo/card.json --grader examples/rules-grader

Run `mt-eval COMMAND --help` for a command's options.
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
    parser = argparse.ArgumentParser(prog="mt-eval", description=DESCRIPTION, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"mt-eval {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, summary in COMMANDS.items():
        sub = commands.add_parser(name, help=summary, description=summary)
        if name in chosen:
            command_module(name).add_arguments(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``mt-eval`` with ``argv`` (default: the process's arguments); the exit status."""
    from mt_eval.errors import ExpectedError

    arguments = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(arguments)
    args, extra = parser.parse_known_args(arguments)
    if extra and args.command == "translate" and not any(e.startswith("-") for e in extra):
        args.texts += extra  # sentences given after an option
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command is None:
        parser.print_help()
        return 2
    command = command_module(args.command)
    prog = getattr(command, "PROG", f"mt-eval {args.command}")
    expected: tuple[type[BaseException], ...] = getattr(command, "EXPECTED", ())
    try:
        return command.run(args)  # type: ignore[no-any-return]
    except KeyboardInterrupt:
        if message := getattr(command, "INTERRUPTED", "interrupted"):
            print(message, file=sys.stderr)
        return 130
    except ExpectedError as exc:
        print(f"{prog}: {exc.one_line()}", file=sys.stderr)
        return exc.exit_status
    except expected as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 1
