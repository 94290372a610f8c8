"""The ``mt-eval`` command. Subcommands import their machinery only when they run, so ``--help`` is fast."""

from __future__ import annotations

import argparse
import sys

from mt_eval import __version__, scaffold
from mt_eval.harness.commands import add_compare_parser, add_run_parser, compare_command, run_command

TYPE_CHECKING = False  # see mt_eval/__init__.py
if TYPE_CHECKING:
    from collections.abc import Sequence

DESCRIPTION = "Build, validate and evaluate machine-translation method plugins."
EPILOG = """\
examples:
  mt-eval validate examples/lexicon-eng-spa     check a plugin and show its dependency class
  mt-eval validate --json plugins/*             machine-readable report for CI
  mt-eval translate examples/lexicon-eng-spa "Good morning, my friend."
  mt-eval schemas --check bridge/schemas        fail if the JSON Schemas drifted from the code
  mt-eval serve examples/lexicon-eng-spa        serve a Python plugin as a bridge guest on stdio
  mt-eval bridge check -- ./my-guest --flag      prove a guest program speaks the bridge protocol
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mt-eval", description=DESCRIPTION, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"mt-eval {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    scaffold.add_parser(commands)
    add_run_parser(commands)

    validate = commands.add_parser(
        "validate", help="check method plugins: every problem at once, and the dependency class each earns",
        description="Check method plugin directories: method.json, method_card.json and the Python entry "
                    "point. Every problem is reported with its file, JSON path and a fix. Exit status 0 "
                    "when all plugins are valid, 1 otherwise.")
    validate.add_argument("plugins", nargs="+", metavar="DIR", help="plugin directories")
    validate.add_argument("--json", action="store_true", help="print a JSON report instead of text")
    validate.add_argument("--strict", action="store_true", help="treat warnings as errors")
    validate.add_argument("--no-import", dest="run_code", action="store_false",
                          help="check the files only; do not import or construct the method")

    translate = commands.add_parser(
        "translate", help="translate a few sentences with a method plugin (a quick try, not an evaluation)",
        description="Load a method plugin and translate the sentences given as arguments, or one sentence "
                    "per line of standard input.")
    translate.add_argument("plugin", metavar="DIR", help="plugin directory")
    translate.add_argument("texts", nargs="*", metavar="TEXT", help="sentences (default: lines of stdin)")
    translate.add_argument("--pair", metavar="SRC>TGT",
                           help="language pair, e.g. eng>spa (default: the method's first supported pair)")
    translate.add_argument("--file", "-f", metavar="FILE", help="read the sentences from FILE, one per line")
    translate.add_argument("--json", action="store_true", help="print one JSON result per line")

    serve = commands.add_parser(
        "serve", help="serve a Python method plugin over stdin/stdout (a bridge guest)",
        description="Serve a Python method plugin as a bridge guest (protocol mt-eval-bridge/1, see "
                    "bridge/PROTOCOL.md). Protocol lines go to stdout; anything the method prints goes to "
                    "stderr. Exits when stdin closes.")
    serve.add_argument("plugin", metavar="DIR", help="plugin directory")

    bridge = commands.add_parser("bridge", help="bridge tools (conformance check)",
                                 description="Tools for bridge guests.")
    bridge_commands = bridge.add_subparsers(dest="bridge_command", metavar="COMMAND", required=True)
    check = bridge_commands.add_parser(
        "check", help="run the conformance transcripts against a guest command",
        description="Start COMMAND once per conformance transcript and check every answer. Put the guest's "
                    "command after --, e.g.: mt-eval bridge check -- node my-guest.js")
    check.add_argument("guest", nargs="+", metavar="COMMAND", help="the guest program and its arguments")
    check.add_argument("--vectors", metavar="DIR", help="transcripts to run (default: the bundled ones)")
    check.add_argument("--cwd", metavar="DIR", help="working directory for the guest")

    add_compare_parser(commands)

    schemas = commands.add_parser(
        "schemas", help="write or check the JSON Schemas generated from the SDK's types",
        description="Generate the JSON Schemas of method.json, method cards, entries, results and RunConfig.")
    schemas.add_argument("directory", metavar="DIR", help="where the *.schema.json files live")
    schemas.add_argument("--check", action="store_true", help="do not write; exit 1 if the files are stale")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and args.command == "translate" and not any(e.startswith("-") for e in extra):
        args.texts += extra  # sentences given after an option
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command is None:
        parser.print_help()
        return 2
    try:
        if args.command == "new":
            return scaffold.run_new(args)
        if args.command == "validate":
            from pathlib import Path

            from mt_eval.validate_cli import run_validate

            return run_validate([Path(p) for p in args.plugins], as_json=args.json, strict=args.strict,
                                run_code=args.run_code)
        if args.command == "translate":
            from pathlib import Path

            from mt_eval.translate_cli import run_translate

            return run_translate(Path(args.plugin), args.texts, pair=args.pair, as_json=args.json,
                                 file=Path(args.file) if args.file else None)
        if args.command == "run":
            return run_command(args)
        if args.command == "compare":
            return compare_command(args)
        if args.command == "serve":
            from pathlib import Path

            from mt_eval.bridge.guest import serve

            return serve(Path(args.plugin))
        if args.command == "bridge":
            from mt_eval.bridge.check_cli import run_check

            return run_check(args.guest, vectors=args.vectors, cwd=args.cwd)
        if args.command == "schemas":
            return _run_schemas(args.directory, check=args.check)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    parser.error(f"unknown command {args.command}")


def _run_schemas(directory_name: str, *, check: bool) -> int:
    from pathlib import Path

    from mt_eval.schemas import drifted_schemas, write_schemas

    directory = Path(directory_name)
    if check:
        drift = drifted_schemas(directory)
        for line in drift:
            print(line, file=sys.stderr)
        if drift:
            print(f"regenerate with: mt-eval schemas {directory}", file=sys.stderr)
        return 1 if drift else 0
    for path in write_schemas(directory):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
