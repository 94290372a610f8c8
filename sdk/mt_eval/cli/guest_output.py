"""What a method served by a bridge guest writes to its stderr, shown as an in-process method's output is.

A method loaded in this process prints straight to the terminal. One served by a guest (a Node method, a Python
method under ``--isolate`` or ``--sandbox``) writes to the guest's stderr, which the bridge host reads and logs
line by line on ``mt_eval.bridge.guest`` (`mt_eval.child_stderr.StderrTail`). The commands that run methods
(their module sets ``SHOWS_GUEST_OUTPUT``) write those lines to their own stderr, so that a method's
``console.log`` or ``print()`` is seen wherever it runs. The guest kits' own lines are left out: each starts
with the kit's name (`KIT_PREFIXES`), and what they say (a failed call and its stack) is in that call's error
already; they stay in the stderr tail a failure quotes, but for the Node guest's report of a call it answered failed
(`mt_eval.child_stderr.stderr_lines`), which that call's error holds.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from mt_eval.bridge import GUEST_LOGGER
from mt_eval.child_stderr import STDERR_LINE

# The guests' own lines: the Node guest kit's, the Python guest's, the Node host kit's warnings, the sandbox's.
KIT_PREFIXES = ("mt-eval-guest: ", "mt-eval serve: ", "mt-eval-bridge: ", "bwrap: ")


class GuestOutput(logging.Handler):
    """Writes the method's own stderr lines, and the warnings a guest sends (its ``log`` notifications), to this
    process's stderr as it is when each arrives (a progress bar may have taken it over, to print above itself)."""

    def emit(self, record: logging.LogRecord) -> None:
        line = getattr(record, STDERR_LINE, None)
        if line is None:  # a guest's log notification: shown from WARNING, as logging shows any warning
            if record.levelno < logging.WARNING:
                return
            line = record.getMessage()
        elif line.startswith(KIT_PREFIXES):
            return
        try:
            sys.stderr.write(line.removesuffix("\r") + "\n")
            sys.stderr.flush()
        except (OSError, ValueError):  # stderr's reader is gone or it is closed: nowhere left to show it
            pass


@contextmanager
def shown() -> Iterator[None]:
    """Inside the block, guest output is shown (see the module docstring)."""
    logger = logging.getLogger(GUEST_LOGGER)
    handler = GuestOutput()
    level = logger.level
    logger.addHandler(handler)
    if not logger.isEnabledFor(logging.INFO):
        logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
