"""`mt-eval validate`'s checks of every entry point a plugin declares, by starting it (unless ``--no-import``):

- the Python entry is imported and built in this process (`mt_eval.loader.build_method`);
- the Node entry is loaded through the Node guest, over the bridge: a syntax error is reported with its
  file:line, a missing ``translate`` export with the fix, and the card the guest sends is merged;
- a ``command`` is started and must complete the bridge handshake within a short timeout;
- a plugin with both a Python and a Node entry translates a few probe sentences with both (decides a few probe
  rows, for a decision method) and reports its method card from both, and a difference is a warning (the two are
  meant to behave the same).

Guests are driven through the host's public API (`BridgeMethod`), so what the host says about a guest that
cannot start is what validate says too; by default they run inside the sandbox validate confines plugin code to
(`mt_eval.validate.in_sandbox`).
"""

from __future__ import annotations

import json
import math
import re
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from mt_eval.bridge.connection import HostOptions
from mt_eval.bridge.messages import TIMEOUT, BridgeError
from mt_eval.loader import PluginSource, method_card_of
from mt_eval.lone_surrogates import writable
from mt_eval.problems import Problem
from mt_eval.sandbox.policy import CONFINED

if TYPE_CHECKING:
    from mt_eval.sandbox import Sandbox

PROBES = ("Good morning, my friend.", "The cat sleeps on the red sofa.", "Thank you very much!",
          "Where is the train station?", "I have two books and three pens.")
_PROBE_QUESTIONS: dict[str, dict[str, Any]] = {
    "noul": {"type": "noul", "instructions": "Is the candidate an acceptable translation?"},
    "choice": {"type": "choice", "instructions": "Which translation is better?", "options": ["candidate", "other"]},
    "score": {"type": "score", "instructions": "How much of the source's meaning does the candidate convey?",
              "levels": [{"value": 0, "description": "none"}, {"value": 1, "description": "some"},
                         {"value": 2, "description": "most"}, {"value": 3, "description": "all"}]},
}
_PROBE_STATES = (  # (a source, a candidate translation of it, and another)
    ("Good morning, my friend.", "Buenos días, mi amigo.", "Buenas noches."),
    ("The cat sleeps on the red sofa.", "El gato duerme en el sofá rojo.", "El perro come."),
    ("Thank you very much!", "Gracias.", "¡Muchas gracias!"),
)
_LOCATION = re.compile(r"(?:file://)?(/[^\s:()'\"]+\.[cm]?js):(\d+)")
_STDIN_LOCATION = re.compile(r"^\[stdin\]:(\d+)$", re.M)
SLOW_START = ("do not do long work {what}: load a model on the first call; or, if it must, give validate a longer "
              "--start-timeout")
_ERROR_LINE = re.compile(r"\b(\w*Error: [^\n]*)")
_LOAD_TIME_THROW = "threw while it was being loaded"  # the Node guest's words (lib/load-errors.js)
_GUEST_SYNTAX_PLACE = re.compile(r"cannot load the method: (?P<file>[^\n]+?\.[cm]?js):(?P<line>\d+): "
                                 r"(?P<error>SyntaxError: [^\n]*)")
_GUEST_OWN_PROBLEM = re.compile(r"cannot load the method: [^\n]+?\.[cm]?js (?:methodCard\(\): (?P<card>[^\n]*)|"
                                r"(?P<export>(?:does not export|exports \w+, but it is not a function)[^\n]*))")
_GUEST_GENERIC_SYNTAX_FIX = "correct the syntax there"  # (lib/load-errors.js: no more to say than the place)


def check_entry_points(source: PluginSource, python_method: object | None, *, timeout_s: float,
                       start_timeout_s: float = 30.0, sandbox: Sandbox | None = None) -> list[Problem]:
    """Start the Node entry and the command a plugin declares (inside ``sandbox`` when given), each within
    ``start_timeout_s``, and compare its two entries when it has both and ``python_method`` is built (the probes
    within ``timeout_s``)."""
    if not (source.manifest.node_entry or source.manifest.command):
        return []
    from mt_eval import event_loop

    # (its close never waits for ever)
    return event_loop.run(_check, source, python_method, timeout_s, start_timeout_s, sandbox)


def _guest(command: list[str], cwd: Path | None, sandbox: Sandbox | None, options: HostOptions,
           label: str) -> Any:
    from mt_eval.bridge.method import BridgeMethod

    if sandbox is not None:
        command, cwd = sandbox.wrap(command, str(cwd.resolve()) if cwd else None), None
    return BridgeMethod(command, cwd=cwd, options=options, label=label)


