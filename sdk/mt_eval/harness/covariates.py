"""The covariates a figure depends on: each recorded with a value, recorded as not applicable, or missing.

The headline gate requires a policy's covariates; ``mt-eval compare`` refuses two cards whose covariates
differ unless ``--allow-diff FIELD`` names each difference. What ``method.json`` declares decides what
applies:

- ``model`` (the model or route id): applies when a dependency is ``kind: model``. A served model (``gateway``
  or ``external-api``) is named by the run (``--model``); a bundled or mirrored one by its dependency id and
  pin. Without a model dependency it is not applicable — unless the run names a model anyway;
- ``temperature``: applies when a model is served (the run sets how it samples); otherwise not applicable;
- ``tool_permissions``: what the method may reach while it runs — its ``gateway`` and ``external-api``
  dependencies (``[]``: nothing). A manifest that does not list its dependencies leaves it missing;
- ``environment``: the sandbox the run was confined in (tool, version, network) and the software
  environment's digest (`mt_eval.harness.environment`); either one records it;
- ``retry_budget``: always recorded by the harness.

Compare also checks the run settings (`SETTINGS`) and the ``--param`` values the method got (`PARAMS`: they
change what it does), missing from cards written before they were recorded.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from mt_eval.harness.runcard import RunCard
    from mt_eval.manifest import Manifest
    from mt_eval.records import RunConfig

SERVED = ("gateway", "external-api")
# Covariates compare checks besides the gate's five (all recorded by every card of this SDK).
SETTINGS = ("max_tokens", "seed", "batch_size", "concurrency", "timeout_s", "retries_per_entry")
# The --param values the method got, compared one parameter at a time (`params_differences`).
PARAMS = "params"
_PARAM_WIDTH = 60


@dataclass(frozen=True)
class RunCovariates:
    """What the harness records about a run's covariates beyond the settings it was given."""

    model: str | None
    tool_permissions: list[str] | None
    not_applicable: dict[str, str]


def run_covariates(manifest: Manifest, config: RunConfig) -> RunCovariates:
    """The model id, tool permissions and not-applicable covariates of a run of a method with ``manifest``."""
    dependencies = manifest.dependencies
    if dependencies is None:
        return RunCovariates(model=config.model, tool_permissions=None, not_applicable={})
    models = [d for d in dependencies if d.kind == "model"]
    served = [d for d in models if d.access in SERVED]
    tools = [f"{d.id} ({d.access})" for d in dependencies if d.access in SERVED]
    not_applicable: dict[str, str] = {}
    model = config.model
    if not models:
        if model is None:
            not_applicable["model"] = "method.json lists no model dependency"
    elif model is None and not served:
        model = ", ".join(d.id + (f"@{d.pin}" if d.pin else "") for d in models)
    if not served and config.temperature is None:
        not_applicable["temperature"] = ("method.json lists no model dependency" if not models else
                                         "no served model: its model dependencies are bundled or mirrored")
    return RunCovariates(model=model, tool_permissions=sorted(tools), not_applicable=not_applicable)


@dataclass(frozen=True)
class CovariateState:
    name: str
    status: Literal["recorded", "not applicable", "missing"]
    value: Any  # what is compared: the value, or the reason it does not apply
    shown: str

    @property
    def present(self) -> bool:
        return self.status != "missing"


def _state(name: str, value: Any, not_applicable: dict[str, str], why_missing: str, *, compared: Any = None
           ) -> CovariateState:
    """``compared``: what two cards must share (default: the value shown)."""
    if value is not None:
        shown = ("none" if value == [] else ", ".join(value)) if isinstance(value, list) else str(value)
        return CovariateState(name, "recorded", value if compared is None else compared, shown)
    if name in not_applicable:
        return CovariateState(name, "not applicable", ("n/a", not_applicable[name]),
                              f"not applicable ({not_applicable[name]})")
    return CovariateState(name, "missing", None, f"missing: {why_missing}")


# What a sandbox record says of the method rather than of its confinement: the plugin's directory, the paths
# mounted for its runtime and its files, how many names were locked in them (two methods in one environment differ
# there), and what the method tried.
_THE_METHODS_OWN = frozenset({"plugin", "read_only", "locked_names"})


def confinement(sandbox: Any) -> Any:
    """A card's ``sandbox`` record as two cards confined alike share it: the tool, its version and the policy,
    without what is the method's own (`_THE_METHODS_OWN`) or what the method did."""
    if not isinstance(sandbox, dict):
        return sandbox
    policy = sandbox.get("policy")
    if isinstance(policy, dict):
        policy = {key: value for key, value in policy.items() if key not in _THE_METHODS_OWN}
    return {"tool": sandbox.get("tool"), "version": sandbox.get("version"), "policy": policy}


