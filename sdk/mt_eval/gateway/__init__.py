"""The LLM gateway (``mt-eval gateway``): the only way out of an A1 method's sandbox.

`GatewayPolicy` (the allowlist of pinned models, upstreams and token budget), `Gateway` (the proxy, in
`server`; its HTTP ends in `http` and `upstream`, one forwarded request in `relay`), `AuditLog` (the
JSON-lines log and its summary for the run card).
"""

from __future__ import annotations

from mt_eval.gateway.audit import AuditLog, GatewayFacts
from mt_eval.gateway.policy import GatewayPolicy, ModelRoute, read_policy

__all__ = ["AuditLog", "GatewayFacts", "GatewayPolicy", "ModelRoute", "read_policy"]
