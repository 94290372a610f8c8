"""The gateway's policy file: which pinned models a method may use, where they are served, and the run's
token budget.

```json
{
  "base_url": "https://api.openai.com/v1",
  "api_key_env": "OPENAI_API_KEY",
  "models": [{"id": "gpt-4o-mini-2024-07-18"}, {"id": "gpt-4.1-mini-2025-04-14"}],
  "token_budget": 2000000
}
```

A model id (and the ``upstream_model`` it is sent as) is pinned: an exact, versioned id, never an alias
that moves (``…latest``). Each model is served by its own ``base_url`` or the policy's; the key is read from
the environment variable named by ``api_key_env`` by the gateway only — the method never sees it.
``substitute`` names the model an A1 run replays a sample with (default: the second model).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Annotated

import msgspec

from mt_eval.control_chars import escaped_controls, first_control
from mt_eval.field_words import described
from mt_eval.js_text import js_string
from mt_eval.problems import Finding, Problem, ProblemsError
from mt_eval.strict import StrictStruct, decode_json_file, decode_value, parse_json, read_json_file

_UNPINNED = re.compile(r"(^|[-_.:/])latest$|:latest$", re.I)
Url = Annotated[str, described(pattern=r"^https?://", description="An OpenAI-compatible base URL, e.g. "
                                "https://api.openai.com/v1", pattern_means="an http(s) URL")]
EnvName = Annotated[str, described(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", pattern_means="an environment variable name "
                                   "(letters, digits and _, not starting with a digit)",
                                   hint='name the variable that holds the API key, e.g. "OPENAI_API_KEY"')]


class ModelRoute(StrictStruct, kw_only=True):
    """One allowlisted model."""

    id: Annotated[str, msgspec.Meta(min_length=1, description="The pinned model id a method asks for.")]
    base_url: Url | None = None
    api_key_env: EnvName | None = None
    upstream_model: Annotated[str, msgspec.Meta(min_length=1)] | None = None  # the id the upstream knows it by


class GatewayPolicy(StrictStruct, kw_only=True):
    """What ``mt-eval gateway`` forwards, and how much."""

    models: Annotated[list[ModelRoute], msgspec.Meta(min_length=1)]
    base_url: Url | None = None
    api_key_env: EnvName | None = None
    token_budget: Annotated[int, msgspec.Meta(ge=1)] | None = None
    substitute: str | None = None
    log_bodies: bool = False
    # (from a hundredth of a second, which the upstream's timer can serve, to a day: a finite wait)
    timeout_s: Annotated[float, msgspec.Meta(ge=0.01, le=86_400)] = 300.0
    schema: str | None = msgspec.field(default=None, name="$schema")

    def findings(self) -> Iterator[Finding]:
        seen: set[str] = set()
        for index, route in enumerate(self.models):
            if route.id in seen:
                yield Finding(("models", index, "id"), f"{js_string(route.id)} is listed twice", code="duplicate")
            seen.add(route.id)
            yield from _id_findings(("models", index, "id"), route.id)
            if route.upstream_model is not None:  # (what the upstream serves: pinned as the id is)
                yield from _id_findings(("models", index, "upstream_model"), route.upstream_model)
            if route.base_url is None and self.base_url is None:
                yield Finding(("models", index), f"{js_string(route.id)} has no upstream",
                              'give it a "base_url", or give the policy one', code="missing-upstream")
            url, key = self.upstream(route)
            if (route.base_url or self.base_url) is not None and (wrong := _url_problem(url)) is not None:
                where = ("models", index, "base_url") if route.base_url else ("base_url",)
                yield Finding(where, f"{js_string(route.id)} would be served from {url!r}, which {wrong[0]}",
                              wrong[1], code="bad-url")
            elif key is not None and _unencrypted(url):
                where = ("models", index, "base_url") if route.base_url else ("base_url",)
                yield Finding(where, f"{js_string(route.id)} is served over plain http:// from {url}: its API key "
                              f"({key}) would cross the network unencrypted", "use the upstream's https:// URL",
                              severity="warning", code="unencrypted")
        if self.substitute is not None and self.substitute not in seen:
            yield Finding(("substitute",), f"{js_string(self.substitute)} is not one of the models",
                          "name an allowlisted model", code="unknown-model")

    def route(self, model: str) -> ModelRoute | None:
        return next((r for r in self.models if r.id == model), None)

    def upstream(self, route: ModelRoute) -> tuple[str, str | None]:
        """The base URL and the API-key variable serving ``route``."""
        return (route.base_url or self.base_url or "").rstrip("/"), route.api_key_env or self.api_key_env

    @property
    def substitute_model(self) -> str | None:
        """The model a substitutability replay uses: ``substitute``, else the second model."""
        if self.substitute is not None:
            return self.substitute
        return self.models[1].id if len(self.models) > 1 else None


def _id_findings(where: tuple[str | int, ...], model: str) -> Iterator[Finding]:
    """What is wrong with a model id the gateway sends upstream (and logs and prints)."""
    if (control := first_control(model)) is not None:
        yield Finding(where, f'"{escaped_controls(model, one_line=True)}" holds the control character {control}',
                      "write the model id as the upstream lists it", code="control")
    elif model != model.strip():  # (a method asking for the id as the upstream lists it would be refused)
        yield Finding(where, f"{js_string(model)} begins or ends with white space",
                      "write the model id as the upstream lists it, without it", code="white-space")
    if _UNPINNED.search(model):
        yield Finding(where, f'{js_string(model)} is not pinned: "latest" moves',
                      "name the exact, dated or versioned model id", code="unpinned")


def _unencrypted(url: str) -> bool:
    """Whether ``url`` is plain http:// to another host than this one."""
    import ipaddress
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme != "http":
        return False
    host = parts.hostname or ""
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host != "localhost"


