"""What a failing translator program probably did wrong, and the fix, in the words its entries' errors carry.

Only failure paths call these: a record answered as expected never builds a message.
"""

from __future__ import annotations

import errno
import os
import re
import shlex
import shutil
from collections.abc import Sequence
from pathlib import Path

from mt_eval.adapters.framing import Framing
from mt_eval.adapters.program_names import runs_under_stdbuf, wrapped
from mt_eval.child_spawn import not_a_program
from mt_eval.process_state import group_reads_stdin


def shown_answers(answers: Sequence[bytes], count: int, encoding: str = "utf-8") -> str:
    """The first ``answers`` of ``count``, short and escaped, for a message: ``'Loading…', 'T:A', …``."""
    shown = ", ".join(repr(answer.decode(encoding, "replace")[:80]) for answer in answers)
    return shown + ", …" if count > len(answers) else shown


def answer_count_mismatch(label: str, found: int, records: int, framing: Framing, output: bytes) -> str:
    """A batch's output with ``found`` answers for ``records`` records: the first of them, and for more answers
    than records (a banner, warnings on stdout) the fix."""
    message = f"{label} gave {found} answer{'s' if found != 1 else ''} for {records} record(s) ({framing.name} framing)"
    if found:
        message += f": {shown_answers(output.split(framing.terminator, 2)[:min(found, 2)], found, framing.encoding)}"
    if found > records:
        message += ". More answers than records: a banner or warnings on its stdout? Fix: print them to stderr"
        if framing.aligned:
            message += (", or, if it answers each line as it reads it, run it persistent (the default) with LINES "
                        "framing, whose markers tell a banner from answers")
    return message


def oversized_answer(label: str, limit: int) -> str:
    """For an answer that grew past ``ProcessOptions.max_record_bytes`` without its terminator."""
    return (f"{label} sent an answer over {limit:,} bytes without ending it. Fix: make it end each answer with the "
            "framing's terminator (and flush it), or, if its answers are that long, raise "
            "ProcessOptions.max_record_bytes")

# The cause and the fix for a persistent program that exits after each answer (`mt_eval.adapters.stage`).
ONE_SHOT = ("it reads one record and exits. Fix: run it with persistent=False (one process per batch), or make it "
            "read records until its input ends")


def no_answer_for_blank(record: bytes, where: str) -> str:
    """What a program that wrote nothing for an empty or blank ``record`` did, and the fix; ``where`` places the line
    in its text (empty for a text of one line)."""
    blank, a_blank = ("empty", "an empty") if not record else ("blank", "a blank")
    return (f"{a_blank} {'line' if where else 'text'}{where}: a program that writes nothing for {blank} lines? Fix: "
            f"make it answer every line (with an empty line for {a_blank} one), or decline texts without words in "
            "translate() (README: \"Recipe: a program as a method\")")


def closed_input(label: str, timeout_s: float) -> str:
    """For a program that closed its stdin, is still running, and answers no more."""
    return (f"{label} gave no answer within {timeout_s:g} s: it closed its input and kept running, so it reads no "
            "more records. Fix: make it read records until its input ends, or run it with persistent=False (one "
            "process per batch) if it reads one input and exits")


def still_busy() -> str:
    """For a program that wrote nothing and, busy, is not reading its input: still starting, or slow."""
    return (" and wrote nothing at all, busy without reading more input: still starting (loading a model)? Fix: a "
            "longer timeout (mt-eval run --timeout, or ProcessOptions.timeout_s), which covers its start")


def buffering_hint(command: Sequence[str], pid: int | None, *, lead: str = " and wrote nothing at all") -> str:
    """Why a program that wrote nothing on its stdout probably did, and the fixes for the program ``command`` runs
    (a clause to append: ``lead``, then whether it waits for input, then the fixes)."""
    waits = ", and waits for more input" if group_reads_stdin(pid) else ""
    program = os.path.basename(wrapped(command)[0])
    if re.match(r"python[\d.]*$", program):  # (stdbuf does nothing for Python, which buffers on its own)
        fixes = f"{program} -u …, PYTHONUNBUFFERED=1 in its environment, print(..., flush=True)"
    elif runs_under_stdbuf(command):  # (a program that sets its own buffering ignores stdbuf)
        fixes = f"{program} sets its own buffering, which stdbuf does not change: its own unbuffered flag " \
                "(--unbuffered, --flush)"
    else:
        fixes = f"stdbuf -oL {program} …, its own unbuffered flag (--unbuffered, --flush)"
    return (f"{lead}{waits}: it buffers its output (as programs writing to a pipe do). Fix: {fixes}, or "
            "persistent=False; README: \"Wrapping a translator program\"")


def cannot_start(label: str, command: Sequence[str], error: OSError, cwd: str | os.PathLike[str] | None) -> str:
    """Why the program ``command`` runs could not be started, and the fix."""
    program = command[0]
    why = not_a_program(program, cwd)
    if why is None and isinstance(error, FileNotFoundError):
        if os.sep not in program:
            why = "it is not installed, or not on PATH (install it, or give its full path)"
        elif Path(cwd or ".", program).is_file():
            why = "the interpreter its #! line names is not installed (install it, or run the file with its " \
                  "interpreter: [interpreter, path])"
        else:
            why = "no such file (a program in the plugin: build its path from the plugin directory, " \
                  "directory / \"bin\" / NAME, which holds wherever the run starts)"
        if not Path(cwd or ".", program).exists() and _runs(_words(program), cwd):  # a command line as its name
            why = f"no program is called that: its name holds spaces. Fix: give the program and its arguments as " \
                  f"separate words, {command_words(program)}"
    elif why is None and error.errno == errno.ENOEXEC:
        why = f"the system cannot run it: {_not_runnable(Path(cwd or '.', program))}"
    return f"cannot start {label} ({program}): {why or error.strerror or error}"


def command_words(command: str) -> str:
    """The argv a command line given as one string stands for, as a list to paste (``["my-mt", "-x"]``)."""
    return "[" + ", ".join(f'"{word}"' for word in _words(command)) + "]"


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:  # (an unclosed quote)
        return command.split()


def _runs(words: list[str], cwd: str | os.PathLike[str] | None) -> bool:
    """Whether ``words`` are a command line whose first word is a program (on PATH, or a file)."""
    if len(words) < 2:
        return False
    return shutil.which(words[0]) is not None if os.sep not in words[0] else Path(cwd or ".", words[0]).is_file()


def _not_runnable(path: Path) -> str:
    """Why a file that exists and may be executed is no program the system runs (ENOEXEC), and the fix."""
    try:
        with path.open("rb") as file:
            head = file.read(4)
    except OSError:
        head = b""
    if head.startswith(b"\x7fELF") or not head:
        return "it is empty, or a program built for another system or processor (build it for this one)"
    runner = {".py": "python3", ".js": "node", ".mjs": "node", ".cjs": "node"}.get(path.suffix, "sh")
    first_line = "#!/bin/sh" if runner == "sh" else f"#!/usr/bin/env {runner}"
    return (f"a script without a #! line naming its interpreter. Fix: make its first line {first_line}, or run it "
            f"with its interpreter: [\"{runner}\", \"{path}\"]")
