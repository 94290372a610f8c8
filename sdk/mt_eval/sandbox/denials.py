"""Recognising what the sandbox denied, from what the guest wrote to stderr and the errors of its results.

A confined method learns of a refusal only through an error: the kernel answers EACCES for a locked
name, EROFS for a write outside ``/tmp``, ENETUNREACH, ECONNREFUSED (nothing listens on the sandbox's own
loopback but the gateway forwarder) or a failed name lookup for the network. Python and
Node word these errors in known ways; each refusal so worded is one denied attempt (a line may hold several),
grouped by kind and detail. This sees what the method's runtime reports — a method that swallows its errors and
prints nothing leaves no trace, and the card says so (`OBSERVED_FROM`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable

from mt_eval.bridge import GUEST_LOGGER  # (where the bridge host forwards each line of a guest's stderr)
from mt_eval.sandbox.policy import DeniedAttempt

_QUOTED_PATH = re.compile(r"""['"](/[^'"]*)['"]""")
# where a message wrapped in a repr ends, (…), <urlopen error …>, "…", or one of several on a line does (; …)
_WRAPPING = re.compile(r"""[)>"'\];]""")
_NODE_LOCAL_ADDRESS = re.compile(r" - Local \([^)]*\)")  # Node's "connect ENETUNREACH 1.1.1.1:443 - Local (0.0.0.0:0)"
_SAME_REFUSAL = re.compile(r"[\s:,;(\[]*")  # between a code and its words: "EACCES: permission denied"
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
    """(kind, detail) for every denial worded in ``text``: each one a line holds (a method may print a list of
    its errors on one line), a code and its words side by side (Node's ``EACCES: permission denied``) one."""
    found = []
    for line in text.splitlines():
        refusals = _refusals(line)
        for number, (kind, start, after) in enumerate(refusals):
            until = refusals[number + 1][1] if number + 1 < len(refusals) else len(line)  # (up to the next one)
            found.append((kind, _detail(kind, line, start, after, until)[:200]))
    return found


def _refusals(line: str) -> list[tuple[str, int, int]]:
    """(kind, where its words start, where the refusal before ended) for each refusal ``line`` words."""
    matches = sorted(((match, kind) for kind, pattern in RULES for match in pattern.finditer(line)),
                     key=lambda seen: seen[0].start())
    refusals: list[tuple[str, int, int]] = []
    end, before = 0, ""  # (where the refusal before ends, and its kind)
    for match, kind in matches:
        if kind != before or not (match.start() < end or _SAME_REFUSAL.fullmatch(line, end, match.start())):
            refusals.append((kind, match.start(), end))
        end, before = max(end, match.end()), kind
    return refusals


def _detail(kind: str, line: str, start: int, after: int, until: int) -> str:
    """The path refused, or the refusal's own words (up to where the repr wrapping them closes) and the host
    named before them; the refusal's words are ``line[start:until]``, and ``after`` ends the refusal before."""
    rest = line[start:until]
    path = _QUOTED_PATH.search(rest) if kind.startswith("file") else None
    if path is not None:
        return path.group(1)
    words = _WRAPPING.split(_NODE_LOCAL_ADDRESS.sub("", rest), maxsplit=1)[0].strip()
    host = _HOST.search(line, after, start)
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
