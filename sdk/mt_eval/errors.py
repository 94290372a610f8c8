"""Errors the user can fix, as opposed to bugs.

An `ExpectedError` means the input, the environment or a method is at fault, not the SDK: ``mt-eval`` prints
it as one line — what is wrong, where, and the fix — and exits with its ``exit_status``; only a bug shows a
traceback (`mt_eval.cli.main` is the one place that decides). Library code raises these (or its own
subclasses) wherever a user's file, flag or method is the cause.
"""

from __future__ import annotations


class ExpectedError(Exception):
    """What went wrong and how to fix it, in one message; ``exit_status`` is what ``mt-eval`` exits with."""

    exit_status: int = 1
    fix: str | None = None  # said after the message, e.g. "give --wait to wait"

    def one_line(self) -> str:
        return f"{self}. {self.fix}" if self.fix else str(self)


class UsageError(ExpectedError):
    """The command line itself is wrong (a missing or contradictory option): exit status 2."""

    exit_status = 2


class InterruptedBefore(KeyboardInterrupt):
    """Ctrl-C before a command's work began: ``message`` says so (rather than what the command says of work kept)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