def read_policy(path: Path) -> GatewayPolicy:
    """Read a policy file; raise `ProblemsError` listing every problem, those of its rules (`_rule_problems`) too
    when its shape is wrong."""
    try:
        return read_json_file(path, GatewayPolicy)
    except ProblemsError as exc:
        missed = [problem for problem in _rule_problems(path) if problem not in exc.problems]
        if not missed:
            raise
        raise ProblemsError([*exc.problems, *missed], summary=f"{path} is not a valid GatewayPolicy") from None


_RULES_READ = ("models", "base_url", "api_key_env", "substitute")  # what GatewayPolicy.findings reads
_STAND_IN_URL = "https://stand-in.invalid/v1"  # in place of a base_url of the wrong type: one no rule finds fault with


def _rule_problems(path: Path) -> list[Problem]:
    """What the policy's rules (a model listed twice, an unpinned id, a model without an upstream…) find in a
    policy whose shape is wrong (an unknown field, a bad token_budget, a field of the wrong type), so that every
    problem is fixed in one go. They are checked on the fields they read, each value that is not well-formed
    left out (its own problem is named already): a base_url is replaced by one no rule finds fault with (left out,
    its models would be said to have no upstream), and a model whose id is not well-formed is left out whole."""
    try:
        data, _ = parse_json(path.read_bytes(), file=str(path))
    except OSError:
        return []
    if not isinstance(data, dict) or not isinstance(data.get("models"), list):
        return []
    read = _well_formed(GatewayPolicy, {name: data[name] for name in _RULES_READ if name in data})
    models, checked = [], []  # each model checked, and its index in the file
    for index, route in enumerate(data["models"]):
        fields = _well_formed(ModelRoute, route) if isinstance(route, dict) else {}
        if "id" in fields:
            models.append(fields)
            checked.append(index)
    policy, problems = decode_value({**read, "models": models}, GatewayPolicy, file=str(path))
    if policy is None:
        return []
    return [_in_the_file(problem, checked) for problem in problems]