async def _check(source: PluginSource, python_method: object | None, timeout_s: float, start_timeout_s: float,
                 sandbox: Sandbox | None) -> list[Problem]:
    from mt_eval.bridge.runtimes import node_command

    problems: list[Problem] = []
    options = HostOptions(start_timeout_s=start_timeout_s, request_timeout_s=timeout_s, hard_timeout_s=timeout_s * 2,
                          restart_budget=0)
    config = _probe_config(source)
    if source.manifest.node_entry:
        guest = _guest(node_command(source.directory), None, sandbox, options, source.method_id)
        try:
            await guest.start(config)
        except BridgeError as exc:
            problems.extend(_node_start_problems(source, exc, sandboxed=sandbox is not None))
        else:
            node_card, found = method_card_of(source, guest)
            problems.extend(p for p in found if p.file == guest.card_label)
            if python_method is not None:
                problems.extend(_card_parity(source, python_method, node_card))
                if "translate" in source.manifest.implements:
                    problems.extend(await _parity(source, python_method, guest, config))
                if "decide" in source.manifest.implements:
                    problems.extend(await _decide_parity(source, python_method, guest, config))
        finally:
            await guest.aclose()
    if source.manifest.command:
        problems.extend(await _command_problems(source, options, config, sandbox))
    return problems


def _probe_config(source: PluginSource) -> dict[str, Any]:
    pair = source.manifest.supported_pairs[0] if source.manifest.supported_pairs else "eng>spa"
    source_lang, _, target_lang = pair.partition(">")
    return {"source_lang": source_lang, "target_lang": target_lang}


def _node_start_problems(source: PluginSource, exc: BridgeError, *, sandboxed: bool) -> list[Problem]:
    from mt_eval.bridge.method import per_entry_error, split_fix

    entry = source.manifest.node_entry
    assert entry is not None
    file = str(source.directory / entry)
    data = exc.data if isinstance(exc.data, dict) else {}
    said = f"{exc.message}\n{data.get('stderr_tail') or ''}"
    told = _GUEST_OWN_PROBLEM.search(exc.message)
    if told:  # the guest's own problem and fix: a missing export, or a methodCard() that fails
        fix = split_fix(exc.message)[1]
        if told["card"]:
            return [Problem(file=f"{entry} methodCard()", path="$", code="method-card", message=told["card"],
                            hint=fix)]
        return [Problem(file=file, path="$", code="entry-point", message=f"{entry} {told['export']}", hint=fix)]
    if "SyntaxError" in said and _LOAD_TIME_THROW not in said:  # (not JSON.parse's at load time, say)
        told = _GUEST_SYNTAX_PLACE.search(exc.message)
        if told:  # the guest's own place (the entry, or a module it imports) and fix (e.g. the package's "type")
            culprit = (source.directory / entry).parent / told["file"]  # (relative to the entry's folder)
            fix = split_fix(exc.message)[1]
            generic = fix is None or fix.startswith(_GUEST_GENERIC_SYNTAX_FIX)
            return [Problem(file=f"{culprit}:{told['line']}", path="$", code="entry-point", message=told["error"],
                            hint=f"fix the syntax of {told['file']} at that line" if generic else fix)]
        said_location = _LOCATION.search(said)
        line, detail = (said_location[2], None) if said_location else _syntax_location(source.directory / entry)
        detail = detail or (found[1] if (found := _ERROR_LINE.search(said)) else "SyntaxError")
        return [Problem(file=f"{file}:{line}" if line else file, path="$", code="entry-point", message=detail,
                        hint=f"fix the syntax of {entry} at that line" if line else f"fix the syntax of {entry}")]
    if "cannot start guest" in exc.message:
        return [Problem(file=file, path="$", severity="warning", code="entry-point",
                        message=f"could not load {entry} through the Node guest: {exc.message}",
                        hint="install Node.js 20 or later (or set MT_EVAL_NODE to its path) to check the Node entry")]
    if exc.code == TIMEOUT:  # it is still loading: there are no words of its own to point at
        return [Problem(file=file, path="$", code="entry-point", message=f"loading {entry} failed: {exc.message}",
                        hint=SLOW_START.format(what=f"at load time (the top level of {entry})"))]
    confined = f" ({CONFINED})" if sandboxed else ""
    fix = split_fix(exc.message)[1]  # the guest's own, when it gives one
    return [Problem(file=file, path="$", code="entry-point",
                    message=f"loading {entry} failed: {per_entry_error(exc, with_fix=False)}",
                    hint=f"{fix}{confined}" if fix else f"the guest's own words are above{confined}; "
                         f"`node -e \"import('./{entry}')\"` in the plugin directory shows the full error")]


