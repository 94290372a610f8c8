"""``mt-eval new [DIR]``: a method plugin from the template (`mt_eval.scaffold`), validated before it is placed."""

from __future__ import annotations

import argparse

from mt_eval.cli.usage_errors import named_path

INTERRUPTED = "\nmt-eval new: interrupted"  # (on a line of its own: Ctrl-C at a question leaves "^C" on its line)
DESCRIPTION = """\
Create a method plugin that validates and runs out of the box: method.json with its dependencies and
dependency class, method_card.json, pipeline.py and/or translate.js (decide.js for a decision method), a
README, the plugin's own tests and a sample corpus. Asks its questions interactively unless --no-input is
given."""
EPILOG = """\
questions (--set KEY=VALUE answers one; interactively, it becomes the proposed default):
  method_kind         translation | decision (decide(rows, config): noul, choice and score questions with
                      probabilities, e.g. a grader; generated self-contained, a word-overlap judge)
  method_name         what people call the method (default: from DIR)
  method_id           kebab-case identifier, at most 64 characters (default: from DIR; a DIR with no letters
                      a-z or digits, e.g. 日本語, needs --set method_id=ID)
  runtime             python | node | both (both: identical pipeline.py and translate.js)
  dependency_profile  self-contained      a bundled CC0 glossary                         class S
                      open-artifact       a mirrored open-licence glossary, sha256-pinned class O
                      llm-gateway         any OpenAI-compatible chat endpoint            class A1
                      external-api        a LibreTranslate-compatible external API       class A2
  method_class        pipeline | raw-llm | coached-llm | custom-plugin | api | human
  description, author, method_license (SPDX), open_source (true/false), open_source_url

examples:
  mt-eval new my-method
  mt-eval new plugins/my-llm --no-input --set runtime=both --set dependency_profile=llm-gateway
  mt-eval new my-judge --no-input --set method_kind=decision --set runtime=both
  mt-eval new my-method --answers my-method/.mt-eval-answers.json --no-input --force   # regenerate

exit status: 0 the plugin created; 1 it cannot be created (the template is missing, DIR cannot be written, the
plugin made does not validate, or your changed files were kept); 2 an answer cannot be used, standard input ended
before every question was answered, or DIR cannot be used (not empty without --force, or blank): nothing is
written; 130 interrupted
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description, parser.epilog = DESCRIPTION, EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("directory", nargs="?", metavar="DIR",
                        help="where to create the plugin (default: ./METHOD_ID); must not exist or be empty")
    parser.set_defaults(dashed_operand="DIR")  # (`mt-eval new ----` says to put `--` before it)
    parser.add_argument("--no-input", action="store_true",
                        help="ask nothing: use --set, --answers and the template's defaults")
    parser.add_argument("--set", dest="settings", action="append", default=[], metavar="KEY=VALUE",
                        help="answer one question (repeatable), e.g. --set runtime=node")
    parser.add_argument("--answers", type=named_path, metavar="FILE",
                        help="answers from a JSON file, e.g. a plugin's .mt-eval-answers.json (--set wins)")
    parser.add_argument("--force", action="store_true",
                        help="write into an existing DIR: files the template writes are replaced, those an earlier "
                             "generation wrote that this one does not (e.g. pipeline.py, made again for Node) are "
                             "removed unless you changed them, others kept; a file you changed since it was generated "
                             "is named and kept as NAME.orig (asked first, unless --no-input)")


def run(args: argparse.Namespace) -> int:
    import os
    from pathlib import Path

    from mt_eval.cli.usage_errors import OptionError
    from mt_eval.scaffold import new_plugin

    if args.directory is not None and not args.directory.strip():  # ("$NAME" unset in a script: not the default)
        raise OptionError("DIR", "is blank: give the directory to create, or leave it out for ./METHOD_ID")
    try:
        os.getcwd()  # (rendering the template starts from it: removed, that ended in a traceback)
    except FileNotFoundError:
        from mt_eval.cli.run import CWD_GONE
        from mt_eval.errors import ExpectedError

        raise ExpectedError(CWD_GONE) from None
    return new_plugin(Path(args.directory) if args.directory else None, settings=args.settings,
                      answers_file=args.answers, no_input=args.no_input, force=args.force)