def covariate_states(card: RunCard, data: dict[str, Any] | None = None, *, settings: bool = True
                     ) -> dict[str, CovariateState]:
    """Every covariate of a card: the gate's five, then (unless ``settings`` is False: the gate needs only its
    five) the settings and the params compare also checks. ``data`` is the card as parsed (for fields other parts
    of the SDK write, such as ``sandbox``)."""
    c = card.covariates
    older = c.not_applicable is None  # a card written before covariates were recorded this way
    not_applicable = c.not_applicable or {}
    run_default = "not given to the run" if not older else "not recorded (an older card: run the evaluation again)"
    sandbox = (data or {}).get("sandbox")
    parts: list[str] = []
    if isinstance(sandbox, dict):
        policy: dict[str, Any] = sandbox["policy"] if isinstance(sandbox.get("policy"), dict) else {}
        network = f" (network {policy['network']})" if policy.get("network") else ""
        parts.append(f"sandbox {sandbox.get('tool')} {sandbox.get('version')}{network}")
    if card.environment.digest:
        parts.append(f"digest {card.environment.digest[:16]}…")
    environment = "; ".join(parts) or None
    listed = not older and c.tool_permissions is not None
    states = {
        "model": _state("model", c.model, not_applicable, run_default if older else _why_missing("model", listed)),
        "temperature": _state("temperature", c.temperature, not_applicable, run_default if older else
                              _why_missing("temperature", listed)),
        "tool_permissions": _state("tool_permissions", c.tool_permissions, not_applicable,
                                   _why_missing("tool_permissions", listed) if not older else run_default),
        "environment": _state("environment", environment, not_applicable, "no sandbox and no environment digest"
                              if not older else run_default,
                              compared=(confinement(sandbox), card.environment.digest)),
        "retry_budget": _state("retry_budget", c.retry_budget, not_applicable, run_default),
    }
    for name in SETTINGS if settings else ():  # settings every card records; None means the run did not set it
        value = getattr(c, name)
        states[name] = CovariateState(name, "recorded", value, "not set" if value is None else str(value))
    if settings:
        states[PARAMS] = _params_state(c.params)
    return states


def _why_missing(name: str, listed: bool) -> str:
    """Why a run's ``model``, ``temperature`` or ``tool_permissions`` is missing (``listed``: method.json lists its
    dependencies; without the list nothing says whether the method has a model at all: `run_covariates`)."""
    if name == "tool_permissions":
        return 'method.json does not list its dependencies (add "dependencies")'
    flag = f"--{name}"
    if not listed:
        return f'method.json does not list its dependencies (add "dependencies"), or give {flag}'
    return "the method has a model dependency; give --model" if name == "model" else \
        "the method's model is served; give --temperature"


def missing_for_run(manifest: Manifest, config: RunConfig) -> dict[str, str]:
    """The covariates a run of the method of ``manifest`` with ``config`` will leave missing on its card (of
    ``model``, ``temperature`` and ``tool_permissions``: the harness records the others), each with why, as the
    gate will say it: known before the method translates anything."""
    found = run_covariates(manifest, config)
    listed = found.tool_permissions is not None
    values = {"model": found.model, "temperature": config.temperature, "tool_permissions": found.tool_permissions}
    return {name: _why_missing(name, listed) for name, value in values.items()
            if value is None and name not in found.not_applicable}


def _params_state(params: dict[str, Any] | None) -> CovariateState:
    """The ``--param`` values as compared: each parameter's value as canonical JSON (``true`` is not ``1``)."""
    if params is None:
        return CovariateState(PARAMS, "missing", None, "missing: not recorded (an older card: run the evaluation "
                                                       "again)")
    as_json = {key: json.dumps(value, ensure_ascii=False, sort_keys=True) for key, value in sorted(params.items())}
    shown = ", ".join(f"{key}={_param_text(text)}" for key, text in as_json.items()) or "none"
    return CovariateState(PARAMS, "recorded", as_json, shown)


def params_differences(a: dict[str, str], b: dict[str, str]) -> list[tuple[str, str]]:
    """Each parameter whose value differs between two recorded `_params_state` values, as each side shows it:
    ``mark_unknown=true`` / ``mark_unknown=false``, or ``beam not given``."""
    def side(values: dict[str, str], key: str) -> str:
        return f"{key}={_param_text(values[key])}" if key in values else f"{key} not given"

    return [(side(a, key), side(b, key)) for key in sorted(a.keys() | b.keys()) if a.get(key) != b.get(key)]


def _param_text(text: str) -> str:
    """A parameter's JSON as shown: a long one by its beginning, its length and its digest (two values that begin
    alike are told apart)."""
    if len(text) <= _PARAM_WIDTH:
        return text
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    return f"{text[:_PARAM_WIDTH - 20]}… ({len(text)} characters, sha256 {digest})"
