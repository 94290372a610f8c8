"""What a run card holds of its results: every result up to 100,000 (or ``--embed-results always``), else a
reference to ``results.jsonl`` by SHA-256 — and ``verify``, ``compare`` and ``gate`` work the same from the card
and its log."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import msgspec
import pytest

from mt_eval.cli import main
from mt_eval.harness import runcard as rc
from mt_eval.harness.card_results import embeds_results, file_sha256
from mt_eval.harness.verify import verify_card
from rigor_support import family_corpus, honest, run


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return family_corpus(tmp_path / "corpus.json")


def test_auto_embeds_up_to_the_limit_and_the_choices_are_checked():
    assert embeds_results("auto", rc.EMBED_UP_TO) and not embeds_results("auto", rc.EMBED_UP_TO + 1)
    assert embeds_results("always", 10 ** 7) and not embeds_results("never", 1)
    with pytest.raises(ValueError, match="auto, always, never"):
        embeds_results("sometimes", 1)


def test_a_card_that_references_its_log_holds_its_hash_and_no_results(tmp_path: Path, corpus: Path):
    code, card = run(tmp_path / "run", corpus, *honest(), "--embed-results", "never")
    assert code == 0 and card is not None
    log = tmp_path / "run" / "results.jsonl"
    assert card.results == [] and card.results_log == rc.ResultsLogReference(
        file="results.jsonl", sha256=file_sha256(log), results=34)
    assert card.errors == 0 and card.metrics is not None and card.status == "complete"
    embedded = run(tmp_path / "embedded", corpus, *honest())[1]
    assert embedded is not None and embedded.results_log is None and len(embedded.results) == 34
    assert [(m.name, m.score, m.ci_low, m.ci_high) for m in card.metrics.metrics] == [
        (m.name, m.score, m.ci_low, m.ci_high) for m in embedded.metrics.metrics]  # type: ignore[union-attr]


def test_verify_reads_the_results_from_the_log_the_card_sealed(tmp_path: Path, corpus: Path, capsys):
    assert run(tmp_path / "run", corpus, *honest(), "--embed-results", "never")[0] == 0
    card_path = tmp_path / "run" / "card.json"
    result = verify_card(card_path)
    assert result.ok, result.problems
    assert "results log" in [c.name for c in result.checks] and len(result.card.results) == 34  # type: ignore[union-attr]
    assert main(["verify", str(card_path)]) == 0
    assert "results.jsonl, 34 results" in capsys.readouterr().out


def test_a_changed_or_missing_log_is_named_with_its_fix(tmp_path: Path, corpus: Path, capsys):
    assert run(tmp_path / "run", corpus, *honest(), "--embed-results", "never")[0] == 0
    card_path, log = tmp_path / "run" / "card.json", tmp_path / "run" / "results.jsonl"
    lines = log.read_text().splitlines()
    first = json.loads(lines[0])
    first["predicted"] = "something else"
    log.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    result = verify_card(card_path)
    assert not result.ok and [p.path for p in result.errors] == ["$.results_log"]
    assert "not the log this card sealed: another run's, or changed after the run" in result.errors[0].message
    log.unlink()
    result = verify_card(card_path)
    assert not result.ok and result.errors[0].code == "missing-log"
    assert "keep results.jsonl beside card.json" in (result.errors[0].hint or "")
    assert main(["verify", str(card_path)]) == 1
    assert "does not exist" in capsys.readouterr().out
    log.mkdir()
    assert main(["verify", str(card_path)]) == 1
    assert f"{log} is a directory" in capsys.readouterr().out
    assert main(["publish", str(card_path), "--db", str(tmp_path / "board.db"), "--no-input"]) == 1
    assert f"{log} is a directory" in capsys.readouterr().err


def test_a_card_copied_with_its_log_verifies_elsewhere_and_without_it_does_not(tmp_path: Path, corpus: Path):
    assert run(tmp_path / "run", corpus, *honest(), "--embed-results", "never")[0] == 0
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    shutil.copy(tmp_path / "run" / "card.json", moved / "card.json")
    assert not verify_card(moved / "card.json", corpus=corpus).ok
    shutil.copy(tmp_path / "run" / "results.jsonl", moved / "results.jsonl")
    assert verify_card(moved / "card.json", corpus=corpus).ok


def test_compare_and_gate_work_from_a_referenced_card(tmp_path: Path, corpus: Path, capsys):
    assert run(tmp_path / "a", corpus, *honest(), "--embed-results", "never")[0] == 0
    assert run(tmp_path / "b", corpus, *honest())[0] == 0
    capsys.readouterr()
    a, b = tmp_path / "a" / "card.json", tmp_path / "b" / "card.json"
    assert main(["compare", str(a), str(b), "--bootstrap", "200", "--trials", "500", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["outputs"]["all"] == {"differ": 0, "of": 34}
    assert main(["gate", str(a), str(b)]) == 0


def test_the_reference_is_sealed_into_the_card(tmp_path: Path, corpus: Path):
    assert run(tmp_path / "run", corpus, *honest(), "--embed-results", "never")[0] == 0
    card_path = tmp_path / "run" / "card.json"
    data = json.loads(card_path.read_text())
    data["results_log"]["sha256"] = "0" * 64  # pointed at another log, hash left as sealed
    card_path.write_text(json.dumps(data))
    result = verify_card(card_path)
    assert "$.content_sha256" in [p.path for p in result.errors]
    assert msgspec.json.decode(json.dumps(data).encode(), type=rc.RunCard).results == []


def test_a_referenced_card_is_published_with_the_results_of_its_log(tmp_path: Path, corpus: Path, capsys):
    from mt_eval.leaderboard.store import open_store

    assert run(tmp_path / "run", corpus, *honest(), "--embed-results", "never")[0] == 0
    method_card = tmp_path / "method-card.json"
    method_card.write_text(json.dumps({"description": "Copies or translates by a script.", "paradigm": "rule-based",
                                       "open_source": True}))
    db = str(tmp_path / "board.db")
    card = str(tmp_path / "run" / "card.json")
    assert main(["publish", card, "--db", db, "--no-input", "--method-card", str(method_card)]) == 0, \
        capsys.readouterr().err
    with open_store(db) as store:
        [row] = store.rows()
    assert row["entries_run"] == 34
    (tmp_path / "run" / "results.jsonl").unlink()
    assert main(["publish", card, "--db", str(tmp_path / "other.db"), "--no-input", "--method-card",
                 str(method_card)]) == 1
    assert "keep results.jsonl beside card.json" in capsys.readouterr().err


def test_the_detail_page_of_a_referenced_card_says_where_its_results_are(tmp_path: Path, corpus: Path, capsys):
    """Before, its "Entries" table was empty, with nothing saying why: the store keeps the sealed card, not its log."""
    assert run(tmp_path / "run", corpus, *honest(), "--embed-results", "never")[0] == 0
    log_sha256 = file_sha256(tmp_path / "run" / "results.jsonl")
    method_card = tmp_path / "method-card.json"
    method_card.write_text(json.dumps({"description": "Copies or translates by a script.", "paradigm": "rule-based",
                                       "open_source": False}))
    db, site = str(tmp_path / "board.db"), tmp_path / "site"
    assert main(["publish", str(tmp_path / "run" / "card.json"), "--db", db, "--no-input", "--method-card",
                 str(method_card)]) == 0, capsys.readouterr().err
    assert main(["leaderboard", "--db", db, "--out", str(site), "--quiet"]) == 0
    [page] = [p.read_text() for p in (site / "cards").glob("*.html")]
    entries = page.split("<h2>Entries</h2>", 1)[1]
    assert entries.startswith(f"<p>This card's 34 results are in its results log, <code>results.jsonl</code> (sha256 "
                              f"<code>{log_sha256[:16]}…</code>), beside the card in the run directory")
    assert "<table>" not in entries


def test_a_referenced_card_is_scored_again_from_its_log_and_a_changed_score_is_caught(tmp_path: Path,
                                                                                     corpus: Path):
    """The scorers read a referenced card's log a chunk at a time, as the run scored it (not lists copied into
    every scorer process); the recomputed figures are the embedded card's, and a resealed score is caught."""
    from rigor_support import edit_card

    assert run(tmp_path / "run", corpus, *honest(), "--embed-results", "never")[0] == 0
    card_path = tmp_path / "run" / "card.json"
    verified = verify_card(card_path)
    assert verified.ok and {c.name for c in verified.checks} >= {"chrF++", "BLEU", "TER"}

    def claim_more(data: dict) -> None:
        data["metrics"]["metrics"][0]["score"] += 1.5

    changed = verify_card(edit_card(card_path, claim_more))  # written beside it, next to the same log
    assert not changed.ok
    assert [p.path for p in changed.errors] == ["$.metrics.metrics[0].score"]
    assert "recomputed" in changed.errors[0].message


