"""``mt-eval publish CARD``: verify a run card, settle the method card it is shown with, and store it.

The method card shown on the board is the run card's own, with ``--method-card FILE`` laid over it field by
field. A run without a method card (its card has only what method.json says) uses ``method_card.json``
beside the run card when there is one; otherwise the wizard asks for the card's fields and writes that file,
and ``--no-input`` fails instead, listing the missing fields. The identity fields (method_id, class,
dependency_class) come from the run and may not be contradicted.

A card that does not pass the headline gate (`mt_eval.harness.gate`, under ``--policy FILE`` or the shipped
policy; the card's own recorded verdict is not trusted) is refused, with the rules it fails: a row exists
to show a headline, and such a card has none. The row records the gate's verdict under the board's policy.

The store is opened before anything is asked or written, so an unreachable database fails first.
"""

from __future__ import annotations

import datetime
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from mt_eval.atomic_files import write_atomically
from mt_eval.control_chars import escaped_for_terminal, first_control
from mt_eval.harness.gate import apply_gate, gate_command
from mt_eval.harness.policy import shipped_policy
from mt_eval.harness.verify import render
from mt_eval.leaderboard.migrations import TEXT_LIMITS
from mt_eval.leaderboard.rows import build_record, build_row, has_method_card, missing_card_fields
from mt_eval.method_card import CARD_FILE, IDENTITY_FIELDS, MethodCard


class PublishError(Exception):
    """A card cannot be published; the message says why and how to fix it."""


class MethodCardMissing(PublishError):
    """The run has no method card, and asking for one was not allowed."""


@dataclass
class Prepared:
    """A verified card, ready for the store: its record, and what the report of its outcome says of it."""

    path: Path
    record: dict[str, Any]
    card_source: str
    what: str  # "METHOD on CORPUS (PAIR): METRIC SCORE [LOW, HIGH], n=N"
    hidden: bool  # class X: stored, never shown


def shown_path(path: str | Path) -> str:
    r"""A path as a message names it, on the message's line: its line breaks escaped (``\n``) as well as the control
    characters every message escapes (`escaped_for_terminal`), so that a path never cuts the line that names it."""
    return escaped_for_terminal(str(path), one_line=True)


def now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def prepare(path: Path, *, method_card: str | None = None, corpus: str | None = None,
            extensions: list[str] | tuple[str, ...] = (), no_input: bool = False, ask: Any = None,
            policy: Any = None) -> Prepared:
    """Verify and gate the card (``policy``: a `ResolvedPolicy`, the shipped one when None) and build its store
    record; `PublishError` when it cannot be published."""
    from mt_eval.harness.verify import verify_card

    raw = read_card_file(path)
    verification = verify_card(path, corpus=corpus, extensions=extensions, raw=raw)
    return complete(path, verification, method_card=method_card, no_input=no_input, ask=ask, policy=policy)


_SHORTER = {"run_id": "`mt-eval run` gives far shorter run ids: publish the card the run wrote",
            "method_id": "give the method a shorter method_id in its method.json, and run it again",
            "pair": "write the pair with its languages' codes (--pair 'eng>spa'), and run it again",
            "corpus_name": "give the corpus a shorter name (its dataset's \"name\"), and run it again",
            "finished_at": "`mt-eval run` writes it to the microsecond (32 characters): publish the card the run wrote"}


_PLAIN = {"run_id": "publish the card the run wrote",
          "method_id": "give the method a method_id of letters, digits and dashes in its method.json, and run it again",
          "pair": "write the pair with its languages' codes (--pair 'eng>spa'), and run it again",
          "corpus_name": "remove it from the corpus's name (its dataset's \"name\"), and run it again",
          "finished_at": "publish the card the run wrote"}


def _policy_file(policy: Any) -> str | None:
    """The file of a `ResolvedPolicy` (None for the shipped one, or no policy)."""
    return None if policy is None or policy.source == "shipped default" else policy.source


