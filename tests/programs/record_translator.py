"""A translator program that knows nothing of the bridge, for the adapter tests.

It answers each record with "T:" and the record upper-cased, followed by the same terminator: NUL with
``--null``, else a newline. ``--batch`` reads all of its input before answering anything. Records that
start with a marker misbehave:

  !crash    writes "crashing on purpose" to stderr and exits with status 3
  !hang     stops answering (until killed)
  !taint    writes "state changed" to stderr; every later answer starts with "tainted "
  !big      writes 4 KiB without a terminator, then hangs
  !exit0    exits with status 0 at once
  !slow     sleeps 0.2 s before answering
  !warn     writes an extra answer, "warning: low confidence", before its own (as a program printing a
            warning on stdout does)
  !skip     writes no answer at all

``--child`` starts a long ``sleep`` in the program's process group (to check that nothing is left behind);
``--die-at-start`` writes a message to stderr and exits with status 2 before reading anything.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator


def answer(record: bytes, state: dict[str, bool]) -> bytes | None:
    if record.startswith(b"!crash"):
        sys.stderr.write("crashing on purpose\n")
        sys.stderr.flush()
        sys.exit(3)
    if record.startswith(b"!hang"):
        time.sleep(3600)
    if record.startswith(b"!big"):
        sys.stdout.buffer.write(b"x" * 4096)
        sys.stdout.buffer.flush()
        time.sleep(3600)
    if record.startswith(b"!exit0"):
        sys.exit(0)
    if record.startswith(b"!skip"):
        return None
    if record.startswith(b"!slow"):
        time.sleep(0.2)
    if record.startswith(b"!taint"):
        state["tainted"] = True
        sys.stderr.write("state changed\n")
        sys.stderr.flush()
    prefix = b"tainted " if state["tainted"] else b""
    return prefix + b"T:" + record.decode("utf-8").upper().encode("utf-8")


def records(terminator: bytes) -> Iterator[bytes]:
    """Records as soon as their terminator has arrived (read1 returns what the pipe holds)."""
    buffer = b""
    read = sys.stdin.buffer.read1
    while True:
        chunk = read(65536)
        if not chunk:
            return
        buffer += chunk
        *complete, buffer = buffer.split(terminator)
        yield from complete


def main() -> None:
    args = sys.argv[1:]
    if "--die-at-start" in args:
        sys.stderr.write("cannot load my model\n")
        sys.exit(2)
    if "--child" in args:
        subprocess.Popen(["sleep", "3600"])
    terminator = b"\0" if "--null" in args else b"\n"
    state = {"tainted": False}
    out = sys.stdout.buffer
    if "--batch" in args:
        data = sys.stdin.buffer.read()
        parts = data.split(terminator)
        if parts and parts[-1] == b"":
            parts.pop()
        out.write(b"".join(framed(part, state, terminator) for part in parts))
        out.flush()
        return
    for record in records(terminator):
        out.write(framed(record, state, terminator))
        out.flush()


def framed(record: bytes, state: dict[str, bool], terminator: bytes) -> bytes:
    """What the program writes for one record: its answer (or none), after a warning for "!warn"."""
    text = answer(record, state)
    warning = b"warning: low confidence" + terminator if record.startswith(b"!warn") else b""
    return warning + (b"" if text is None else text + terminator)


if __name__ == "__main__":
    main()
