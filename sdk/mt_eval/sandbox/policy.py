"""What a sandbox allowed, and what it saw denied: the run card's ``sandbox`` record."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import msgspec

Network = Literal["none", "gateway", "host"]
NETWORK_MEANING = {
    "none": "no network: an own network namespace with only loopback, no route out",
    "gateway": "no network but the LLM gateway, reached at a loopback address inside the sandbox",
    "host": "the host's network (an external-api dependency: the run is flagged, never eligible)",
}
CONFINED = "in the sandbox a plugin's code reads its directory read-only, has no network and writes only to /tmp"
OBSERVED_FROM = ("the guest's stderr and per-entry errors (errno messages such as 'Permission denied', "
                 "'Read-only file system', 'Network is unreachable'), and the gateway's refusals; an attempt whose "
                 "error the method swallows leaves no trace")


class SandboxPolicy(msgspec.Struct, kw_only=True):
    """How the method was confined."""

    network: Network
    network_meaning: str
    gateway_url: str | None = None
    plugin: str
    read_only: list[str]
    extra_read_only: list[str] = msgspec.field(default_factory=list)
    private_tmp: str = "/tmp"
    locked_names: int = 0
    namespaces: list[str] = msgspec.field(default_factory=list)
    capabilities: str = "none"
    environment: list[str] = msgspec.field(default_factory=list)


class DeniedAttempt(msgspec.Struct, kw_only=True):
    """Attempts of one kind the sandbox (or the gateway) refused, with how often and where first seen."""

    kind: Literal["network", "file-access", "file-write", "privilege", "gateway"]
    detail: str
    count: int = 1
    example_id: str | None = None
    source: Literal["stderr", "result", "gateway"] = "stderr"


def attempts_denied(denied: Iterable[DeniedAttempt]) -> list[DeniedAttempt]:
    """One row per kind and detail, with the count of the source that saw it most: a method that prints its error
    and returns it too was refused once, not once on stderr and again in its result."""
    merged: dict[tuple[str, str], DeniedAttempt] = {}
    for attempt in denied:
        kept = merged.get((attempt.kind, attempt.detail))
        if kept is None or attempt.count > kept.count:
            merged[(attempt.kind, attempt.detail)] = attempt
    return list(merged.values())


class SandboxFacts(msgspec.Struct, kw_only=True):
    """The card's ``sandbox``: the tool, its version, the policy and the denied attempts observed."""

    tool: str
    version: str
    policy: SandboxPolicy
    denied: list[DeniedAttempt] = msgspec.field(default_factory=list)
    observed_from: str = OBSERVED_FROM
