"""Re-verifying a run card (``mt-eval verify CARD``): is every figure in it what its own results say?

A card verifies when all of these hold, each checked and reported on its own:

1. it is a run card of the version this SDK reads (``card_version``);
2. ``content_sha256`` is the SHA-256 of the card's canonical JSON without that field (nothing was edited
   after the card was sealed);
3. it has the shape of `RunCard` (the schema), its method card is a valid `MethodCard`, its start and end
   are ISO 8601 times, in order, and it has the fields, covariates and sandbox a run writes — ``status``,
   ``failures`` and ``results_log`` always (`mt_eval.harness.verify_written`);
4. its own tallies add up (`mt_eval.harness.verify_tallies`): one result per id, each one a run accepts,
   ``errors``, ``usage`` totals, ``cached``, ``corpus.entries``, ``status`` and ``failures`` (a card that
   references its results rather than listing them — ``results_log`` — is read with the ``results.jsonl`` next
   to it, which must hash to what the card sealed: `mt_eval.harness.card_results`);
5. the corpus — the files the card records, or the ones given, read the way the card records it was read —
   has the card's ``corpus.sha256`` and pair (unless the run accepted a mismatch); the card's selection,
   applied again, has its ``subset_sha256``; and
   every result's id is one of the selected entries, and every selected entry has a result;
6. every metric recomputed from the card's predictions and the corpus's references (over the scored
   entries: canaries and negative controls are not scored), with the card's own bootstrap resamples and
   seed (which must be the run's ``covariates.seed``), equals the card's score, interval and sacrebleu
   signature;
7. the family, latency and gate records agree with the card's results and its corpus
   (`mt_eval.harness.verify_records`); and
8. the ``predictions.txt`` beside the card, when there is one, is the one the run writes of its results.

References never come from the card: only the corpus file holds them. Metrics registered by extensions are
recomputed when the same extensions are enabled (``--extension``); otherwise they are reported as not
recomputed. `compare`, publishing and the headline gate call `verify_card` and refuse what does not verify.

`verify_card` is `check_card` (steps 1–5), `recompute_metrics` (step 6) and `check_records` (steps 7–8).
Checking many cards (``mt-eval publish`` of a directory of runs) shares a `CorpusCache`, so each corpus
file is read and hashed once.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from mt_eval.harness.card_files import (
    directory_without_card,
    json_lines_records,
    keys_written_twice,
    missing_card,
    not_strict_json,
)
from mt_eval.harness.runcard import CARD_VERSION, RunCard
from mt_eval.harness.verification import Verification
from mt_eval.harness.verify_corpus import CorpusCache
from mt_eval.problems import Problem

TYPE_CHECKING = False
if TYPE_CHECKING:
    from mt_eval.corpus.reader import CorpusSpec

HASH_FIELD = "content_sha256"


# Cards of other kinds `verify` may be given by mistake: the command that writes each, and what to do instead
# (no command re-verifies them: ``{graded}`` is the run card a grading card grades, as its run.card_path says).
OTHER_CARDS = {
    "decision-card": ("mt-eval decide run", "no mt-eval command re-verifies a decision card: to check its figures, "
                      "run `mt-eval decide run` again with the same --method and --corpus (its scorer checks itself "
                      "first; `mt-eval decide check --corpus FILE` checks the scorer alone); to verify a translation "
                      "run, give the card.json `mt-eval run` wrote"),
    "grading-card": ("mt-eval grade", "no mt-eval command re-verifies a grading card's figures (`mt-eval grade "
                     "--labels` checks the content hash of a people's grading card as it reads it): give `mt-eval "
                     "verify` the run card it grades, {graded}"),
}


def canonical_sha256(data: dict[str, Any]) -> str:
    """The content hash of a parsed card: SHA-256 of its canonical JSON without ``content_sha256``."""
    body = {key: value for key, value in data.items() if key != HASH_FIELD}
    return hashlib.sha256(msgspec.json.encode(body, order="sorted")).hexdigest()


def canonical_json(data: dict[str, Any]) -> tuple[str, bytes]:
    """(`canonical_sha256` of a parsed card, its canonical JSON with the ``content_sha256`` it states), from
    one encoding: the hash is taken over that encoding less the hash field, which sits right after the
    top-level keys that sort before it (encoded again on their own to find where: a few small fields)."""
    whole = msgspec.json.encode(data, order="sorted")
    if HASH_FIELD not in data:
        return hashlib.sha256(whole).hexdigest(), whole
    lower = {key: value for key, value in data.items() if key < HASH_FIELD}
    field = len(HASH_FIELD) + 3 + len(msgspec.json.encode(data[HASH_FIELD], order="sorted"))  # "…":value
    start = len(msgspec.json.encode(lower, order="sorted")) if lower else 1  # where the field begins
    end = start + field
    if lower:  # drop the comma before the field
        start -= 1
    elif end < len(whole) - 1:  # drop the comma after it
        end += 1
    view = memoryview(whole)
    digest = hashlib.sha256(view[:start])
    digest.update(view[end:])
    return digest.hexdigest(), whole


def read_card(path: str | Path, raw: bytes | None = None) -> Verification:
    """Steps 1–4 (format, content hash, schema, tallies): everything that needs only the card itself."""
    result = Verification(path=str(path))
    if raw is None:
        try:
            raw = Path(path).read_bytes()
        except OSError as exc:
            message, fix = f"cannot read the card: {exc.strerror or exc}", None
            if Path(path).is_dir():
                message, fix = directory_without_card(Path(path))
            elif isinstance(exc, FileNotFoundError) and Path(path).parent.is_dir():
                message, fix = missing_card(Path(path), message)
            result.problem("$", message, fix, code="io")
            result.check("format", False, "unreadable")
            return result
    try:
        data = msgspec.json.decode(raw)
    except (msgspec.DecodeError, RecursionError):  # (nested too deep to read: parse_json says how deep)
        from mt_eval.strict import parse_json

        if (lines := json_lines_records(raw)) is not None:  # results.jsonl, given for the card beside it
            beside = Path(path).parent / "card.json"
            result.problem("$", f"a JSON-lines file ({lines:,} records, one a line), not a run card",
                           f"give {beside}" if beside.is_file() else "give the card.json that `mt-eval run` wrote "
                           "in the run directory", code="not-a-card")
            result.check("format", False, "not a run card")
            return result
        data, problems = parse_json(raw, file=str(path))
        result.problems += problems or [not_strict_json(raw, data, str(path))]  # (what Python's reader alone takes)
        result.check("format", False, "not JSON")
        return result
    if duplicates := keys_written_twice(raw, data, str(path)):
        result.problems += duplicates
        result.check("format", False, "a key written twice")
        return result
    if not isinstance(data, dict) or "card_version" not in data:
        result.problem("$", "not a run card: it has no card_version", "give the card.json that `mt-eval run` "
                       "wrote in the run directory", code="not-a-card")
        result.check("format", False, "not a run card")
        return result
    result.data = data
    version = data["card_version"]
    if version != CARD_VERSION:
        from mt_eval._version import __version__
        from mt_eval.value_words import value_in_words

        written_by = data.get("sdk_version")
        shown = repr(version) if isinstance(version, str) and len(version) <= 40 else value_in_words(version)
        kind = version.partition("/")[0] if isinstance(version, str) else ""
        if kind in OTHER_CARDS:  # a card of another kind: no other version of mt-eval reads it as a run card
            from mt_eval.control_chars import escaped_for_terminal

            writer, fix = OTHER_CARDS[kind]
            graded = data["run"].get("card_path") if isinstance(data.get("run"), dict) else None
            graded = escaped_for_terminal(graded, one_line=True) if isinstance(graded, str) and graded else None
            result.problem("$.card_version", f"this is a {kind.replace('-', ' ')} ({shown}) that `{writer}` wrote, "
                           "not a run card: `mt-eval verify` checks the cards `mt-eval run` writes, recomputing "
                           "every figure from their results and corpus",
                           fix.format(graded=graded or "its run.card_path"), code="card-version")
        else:
            result.problem("$.card_version", f"this card's schema version is {shown}; mt-eval {__version__} reads "
                           f"{CARD_VERSION!r}", f"use the mt-eval version that wrote it ({written_by or 'unknown'}), "
                           "or run the evaluation again with this one", code="card-version")
        result.check("format", False, f"{shown} (expected {CARD_VERSION})")
        return result
    result.check("format", True, CARD_VERSION)
    digest, result.canonical = canonical_json(data)
    stated = data.get(HASH_FIELD)
    if stated == digest:
        result.check("content hash", True, digest[:16] + "…")
    else:
        result.check("content hash", False, "does not match the content")
        result.problem("$.content_sha256", f"the card says {str(stated)[:16]}… but its content hashes to "
                       f"{digest[:16]}…: it was changed after the run sealed it", "use the card the run wrote; "
                       "an edited card cannot be published or compared", code="tampered")
    _decode(result, data)
    if result.card is not None and result.card.results_log is not None:
        _read_referenced_results(result, result.card, Path(path))
    if result.card is not None:
        from mt_eval.harness.verify_tallies import check_tallies

        check_tallies(result, result.card)
    return result


def _read_referenced_results(result: Verification, card: RunCard, path: Path) -> None:
    """A card that references its log (`mt_eval.harness.card_results`): its results are read from the log, which
    must be the one the card sealed; without them the card cannot be checked further."""
    from mt_eval.harness.card_results import LogMismatch, results_from_log

    reference = card.results_log
    assert reference is not None
    if card.results:  # (read from the log, these would be set aside unread: a card shows what it verifies)
        message = (f"the card lists {len(card.results):,} results and also references its results in "
                   f"{reference.file}: a run writes one or the other")
        result.problem("$.results", message, "use the card the run wrote", code="tampered")
        result.check("results log", False, message)
        result.card = None
        return
    try:
        card.results = results_from_log(path, reference)
    except LogMismatch as exc:
        result.problem("$.results_log", str(exc), exc.hint, code=exc.code)
        result.check("results log", False, str(exc))
        result.card = None
        return
    result.check("results log", True, f"{reference.file}, {reference.results:,} results, sha256 "
                 f"{reference.sha256[:16]}…")


def verify_card(path: str | Path, *, corpus: CorpusSpec | str | Path | None = None, extensions: Sequence[str] = (),
                raw: bytes | None = None, corpora: CorpusCache | None = None) -> Verification:
    """Every check of the module docstring; a `Verification` listing each check and each mismatch."""
    result = check_card(path, corpus=corpus, raw=raw, corpora=corpora)
    recompute_metrics(result, extensions)
    check_records(result)
    return result


def check_card(path: str | Path, *, corpus: CorpusSpec | str | Path | None = None, raw: bytes | None = None,
               corpora: CorpusCache | None = None) -> Verification:
    """Steps 1–5: the card itself, then the corpus its results name."""
    from mt_eval.harness.verify_corpus import check_corpus

    result = read_card(path, raw)
    if result.card is not None:
        result.source = check_corpus(result, result.card, corpus, corpora or CorpusCache())
    return result


def import_checks() -> None:
    """Import the modules the checks import on first use (kept out of ``mt-eval verify``'s start): a bulk publish
    does it once before it forks its workers, which then share them rather than each importing them again."""
    import mt_eval.champollion.languages
    import mt_eval.corpus.reader
    import mt_eval.corpus.selection
    import mt_eval.harness.card_results
    import mt_eval.harness.corpus
    import mt_eval.harness.outcome
    import mt_eval.harness.verify_corpus
    import mt_eval.harness.verify_records
    import mt_eval.licenses
    import mt_eval.pairs  # noqa: F401


def check_records(result: Verification) -> None:
    """Steps 7 and 8, for a card whose corpus checked out (`check_card`); nothing otherwise."""
    if result.card is not None and result.source is not None:
        from mt_eval.harness.verify_records import check_records as check

        check(result, result.card, result.source)


def recompute_metrics(result: Verification, extensions: Sequence[str] = ()) -> None:
    """Step 6, for a card whose corpus checked out (`check_card`); nothing otherwise."""
    if result.card is not None and result.source is not None:
        from mt_eval.harness.verify_metrics import recompute_metrics as recompute

        recompute(result, result.card, result.source, extensions)


def _decode(result: Verification, data: dict[str, Any]) -> None:
    try:
        result.card = msgspec.convert(data, RunCard)
    except msgspec.ValidationError as exc:
        _shape_problems(result, data, exc)
        return
    from mt_eval.method_card import MethodCard
    from mt_eval.strict import decode_value

    bad = []
    try:
        msgspec.convert(result.card.method.card, MethodCard)  # fast; the walker below says what is wrong
    except (msgspec.ValidationError, ValueError):
        _, found = decode_value(result.card.method.card, MethodCard, file=result.path)
        bad = [p for p in found if p.severity == "error"]
    for problem in bad:
        result.problems.append(msgspec.structs.replace(problem, path="$.method.card" + problem.path[1:]))
    unknown = data.keys() - _RUN_CARD_FIELDS
    if unknown:  # (a misspelled field would otherwise pass, its value read by nothing)
        from mt_eval.corpus.model import listing

        names = sorted(unknown)
        said = f"{names[0]!r} is not a field" if len(names) == 1 else f"{listing([repr(n) for n in names], 5)} are " \
            "not fields"
        bad.append(Problem(file=result.path, path=f"$.{names[0]}", code="schema", hint="use the card the run wrote",
                           message=f"{said} of a run card ({CARD_VERSION})"))
        result.problems.append(bad[-1])
    from mt_eval.harness.verify_fairness import identity_problems
    from mt_eval.harness.verify_metrics import bootstrap_problem
    from mt_eval.harness.verify_written import OLDER_CARD_FIX, older_card_problems, written_problems

    for code, wrong in (("timestamp", _times_problem(result.card)), ("bootstrap", bootstrap_problem(result.card)),
                        ("hardware", _hardware_problem(result.card)),
                        *(("card", found) for found in identity_problems(result.card)),
                        *(("card", found) for found in written_problems(result.card, data))):
        if wrong is not None:
            bad.append(Problem(file=result.path, path=wrong[0], message=wrong[1], code=code,
                               hint="use the card the run wrote"))
            result.problems.append(bad[-1])
    for where, message in older_card_problems(data):  # (not called tampered: older cards lack them too)
        bad.append(Problem(file=result.path, path=where, message=message, code="card-version", hint=OLDER_CARD_FIX))
        result.problems.append(bad[-1])
    result.check("schema", not bad, "run card and method card" if not bad else bad[0].message)


_RUN_CARD_FIELDS = frozenset(RunCard.__struct_fields__)
_SHAPE_FIX = "the card does not have the run-card shape; use the card the run wrote"


def _shape_problems(result: Verification, data: dict[str, Any], exc: msgspec.ValidationError) -> None:
    """Every place the card is not of the run-card shape, in words (msgspec names only the first, in its own)."""
    from mt_eval.strict import decode_value

    _, found = decode_value(data, RunCard, file=result.path)
    said = [(p.path, p.message) for p in found if p.severity == "error"]
    if not said:  # (a constraint only msgspec knows: its words)
        where = re.search(r" - at `([^`]+)`$", str(exc))
        said = [(where.group(1) if where else "$", re.sub(r" - at `[^`]+`$", "", str(exc)))]
    for path, message in said:
        result.problem(path, message, _SHAPE_FIX, code="schema")
    result.check("schema", False, f"{said[0][0]}: {said[0][1]}" + (f" (and {len(said) - 1} more)" if len(said) > 1
                                                                    else ""))


def _hardware_problem(card: RunCard) -> tuple[str, str] | None:
    """(JSON path, message) when the card's hardware label (what latencies are compared by) is not the one its CPU,
    cores, memory and GPUs make; else None. Older cards, without ``gpus``, are not checked."""
    from mt_eval.harness.environment import hardware_label

    env = card.environment
    if env.gpus is None:
        return None
    label = hardware_label(env.cpu_model, env.cpu_count, env.memory_gib, env.gpus)
    if env.hardware == label:
        return None
    return "$.environment.hardware", (f"the card says {env.hardware!r}, its cpu_model, cpu_count, memory_gib and gpus "
                                      f"make {label!r}")


def _times_problem(card: RunCard) -> tuple[str, str] | None:
    """(JSON path, message) when the card's start or end is not a time with its offset (as runs write them:
    ISO 8601), or it ends before it starts; else None."""
    import datetime

    times = []
    for field in ("started_at", "finished_at"):
        text = getattr(card, field)
        try:
            moment = datetime.datetime.fromisoformat(text)
        except ValueError:
            moment = None
        if moment is None or moment.tzinfo is None:
            return f"$.{field}", f"{text!r} is not a time with its UTC offset (ISO 8601, as runs write it)"
        times.append(moment)
    if times[1] < times[0]:
        return "$.finished_at", f"the run finished ({card.finished_at}) before it started ({card.started_at})"
    return None


def render(verification: Verification, *, verbose: bool = True) -> str:
    """The verification as text: a line per check, then every problem with its fix."""
    marks = {True: "✓", False: "✗", None: "?"}
    lines = [verification.summary()]
    if verbose:
        width = max((len(c.name) for c in verification.checks), default=0)
        lines += [f"  {marks[c.passed]} {c.name:<{width}}  {c.detail}" for c in verification.checks]
    lines += ["  " + p.render().replace("\n", "\n  ") for p in verification.problems]
    return "\n".join(lines)


def as_json(verification: Verification) -> dict[str, Any]:
    return {"card": verification.path, "verified": verification.ok,
            "checks": [{"name": c.name, "passed": c.passed, "detail": c.detail} for c in verification.checks],
            "problems": msgspec.to_builtins(verification.problems)}