def test_a_referenced_card_of_part_of_its_corpus_is_scored_from_the_entries_it_ran(tmp_path: Path, corpus: Path):
    code, card = run(tmp_path / "run", corpus, *honest(), "--embed-results", "never", "--limit", "20")
    assert code in (0, 5) and card is not None and card.selection is not None and card.metrics is not None
    assert card.results_log is not None and card.results_log.results < 34
    verified = verify_card(tmp_path / "run" / "card.json")
    assert verified.ok, verified.problems


def test_a_referenced_cards_results_are_read_from_its_log_when_a_pass_needs_them(tmp_path: Path, corpus: Path):
    """Checking a card of a million results holds no million objects: only where each result's line is."""
    from mt_eval.harness.card_results import ResultsOnDisk, in_blocks

    assert run(tmp_path / "run", corpus, *honest(), "--embed-results", "never")[0] == 0
    verified = verify_card(tmp_path / "run" / "card.json")
    results = verified.card.results  # type: ignore[union-attr]
    assert isinstance(results, ResultsOnDisk) and len(results) == 34
    logged = [msgspec.json.decode(line, type=rc.CardResult)
              for line in (tmp_path / "run" / "results.jsonl").read_bytes().splitlines() if line.strip()]
    assert list(results) == logged
    assert results[0] == logged[0] and results[-1] == logged[-1] and results[3:6] == logged[3:6]
    with pytest.raises(IndexError):
        results[34]
    assert [len(block) for block in results.blocks(10)] == [10, 10, 10, 4]
    assert [list(block) for block in in_blocks(logged)] == [logged]  # embedded results: one block


