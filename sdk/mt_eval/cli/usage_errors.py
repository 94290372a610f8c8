"""Usage errors that point at the fix: the usage of the (sub)command that was meant, and the closest real
command or option to what was typed (``--metod`` → ``--method``)."""

from __future__ import annotations

import argparse
import re

TYPE_CHECKING = False  # see mt_eval/__init__.py (imported on every start of the command line)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import NoReturn


def innermost_parser(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.ArgumentParser:
    """The parser of the deepest subcommand named in ``argv`` (``mt-eval leaderboard serve`` → serve's)."""
    current = parser
    for word in argv:
        if word == "--":
            break
        if word.startswith("-"):
            continue
        choices = subcommands(current)
        if word not in choices:
            continue
        current = choices[word]
    return current


def unknown_arguments(parser: argparse.ArgumentParser, argv: Sequence[str], extra: Sequence[str]) -> NoReturn:
    """Exit 2 with the usage of the subcommand ``argv`` names, the words it did not recognise and, for a
    misspelled option, the closest one it has. Words beyond a command's last operand get what its parser's
    ``surplus_operands`` default says instead (how many it takes and what to do to give more)."""
    chosen = innermost_parser(parser, argv)
    surplus = chosen.get_default("surplus_operands")
    if surplus and not any(word.startswith("-") for word in extra):
        chosen.error(f"{'one argument' if len(extra) == 1 else f'{len(extra)} arguments'} too many "
                     f"({' '.join(extra)}): {surplus}")
    options = sorted({o for action in chosen._actions for o in action.option_strings if o.startswith("--")})
    after_end = set(argv[list(argv).index("--") + 1:]) if "--" in argv else set()
    hints = []
    for word in extra:
        typed = word.split("=", 1)[0]
        if word in after_end and typed in options:  # (argparse read it as a value, as -- asks)
            hints.append(f"{typed}: it comes after `--`, where no word is read as an option: put it before `--`")
        elif word.startswith("-"):
            import difflib

            close = difflib.get_close_matches(typed, options, n=1, cutoff=0.6)
            if close and close[0] != typed:
                hints.append(f"{typed}: did you mean {close[0]}?")
            elif (operand := chosen.get_default("dashed_operand")) and word in argv and "--" not in argv:
                hints.append(_dashed_operand_hint(chosen.prog, operand, argv, word))
    message = f"unrecognized arguments: {' '.join(extra)}"
    if hints:
        message += "\n  " + "\n  ".join(hints)
    message += f"\n  `{chosen.prog} --help` lists its options"
    chosen.error(message)


def _dashed_operand_hint(prog: str, operand: str, argv: Sequence[str], word: str) -> str:
    """For a command whose ``operand`` may start with "-" (its parser's ``dashed_operand`` default): how to give
    ``word`` as that operand, the command line with ``--`` before it."""
    import shlex

    given = list(argv)
    given.remove(word)
    fixed = shlex.join([*given, "--", word])
    return f"{word}: if it is the {operand}, put `--` before it: `{prog.split()[0]} {fixed}`"


def unknown_command(parser: argparse.ArgumentParser, word: str) -> NoReturn:
    """Exit 2 naming the closest command to ``word``."""
    names = list(subcommands(parser))
    import difflib

    close = difflib.get_close_matches(word, names, n=1, cutoff=0.5)
    suggestion = f"; did you mean {close[0]}?" if close else ""
    parser.error(f"unknown command '{word}'{suggestion} (the commands: {', '.join(names)})")


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The subcommands of ``parser`` by name (none: {})."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


class OptionError(Exception):
    """A usage error found once the options are parsed (options that cannot go together, one that does nothing
    without another): `mt_eval.cli.main` shows it as argparse shows its own — the usage of the command, then
    ``PROG: error: argument OPTION: MESSAGE`` — and exits 2, before any work."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(f"argument {option}: {message}")
        self.option = option


def option_error(parser: argparse.ArgumentParser, argv: Sequence[str], error: OptionError) -> int:
    """Say ``error`` with the usage of the (sub)command ``argv`` names, as argparse says its own; the exit status."""
    import sys

    from mt_eval.control_chars import escaped_for_terminal

    chosen = innermost_parser(parser, argv)
    chosen.print_usage(sys.stderr)
    print(escaped_for_terminal(f"{chosen.prog}: error: {error}"), file=sys.stderr)  # (as `mt_eval.cli.main`'s own)
    return 2


def named_path(text: str) -> str:
    """An argparse ``type``: a path, not empty (``--config "$FILE"`` with ``FILE`` unset had quietly used the default,
    or read the current directory as the file)."""
    return _not_empty(text, "give the path, or leave the option out")


def path_operand(text: str) -> str:
    """An argparse ``type`` for a path given as an operand or a required option, not empty (``mt-eval verify "$CARD"``
    with ``CARD`` unset had read the current directory)."""
    return _not_empty(text, "give the path")


def plugin_operand(text: str) -> str:
    """`path_operand` for a method plugin's directory (its method.json stands for it: `method_directory`)."""
    return method_directory(path_operand(text))


def named_plugin(text: str) -> str:
    """`named_path` for a method plugin's directory (its method.json stands for it: `method_directory`)."""
    return method_directory(named_path(text))


def method_directory(text: str) -> str:
    """An argparse ``type``: a method plugin's directory, on every command that takes one; its method.json given
    instead stands for its directory (as `mt_eval.loader.load_method` takes it), which is what the run card and
    every message then name."""
    from pathlib import Path

    path = Path(text)
    return str(path.parent) if path.name == "method.json" and path.is_file() else text


def _not_empty(text: str, fix: str) -> str:
    if not text:
        raise argparse.ArgumentTypeError(f"must name a path, got '' (a variable meant to hold it that is unset or "
                                         f"empty?): {fix}")
    return text


WAIT_VALUES = ("give a number of seconds, 0 or more (e.g. --wait 300), or inf (or --wait alone) to wait as long as it "
               "takes")
WAIT_LIMIT = "at most SECONDS, 0 or more; inf, or --wait alone: as long as it takes"  # (as each --help says it)


def wait_value(text: str) -> float | None:
    """``--wait``'s seconds: 0 or more, or inf (as long as it takes); None for anything else. The values every command
    with --wait takes (the Node ``mt-eval-locales`` too), refused in the words of `WAIT_VALUES`."""
    return float(text) if re.fullmatch(r"\d+(\.\d*)?|\.\d+|inf", text) else None
