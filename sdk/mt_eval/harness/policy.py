"""The headline gate's policy: its thresholds, read from a file, with the shipped defaults filling the rest.

The shipped defaults are ``policies/default.json`` beside this module (every canary passes, no negative
control is translated, at least 30 scored entries, every covariate recorded). A policy file (``--policy
FILE``) names only what it changes; every other threshold is the shipped one, and the output says which
came from where. Unknown fields, wrong types and rates outside 0–1 are errors naming the file and field.
"""

from __future__ import annotations

import functools
import hashlib
import stat
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from mt_eval.problems import Problem, ProblemsError
from mt_eval.strict import StrictStruct

COVARIATES = ("model", "temperature", "tool_permissions", "environment", "retry_budget")
Covariate = Literal["model", "temperature", "tool_permissions", "environment", "retry_budget"]
ContaminationPolicy = Literal["verified-clean", "not-contaminated", "off"]  # (`mt_eval.contamination.policy`)
RATE_HINT = "write the rate as a fraction from 0 to 1: 0.95 for 95%"
Rate = Annotated[float, msgspec.Meta(ge=0, le=1, extra={"hint": RATE_HINT})]
Count = Annotated[int, msgspec.Meta(ge=0)]


class GatePolicy(StrictStruct, kw_only=True):
    """The thresholds of the headline gate (`mt_eval.harness.gate`)."""

    schema: str | None = msgspec.field(default=None, name="$schema")
    name: str
    description: str | None = None
    min_canaries: Annotated[Count, msgspec.Meta(
        description="Canary entries the run must have: a corpus without them has nothing proving the harness, "
                    "the method's loading and the formats work.")]
    min_canary_pass_rate: Annotated[Rate, msgspec.Meta(description="Share of canaries that must pass their rule.")]
    min_negatives: Annotated[Count, msgspec.Meta(description="Negative-control entries the run must have.")]
    max_negative_violation_rate: Annotated[Rate, msgspec.Meta(
        description="Share of negative controls the method may translate instead of refusing or abstaining.")]
    min_scored: Annotated[int, msgspec.Meta(ge=1, description="Scored entries the headline needs (its denominator).")]
    max_abstention_rate: Annotated[Rate, msgspec.Meta(
        description="Share of scored entries the method may abstain on; null: no limit.")] | None = None
    required_covariates: Annotated[list[Covariate], msgspec.Meta(
        description="Covariates the card must record, each with a value or as not applicable.")]
    contamination: Annotated[ContaminationPolicy, msgspec.Meta(
        description="What the contamination check of the method's bundle must have found: \"not-contaminated\" "
                    "(no evaluation data; a check not run or unverified passes), \"verified-clean\" (checked, "
                    "nothing found, the planted control at its floor) or \"off\"; null: not judged (a card "
                    "written before the rule).")] | None = None


@dataclass(frozen=True)
class ResolvedPolicy:
    """A policy with every threshold settled: from ``source``, or the shipped default for ``inherited``."""

    policy: GatePolicy
    source: str  # "shipped default" or the policy file's path
    inherited: tuple[str, ...] = field(default=())  # thresholds the file left to the shipped default

    @functools.cached_property
    def sha256(self) -> str:
        """SHA-256 of the thresholds (canonical JSON), so a card says exactly which policy judged it (worked
        out once: publishing asks for it once a card)."""
        return hashlib.sha256(msgspec.json.encode(thresholds(self.policy), order="sorted")).hexdigest()


class PolicyError(ProblemsError):
    """A policy file that cannot be used; ``problems`` name the file and field."""


def thresholds(policy: GatePolicy) -> dict[str, Any]:
    """The policy's thresholds (its name, description and ``$schema`` left out)."""
    data: dict[str, Any] = msgspec.to_builtins(policy)
    for key in ("$schema", "name", "description"):
        data.pop(key, None)
    data.setdefault("max_abstention_rate", None)
    if data.get("contamination") is None:  # (the thresholds of a card written before the rule hash as they did)
        data.pop("contamination", None)
    return data


def _shipped_data() -> dict[str, Any]:
    text = resources.files("mt_eval.harness").joinpath("policies/default.json").read_bytes()
    data: dict[str, Any] = msgspec.json.decode(text)
    return data


def shipped_policy() -> ResolvedPolicy:
    return ResolvedPolicy(msgspec.convert(_shipped_data(), GatePolicy), "shipped default")