@pytest.mark.parametrize(("where", "change"), [
    ("$.errors", lambda data: data.update(errors=data["errors"] + 1)),
    ("$.families.canary_pass_rate", lambda data: data["families"]["canary_pass_rate"].update(numerator=0)),
])
def test_a_referenced_cards_tallies_and_families_are_counted_again_from_its_log(tmp_path: Path, corpus: Path,
                                                                               where: str, change):
    from rigor_support import edit_card

    assert run(tmp_path / "run", corpus, *honest(), "--embed-results", "never")[0] == 0
    card = msgspec.json.decode((tmp_path / "run" / "card.json").read_bytes(), type=rc.RunCard)
    assert card.families is not None and card.families.canary_pass_rate.numerator > 0
    changed = verify_card(edit_card(tmp_path / "run" / "card.json", change))
    assert where in [p.path for p in changed.errors], changed.problems


@pytest.mark.parametrize(("edit", "message"), [
    (lambda lines: [lines[0], "not a result", *lines[1:]], "line 2 is not a result"),
    (lambda lines: lines[1:], "holds 33 results, the card says 34"),
])
def test_a_log_resealed_into_its_card_must_still_hold_the_cards_results(tmp_path: Path, corpus: Path, edit,
                                                                         message: str):
    """A log whose hash the card was made to state still has to be every result the card counts."""
    from rigor_support import edit_card

    assert run(tmp_path / "run", corpus, *honest(), "--embed-results", "never")[0] == 0
    log = tmp_path / "run" / "results.jsonl"
    log.write_text("\n".join(edit(log.read_text().splitlines())) + "\n")

    def reseal(data: dict) -> None:
        data["results_log"]["sha256"] = file_sha256(log)

    result = verify_card(edit_card(tmp_path / "run" / "card.json", reseal))
    assert not result.ok and [(p.path, p.code) for p in result.errors] == [("$.results_log", "tampered")]
    assert message in result.errors[0].message


