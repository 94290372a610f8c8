"""The ``mt-eval`` command.

Start-up is kept fast: the top-level parser knows each subcommand only by name and one-line help
(`COMMANDS`); the module that defines a subcommand's arguments and does its work is imported only when
that subcommand is on the command line.
"""

from __future__ import annotations

import argparse
import sys

from mt_eval import __version__

TYPE_CHECKING = False  # see mt_eval/__init__.py
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

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

Run `mt-eval COMMAND --help` for a command's options and examples.
"""

# name → (one-line help, "module:function" adding its arguments, "module:function" running it)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "run": ("evaluate a method on a corpus and write a run card",
            "mt_eval.harness.commands:add_run_arguments", "mt_eval.harness.commands:run_command"),
    "compare": ("paired significance tests between two run cards of the same corpus",
                "mt_eval.harness.commands:add_compare_arguments", "mt_eval.harness.commands:compare_command"),
    "corpus": ("how mt-eval reads a corpus file: format, columns, ids, entries, first rows, sha256 (corpus show)",
               "mt_eval.corpus.commands:add_arguments", "mt_eval.corpus.commands:run"),
    "verify": ("re-verify run cards: content hash, schema, corpus sha256, every metric recomputed",
               "mt_eval.harness.commands:add_verify_arguments", "mt_eval.harness.commands:verify_command"),
    "gate": ("apply the headline gate to run cards: canaries, negative controls, denominator, covariates",
             "mt_eval.harness.gate_cli:add_arguments", "mt_eval.harness.gate_cli:run"),
    "freeze": ("freeze a run's inputs before it runs (init), check a manifest (validate), print one (show)",
               "mt_eval.harness.freeze_cli:add_arguments", "mt_eval.harness.freeze_cli:run"),
    "publish": ("verify run cards and publish them to the leaderboard store (SQLite or PostgreSQL)",
                "mt_eval.leaderboard.publish:add_arguments", "mt_eval.leaderboard.publish:run"),
    "leaderboard": ("show the leaderboard (table, JSON, HTML), write it as a static site, or serve it",
                    "mt_eval.leaderboard.cli:add_arguments", "mt_eval.leaderboard.cli:run"),
    "new": ("create a new method plugin from the template (interactive, or --no-input for scripts)",
            "mt_eval.scaffold:add_arguments", "mt_eval.scaffold:run_new"),
    "validate": ("check method plugins: every problem at once, and the dependency class each earns",
                 "mt_eval.tool_commands:add_validate", "mt_eval.tool_commands:run_validate"),
    "translate": ("translate a few sentences with a method plugin (a quick try, not an evaluation)",
                  "mt_eval.tool_commands:add_translate", "mt_eval.tool_commands:run_translate"),
    "serve": ("serve a Python method plugin over stdin/stdout (a bridge guest)",
              "mt_eval.tool_commands:add_serve", "mt_eval.tool_commands:run_serve"),
    "bridge": ("bridge tools (conformance check)",
               "mt_eval.tool_commands:add_bridge", "mt_eval.tool_commands:run_bridge"),
    "schemas": ("write or check the JSON Schemas generated from the SDK's types",
                "mt_eval.tool_commands:add_schemas", "mt_eval.tool_commands:run_schemas"),
    "locales": ("translate a champollion project's locale files with the method plugins its config names",
                "mt_eval.champollion.cli:add_arguments", "mt_eval.champollion.cli:run"),
    "contamination": ("check that a method's bundle (or a corpus) holds no text of the evaluation corpus",
                      "mt_eval.contamination.cli:add_arguments", "mt_eval.contamination.cli:run"),
    "gateway": ("serve the LLM gateway: an OpenAI-compatible proxy for allowlisted, pinned models, logged",
                "mt_eval.gateway.cli:add_arguments", "mt_eval.gateway.cli:run"),
    "decide": ("run a decision method on a typed-decision corpus and score its calibrated answers",
               "mt_eval.decisions.commands:add_decide_arguments", "mt_eval.decisions.commands:decide_command"),
    "grade": ("grade a translation run blind on a rubric, by a decision method or by people (sheets)",
              "mt_eval.decisions.commands:add_grade_arguments", "mt_eval.decisions.commands:grade_command"),
}


def _load(target: str) -> Callable[..., int]:
    import importlib

    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)  # type: ignore[no-any-return]


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
    for name, (summary, define, _run) in COMMANDS.items():
        sub = commands.add_parser(name, help=summary, description=summary)
        if name in chosen:
            _load(define)(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from mt_eval.usage_errors import unknown_arguments, unknown_command

    arguments = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(arguments)
    first = next((word for word in arguments if not word.startswith("-")), None)
    if first is not None and first not in COMMANDS:
        unknown_command(parser, first)
    args, extra = parser.parse_known_args(arguments)
    if extra and args.command == "translate" and not any(e.startswith("-") for e in extra):
        args.texts += extra  # sentences given after an option
    elif extra:
        unknown_arguments(parser, arguments, extra)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return _load(COMMANDS[args.command][2])(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader of our output went away (`| head`): stop quietly, as other tools do
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
