"""Re-verifying a card's fairness records against their own data (`mt-eval verify`, with the other records:
`mt_eval.harness.verify_records`), and the method's identity and retries against the card's other fields.

- **contamination**: the record `mt_eval.contamination.record.record_of` writes: ``hits_total`` is the number of
  hits (``hits`` lists the first 50), the status is "contaminated" exactly when there are hits and "clean" only
  with no hit, nothing unread and a recall at its floor; ``recall`` is the share of the planted texts found,
  ``recall_floor`` and ``seed`` are its ``settings``' (which it plants no more texts than, each an entry of the
  card's corpus), a check that ran names its settings and the corpus it checked, the card's (``corpora``), and
  ``reasons`` say why exactly when the status is not "clean";
- **static scan**: ``errors`` counts the findings no declared dependency covers and the unscannable files;
- **eligibility**: the verdict is what `mt_eval.eligibility.decide` makes of the card's own facts (its class,
  sandbox, scan, denied attempts, results and substitution replay), and so are its reasons and flags (why not,
  or what was checked); an ``official`` run was sandboxed, with a declared class and a clean static scan;
- **method and retries** (`identity_problems`): the method card's ``method_id``, ``class`` and (when the plugin's
  dependencies derive one) ``dependency_class`` are the method's — only ``method.json`` sets them, and a run
  refuses a card that says otherwise — and ``retries_used`` is within ``retry_budget``.

``method.name`` is not compared with the method card's: a method card (``--method-card``, ``method_card.json``)
may rename the method.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

import msgspec

from mt_eval.contamination.record import RECORDED_HITS
from mt_eval.eligibility import decide
from mt_eval.sandbox.policy import attempts_denied

if TYPE_CHECKING:
    from collections.abc import Iterable

    from mt_eval.contamination.record import ContaminationRecord
    from mt_eval.harness.runcard import RunCard
    from mt_eval.harness.verification import Verification

HINT = "use the card the run wrote"


def _json(value: object) -> str:
    return msgspec.json.encode(value).decode()


def check_fairness(result: Verification, card: RunCard, corpus_entries: Iterable[dict[str, Any]]) -> None:
    """The contamination, static scan and eligibility checks, each reported on its own (none for a record the
    card does not have); ``corpus_entries`` are the whole corpus's, which a run checks for contamination."""
    for name, record, found in (("contamination", card.contamination, partial(_contamination, card, corpus_entries)),
                                ("static scan", card.static_scan, partial(_static_scan, card))):
        if record is None:
            continue
        wrong = found()
        for where, message in wrong:
            result.problem(where, message, HINT, code=name.replace(" ", "-"))
        result.check(name, not wrong, _shown(card, name) if not wrong else ", ".join(w for w, _ in wrong)
                     .replace("$.", "") + " disagree")
    if card.eligibility is not None:
        _eligibility(result, card)


def _shown(card: RunCard, name: str) -> str:
    if name == "static scan":
        scan = card.static_scan
        assert scan is not None
        return f"{scan.errors} error{'s' if scan.errors != 1 else ''} in {len(scan.findings)} findings"
    record = card.contamination
    assert record is not None
    return record.status + (f", recall {record.recall}" if record.recall is not None else "") + (
        f", {record.hits_total} hits" if record.hits_total else "")


