"""Arguments and entry points of the plugin tools: validate, translate, serve, bridge check, schemas.

`mt_eval.cli` imports this module only when one of these commands runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mt_eval.pairs import pair_argument


def add_validate(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Check method plugin directories: method.json, method_card.json, a static scan of the "
                          "code against the declared dependencies, and every entry point they declare, started "
                          "inside the sandbox: the Python entry imported and built, the Node entry loaded through "
                          "the Node guest, a command started for the bridge handshake, and a plugin with both a "
                          "Python and a Node entry translating a few probe sentences with both (a difference is a "
                          "warning). Every problem is reported with its file, JSON path or line, and a fix. Exit "
                          "status 0 when all plugins are valid, 1 otherwise.")
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = ("examples:\n  mt-eval validate examples/lexicon-eng-spa\n"
                     "  mt-eval validate --json --strict examples/*-eng-spa\n"
                     "  mt-eval validate --no-import my-method      # files and scan only: runs no plugin code\n"
                     "  mt-eval validate --no-sandbox my-method     # import on this host (trusted code only)")
    parser.add_argument("plugins", nargs="+", metavar="DIR", help="plugin directories")
    parser.add_argument("--json", action="store_true", help="print a JSON report instead of text")
    parser.add_argument("--strict", action="store_true", help="treat warnings as errors")
    parser.add_argument("--no-import", dest="run_code", action="store_false",
                        help="check the files only; do not import, start or run the method")
    parser.add_argument("--no-sandbox", dest="sandbox", action="store_false",
                        help="import the entry point on this host instead of in the sandbox (only for code you "
                             "trust; the default confines it, so validating runs nothing on the host)")
    parser.add_argument("--no-scan", dest="scan", action="store_false",
                        help="skip the static scan of the plugin's code (network, downloads, programs, dynamic "
                             "code, files outside the plugin) against its declared dependencies")
    parser.add_argument("--timeout", type=float, default=10.0, metavar="S",
                        help="seconds a guest (Node entry, command) gets to start and to translate the probes "
                             "(default 10)")
    parser.add_argument("--corpus", action="append", default=[], metavar="FILE",
                        help="also run the contamination check against this evaluation corpus (repeatable): "
                             "contaminated is an error, unverified a warning")


def run_validate(args: argparse.Namespace) -> int:
    from mt_eval.validate_cli import run_validate as report

    return report([Path(p) for p in args.plugins], as_json=args.json, strict=args.strict, run_code=args.run_code,
                  scan=args.scan, sandbox=args.sandbox, corpora=[Path(c) for c in args.corpus],
                  timeout_s=args.timeout)


def add_translate(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Load a method plugin and translate the sentences given as arguments, or one sentence "
                    "per line of standard input.")
    parser.add_argument("plugin", metavar="DIR", help="plugin directory")
    parser.add_argument("texts", nargs="*", metavar="TEXT", help="sentences (default: lines of stdin)")
    parser.add_argument("--pair", type=pair_argument, metavar="'SRC>TGT'",
                        help="language pair, quoted ('eng>spa') or as eng:spa (default: the method's first "
                             "supported pair)")
    parser.add_argument("--file", "-f", metavar="FILE",
                        help="read the sentences from FILE: one per line, or the sources of a .json, .jsonl or .tsv "
                             "corpus (read as mt-eval run reads it)")
    parser.add_argument("--json", action="store_true", help="print one JSON result per line")
    with_examples(parser, 'mt-eval translate examples/lexicon-eng-spa "Good morning, my friend."',
                  "mt-eval translate examples/lexicon-eng-spa --file examples/lexicon-eng-spa/sample.txt",
                  "echo 'The cat drinks water.' | mt-eval translate examples/lexicon-eng-spa --pair eng:spa --json",
                  "mt-eval translate examples/apertium-eng-spa --pair 'spa>eng' \"Buenos días.\"   # needs apertium")


def with_examples(parser: argparse.ArgumentParser, *lines: str) -> None:
    """An ``examples:`` block under the options, one command a line, as it is pasted."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = "examples:\n" + "\n".join(f"  {line}" for line in lines)