def load_policy(path: str | Path | None) -> ResolvedPolicy:
    """The policy in ``path`` over the shipped defaults (the shipped policy when ``path`` is None)."""
    if path is None:
        return shipped_policy()
    from mt_eval.strict import decode_value, parse_json

    path = Path(path)
    try:
        mode = path.stat().st_mode
        if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):  # (a pipe would wait for a writer, /dev/zero never end)
            raise PolicyError([Problem(file=str(path), path="$", code="io", message="not a regular file (a pipe, "
                                       "socket or device): it is not read", hint="give a policy file with --policy "
                                       "FILE")], summary=f"cannot read the gate policy {path}")
        raw = path.read_bytes()
    except OSError as exc:
        raise PolicyError([Problem(file=str(path), path="$", code="io", message=f"cannot read the policy: "
                                   f"{exc.strerror or exc}", hint="give a policy file with --policy FILE")],
                          summary=f"cannot read the gate policy {path}") from exc
    data, problems = parse_json(raw, file=str(path))
    if not any(p.severity == "error" for p in problems) and not isinstance(data, dict):  # (null too: no object)
        problems.append(Problem(file=str(path), path="$", code="shape", message="a policy is a JSON object, not "
                                f"{_json_kind(data)}",
                                hint='e.g. {"min_scored": 100}'))
    if isinstance(data, dict) and (other := _other_kind(data)) is not None:  # (one line, not one per field)
        problems.append(Problem(file=str(path), path="$", code="shape", message=f"this is {other[0]}, not a gate "
                                "policy", hint=f"give it with {other[1]}; a gate policy names thresholds, e.g. "
                                '{"min_scored": 100} (`mt-eval gate --help` lists them)'))
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        raise PolicyError(errors, summary=f"the gate policy {path} is not valid")
    shipped = _shipped_data()
    inherited = tuple(key for key in shipped if key not in data and key not in ("name", "description"))
    merged = {**shipped, "name": path.stem, "description": None, **data}
    policy, problems = decode_value(merged, GatePolicy, file=str(path))
    errors = [p for p in problems if p.severity == "error"]
    if policy is None or errors:
        raise PolicyError(errors, summary=f"the gate policy {path} is not valid")
    from mt_eval.control_chars import escaped_controls, first_control

    where = "$.name" if "name" in data else "$"
    if not policy.name.strip():  # (printed with every verdict, recorded on cards: "policy  (FILE)" said nothing)
        raise PolicyError([Problem(file=str(path), path=where, code="value", message="the policy's name is empty",
                                   hint='name the policy ("name": "strict"), or leave "name" out to take the '
                                        "file's name")], summary=f"the gate policy {path} is not valid")
    if (control := first_control(policy.name)) is not None:  # (printed with every verdict, recorded on cards)
        raise PolicyError([Problem(file=str(path), path=where, code="value", message="the policy's name "
                                   f'"{escaped_controls(policy.name)}" holds the control character {control}',
                                   hint="name the policy in plain text (\"name\": \"...\"), or rename the file")],
                          summary=f"the gate policy {path} is not valid")
    return ResolvedPolicy(policy, str(path), inherited)


def _other_kind(data: dict[str, Any]) -> tuple[str, str] | None:
    """What other file of mt-eval's ``data`` is (and the option that takes it): a freeze manifest, a run card, or
    a gateway policy (holding no field of a gate policy's) given to ``--policy``."""
    if "freeze_version" in data:
        return "a freeze manifest", "mt-eval run --freeze FILE"
    if "card_version" in data:
        return "a run card", "mt-eval gate CARD"
    if set(data) & set(GatePolicy.__struct_encode_fields__) - {"$schema", "name", "description"}:
        return None
    if "models" in data and ({"base_url", "token_budget", "api_key_env"} & set(data)):
        return "an LLM gateway policy", "mt-eval run --gateway-policy FILE (or mt-eval gateway --policy FILE)"
    return None


def _json_kind(value: Any) -> str:
    """What a JSON value is, in words ("null", "an array", "the number 3")."""
    if value is None or isinstance(value, bool):
        return "null" if value is None else str(value).lower()
    if isinstance(value, list):
        return "an array"
    shown = msgspec.json.encode(value).decode()
    return f"the string {shown[:60]}" if isinstance(value, str) else f"the number {shown}"


def percent(rate: float) -> str:
    return f"{rate * 100:.4g}%"


def describe(resolved: ResolvedPolicy) -> list[str]:
    """The thresholds as lines of text, each marked when it is the shipped default a policy file left alone."""
    p = resolved.policy
    default = " (shipped default)" if resolved.source != "shipped default" else ""

    def mark(key: str) -> str:
        return default if key in resolved.inherited else ""

    abstention = "no limit" if p.max_abstention_rate is None else f"at most {percent(p.max_abstention_rate)}"
    covariates = ", ".join(p.required_covariates) or "none required"
    return [f"canaries: at least {p.min_canaries}{mark('min_canaries')}, pass rate at least "
            f"{percent(p.min_canary_pass_rate)}{mark('min_canary_pass_rate')}",
            f"negative controls: at least {p.min_negatives}{mark('min_negatives')}, violation rate at most "
            f"{percent(p.max_negative_violation_rate)}{mark('max_negative_violation_rate')}",
            f"scored entries: at least {p.min_scored}" + mark("min_scored"),
            f"abstention on scored entries: {abstention}" + mark("max_abstention_rate"),
            f"covariates recorded: {covariates}" + mark("required_covariates"),
            f"contamination of the bundle: {CONTAMINATION_WANTED[p.contamination or 'off']}" + mark("contamination")]


CONTAMINATION_WANTED = {"verified-clean": "checked clean, the planted control at its floor",
                        "not-contaminated": "no evaluation data found (a check not run passes)",
                        "off": "not judged"}