def _contamination(card: RunCard, corpus_entries: Iterable[dict[str, Any]]) -> list[tuple[str, str]]:
    record = card.contamination
    assert record is not None
    wrong: list[tuple[str, str]] = []
    hits = len(record.hits)
    if (hits < RECORDED_HITS and record.hits_total != hits) or record.hits_total < hits:
        wrong.append(("$.contamination.hits_total", f"the card says {record.hits_total}, it lists {hits} hits "
                      f"($.contamination.hits, the first {RECORDED_HITS} of them)"))
    elif (record.status == "contaminated") != (record.hits_total > 0):
        wrong.append(("$.contamination.status", f"the card says {record.status!r} with {record.hits_total} hits: "
                      "a check is \"contaminated\" exactly when it has hits"))
    elif record.status == "clean" and (record.unread or record.recall is None or record.recall_floor is None
                                       or record.recall < record.recall_floor):
        wrong.append(("$.contamination.status", "the card says \"clean\", but " + (
            f"{len(record.unread)} files could not be fully read ($.contamination.unread)" if record.unread else
            f"its planted control's recall is {_json(record.recall)}, its floor {_json(record.recall_floor)}")))
    if (record.status == "clean") == bool(record.reasons):
        wrong.append(("$.contamination.reasons", f"the card says {_json(record.reasons)} with status "
                      f"{record.status!r}: a check says why exactly when it is not \"clean\""))
    wrong += _ran(record) + _control(record) + _planted_entries(record, corpus_entries)
    for i, checked in enumerate(record.corpora):
        for field, stated, own in (("sha256", checked.sha256, card.corpus.sha256),
                                   ("entries", checked.entries, card.corpus.entries)):
            if stated != own:
                wrong.append((f"$.contamination.corpora[{i}].{field}", f"the card says {_json(stated)}, its corpus "
                              f"($.corpus.{field}) says {_json(own)}: a run checks the corpus it runs"))
    return wrong


def _ran(record: ContaminationRecord) -> list[tuple[str, str]]:
    """A check that ran names the corpora it read and the settings it decided by (without them, neither the
    corpus nor the recall floor could be checked against the card)."""
    if record.status == "not-run":
        return []
    wrong = []
    if not record.corpora:
        wrong.append(("$.contamination.corpora", f"the card says {record.status!r} but names no corpus the check "
                      "read: a run checks the corpus it runs"))
    if record.settings is None:
        wrong.append(("$.contamination.settings", f"the card says {record.status!r} but has no settings: a check "
                      "records the thresholds, seed and recall floor it decided by"))
    return wrong


def _control(record: ContaminationRecord) -> list[tuple[str, str]]:
    """The planted control's figures: its recall over what it planted, its floor and seed its settings'."""
    wrong = []
    planted = record.planted
    if planted:
        found = sum(p.found for p in planted)
        recall = round(found / len(planted), 4)
        if record.recall != recall:
            wrong.append(("$.contamination.recall", f"the card says {_json(record.recall)}, its planted control "
                          f"found {found} of {len(planted)} texts ($.contamination.planted): {recall}"))
    elif record.settings is not None and record.recall is not None:
        wrong.append(("$.contamination.recall", f"the card says {_json(record.recall)}, but it planted no text "
                      "($.contamination.planted is empty): a control that planted nothing has no recall"))
    settings = record.settings
    if settings is None:
        return wrong
    if record.recall_floor != settings.recall_floor:
        wrong.append(("$.contamination.recall_floor", f"the card says {_json(record.recall_floor)}, its settings "
                      f"($.contamination.settings.recall_floor) say {_json(settings.recall_floor)}"))
    if len(planted) > settings.plant:
        wrong.append(("$.contamination.planted", f"the card lists {len(planted)} planted texts, its settings "
                      f"($.contamination.settings.plant) plant at most {settings.plant}"))
    if record.seed is not None and record.seed != settings.seed:
        wrong.append(("$.contamination.seed", f"the card says {record.seed}, its settings "
                      f"($.contamination.settings.seed) say {settings.seed}"))
    return wrong


def _planted_entries(record: ContaminationRecord, corpus_entries: Iterable[dict[str, Any]]) -> list[tuple[str, str]]:
    """The planted control draws its texts from the corpus the run checked, the card's."""
    if not record.planted:
        return []
    ids = {str(entry["id"]) for entry in corpus_entries}  # (as the check names them: mt_eval.contamination.corpora)
    return [(f"$.contamination.planted[{i}].entry_id", f"the card says {_json(planted.entry_id)}, an id its corpus "
             "does not have: the control plants texts of the corpus the run checked")
            for i, planted in enumerate(record.planted) if planted.entry_id not in ids]


def _static_scan(card: RunCard) -> list[tuple[str, str]]:
    scan = card.static_scan
    assert scan is not None
    uncovered = sum(f.covered_by is None for f in scan.findings)
    errors = uncovered + len(scan.unscannable)
    if scan.errors == errors:
        return []
    return [("$.static_scan.errors", f"the card says {scan.errors}, its findings say {errors} ({uncovered} not "
             f"covered by a declared dependency, {len(scan.unscannable)} unscannable files)")]


