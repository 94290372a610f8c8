"""What a translator program is called in messages, seen through the commands that only run another one
(``stdbuf -oL``, ``env -u NAME``, ``nice -n 10``, ``timeout 30``…) and the interpreters that run a script."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

# wrapper → (its options that take the next word as their value, the operands it reads before the command)
_WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "stdbuf": (frozenset({"-i", "-o", "-e"}), 0),
    "env": (frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}), 0),
    "nohup": (frozenset(), 0),
    "setsid": (frozenset(), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "ionice": (frozenset({"-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid"}), 0),
    "timeout": (frozenset({"-s", "--signal", "-k", "--kill-after"}), 1),  # its DURATION
    "taskset": (frozenset(), 1),  # its CPU mask or list
    "chrt": (frozenset(), 1),  # its priority
}
_INTERPRETER = re.compile(r"^(python[\d.]*|pypy[\d.]*|node(js)?|perl[\d.]*|ruby[\d.]*|bash|sh|dash|zsh|Rscript)$")
_OPTION_WITH_VALUE = {"-W", "-X", "-r", "--require", "--import", "--loader"}


def wrapped(command: Sequence[str]) -> Sequence[str]:
    """The command the wrappers at the head of ``command`` run (``stdbuf -oL my-mt -x``: ``my-mt -x``); the
    whole ``command`` when it starts with no wrapper, or the wrapper's own when no command follows it."""
    while command and os.path.basename(command[0]) in _WRAPPERS:
        with_value, operands = _WRAPPERS[os.path.basename(command[0])]
        at = 1
        while at < len(command):
            word = command[at]
            if word == "--":
                at += 1
                break
            if word in with_value:
                at += 2
            elif word.startswith("-") or (os.path.basename(command[0]) == "env" and "=" in word):
                at += 1
            else:
                break
        at += operands
        if at >= len(command):
            return command
        command = command[at:]
    return command


def program_name(command: Sequence[str]) -> str:
    """What messages call the program ``command`` runs: its file's name, or for an interpreter, its script's
    (``[sys.executable, "bin/word-mt.py"]``: word-mt.py) or module's (``python -m mymt``: mymt); through
    wrappers (``stdbuf -oL my-mt``: my-mt)."""
    command = wrapped(command)
    program = os.path.basename(command[0])
    if not _INTERPRETER.match(program):
        return program
    arguments = iter(command[1:])
    for argument in arguments:
        if argument == "-m":
            return next(arguments, program)
        if argument in ("-c", "-e", "--eval"):  # code given inline: nothing better to call it
            return program
        if argument in _OPTION_WITH_VALUE:
            next(arguments, None)
        elif not argument.startswith("-"):
            return os.path.basename(argument)
    return program


def runs_under_stdbuf(command: Sequence[str]) -> bool:
    """Whether ``command`` already asks for line buffering through ``stdbuf`` (which a program that sets its own
    buffering, as Python does, ignores)."""
    return any(os.path.basename(word) == "stdbuf" for word in command[:len(command) - len(wrapped(command))])
