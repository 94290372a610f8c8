"""What the sandbox refused, read from the words a runtime prints: the path, or the refusal and the host it was
for, without the repr that wraps them; and one refusal said in two places counted once."""

from __future__ import annotations

import pytest

from mt_eval.harness.fairness import describe_outcome
from mt_eval.sandbox.denials import DenialLog, recognise
from mt_eval.sandbox.policy import DeniedAttempt, SandboxFacts, SandboxPolicy, attempts_denied

REQUESTS_DNS = ("requests.exceptions.ConnectionError: HTTPSConnectionPool(host='api.example.com', port=443): Max "
                "retries exceeded with url: /v1 (Caused by NameResolutionError(\"<urllib3.connection.HTTPSConnection "
                "object at 0x7f3a>: Failed to resolve 'api.example.com' ([Errno -3] Temporary failure in name "
                "resolution)\"))")


@pytest.mark.parametrize(("said", "denied"), [
    ("urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>",
     ("network", "Temporary failure in name resolution")),
    (REQUESTS_DNS, ("network", "Temporary failure in name resolution (api.example.com)")),
    ("urllib.error.URLError: <urlopen error [Errno 101] Network is unreachable>",
     ("network", "Network is unreachable")),
    ("Error: getaddrinfo ENOTFOUND api.example.com", ("network", "ENOTFOUND api.example.com")),
    ("Error: connect ENETUNREACH 1.1.1.1:443 - Local (0.0.0.0:0)", ("network", "ENETUNREACH 1.1.1.1:443")),
    ("TypeError: fetch failed; cause: Error: connect ECONNREFUSED 127.0.0.1:443",
     ("network", "ECONNREFUSED 127.0.0.1:443")),
    ("PermissionError: [Errno 13] Permission denied: '/etc/shadow'", ("file-access", "/etc/shadow")),
    ("Error: EROFS: read-only file system, open '/plugin/cache.bin'", ("file-write", "/plugin/cache.bin")),
    ("PermissionError: [Errno 1] Operation not permitted", ("privilege", "Operation not permitted")),
])
def test_a_refusal_is_recorded_by_its_own_words_not_the_repr_around_them(said: str, denied: tuple[str, str]):
    assert recognise(said) == [denied]


@pytest.mark.parametrize("said", [
    "FileNotFoundError: [Errno 2] No such file or directory: '/plugin/cache.json'",  # (before: network ENOTFOUND)
    "warning: no filePermissions.json, using the defaults",  # (before: privilege EPERM)
    "Error: ENOENT: no such file or directory, open '/plugin/cache.json'",
])
def test_an_error_that_is_no_refusal_is_not_recorded_as_one(said: str):
    assert recognise(said) == []


def test_a_refusal_printed_and_returned_too_is_counted_once():
    log = DenialLog()
    for entry in ("a", "b", "c"):
        log.add_text("PermissionError: [Errno 13] Permission denied: '/etc/shadow'", source="result",
                     example_id=entry)
    log.add_text("Traceback (most recent call last):\n  ...\nPermissionError: [Errno 13] Permission denied: "
                 "'/etc/shadow'\n", source="stderr")
    assert [(a.source, a.count) for a in log.attempts] == [("result", 3), ("stderr", 1)]  # (the card keeps both)
    [merged] = attempts_denied(log.attempts)
    assert (merged.kind, merged.detail, merged.count, merged.example_id) == ("file-access", "/etc/shadow", 3, "a")
    policy = SandboxPolicy(network="none", network_meaning="", plugin="/p", read_only=[])
    facts = SandboxFacts(tool="bubblewrap", version="0.8.0", policy=policy, denied=log.attempts)
    assert describe_outcome(None, facts) == ["  sandbox (bubblewrap) denied: file-access /etc/shadow ×3"]


def test_refusals_of_different_things_are_all_counted():
    denied = [DeniedAttempt(kind="network", detail="ENOTFOUND a.example", count=2),
              DeniedAttempt(kind="network", detail="ENOTFOUND b.example", count=1, source="result"),
              DeniedAttempt(kind="file-access", detail="/etc/shadow", count=4, source="result")]
    assert sum(a.count for a in attempts_denied(denied)) == 7


def test_every_refusal_a_stderr_line_holds_is_counted():
    """Before: a method printing its dozen refusals on one line was recorded as refused once."""
    import logging

    from mt_eval.bridge import GUEST_LOGGER

    log = DenialLog()
    log.watch("guest-1")
    try:
        guest = logging.getLogger(GUEST_LOGGER)
        guest.info("%s: %s", "guest-1", "errors: " + str(["PermissionError: [Errno 13] Permission denied: "
                                                            "'/etc/shadow'"] * 12))
        guest.info("%s: %s", "guest-1", "Error: EACCES: permission denied, open '/etc/ssl/private/host.key'; "
                   "Error: connect ENETUNREACH 1.1.1.1:443; <urlopen error [Errno 101] Network is unreachable>")
        guest.info("%s: %s", "guest-2", "Permission denied: '/etc/shadow'")  # (another guest's)
    finally:
        log.stop()
    assert [(a.kind, a.detail, a.count) for a in log.attempts] == [
        ("file-access", "/etc/shadow", 12), ("file-access", "/etc/ssl/private/host.key", 1),
        ("network", "ENETUNREACH 1.1.1.1:443", 1), ("network", "Network is unreachable", 1)]