@pytest.mark.parametrize("embed", ["always", "never"])
def test_a_card_resealed_without_its_results_is_refused_not_a_traceback(tmp_path: Path, corpus: Path, embed: str,
                                                                         capsys):
    from rigor_support import edit_card

    assert run(tmp_path / "run", corpus, *honest(), "--embed-results", embed)[0] == 0
    log = tmp_path / "run" / "results.jsonl"

    def empty(data: dict) -> None:
        if embed == "always":
            data["results"] = []
        else:
            log.write_text("")
            data["results_log"].update(sha256=file_sha256(log), results=0)

    edited = edit_card(tmp_path / "run" / "card.json", empty)
    result = verify_card(edited)
    assert not result.ok and ("$.metrics", "no-results") in [(p.path, p.code) for p in result.errors]
    assert main(["verify", str(edited)]) == 1
    assert "holds a result for none of its corpus's scored entries" in capsys.readouterr().out


def test_a_card_given_by_a_symbolic_link_is_read_with_the_log_next_to_the_card_it_points_to(
        tmp_path: Path, corpus: Path, capsys):
    assert run(tmp_path / "run", corpus, *honest(), "--embed-results", "never")[0] == 0
    (tmp_path / "latest").mkdir()
    link = tmp_path / "latest" / "card.json"
    link.symlink_to(tmp_path / "run" / "card.json")
    capsys.readouterr()
    assert main(["verify", str(link)]) == 0, capsys.readouterr().out
    assert "results.jsonl, 34 results" in capsys.readouterr().out
    assert main(["compare", str(link), str(tmp_path / "run"), "--bootstrap", "100", "--trials", "100", "--quiet"]) == 0


def test_a_card_that_lists_results_and_also_references_its_log_is_refused(tmp_path: Path, corpus: Path, capsys):
    """Results listed beside the log's would be shown by the card and set aside by every check."""
    from rigor_support import edit_card

    assert run(tmp_path / "run", corpus, *honest(), "--embed-results", "never")[0] == 0
    assert run(tmp_path / "embedded", corpus, *honest())[0] == 0
    listed = json.loads((tmp_path / "embedded" / "card.json").read_text())["results"]
    for result in listed:
        result["predicted"] = "Una traducción perfecta."

    def list_results(data: dict) -> None:
        data["results"] = listed

    edited = edit_card(tmp_path / "run" / "card.json", list_results)
    capsys.readouterr()
    assert main(["verify", str(edited)]) == 1
    out = capsys.readouterr().out
    assert f"{edited} $.results: the card lists 34 results and also references its results in results.jsonl" in out
    assert main(["compare", str(tmp_path / "run"), str(edited), "--quiet"]) == 1
    assert f"{edited} does not verify" in capsys.readouterr().err