def _well_formed(struct: type[msgspec.Struct], data: dict[str, object]) -> dict[str, object]:
    """The fields of ``data`` that ``struct`` knows and whose values are well-formed (a base_url that is not: the
    stand-in URL), ``models`` aside."""
    kept: dict[str, object] = {}
    for field in msgspec.structs.fields(struct):
        if field.encode_name not in data or field.name == "models":
            continue
        try:
            kept[field.encode_name] = msgspec.convert(data[field.encode_name], field.type)
        except msgspec.ValidationError:
            if field.name == "base_url":
                kept[field.encode_name] = _STAND_IN_URL
    return kept


def _in_the_file(problem: Problem, checked: list[int]) -> Problem:
    """``problem`` at the path of its model in the file (the models left out shift the others)."""
    found = re.match(r"\$\.models\[(\d+)\]", problem.path)
    if found is None:
        return problem
    return msgspec.structs.replace(problem, path=f"$.models[{checked[int(found[1])]}]{problem.path[found.end():]}")


def policy_problems(path: Path, environ: Mapping[str, str] | None = None) -> list[Problem]:
    """The warnings of a valid policy file, to be shown: an API key sent over plain http://, and an
    ``api_key_env`` this environment does not set (its requests would go upstream without a key); and, as
    errors, each API key of this environment that an HTTP header cannot carry."""
    policy, problems = decode_json_file(path, GatewayPolicy)
    found = [p for p in problems if p.severity == "warning"]
    environ = os.environ if environ is None else environ
    served: dict[str, tuple[str, list[str]]] = {}  # each variable: where it is named, and the models it serves
    for index, route in enumerate(policy.models if policy is not None else []):
        key = route.api_key_env or policy.api_key_env if policy is not None else None
        if key:
            where = f"$.models[{index}].api_key_env" if route.api_key_env else "$.api_key_env"
            served.setdefault(key, (where, []))[1].append(route.id)
    for key, (where, ids) in served.items():
        if environ.get(key) and (odd := unsendable(environ[key])) is not None:  # (never the key itself: a secret)
            found.append(Problem(file=str(path), path=where, code="unsendable-key",
                                    message=f"${key}, the API key of {', '.join(ids)}, holds U+{ord(odd[1]):04X} at "
                                            f"position {odd[0]}, which an HTTP header cannot carry",
                                    hint=f"set {key} to the key alone, as the provider gave it"))
        if not environ.get(key):
            found.append(Problem(file=str(path), path=where, severity="warning", code="unset-key",
                                    message=f"${key}, the API key of {', '.join(ids)}, is not set here: their "
                                            "requests would go upstream without a key",
                                    hint=f"set {key} in the gateway's environment before starting it"))
    return found


def _url_problem(url: str) -> tuple[str, str] | None:
    """What keeps ``url`` from being reached as an upstream (the gateway splits it so at each request), and the
    fix; None when nothing does."""
    from urllib.parse import quote, urlsplit

    if (odd := unsendable(url)) is not None:  # (its path begins every request line)
        return (f"holds U+{ord(odd[1]):04X}, a character a request line cannot carry",
                f"percent-encode it ({quote(odd[1], safe='')})")
    fix = "give the upstream's http(s) URL with its host (and a port from 1 to 65535)"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:  # (a port out of range, or not a number)
        return f"cannot be reached: {exc}", fix
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "has no host", fix
    try:  # (what a connection and its Host header are made of: an empty or over-long label crashed the gateway)
        parts.hostname.encode("idna")
    except UnicodeError:
        return (f"has a host name, {parts.hostname!r}, that is not one: a part between its dots is empty or over "
                "63 characters", "write the upstream's host name as its provider gives it")
    if port == 0:
        return "has port 0", fix
    if parts.username is not None or parts.password is not None:  # (they would be dropped without a word)
        return ("holds credentials before its host, which the gateway does not send",
                "remove them: the API key goes in the environment variable that api_key_env names")
    if parts.fragment or url.endswith("#"):
        return "has a fragment (#…), which no request carries", "remove it"
    return None


def unsendable(text: str) -> tuple[int, str] | None:
    """The first character of ``text`` an HTTP head cannot carry as it is (a space, a control character or
    anything beyond ASCII), with its position from 1; None when there is none."""
    return next(((index, char) for index, char in enumerate(text, 1) if not "!" <= char <= "~"), None)