def complete(path: Path, verification: Any, *, method_card: str | None = None, no_input: bool = False,
             ask: Any = None, policy: Any = None) -> Prepared:
    """The store record of a verified card that passes the gate (``policy``: a `ResolvedPolicy`, the shipped
    one when None), with the method card settled; `PublishError` when the card did not verify, fails the
    gate, or its method card cannot be settled."""
    if not verification.ok or verification.card is None or verification.data is None:
        raise PublishError("it does not verify, so it cannot be published:\n"
                           + render(verification, verbose=False).split("\n", 1)[-1])
    card = verification.card
    gate = apply_gate(card, policy or shipped_policy(), data=verification.data, verification=verification)
    if not gate.passed:
        raise PublishError(f"its headline does not pass the gate (policy {gate.policy}), so it cannot be published "
                           f"({shown_path(gate_command(path, _policy_file(policy)))} shows every rule):\n  "
                           + "\n  ".join(gate.failures))
    shown, source = settle_method_card(path, dict(card.method.card), method_card, no_input=no_input, ask=ask)
    row = build_row(verification.data, card, shown, source, verification.corpus_entries)
    row.eligibility.gate_passed = True  # under the board's policy, just applied (the card's own verdict aside)
    row.eligibility.gate_policy = f"{gate.policy} (sha256 {(gate.policy_sha256 or '')[:12]})"
    for column, limit in TEXT_LIMITS.items():  # (the same refusal on SQLite as PostgreSQL's, and for this card alone)
        value = getattr(row, column)
        if len(value) > limit:
            raise PublishError(f"its {column} is {len(value)} characters long, and the store holds at most {limit}: "
                               f"{value[:40]!r}…; {_SHORTER[column]}")
        control = first_control(value)
        if control is not None:  # (refused on every backend alike, and before it can reach a terminal or a page)
            raise PublishError(f"its {column} holds the control character {control} ({value[:60]!r}"
                               f"), which a board cannot show; {_PLAIN[column]}")
    what = f"{row.method_id} on {row.corpus_name} ({row.pair})"
    if row.headline is not None:
        h = row.headline
        interval = "" if h.ci_low is None else f" [{h.ci_low:.2f}, {h.ci_high:.2f}]"
        what += f": {h.metric} {h.score:.2f}{interval}, n={h.denominator}"
    return Prepared(path, build_record(row, card.content_sha256, verification.canonical), source, what,
                    row.dependency_class == "X")


def read_card_file(path: Path) -> bytes:
    try:
        with open(path, "rb", buffering=0) as file:  # read whole: no buffer to copy it through
            return file.readall()
    except IsADirectoryError as exc:  # (a directory without card.json: the run has not finished, or is no run)
        runs = sorted(p.parent.name for p in path.glob("*/card.json"))
        if runs:
            raise PublishError(f"this directory holds no card.json, but its directories {', '.join(runs[:5])}"
                               f"{' …' if len(runs) > 5 else ''} do: give {shown_path(path)}/*/card.json") from exc
        from mt_eval.harness.card_files import directory_without_card

        message, fix = directory_without_card(path)
        raise PublishError(f"{message}; {fix}") from exc
    except FileNotFoundError as exc:  # (the card a run names, asked for before the run has finished)
        from mt_eval.harness.card_files import missing_card

        said, then = missing_card(path, f"cannot read it: {exc.strerror or exc}")
        raise PublishError(f"{said}; {then}" if then else said) from exc
    except OSError as exc:
        raise PublishError(f"cannot read it: {exc.strerror or exc}") from exc


