"""Recognising what the sandbox denied, from what the guest wrote to stderr and the errors of its results.

A confined method learns of a refusal only through an error: the kernel answers EACCES for a locked
name, EROFS for a write outside ``/tmp``, ENETUNREACH, ECONNREFUSED (nothing listens on the sandbox's own
loopback but the gateway forwarder) or a failed name lookup for the network. Python and
Node word these errors in known ways; each line or error that matches is one denied attempt, grouped by
kind and detail. This sees what the method's runtime reports — a method that swallows its errors and
prints nothing leaves no trace, and the card says so (`OBSERVED_FROM`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable

from mt_eval.bridge import GUEST_LOGGER  # (where the bridge host forwards each line of a guest's stderr)
from mt_eval.sandbox.policy import DeniedAttempt

_QUOTED_PATH = re.compile(r"""['"](/[^'"]*)['"]""")
_WRAPPING = re.compile(r"""[)>"'\]]""")  # where a message wrapped in a repr ends: (…), <urlopen error …>, "…"
_NODE_LOCAL_ADDRESS = re.compile(r" - Local \([^)]*\)")  # Node's "connect ENETUNREACH 1.1.1.1:443 - Local (0.0.0.0:0)"
_HOST = re.compile(r"""(?:\bhost=|resolve )['"]([\w.:-]+)['"]""")  # the host a Python library names before it


def _rule(words: str, *codes: str) -> re.Pattern[str]:
    """The refusal's words in any case, or one of Node's error codes as a word of its own in capitals (so
    "FileNotFoundError" is not ENOTFOUND, nor "filePermissions" EPERM)."""
    return re.compile(rf"{words}|(?-i:\b(?:{'|'.join(codes)})\b)", re.I)


RULES: list[tuple[str, re.Pattern[str]]] = [
    ("file-access", _rule("Permission denied", "EACCES")),
    ("file-write", _rule("Read-only file system", "EROFS")),
    ("network", _rule("Network is unreachable|Temporary failure in name resolution|Name or service not known|"
                      "No address associated with hostname|Connection refused",
                      "ENETUNREACH", "EAI_AGAIN", "ENOTFOUND", "ECONNREFUSED")),
    ("privilege", _rule("Operation not permitted", "EPERM")),
]


def recognise(text: str) -> list[tuple[str, str]]:
    """(kind, detail) for every denial worded in ``text``."""
    found = []
    for line in text.splitlines():
        for kind, pattern in RULES:
            match = pattern.search(line)
            if match:
                found.append((kind, _detail(kind, line, match)[:200]))
                break
    return found


def _detail(kind: str, line: str, match: re.Match[str]) -> str:
    """The path refused, or the refusal's own words (up to where the repr wrapping them closes) and the host."""
    rest = line[match.start():]
    path = _QUOTED_PATH.search(rest) if kind.startswith("file") else None
    if path is not None:
        return path.group(1)
    words = _WRAPPING.split(_NODE_LOCAL_ADDRESS.sub("", rest), maxsplit=1)[0].strip()
    host = _HOST.search(line[:match.start()])
    return f"{words} ({host.group(1)})" if host and host.group(1) not in words else words


class DenialLog:
    """Collects denied attempts as they are seen; ``watch`` follows one guest's stderr through logging."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str, str], DeniedAttempt] = {}
        self._handler: logging.Handler | None = None
        self._level = logging.NOTSET

    def add(self, kind: str, detail: str, *, source: str, example_id: str | None = None, count: int = 1) -> None:
        key = (kind, detail, source)
        if key in self._seen:
            self._seen[key].count += count
        else:
            self._seen[key] = DeniedAttempt(kind=kind, detail=detail, count=count,  # type: ignore[arg-type]
                                            example_id=example_id, source=source)  # type: ignore[arg-type]

    def add_text(self, text: str, *, source: str, example_id: str | None = None) -> None:
        for kind, detail in recognise(text):
            self.add(kind, detail, source=source, example_id=example_id)

    def add_results(self, results: Iterable[tuple[str, str | None]]) -> None:
        """Per-entry errors: (entry id, error or None)."""
        for entry_id, error in results:
            if error:
                self.add_text(error, source="result", example_id=entry_id)

    def watch(self, label: str) -> None:
        """Follow the stderr lines the bridge host logs for the guest labelled ``label``."""
        log = self

        class _Handler(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                if record.args and isinstance(record.args, tuple) and record.args[0] == label:
                    log.add_text(str(record.args[-1]), source="stderr")

        logger = logging.getLogger(GUEST_LOGGER)
        self._handler = _Handler(logging.INFO)
        self._level = logger.level
        logger.addHandler(self._handler)
        if logger.getEffectiveLevel() > logging.INFO:
            logger.setLevel(logging.INFO)

    def stop(self) -> None:
        if self._handler is not None:
            logger = logging.getLogger(GUEST_LOGGER)
            logger.removeHandler(self._handler)
            logger.setLevel(self._level)
            self._handler = None

    @property
    def attempts(self) -> list[DeniedAttempt]:
        return sorted(self._seen.values(), key=lambda a: (a.kind, a.detail, a.source))
