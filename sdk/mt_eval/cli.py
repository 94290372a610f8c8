"""The ``mt-eval`` command. Subcommands import their machinery only when they run, so ``--help`` is fast."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from mt_eval import __version__

DESCRIPTION = "Build, validate and evaluate machine-translation method plugins."
EPILOG = """\
examples:
  mt-eval validate examples/lexicon-eng-spa     check a plugin and show its dependency class
  mt-eval validate --json plugins/*             machine-readable report for CI
  mt-eval schemas --check bridge/schemas        fail if the JSON Schemas drifted from the code
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mt-eval", description=DESCRIPTION, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"mt-eval {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    validate = commands.add_parser(
        "validate", help="check method plugins: every problem at once, and the dependency class each earns",
        description="Check method plugin directories: method.json, method_card.json and the Python entry "
                    "point. Every problem is reported with its file, JSON path and a fix. Exit status 0 "
                    "when all plugins are valid, 1 otherwise.")
    validate.add_argument("plugins", nargs="+", metavar="DIR", type=Path, help="plugin directories")
    validate.add_argument("--json", action="store_true", help="print a JSON report instead of text")
    validate.add_argument("--strict", action="store_true", help="treat warnings as errors")
    validate.add_argument("--no-import", dest="run_code", action="store_false",
                          help="check the files only; do not import or construct the method")

    schemas = commands.add_parser(
        "schemas", help="write or check the JSON Schemas generated from the SDK's types",
        description="Generate the JSON Schemas of method.json, method cards, entries, results and RunConfig.")
    schemas.add_argument("directory", type=Path, metavar="DIR", help="where the *.schema.json files live")
    schemas.add_argument("--check", action="store_true", help="do not write; exit 1 if the files are stale")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        if args.command == "validate":
            from mt_eval.validate_cli import run_validate

            return run_validate(args.plugins, as_json=args.json, strict=args.strict, run_code=args.run_code)
        if args.command == "schemas":
            return _run_schemas(args.directory, check=args.check)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    parser.error(f"unknown command {args.command}")
    return 2


def _run_schemas(directory: Path, *, check: bool) -> int:
    from mt_eval.schemas import drifted_schemas, write_schemas

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