def _syntax_location(file: Path) -> tuple[str | None, str | None]:
    """The line and the message of a syntax error, from ``node --check`` parsing the file as the guest loads it."""
    from mt_eval.bridge.runtimes import node_executable

    node = node_executable()
    kinds = {".mjs": ["module"], ".cjs": ["commonjs"]}.get(file.suffix) or _package_types(file)
    for kind in kinds:
        try:
            done = subprocess.run([node, "--check", f"--input-type={kind}"], input=file.read_bytes(),
                                  capture_output=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            break
        said = done.stderr.decode(errors="replace")
        found = _STDIN_LOCATION.search(said)
        if done.returncode != 0 and found:
            message = _ERROR_LINE.search(said)
            return found[1], message[1] if message else None
    return None, None


def _package_types(file: Path) -> list[str]:
    """How Node reads a .js file: the nearest package.json's "type" (else as either, ES module first)."""
    import json

    for folder in file.resolve().parents:
        package = folder / "package.json"
        if package.is_file():
            try:
                kind = json.loads(package.read_text(encoding="utf-8")).get("type")
            except (OSError, ValueError):
                kind = None
            return ["module"] if kind == "module" else ["commonjs"] if kind == "commonjs" else ["module", "commonjs"]
    return ["module", "commonjs"]


async def _command_problems(source: PluginSource, options: HostOptions, config: dict[str, Any],
                            sandbox: Sandbox | None) -> list[Problem]:
    from mt_eval.bridge.method import per_entry_error
    from mt_eval.loader import command_argv

    guest = _guest(command_argv(source), source.directory, sandbox, options, source.method_id)
    check = f"`mt-eval bridge check -- {' '.join(source.manifest.command or [])}` runs the full conformance check"
    try:
        await guest.start(config)
    except BridgeError as exc:
        if exc.code == TIMEOUT:
            return [Problem(file=source.manifest_file, path="$.command", code="entry-point",
                            message=f"the program did not complete the bridge handshake: {exc.message}",
                            hint=SLOW_START.format(what="before it answers initialize (bridge/PROTOCOL.md)") +
                            f"; {check}")]
        if isinstance(exc.data, dict) and exc.data.get("cannot_run"):  # (no program ran: nothing to make answer)
            return [Problem(file=source.manifest_file, path="$.command", code="entry-point", message=exc.message,
                            hint='make "command" in method.json start a program that exists and may be run (a path '
                                 "in the plugin directory, or a program on PATH)")]
        return [Problem(file=source.manifest_file, path="$.command", code="entry-point",
                        message=f"the program did not complete the bridge handshake: {per_entry_error(exc)}",
                        hint=f"make it answer initialize (bridge/PROTOCOL.md); {check}")]
    else:
        _card, found = method_card_of(source, guest)
        return [p for p in found if p.file == guest.card_label]
    finally:
        await guest.aclose()


async def _parity(source: PluginSource, python_method: Any, node: Any, config: dict[str, Any]) -> list[Problem]:
    """Translate the probes with both entries; each probe they translate differently is a warning."""
    from mt_eval.deadlines import Overran, within
    from mt_eval.records import RunConfig
    from mt_eval.results import ResultNotes, results_for

    entries = [{"id": str(i), "source": text} for i, text in enumerate(PROBES)]
    timeout_s = node.options.request_timeout_s
    try:  # under a deadline the method cannot swallow (`mt_eval.deadlines`)
        raw = await within(timeout_s, lambda: python_method.translate([dict(e) for e in entries], RunConfig(**config)))
    except Overran as overran:
        timed_out = overran.said(f"timed out after {timeout_s:g} s", "let CancelledError propagate")
        raw = [{"id": e["id"], "error": timed_out} for e in entries]
    except Exception as exc:
        raw = [{"id": e["id"], "error": writable(f"{type(exc).__name__}: {exc}")} for e in entries]
    python, _ = results_for(entries, raw, label="pipeline.py", notes=ResultNotes())
    node_results = await node.translate(entries, config)
    problems = []
    for entry, py, js in zip(entries, python, node_results, strict=True):
        if py.error is not None and js["error"] is not None:
            continue  # neither could translate it here (a service it needs, say): nothing to compare
        if (py.predicted, py.error is None) != (js["predicted"], js["error"] is None):
            said = [_outcome(py.predicted, py.error, py.abstain_reason if py.abstained else None),
                    _outcome(js["predicted"], js["error"], js.get("abstain_reason") if js.get("abstained") else None)]
            problems.append(_differently(source, f'translate "{entry["source"]}"', said))
    return problems


def _differently(source: Any, doing: str, said: list[str]) -> Problem:
    """The warning that the two entries ``doing`` (e.g. ``translate "Hello."``) answer as ``said``, Python's first."""
    return Problem(file=source.manifest_file, path="$", severity="warning", code="parity",
                   message=f"the Python and Node entries {doing} differently: {said[0]} "
                           f"({source.manifest.entry_point}) and {said[1]} ({source.manifest.node_entry})",
                   hint="a plugin with both entries should behave the same in both; fix the one that differs")


def _outcome(predicted: str | None, error: str | None, declined: str | None) -> str:
    """One entry's answer to a probe, as a parity warning quotes it."""
    if predicted is not None:
        return f'"{predicted}"'
    if error is not None:
        return f"error: {error}"
    return f"declined ({declined})" if declined else "declined"


def _card_parity(source: PluginSource, python_method: object, node_card: Any) -> list[Problem]:
    """The card each entry reports at run time, merged over the plugin's files: one warning naming each field
    they give differently (a run card, the leaderboard and champollion would describe the method by the runtime)."""
    python_card, _ = method_card_of(source, python_method)
    if python_card is None or node_card is None:
        return []  # (a card that does not merge is an error of its own)
    python_fields, node_fields = (msgspec.to_builtins(msgspec.structs.asdict(card))  # (defaults included)
                                  for card in (python_card, node_card))
    differing = [name for name in python_fields.keys() | node_fields.keys()
                 if python_fields.get(name) != node_fields.get(name)]
    if not differing:
        return []
    shown = "; ".join(f"{name} {json.dumps(python_fields.get(name), ensure_ascii=False)} / "
                      f"{json.dumps(node_fields.get(name), ensure_ascii=False)}" for name in sorted(differing))
    return [Problem(file=source.manifest_file, path="$", severity="warning", code="parity",
                    message=f"the Python and Node entries report different method cards ({source.manifest.entry_point}"
                            f" / {source.manifest.node_entry}): {shown}",
                    hint="a plugin with both entries has one card: return the same fields from both (or put them in "
                         "method_card.json and return only what is known at run time)")]


async def _decide_parity(source: PluginSource, python_method: Any, node: Any, config: dict[str, Any]) -> list[Problem]:
    """Decide the probe rows (a question of each type the manifest answers) with both entries; each row they answer
    differently is a warning."""
    from mt_eval.deadlines import Overran, within
    from mt_eval.decisions.records import DecisionConfig

    kinds = source.manifest.decide.question_types if source.manifest.decide else list(_PROBE_QUESTIONS)
    rows: list[dict[str, Any]] = [{"id": str(i), "state": {"source": text, "candidate": candidate, "other": other},
                                   "questions": {kind: _PROBE_QUESTIONS[kind] for kind in kinds}}
                                  for i, (text, candidate, other) in enumerate(_PROBE_STATES)]
    timeout_s = node.options.request_timeout_s
    try:
        raw = await within(timeout_s, lambda: python_method.decide(json.loads(json.dumps(rows)),
                                                                   DecisionConfig(**config)))
    except Overran as overran:
        raw = [{"id": row["id"], "error": overran.said(f"timed out after {timeout_s:g} s", "let CancelledError "
                                                                                          "propagate")} for row in rows]
    except Exception as exc:
        raw = [{"id": row["id"], "error": writable(f"{type(exc).__name__}: {exc}")} for row in rows]
    python: dict[Any, dict[str, Any]] = ({item.get("id"): item for item in raw if isinstance(item, dict)}
                                         if isinstance(raw, list) else {})
    node_results = await node.decide(rows, config)
    problems = []
    for row, js in zip(rows, node_results, strict=True):
        py = python.get(row["id"], {"error": "no result for this row"})
        if py.get("error") is not None and js.get("error") is not None:
            continue  # neither could answer it here: nothing to compare
        answers: list[dict[str, Any]] = [r["answers"] if isinstance(r.get("answers"), dict) else {} for r in (py, js)]
        differing = {name for name in answers[0].keys() | answers[1].keys()
                     if not _alike(answers[0].get(name), answers[1].get(name))}
        if differing or (py.get("error") is None) != (js.get("error") is None):
            said = [json.dumps({"error": r["error"]} if r.get("error") is not None else
                               {name: a.get(name) for name in sorted(differing)}, ensure_ascii=False)
                    for r, a in zip((py, js), answers, strict=True)]
            problems.append(_differently(source, f'decide "{row["state"]["source"]}"', said))
    return problems


def _alike(a: Any, b: Any) -> bool:
    """Equal, numbers within a rounding error (each runtime sums probabilities its own way)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_alike(a[key], b[key]) for key in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_alike(x, y) for x, y in zip(a, b, strict=True))
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) and not isinstance(b, bool):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return bool(a == b)
