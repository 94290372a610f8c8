"""A plain text program started as a bridge guest is told apart during the handshake, and refused at once.

A translator program declared as ``command`` in method.json, though it knows nothing of the bridge, gets the
``initialize`` request as one line of text. It shows what it is in one of two ways, and either fails the start
within a second or two, not after the start timeout:

- it sends the request back as it came (``cat``, a program that copies its input): a request where an answer
  was due;
- it answers with a line that is not a JSON-RPC message but carries the request's own words
  (``protocol_versions``, ``initialize`` — upper-cased, translated around, or echoed): it took the request for
  text;
- it sits in ``read()`` on its standard input, single-threaded, without having answered: it took the request as
  input and waits for more (a filter that buffers its output, or one that answers only at the end of its input).
  Guests are event loops waiting in ``epoll``/``poll``, or answer before they read again (`mt_eval.process_state`).

The message says what was seen and how to wrap such a program (`mt_eval.adapters`).
"""

from __future__ import annotations

import asyncio
from typing import Any

from mt_eval.process_state import group_reads_stdin

POLL_S = 0.25
READING_FOR_S = 1.0  # blocked reading its stdin this long, with initialize unanswered: not a guest
WRAP_HINT = ("to use a program that reads text and writes translations, wrap it: an entry_point class whose "
             "translate() calls mt_eval.adapters.ProcessTranslator([...], framing=LINES), in place of \"command\" "
             "(README: \"Wrapping a translator program\")")


def echoes_request(line: bytes) -> bool:
    """Whether a non-protocol line carries the initialize request's own words."""
    lower = line.lower()
    return b"protocol_versions" in lower or (b"initialize" in lower and b"jsonrpc" in lower)


def not_a_guest_message(label: str, seen: bytes | None, *, echoed: bool = False) -> str:
    """Why ``label`` is not a guest: it sent the request back (``echoed``), answered with the line ``seen``, or
    waits for more input."""
    if echoed:
        what = "it sent the initialize request back instead of answering it"
    elif seen is not None:
        shown = seen.decode("utf-8", "replace")
        shown = shown if len(shown) <= 100 else shown[:100] + "…"
        what = f"it answered the initialize request with a line of text ({shown!r})"
    else:
        what = "it read the initialize request and waits for more input without answering"
    return (f"{label} is not a bridge guest: {what}, as a text filter does; a \"command\" in method.json must speak "
            f"mt-eval-bridge/1 (bridge/PROTOCOL.md). {WRAP_HINT[0].upper()}{WRAP_HINT[1:]}")


async def watch_handshake(connection: Any, fail: Any) -> None:
    """While ``connection`` (a `GuestConnection`) waits for its initialize answer: call ``fail(message)`` as
    soon as the guest shows it is a plain text program. Cancelled when the handshake ends."""
    loop = asyncio.get_running_loop()
    reading_since: float | None = None
    while True:
        await asyncio.sleep(POLL_S)
        junk = connection.first_junk
        if junk is not None and echoes_request(junk):
            fail(not_a_guest_message(connection.label, junk))
            return
        if group_reads_stdin(connection.pid, single_threaded=True):
            reading_since = reading_since if reading_since is not None else loop.time()
            if loop.time() - reading_since >= READING_FOR_S:
                fail(not_a_guest_message(connection.label, None))
                return
        else:
            reading_since = None
