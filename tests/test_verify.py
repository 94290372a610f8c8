"""`mt-eval verify`: a card re-verifies from its own results and its corpus, and every mismatch is named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gate_policies import LENIENT
from mt_eval.cli import main
from mt_eval.harness.verify import verify_card
from rigor_support import edit_card
from verify_support import run_card, run_with_failures, write_corpus

HERE = Path(__file__).parent
REVERSE = HERE / "fixtures" / "reverse"


@pytest.fixture
def card_path(tmp_path: Path) -> Path:
    return run_card(tmp_path)


edit = edit_card  # (path, change, *, reseal, name): the card edited, resealed or not, beside the original


def paths(verification) -> list[str]:
    return [p.path for p in verification.errors]


def test_a_card_as_the_run_wrote_it_verifies(card_path: Path, capsys):
    result = verify_card(card_path)
    assert result.ok, result.problems
    assert [c.name for c in result.checks] == ["format", "content hash", "schema", "tallies", "corpus", "chrF++",
                                               "BLEU", "TER", "families", "latency", "contamination", "static scan",
                                               "eligibility", "gate", "predictions"]
    assert result.corpus_entries == 8
    assert main(["verify", str(card_path)]) == 0
    out = capsys.readouterr().out
    assert "verified" in out and "✓ chrF++" in out and "recomputed" in out


def test_an_edited_prediction_breaks_the_hash_and_every_metric(card_path: Path, capsys):
    def change(data: dict) -> None:
        data["results"][0]["predicted"] = "el gato 0 duerme"

    edited = edit(card_path, change, reseal=False)
    result = verify_card(edited)
    assert not result.ok
    assert "$.content_sha256" in paths(result) and "$.metrics.metrics[0].score" in paths(result)
    assert main(["verify", str(edited)]) == 1
    assert "changed after the run sealed it" in capsys.readouterr().out


def test_a_resealed_card_still_fails_on_the_recomputed_metrics(card_path: Path):
    def change(data: dict) -> None:
        data["metrics"]["metrics"][0]["score"] += 5

    result = verify_card(edit(card_path, change, reseal=True))
    assert paths(result) == ["$.metrics.metrics[0].score"]
    assert "recomputed" in result.errors[0].message


def test_tallies_that_disagree_with_the_results_are_named(card_path: Path):
    def change(data: dict) -> None:
        data["errors"] = 3
        data["usage"]["prompt_tokens"] = 99
        data["results"].append(dict(data["results"][0]))

    result = verify_card(edit(card_path, change, reseal=True))
    found = paths(result)
    assert {"$.errors", "$.usage.prompt_tokens", "$.corpus.entries", "$.metrics.segments", "$.results"} <= set(found)


def test_the_corpus_must_be_the_one_the_card_was_run_on(card_path: Path, tmp_path: Path, capsys):
    corpus = tmp_path / "corpus.json"
    corpus.write_text(corpus.read_text().replace("duerme", "descansa"))
    result = verify_card(card_path)
    assert paths(result) == ["$.corpus.sha256"] and "--corpus" in (result.errors[0].hint or "")
    corpus.unlink()
    result = verify_card(card_path)
    assert paths(result) == ["$.corpus.path"] and "cannot read the corpus" in result.errors[0].message
    original = write_corpus(tmp_path / "elsewhere.json")
    assert main(["verify", str(card_path), "--corpus", str(original)]) == 0
    capsys.readouterr()


def test_a_result_for_an_id_the_corpus_does_not_have(card_path: Path):
    def change(data: dict) -> None:
        data["results"][0]["id"] = "nope"

    result = verify_card(edit(card_path, change, reseal=True))
    assert paths(result) == ["$.results"] and "'nope'" in result.errors[0].message


def test_schema_problems_are_reported_with_their_path(card_path: Path):
    def change(data: dict) -> None:
        data["corpus"]["entries"] = "eight"
        data["method"]["card"]["paradigm"] = "magic"

    result = verify_card(edit(card_path, change, reseal=True))
    assert result.errors[0].code == "schema" and result.errors[0].path == "$.corpus.entries"

    def card_only(data: dict) -> None:
        data["method"]["card"]["paradigm"] = "magic"

    result = verify_card(edit(card_path, card_only, reseal=True))
    assert paths(result) == ["$.method.card.paradigm"]


def test_a_truncated_run_verifies_over_its_own_entries(tmp_path: Path):
    corpus = write_corpus(tmp_path / "corpus.json", 12)
    assert main(["run", "--method", str(REVERSE), "--corpus", str(corpus), "--out", str(tmp_path / "run"),
                 "--quiet", "--resamples", "50", "--limit", "5", *LENIENT]) == 0
    result = verify_card(tmp_path / "run" / "card.json")
    assert result.ok and result.corpus_entries == 12
    assert "5 of its entries" in next(c.detail for c in result.checks if c.name == "corpus")


@pytest.mark.parametrize("embed", ["always", "never"])  # results in the card, or scored again from its log
def test_extension_metrics_are_recomputed_when_the_extension_is_enabled(tmp_path: Path, monkeypatch, embed: str):
    (tmp_path / "length_metric.py").write_text(
        "from mt_eval.hookspecs import hookimpl\n\n"
        "@hookimpl\ndef register_metrics(register):\n"
        "    register('chars', lambda hyps, refs: sum(map(len, hyps)) / len(hyps))\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    corpus = write_corpus(tmp_path / "corpus.json")
    assert main(["run", "--method", str(REVERSE), "--corpus", str(corpus), "--out", str(tmp_path / "run"),
                 "--quiet", "--resamples", "50", "--extension", "length_metric", "--embed-results", embed,
                 *LENIENT]) == 0
    card = tmp_path / "run" / "card.json"
    without = verify_card(card)
    assert without.ok and [p.code for p in without.problems] == ["not-recomputed"]
    assert verify_card(card, extensions=["length_metric"]).problems == []

    def change(data: dict) -> None:
        data["metrics"]["metrics"][-1]["score"] = 1.0

    assert paths(verify_card(edit(card, change, reseal=True), extensions=["length_metric"])) == [
        "$.metrics.metrics[3].score"]


def test_compare_refuses_a_card_that_does_not_verify(card_path: Path, capsys):
    def change(data: dict) -> None:
        data["metrics"]["metrics"][0]["score"] = 99.0

    edited = edit(card_path, change, reseal=True)
    assert main(["compare", str(card_path), str(edited), "--trials", "100", "--bootstrap", "50"]) == 1
    err = capsys.readouterr().err
    assert "does not verify, so it cannot be compared" in err and "$.metrics.metrics[0].score" in err


def run_in_a_project(tmp_path: Path, monkeypatch) -> Path:
    """A project directory holding corpus.json, where a run was started with relative paths (runs/reverse)."""
    project = tmp_path / "project"
    project.mkdir()
    write_corpus(project / "corpus.json")
    monkeypatch.chdir(project)
    assert main(["run", "--method", str(REVERSE), "--corpus", "corpus.json", "--out", "runs/reverse", "--quiet",
                 "--resamples", "100", *LENIENT]) == 0
    return project


def test_a_card_verifies_from_anywhere_when_its_corpus_path_is_relative_to_where_the_run_started(
        tmp_path: Path, monkeypatch, capsys):
    project = run_in_a_project(tmp_path, monkeypatch)
    card = project / "runs" / "reverse" / "card.json"
    assert json.loads(card.read_text())["corpus"]["path"] == "corpus.json"
    monkeypatch.chdir(tmp_path)  # elsewhere: the corpus is found two levels above the card
    assert verify_card(card).ok
    (project / "corpus.json").rename(project / "moved.json")
    result = verify_card(card)
    assert paths(result) == ["$.corpus.path"]
    assert result.errors[0].message == "cannot read the corpus corpus.json: No such file or directory"
    assert "records the corpus as corpus.json, relative to the directory the run started in" in result.errors[0].hint
    capsys.readouterr()


def test_a_card_given_by_a_relative_path_finds_its_corpus_two_levels_above_it(tmp_path: Path, monkeypatch, capsys):
    """Before, ``runs/reverse/card.json`` given from elsewhere (a run directory copied into another folder, say)
    looked for its corpus only in the current directory: ``Path("runs/reverse").parent.parent`` is ``.``."""
    project = run_in_a_project(tmp_path, monkeypatch)
    monkeypatch.chdir(project / "runs")  # the run directory, given by a path relative to here
    capsys.readouterr()
    assert main(["verify", "reverse/card.json"]) == 0, capsys.readouterr()
    assert main(["compare", "reverse/card.json", "reverse/card.json", "--quiet", "--trials", "100",
                 "--bootstrap", "50"]) == 0
    monkeypatch.chdir(project / "runs" / "reverse")
    assert main(["verify", "card.json"]) == 0
    capsys.readouterr()


@pytest.mark.parametrize("command", ["verify", "gate", "compare"])
@pytest.mark.parametrize("flag", [["--columns", "id,source,reference"], ["--accept-doubt", "first-column-ids"]])
def test_how_to_read_a_corpus_without_the_corpus_is_refused_not_ignored(card_path: Path, capsys, command: str,
                                                                         flag: list[str]):
    cards = [str(card_path)] * (2 if command == "compare" else 1)
    assert main([command, *cards, *flag]) == 2
    err = capsys.readouterr().err
    assert f"{flag[0]} says how a corpus you give is read, and none is given" in err
    assert f"give the file with it (--corpus FILE {flag[0]} ...), or leave {flag[0]} out" in err


def test_a_run_directory_stands_for_its_card(card_path: Path, tmp_path: Path, capsys):
    """``mt-eval gate runs/demo``: each command that takes a card takes the run directory holding it."""
    run_dir = str(card_path.parent)
    assert main(["verify", run_dir]) == 0
    assert f"{card_path}: verified" in capsys.readouterr().out
    assert main(["gate", run_dir, "--policy", str(LENIENT[1])]) == 0
    assert f"{card_path}: headline gate passed" in capsys.readouterr().out
    assert main(["compare", run_dir, run_dir, "--bootstrap", "50", "--trials", "50", "--quiet"]) == 0
    capsys.readouterr()
    main(["publish", run_dir, "--db", str(tmp_path / "board.db"), "--no-input", "--policy", str(LENIENT[1])])
    assert f"mt-eval publish: {card_path}: its method card lacks" in capsys.readouterr().err  # (the card was read)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["verify", str(empty)]) == 1
    out = capsys.readouterr().out
    assert "this directory holds no card.json, so it is not a run directory" in out
    assert "give a run's card.json, or the run directory holding it" in out and "Is a directory" not in out
    stopped = tmp_path / "stopped"  # a run stopped before its card: resuming it is the fix
    stopped.mkdir()
    (stopped / "results.jsonl").write_text("")
    assert main(["gate", str(stopped)]) == 1
    out = capsys.readouterr().out
    assert "this run directory holds no card.json: the run has not finished" in out
    assert "finish it with `mt-eval run ... --resume`" in out


def test_the_card_path_of_a_run_not_finished_says_the_run_has_not_finished(tmp_path: Path, capsys):
    """The path `mt-eval run` names, given before the run wrote it (stopped with Ctrl-C): before, verify and gate said
    "cannot read the card: No such file or directory", publish "cannot read it", and none said why or what to do."""
    stopped = tmp_path / "stopped"
    stopped.mkdir()
    (stopped / "results.jsonl").write_text("")
    card = str(stopped / "card.json")
    said = f"no card yet: the run in {stopped} has not finished (it was stopped, or is running)"
    fix = "finish it with `mt-eval run ... --resume` (its command line, with --resume), then give its card"
    for command in (["verify", card], ["gate", card]):
        assert main(command) == 1
        out = capsys.readouterr().out
        assert said in out and fix in out and "No such file" not in out
    assert main(["publish", card, "--db", str(tmp_path / "board.db"), "--no-input"]) == 1
    assert f"mt-eval publish: {card}: {said}; {fix}" in capsys.readouterr().err
    for nowhere in (tmp_path / "nowhere" / "card.json", stopped / "other.json"):  # (just not there)
        assert main(["verify", str(nowhere)]) == 1
        assert "cannot read the card: No such file or directory" in capsys.readouterr().out


def test_the_runs_results_given_for_its_card_point_to_the_card(card_path: Path, tmp_path: Path, capsys):
    """Before, results.jsonl read as one broken JSON document: "remove what follows the end of the JSON document"
    would have deleted every result but the first."""
    results = card_path.parent / "results.jsonl"
    assert results.is_file()
    for command in (["verify", str(results)], ["gate", str(results)],
                    ["compare", str(results), str(card_path), "--quiet"],
                    ["publish", str(results), "--db", str(tmp_path / "board.db"), "--no-input"]):
        assert main(command) == 1, command
        said = "".join(capsys.readouterr())
        assert "a JSON-lines file (" in said and f"give {card_path}" in said, (command, said)
        assert "remove what follows" not in said
    assert not (tmp_path / "board.db").exists()


@pytest.mark.parametrize(("change", "where", "words"), [
    (lambda card: card.update(finished_at="yesterday"), "$.finished_at", "'yesterday' is not a time with its UTC"),
    (lambda card: card.update(started_at="2026-01-02T10:00:00"), "$.started_at", "is not a time with its UTC offset"),
    (lambda card: card.update(finished_at="2001-01-01T00:00:00+00:00"), "$.finished_at",
     "the run finished (2001-01-01T00:00:00+00:00) before it started"),
    (lambda card: card["corpus"].update(pair="deu>fra"), "$.corpus.pair",
     "the card says the run was in 'deu>fra', but its corpus declares 'eng>spa'"),
    (lambda card: card.update(eligibilty={"eligible": True}), "$.eligibilty",  # (misspelled: read by nothing)
     "'eligibilty' is not a field of a run card (run-card/1)"),
    (lambda card: card.update(status="partial", results=card["results"][1:]), "$.corpus.entries",  # (a result
     "the card says 8, its results say 7"),                                                       # taken out)
    (lambda card: card.update(zeta=1, alpha=2), "$.alpha",
     "'alpha', 'zeta' are not fields of a run card (run-card/1)"),
    (lambda card: card["covariates"].update(seed=7), "$.metrics.bootstrap_seed",  # (its intervals were drawn
     "the bootstrap's seed 12345 is not the run's seed 7 ($.covariates.seed)"),    # with 12345)
])
def test_a_resealed_card_with_a_false_pair_or_times_or_an_unknown_field_does_not_verify(card_path: Path, change,
                                                                                       where: str, words: str):
    result = verify_card(edit(card_path, change))
    assert not result.ok and where in paths(result)
    assert words in next(p.message for p in result.errors if p.path == where)


@pytest.mark.parametrize(("change", "where", "words"), [
    (lambda card: card.update(status="complete"), "$.status", "the card says complete, its results say partial"),
    (lambda card: card.update(failures=[]), "$.failures",
     "the card says no failures, its results say 1 distinct error on 3 entries"),
    (lambda card: card["failures"][0].update(count=2), "$.failures",
     "the card says 1 distinct error on 2 entries, its results say 1 distinct error on 3 entries"),
    (lambda card: card["failures"][0].update(message="a network blip"), "$.failures",
     "the card says 1 distinct error on 3 entries, its results say 1 distinct error on 3 entries (not the same "
     "messages, counts or example ids)"),
])
def test_a_card_relabelled_complete_or_with_its_failures_edited_does_not_verify(tmp_path: Path, change, where: str,
                                                                               words: str):
    """Before, a card whose run had failures, resealed as ``"status": "complete"`` with ``"failures": []``, verified."""
    card_path = run_with_failures(tmp_path)
    assert verify_card(card_path).ok
    result = verify_card(edit(card_path, change))
    assert not result.ok and paths(result) == [where]
    assert words in next(p.message for p in result.errors if p.path == where)


def test_a_pair_the_run_accepted_against_its_corpus_verifies(tmp_path: Path):
    corpus = write_corpus(tmp_path / "corpus.json")
    assert main(["run", "--method", str(REVERSE), "--corpus", str(corpus), "--out", str(tmp_path / "run"), "--quiet",
                 "--resamples", "100", "--pair", "eng>cat", "--accept-doubt", "pair-mismatch", *LENIENT]) == 0
    result = verify_card(tmp_path / "run" / "card.json")
    assert result.ok, result.problems
    assert json.loads((tmp_path / "run" / "card.json").read_text())["corpus"]["pair"] == "eng>cat"


def test_a_parallel_text_run_names_the_file_that_changed_and_how_to_mark_families(tmp_path: Path, capsys):
    """Before, an edited reference file was reported as the source file having the pair's combined sha256, with the
    fix --corpus FILE (which refuses a .eng file); and run and gate told the user to mark "family" fields in a text
    file, which has none."""
    source, reference = tmp_path / "src.eng", tmp_path / "ref.spa"
    source.write_text("".join(f"Sentence {i} is here.\n" for i in range(12)), encoding="utf-8")
    reference.write_text("".join(f"Frase {i} está aquí.\n" for i in range(12)), encoding="utf-8")
    assert main(["run", "--method", str(REVERSE), "--source-file", str(source), "--reference-file", str(reference),
                 "--pair", "eng>spa", "--out", str(tmp_path / "run"), "--quiet", "--resamples", "50"]) == 5
    assert "(parallel text has no fields: give the corpus as JSONL, JSON or a TSV with a header, with \"family\": " \
           "\"canary\" and a \"pass_rule\" (\"exact\" or \"chrf>=N\") entries, or give --policy FILE)" in \
        capsys.readouterr().err
    assert main(["gate", str(tmp_path / "run")]) == 1
    assert "0 canaries ran; the policy needs at least 1: parallel text has no fields to mark them with" in \
        capsys.readouterr().out
    reference.write_text("Cambiada.\n" + "".join(f"Frase {i} está aquí.\n" for i in range(1, 12)), encoding="utf-8")
    result = verify_card(tmp_path / "run" / "card.json")
    [problem] = [p for p in result.errors if p.path == "$.corpus.sha256"]
    assert problem.message.startswith(f"{reference} (the reference file) has sha256 ")
    assert str(source) not in problem.message
    assert problem.hint is not None and "--source-file FILE and --reference-file FILE" in problem.hint


def test_a_corpus_that_cannot_be_read_is_fixed_with_the_option_that_fits_the_card(card_path: Path, tmp_path: Path):
    """Before, the fix offered --corpus FILE "(or --source-file and --reference-file)" to every card, and publish,
    which repeats it, has no --source-file."""
    empty = tmp_path / "empty.json"
    empty.write_text("")
    [problem] = [p for p in verify_card(card_path, corpus=empty).errors if p.path == "$.corpus.path"]
    assert problem.hint == "give the corpus with --corpus FILE"


def test_a_cards_control_and_invisible_characters_are_shown_escaped(card_path: Path, capsys):
    """Before, a field's name and a method id the card holds were printed raw: ESC acted on the terminal and U+202E
    turned the rest of the line around. --json writes them as JSON's escapes."""
    odd = "m\x1b[2J\u202egpj.exe"

    def change(data):
        data["method"]["method_id"] = odd
        data[odd] = 1

    edited = edit(card_path, change)
    assert main(["verify", str(edited), "--quiet"]) == 1
    out = capsys.readouterr().out
    assert '$.method.method_id: the card says "m\\u001b[2J\\u202egpj.exe"' in out
    assert "$.m\\x1b[2J\\u202egpj.exe: 'm\\x1b[2J\\u202egpj.exe' is not a field of a run card" in out
    assert "\x1b" not in out and "\u202e" not in out
    assert main(["verify", str(edited), "--json"]) == 1
    out = capsys.readouterr().out
    assert "\u202e" not in out and f"$.{odd}" in [p["path"] for p in json.loads(out)[0]["problems"]]