def _eligibility(result: Verification, card: RunCard) -> None:
    """The card's eligibility must be what its own facts make it (`mt_eval.eligibility.decide`)."""
    stated = card.eligibility
    assert stated is not None
    kind = card.method.dependency_class
    ran = card.corpus.entries if card.selection is None else card.selection.entries_selected
    denied = card.sandbox.denied if card.sandbox is not None else []
    refused = sum(a.count for a in attempts_denied(denied))
    scan_clean = card.static_scan is not None and not card.static_scan.errors
    wrong: list[tuple[str, str]] = []
    if stated.eligible:
        against = [why for why, holds in [
            (f"its dependency class is {kind or 'not declared'}", kind in ("S", "O", "A1")),
            ("it records no sandbox ($.sandbox is null)", card.sandbox is not None),
            ("it records no clean static scan ($.static_scan)", scan_clean),
            (f"its sandbox denied {refused} attempt{'s' if refused != 1 else ''}", refused == 0),
            (f"it has {len(card.results)} results for {ran} entries", len(card.results) == ran),
            ("its substitution replay did not run end to end", kind != "A1" or (stated.substitution is not None
                                                                                and stated.substitution.ok)),
        ] if not holds]
        if against:
            wrong.append(("$.eligibility.eligible", f"the card says eligible, but {'; '.join(against)}"))
    sandboxed = card.sandbox is not None
    again = decide(dependency_class=kind, sandboxed=sandboxed, through_gateway=sandboxed and kind == "A1",
                   scan=card.static_scan, denied=denied, substitution=stated.substitution,
                   complete=len(card.results) == ran, official=stated.official)
    if not wrong and not stated.eligible and again.eligible:
        wrong.append(("$.eligibility.eligible", "the card says not eligible, but its own facts (class, sandbox, "
                      "static scan, denied attempts, results) make it eligible"))
    elif not wrong:  # (a not-eligible card's reasons say why; an eligible card's, what was checked)
        for field in ("reasons", "flags"):
            if getattr(stated, field) != getattr(again, field):
                wrong.append((f"$.eligibility.{field}", f"the card says {_json(getattr(stated, field))}, its own facts "
                              f"say {_json(getattr(again, field))}"))
    if stated.official:
        against = [why for why, holds in [("it records no sandbox ($.sandbox is null)", sandboxed),
                                          ("it declares no dependency class", kind is not None),
                                          ("its static scan is not clean ($.static_scan)", scan_clean)] if not holds]
        if against:
            wrong.append(("$.eligibility.official", f"the card says an official run, but {'; '.join(against)}: an "
                          "official run is sandboxed, declares its class and starts only with a clean static scan"))
    for where, message in wrong:
        result.problem(where, message, "eligibility must follow from the card's own facts: use the card the run "
                       "wrote", code="eligibility")
    verdict = "eligible" if stated.eligible else "not eligible"
    result.check("eligibility", not wrong, f"{verdict}, as its sandbox, scan and results say" if not wrong else
                 "the card's facts do not allow it")


def identity_problems(card: RunCard) -> list[tuple[str, str]]:
    """(JSON path, message) for the method's identity where its method card says otherwise, and for more retries
    used than the run's budget."""
    method, wrong = card.method, []
    own = method.card
    for field, stated in (("method_id", method.method_id), ("class", method.method_class),
                          ("dependency_class", method.dependency_class)):
        if stated is not None and own.get(field) != stated:
            wrong.append((f"$.method.{field}", f"the card says {_json(stated)}, its method card "
                          f"($.method.card.{field}) says {_json(own.get(field))}: only method.json sets it"))
    covariates = card.covariates
    if covariates.retries_used > covariates.retry_budget:
        wrong.append(("$.covariates.retries_used", f"the card says {covariates.retries_used} retries, but its budget "
                      f"($.covariates.retry_budget) is {covariates.retry_budget}: a run retries no more"))
    return wrong