def test_a_referenced_card_whose_log_is_in_completion_order_verifies_with_its_failures(tmp_path: Path,
                                                                                        corpus: Path, capsys):
    """The log holds results as they completed, the run names each failure's first entry in corpus order: a
    failed canary whose short batch finished before the long first batch is logged first, and the card still
    verifies (and compares); an example that did not fail with its message is still caught."""
    from rigor_support import edit_card

    ran = honest(fail=["s00", "c0"], sleep_s=0.01)
    code, card = run(tmp_path / "run", corpus, *ran, "--embed-results", "never", "--batch-size", "30",
                     "--retries", "0", "--latency-sample", "0")
    assert code == 3 and card is not None and card.failures is not None
    assert [(f.message, f.count, f.example_id) for f in card.failures] == [("asked to fail", 2, "s00")]
    logged = [json.loads(line)["id"] for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert logged.index("c0") < logged.index("s00")  # (what this test is about: completion order)
    capsys.readouterr()
    assert main(["verify", str(tmp_path / "run")]) == 0, capsys.readouterr().out
    assert run(tmp_path / "embedded", corpus, *ran, "--batch-size", "30", "--retries", "0",
               "--latency-sample", "0")[0] == 3
    assert main(["compare", str(tmp_path / "embedded"), str(tmp_path / "run"), "--bootstrap", "100", "--trials",
                 "100", "--quiet"]) == 0

    def name_another(data: dict) -> None:
        data["failures"][0]["example_id"] = "s01"

    result = verify_card(edit_card(tmp_path / "run" / "card.json", name_another))
    assert [p.path for p in result.errors] == ["$.failures"], result.problems


def test_a_log_that_cannot_be_read_is_named_with_its_fix_not_a_traceback(tmp_path: Path, corpus: Path, capsys,
                                                                          monkeypatch):
    from mt_eval.harness import card_results

    assert run(tmp_path / "run", corpus, *honest(), "--embed-results", "never")[0] == 0
    log = tmp_path / "run" / "results.jsonl"

    def unreadable(path: Path) -> str:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(card_results, "file_sha256", unreadable)
    capsys.readouterr()
    assert main(["verify", str(tmp_path / "run")]) == 1
    out = capsys.readouterr().out
    assert f"cannot read {log}: Permission denied" in out and f"chmod u+r {log}" in out
    assert main(["compare", str(tmp_path / "run"), str(tmp_path / "run"), "--quiet"]) == 1
    assert f"cannot read {log}: Permission denied" in capsys.readouterr().err


def test_grade_reads_the_results_from_the_log_and_grades_as_from_a_card_that_lists_them(tmp_path: Path, corpus: Path,
                                                                                        capsys):
    """Before: a card referencing its log was graded as a run of no entries ("0 graded", exit 0). s00 fails once
    and is retried last, so the log does not hold the results in corpus order."""
    from grading_support import RULES

    ran = (*honest(flaky=["s00"]), "--batch-size", "4", "--latency-sample", "0")
    assert run(tmp_path / "never", corpus, *ran, "--embed-results", "never")[0] == 0
    assert run(tmp_path / "listed", corpus, *ran)[0] == 0
    assert json.loads((tmp_path / "never" / "results.jsonl").read_text().splitlines()[-1])["id"] == "s00"
    graded = {}
    for name in ("never", "listed"):
        assert main(["grade", str(tmp_path / name / "card.json"), "--grader", str(RULES), "--seed", "3",
                     "--resamples", "50", "--out", str(tmp_path / f"{name}-graded"), "--quiet"]) == 0
        card = json.loads((tmp_path / f"{name}-graded" / "grading-card.json").read_text())
        graded[name] = [(e["entry_id"], e["item"], e["error"]) for e in card["entries"]]
    assert len(graded["never"]) == 30 and all(error is None for *_, error in graded["never"])
    assert graded["never"] == graded["listed"]  # (the same items for the same seed, in corpus order)
    (tmp_path / "never" / "results.jsonl").unlink()
    capsys.readouterr()
    assert main(["grade", str(tmp_path / "never" / "card.json"), "--grader", str(RULES), "--quiet", "--force",
                 "--out", str(tmp_path / "never-graded")]) == 1
    assert "keep results.jsonl beside card.json" in capsys.readouterr().err