def settle_method_card(card_path: Path, recorded: dict[str, Any], given: str | None, *, no_input: bool,
                       ask: Any = None) -> tuple[dict[str, Any], str]:
    """The method card the row shows and where it came from (see the module docstring)."""
    card, source = recorded, "run card"
    if given is not None:
        card, source = overlay(card, Path(given)), f"--method-card {given}"
    if has_method_card(card):
        return card, source
    beside = card_path.parent / CARD_FILE
    if beside.is_file():
        card, source = overlay(card, beside), str(beside)
        if has_method_card(card):
            return card, source
    missing = missing_card_fields(card) or ["paradigm"]
    if no_input:
        raise MethodCardMissing(f"its method card lacks {', '.join(missing)}: give --method-card FILE stating them, "
                                "add them to the plugin's method_card.json and run again, or publish without "
                                "--no-input to be asked")
    from mt_eval.leaderboard.wizard import WizardAborted, run_wizard

    try:
        answered = run_wizard(card, missing, **({"ask": ask} if ask else {}))
    except WizardAborted as exc:
        raise PublishError(f"{exc}; nothing was published (give --method-card FILE, or --no-input to see what is "
                           "missing)") from exc
    validated = _validate(answered, "the answers")
    content = msgspec.json.format(msgspec.json.encode(validated), indent=2) + b"\n"
    try:
        write_atomically(beside, content)
    except OSError as exc:  # the answers are kept: used now, and shown to be saved
        print(escaped_for_terminal(f"mt-eval publish: warning: cannot write {shown_path(beside)}: "
                                   f"{exc.strerror or exc}; this publish uses the answers, and here they are as a "
                                   "method card — save them to a file and give it with --method-card FILE next "
                                   "time:\n") + content.decode(),
              file=sys.stderr, end="")  # (the card: JSON, its control characters escaped already)
        return validated, "wizard (not saved)"
    print(escaped_for_terminal(f"wrote {shown_path(beside)}"), file=sys.stderr)
    return validated, f"wizard ({beside})"


def overlay(card: dict[str, Any], path: Path) -> dict[str, Any]:
    """``card`` with the fields of the method-card file at ``path``; identity fields may repeat, not differ."""
    from mt_eval.strict import parse_json

    try:
        data, problems = parse_json(path.read_bytes(), file=str(path))
    except OSError as exc:
        raise PublishError(f"cannot read the method card {path}: {exc.strerror or exc}") from exc
    errors = [p for p in problems if p.severity == "error"]
    if errors or not isinstance(data, dict):
        raise PublishError("\n".join(p.render() for p in errors) or f"{path}: a method card is a JSON object")
    for key in IDENTITY_FIELDS:
        if key in data and card.get(key) is not None and data[key] != card[key]:
            raise PublishError(f"{path} $.{key}: says {data[key]!r} but the run recorded {card[key]!r} (from "
                               "method.json); remove it from the method card or make it match")
    merged = {**card, **{k: v for k, v in data.items() if k not in IDENTITY_FIELDS or card.get(k) is None}}
    return _validate(merged, str(path))


def _validate(card: dict[str, Any], origin: str) -> dict[str, Any]:
    from mt_eval.strict import decode_value

    value, problems = decode_value(card, MethodCard, file=origin)
    errors = [p for p in problems if p.severity == "error"]
    if value is None or errors:
        raise PublishError("the method card is not valid:\n" + "\n".join(p.render() for p in errors))
    return {**card, **msgspec.to_builtins(value)}


def report(prepared: Prepared, outcome: Any) -> dict[str, Any]:
    """A line (and its JSON form) saying what happened to one card."""
    if outcome.status == "published":
        message = f"published #{outcome.id} {prepared.what}"
        if prepared.hidden:
            message += " — stored, but class X methods never appear on the leaderboard"
    elif outcome.status == "duplicate":
        message = f"refused {shown_path(prepared.path)}: already published as #{outcome.id} on {outcome.published_at}"
    else:
        message = (f"refused {shown_path(prepared.path)}: run {outcome.run_id} is already published as "
                   f"#{outcome.id} with different content; a published run cannot be replaced by an altered card")
    return {"card": str(prepared.path), "status": outcome.status, "id": outcome.id, "run_id": outcome.run_id,
            "content_sha256": outcome.content_sha256, "method_card": prepared.card_source, "message": message}


def unstored(item: Any) -> dict[str, Any]:
    """The JSON form of a card that did not reach the store (a `bulk.Published`): refused before it, with the
    reason, or not tried (publishing stopped first)."""
    if item.error is None:
        return not_tried(str(item.path), "publishing stopped before it")
    return {**not_tried(str(item.path), ""), "status": "refused",
            "message": f"refused {shown_path(item.path)}: {item.error}"}


def not_tried(card: str, why: str) -> dict[str, Any]:
    """The JSON form of a card publishing did not try, and ``why``."""
    return {"card": card, "status": "not_tried", "id": None, "run_id": None, "content_sha256": None,
            "method_card": None, "message": f"not tried {shown_path(card)}: {why}"}