def run_translate(args: argparse.Namespace) -> int:
    from mt_eval.translate_cli import run_translate as translate

    return translate(Path(args.plugin), args.texts, pair=args.pair, as_json=args.json,
                     file=Path(args.file) if args.file else None)


def add_serve(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Serve a Python method plugin as a bridge guest (protocol mt-eval-bridge/1, see "
                    "bridge/PROTOCOL.md). Protocol lines go to stdout; anything the method prints goes to "
                    "stderr. Exits when stdin closes.")
    parser.add_argument("plugin", metavar="DIR", help="plugin directory")
    with_examples(parser, "mt-eval serve examples/lexicon-eng-spa < /dev/null   # loads the plugin, then ends",
                  "mt-eval serve examples/lexicon-eng-spa < requests.jsonl > answers.jsonl   # one request a line",
                  "mt-eval bridge check -- mt-eval serve examples/lexicon-eng-spa   # what a host does with it")


def run_serve(args: argparse.Namespace) -> int:
    from mt_eval.bridge.guest import serve

    return serve(Path(args.plugin))


def add_bridge(parser: argparse.ArgumentParser) -> None:
    parser.description = "Tools for bridge guests."
    bridge_commands = parser.add_subparsers(dest="bridge_command", metavar="COMMAND", required=True)
    check = bridge_commands.add_parser(
        "check", help="run the conformance transcripts against a guest command",
        description="Start COMMAND once per conformance transcript and check every answer. Put the guest's "
                    "command after --, e.g.: mt-eval bridge check -- node my-guest.js")
    check.add_argument("guest", nargs="+", metavar="COMMAND", help="the guest program and its arguments")
    check.add_argument("--vectors", metavar="DIR", help="transcripts to run (default: the bundled ones)")
    check.add_argument("--cwd", metavar="DIR", help="working directory for the guest")
    for each in (parser, check):
        with_examples(each, "mt-eval bridge check -- mt-eval serve examples/lexicon-eng-spa",
                      "mt-eval bridge check -- node bridge/node/bin/mt-eval-guest.js examples/termbase-eng-spa",
                      "mt-eval bridge check --cwd my-guest -- ./my-guest --serve   # a guest in any language")


def run_bridge(args: argparse.Namespace) -> int:
    from mt_eval.bridge.check_cli import run_check

    return run_check(args.guest, vectors=args.vectors, cwd=args.cwd)


def add_schemas(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Generate the JSON Schemas of method.json, method cards, entries, results, RunConfig, run "
                          "cards, bridge messages and champollion.config.json from the SDK's types, and what the Node "
                          "package validates with (NODE/lib/generated/: the schemas, the licence table, TypeScript "
                          "types).")
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = ("examples:\n  mt-eval schemas bridge/schemas            # regenerate after changing a Struct\n"
                     "  mt-eval schemas --check bridge/schemas    # exit 1 if anything generated is stale")
    parser.add_argument("directory", metavar="DIR", help="where the *.schema.json files live")
    parser.add_argument("--node", metavar="NODE", help="the Node package (default: DIR/../node, when it exists)")
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 if the files are stale")


def run_schemas(args: argparse.Namespace) -> int:
    from mt_eval.schemas import drifted_schemas, node_directory, write_schemas

    directory = Path(args.directory)
    node = Path(args.node) if args.node else node_directory(directory)
    node_or_none = node if (node / "package.json").is_file() else None
    if args.node and node_or_none is None:
        print(f"mt-eval schemas: --node {node}: no package.json there", file=sys.stderr)
        return 2
    if args.check:
        drift = drifted_schemas(directory, node_or_none)
        for line in drift:
            print(line, file=sys.stderr)
        if drift:
            print(f"regenerate with: mt-eval schemas {directory}", file=sys.stderr)
        return 1 if drift else 0
    for path in write_schemas(directory, node_or_none):
        print(f"wrote {path}")
    return 0
