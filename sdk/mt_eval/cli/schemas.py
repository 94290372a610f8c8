"""``mt-eval schemas DIR``: write (or ``--check``) the JSON Schemas generated from the SDK's types, and what the
Node package validates with."""

from __future__ import annotations

import argparse
from pathlib import Path

from mt_eval.cli.usage_errors import path_operand


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Generate the JSON Schemas of method.json, method cards, entries, results, RunConfig, run "
                          "cards, bridge messages and champollion.config.json from the SDK's types, and what the Node "
                          "package validates with (NODE/lib/generated/: the schemas, their defaults, the licence "
                          "table, TypeScript types).")
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = ("examples:\n  mt-eval schemas bridge/schemas            # regenerate after changing a Struct\n"
                     "  mt-eval schemas --check bridge/schemas    # exit 1 if anything generated is stale\n"
                     "\nexit status: 0 the files written, or (--check) up to date; 1 (--check) a file is stale, "
                     "missing or left over,\nor a file cannot be written (DIR is a file); 2 usage (--node without "
                     "a package.json); 130 interrupted")
    parser.add_argument("directory", type=path_operand, metavar="DIR", help="where the *.schema.json files live")
    parser.add_argument("--node", metavar="NODE", help="the Node package (default: DIR/../node, when it exists)")
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 if the files are stale")


def run(args: argparse.Namespace) -> int:
    from mt_eval.cli import said_on_stderr
    from mt_eval.control_chars import escaped_for_terminal
    from mt_eval.errors import ExpectedError
    from mt_eval.schemas import STRAY, drifted_schemas, node_directory, stray_schemas, write_schemas

    directory = Path(args.directory)
    if directory.exists() and not directory.is_dir():
        raise ExpectedError(f"{directory} is a file: give the directory the *.schema.json files live in")
    node = Path(args.node) if args.node else node_directory(directory)
    node_or_none = node if (node / "package.json").is_file() else None
    if args.node and node_or_none is None:
        said_on_stderr(f"mt-eval schemas: --node {node}: no package.json there")
        return 2
    if args.check:
        drift = drifted_schemas(directory, node_or_none)
        for line in drift:  # (each names a path)
            said_on_stderr(line)
        if any(not line.endswith(STRAY) for line in drift):
            said_on_stderr(f"regenerate with: mt-eval schemas {directory}")
        return 1 if drift else 0
    try:
        for path in write_schemas(directory, node_or_none):
            print(escaped_for_terminal(f"wrote {path}"))
    except OSError as exc:
        raise ExpectedError(f"cannot write {exc.filename}: {exc.strerror or exc}") from exc
    for path in stray_schemas(directory, node=node_or_none):
        said_on_stderr(f"mt-eval schemas: warning: {path}: {STRAY}")
    return 0
