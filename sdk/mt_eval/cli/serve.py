"""``mt-eval serve DIR``: serve a Python method plugin over stdin/stdout as a bridge guest.

Stdout is diverted at the file-descriptor level before the plugin is imported (`mt_eval.bridge.guest`), so a
``print()`` anywhere in a method lands in the host's logs instead of corrupting the protocol.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from mt_eval.cli.arguments import with_examples
from mt_eval.cli.usage_errors import plugin_operand

KEEPS_SIGNAL_DEFAULTS = True  # a guest ends at once when its host sends SIGTERM (`mt_eval.cli.termination`)
EXIT_STATUSES = """\
0 standard input closed; 1 the plugin cannot be loaded, or its answers cannot be written; 2 usage
(standard output closed, MT_EVAL_GUEST_POLL_US not a number of microseconds); 130 interrupted (Ctrl-C); 141 the
reader of the answers went away. SIGTERM and SIGHUP end it at once, as they end any program (a shell says 143, 129)"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Serve a Python method plugin as a bridge guest (protocol mt-eval-bridge/1, see "
                    "bridge/PROTOCOL.md). Protocol lines go to stdout; anything the method prints goes to "
                    "stderr. Exits when stdin closes.")
    parser.add_argument("plugin", type=plugin_operand, metavar="DIR", help="plugin directory")
    with_examples(parser, "mt-eval serve examples/lexicon-eng-spa < /dev/null   # loads the plugin, then ends",
                  "mt-eval serve examples/lexicon-eng-spa < requests.jsonl > answers.jsonl   # one request a line",
                  "mt-eval bridge check -- mt-eval serve examples/lexicon-eng-spa   # what a host does with it",
                  exit_statuses=EXIT_STATUSES)


def run(args: argparse.Namespace) -> int:
    """Load the plugin and serve it until stdin closes; the exit status for the process."""
    from mt_eval.bridge.guest import divert_stdout, serve_method
    from mt_eval.bridge.input_poll import poll_seconds
    from mt_eval.cli import STARTED_CLOSED, said_on_stderr
    from mt_eval.errors import UsageError
    from mt_eval.loader import PluginLoadError, entry_module_file, load_method

    if 1 in STARTED_CLOSED:  # (`console_main` put /dev/null in its place: every answer would be lost)
        raise UsageError("standard output is closed: mt-eval serve answers the host on it, so no answer would reach "
                         "anyone; start it with its standard output open, on a pipe the host reads (as mt-eval run "
                         "and Node's loadMethodPlugin do), or redirected to a file: mt-eval serve DIR < requests.jsonl "
                         "> answers.jsonl")
    poll_seconds()  # an unusable MT_EVAL_GUEST_POLL_US is named before the plugin loads
    protocol_fd = divert_stdout()
    try:
        loaded = load_method(Path(args.plugin))
    except PluginLoadError as exc:
        # every line carries the command's name, as the Node guest kit's do: a host tells them from what the
        # method printed (`mt_eval.cli.guest_output`); the path and values read from the plugin's files are escaped
        said_on_stderr("\n".join(f"mt-eval serve: {line}" for line in str(exc).splitlines()))
        return 1
    if os.isatty(0):
        said_on_stderr(f"mt-eval serve: serving {loaded.method_id} as a bridge guest (mt-eval-bridge/1, "
                       "bridge/PROTOCOL.md): type JSON-RPC requests, one per line, starting with initialize; Ctrl-D "
                       "ends. A host (mt-eval run, Node's loadMethodPlugin) normally starts this command itself.")
    return serve_method(loaded.method, protocol_fd, name=loaded.manifest.name, method_id=loaded.method_id,
                        implements=loaded.manifest.implements, module_file=entry_module_file(loaded.source))
