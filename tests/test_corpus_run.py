"""Every command that takes a corpus reads it the same way: `mt-eval run` (also through a champollion config)
and `mt-eval compare` — shapes, reference-free runs, parallel text, integer ids, selections, doubts."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from champollion_project import make_project, pairs_config
from gate_policies import LENIENT
from mt_eval.cli import main
from mt_eval.harness.runcard import RunCard

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures" / "corpora"
SCRIPTED = str(HERE / "fixtures" / "methods")  # copies the source


def run(capsys, tmp_path: Path, *args: str, out: str = "run") -> tuple[int, RunCard | None, str]:
    code = main(["run", "--method", SCRIPTED, "--pair", "eng>spa", "--out", str(tmp_path / out), "--resamples", "50",
                 *LENIENT, *args])
    shown = capsys.readouterr()
    err = shown.err + shown.out  # what the terminal shows: progress and warnings, then the result
    card_path = tmp_path / out / "card.json"
    card = msgspec.json.decode(card_path.read_bytes(), type=RunCard) if code == 0 else None
    return code, card, err


def test_a_two_column_tsv_is_source_then_reference_and_scored(capsys, tmp_path: Path):
    code, card, err = run(capsys, tmp_path, "--corpus", str(FIXTURES / "two-column.tsv"))
    assert code == 0 and card is not None and card.metrics is not None
    assert "corpus two-column.tsv: TSV without a header, read by the MT convention: source<TAB>reference; ids are " \
           "line numbers in the file; 3 entries" in err
    assert [r.predicted for r in card.results] == ["Good morning, my friend!", "The cat drinks water.",
                                                   "Thank you for the book."]
    reading = card.corpus.reading
    assert reading is not None and (reading.columns, reading.columns_from) == (["source", "reference"], "convention")


def test_a_reference_free_corpus_is_translated_not_scored(capsys, tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # paths are shown relative to the working directory when that is clearer
    code, card, err = run(capsys, tmp_path, "--corpus", str(FIXTURES / "reference-free.tsv"))
    assert code == 0 and card is not None
    assert card.metrics is None and card.errors == 0 and len(card.results) == 3
    assert card.corpus.reading is not None and card.corpus.reading.references is False
    predictions = tmp_path / "run" / "predictions.txt"
    assert predictions.read_text(encoding="utf-8").splitlines() == (FIXTURES / "reference-free.tsv").read_text(
        encoding="utf-8").splitlines()
    assert "not scored: the corpus has no references (translation only)" in err
    assert f"  predictions  {Path('run') / 'predictions.txt'} (one line per entry, in corpus order)" in err
    assert "no references: translation only, not scored" in err


def test_parallel_text_runs_with_both_files_recorded(capsys, tmp_path: Path):
    code, card, _ = run(capsys, tmp_path, "--source-file", str(FIXTURES / "parallel.eng"),
                        "--reference-file", str(FIXTURES / "parallel.spa"))
    assert code == 0 and card is not None and card.metrics is not None
    assert card.corpus.entries == 4 and [r.id for r in card.results] == ["1", "2", "3", "4"]
    assert card.results[1].predicted == ""
    reading = card.corpus.reading
    assert reading is not None and [f.role for f in reading.files] == ["source", "reference"]
    code, card, _ = run(capsys, tmp_path, "--source-file", str(FIXTURES / "parallel.eng"), out="translate-only")
    assert code == 0 and card is not None and card.metrics is None


def test_parallel_text_mismatch_and_conflicting_flags_are_refused(capsys, tmp_path: Path):
    code, _, err = run(capsys, tmp_path, "--source-file", str(FIXTURES / "parallel.eng"),
                       "--reference-file", str(FIXTURES / "parallel-short.spa"))
    assert code == 1 and "has 4 lines but" in err and "parallel-short.spa has 3" in err
    with pytest.raises(SystemExit) as refused:  # (a usage error)
        run(capsys, tmp_path, "--corpus", str(FIXTURES / "two-column.tsv"), "--source-file",
            str(FIXTURES / "parallel.eng"))
    assert refused.value.code == 2 and "argument --source-file: not allowed with argument --corpus" in \
        capsys.readouterr().err
    assert main(["run", "--method", SCRIPTED, "--reference-file", str(FIXTURES / "parallel.spa"), "--out",
                 str(tmp_path / "x")]) == 2
    assert "argument --reference-file: needs --source-file SRC" in capsys.readouterr().err


def test_integer_ids_stay_integers_in_the_card_through_resume_and_compare(capsys, tmp_path: Path):
    corpus = str(FIXTURES / "upstream.json")
    code, card, _ = run(capsys, tmp_path, "--corpus", corpus, "--quiet")
    assert code == 0 and card is not None
    assert [r.id for r in card.results] == [1, 2, 10]
    raw = json.loads((tmp_path / "run" / "card.json").read_text())
    assert [r["id"] for r in raw["results"]] == [1, 2, 10]
    log = [json.loads(line)["id"] for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert sorted(log) == ["1", "10", "2"]  # what the method answered: ids cross the bridge as text
    (tmp_path / "run" / "card.json").unlink()
    code, resumed, _ = run(capsys, tmp_path, "--corpus", corpus, "--quiet", "--resume")
    assert code == 0 and resumed is not None and [r.id for r in resumed.results] == [1, 2, 10]
    assert resumed.sessions == 2 and resumed.metrics == card.metrics
    code, isolated, _ = run(capsys, tmp_path, "--corpus", corpus, "--quiet", "--isolate", out="again")
    assert code == 0 and isolated is not None and [r.id for r in isolated.results] == [1, 2, 10]  # over the bridge
    assert main(["compare", str(tmp_path / "run" / "card.json"), str(tmp_path / "again" / "card.json"),
                 "--bootstrap", "50", "--trials", "50", "--json"]) == 0
    assert {row["metric"] for row in json.loads(capsys.readouterr().out)["rows"]} == {"chrF++", "BLEU", "TER"}


def test_a_selection_is_recorded_and_never_reported_as_the_whole_corpus(capsys, tmp_path: Path):
    corpus = str(FIXTURES / "upstream.json")
    code, card, err = run(capsys, tmp_path, "--corpus", corpus, "--ids", "2..10", "--limit", "5")
    assert code == 0 and card is not None and card.selection is not None
    assert (card.corpus.entries, card.selection.entries_selected) == (3, 2)
    assert (card.selection.ranges, card.selection.limit) == (["2..10"], 5)
    assert card.selection.subset_sha256 != card.corpus.sha256 and len(card.results) == 2
    assert "2 of 3 entries (a selection)" in err and "2 of 3 entries selected" in err
    code, _, err = run(capsys, tmp_path, "--corpus", corpus, "--ids", "1", "--resume")
    assert code == 1 and "the selection (--ids, --segment) changed" in err
    code, segment, _ = run(capsys, tmp_path, "--corpus", corpus, "--segment", "weather", "--quiet", out="weather")
    assert code == 0 and segment is not None and segment.selection is not None
    assert segment.selection.segment == ["weather"] and [r.id for r in segment.results] == [2]


def test_resume_refuses_an_ids_file_that_was_edited_and_keeps_the_results(capsys, tmp_path: Path):
    """Before, only the text "@FILE" was compared: the resume ran the new ids and dropped the results of the ids the
    file no longer named, as "no entry of this run"."""
    corpus = str(FIXTURES / "upstream.json")
    ids = tmp_path / "ids.txt"
    ids.write_text("1\n2\n", encoding="utf-8")
    code, card, _ = run(capsys, tmp_path, "--corpus", corpus, "--ids", f"@{ids}", "--quiet")
    assert code == 0 and card is not None and [r.id for r in card.results] == [1, 2]
    (tmp_path / "run" / "card.json").unlink()  # (as a run stopped before its card)
    log = (tmp_path / "run" / "results.jsonl").read_bytes()
    ids.write_text("2\n10\n", encoding="utf-8")
    code, _, err = run(capsys, tmp_path, "--corpus", corpus, "--ids", f"@{ids}", "--quiet", "--resume")
    assert code == 1 and "the selection (--ids, --segment) changed" in err
    assert (tmp_path / "run" / "results.jsonl").read_bytes() == log
    ids.write_text("1\n2\n", encoding="utf-8")  # the same ids again: it resumes
    code, resumed, _ = run(capsys, tmp_path, "--corpus", corpus, "--ids", f"@{ids}", "--quiet", "--resume")
    assert code == 0 and resumed is not None and [r.id for r in resumed.results] == [1, 2]


def test_resume_refuses_another_reading_and_accepts_runs_from_before_selections(capsys, tmp_path: Path):
    corpus = ["--corpus", str(FIXTURES / "columns-flag.tsv"), "--quiet"]
    assert run(capsys, tmp_path, *corpus, "--columns", "id,source,reference")[0] == 0
    code, _, err = run(capsys, tmp_path, *corpus, "--columns", "id,source,reference,note", "--resume")
    assert code == 1 and "how the corpus is read (--columns, --accept-doubt) changed" in err
    plain = ["--corpus", str(FIXTURES / "two-column.tsv"), "--quiet"]
    assert run(capsys, tmp_path, *plain, out="older")[0] == 0
    state = json.loads((tmp_path / "older" / "run.json").read_text())
    assert state["selection"] is None and state["reading"] is None  # what a run.json from before them decodes to
    del state["selection"], state["reading"]
    (tmp_path / "older" / "run.json").write_text(json.dumps(state))
    assert run(capsys, tmp_path, *plain, "--resume", out="older")[0] == 0


def test_compare_applies_the_cards_selection_and_refuses_different_ones(capsys, tmp_path: Path):
    corpus = str(FIXTURES / "upstream.json")
    for out, ids in [("a", "1,2"), ("b", "1,2"), ("c", "2,10")]:
        assert run(capsys, tmp_path, "--corpus", corpus, "--ids", ids, "--quiet", out=out)[0] == 0
    assert run(capsys, tmp_path, "--corpus", corpus, "--quiet", out="whole")[0] == 0
    cards = {name: str(tmp_path / name / "card.json") for name in ("a", "b", "c", "whole")}
    assert main(["compare", cards["a"], cards["b"], "--bootstrap", "50", "--trials", "50"]) == 0
    capsys.readouterr()
    assert main(["compare", cards["a"], cards["c"]]) == 1
    err = capsys.readouterr().err  # the two selections are told apart, not both "2 of 3 entries"
    assert "the cards ran different parts of the corpus (A: 2 of 3 entries: --ids 1,2, subset sha256 " in err
    assert "; B: 2 of 3 entries: --ids 2,10, subset sha256 " in err
    assert main(["compare", cards["a"], cards["whole"]]) == 1
    assert "; B: the whole corpus, 3 entries)" in capsys.readouterr().err


def test_compare_names_the_segments_of_a_selection_as_options_to_type_again(capsys, tmp_path: Path):
    """Before: ``--segment ['news one']``, the recorded list as Python writes it."""
    corpus = tmp_path / "s.jsonl"
    corpus.write_text("".join(json.dumps({"id": str(n), "source": f"Hi {n}", "reference": "Hola", "segment": segment})
                              + "\n" for n, segment in enumerate(["news one", "web", "web"])), encoding="utf-8")
    for out, segment in [("a", "news one"), ("b", "web")]:
        code, _, shown = run(capsys, tmp_path, "--corpus", str(corpus), "--segment", segment, "--quiet", out=out)
        assert code == 0, shown
    assert main(["compare", str(tmp_path / "a" / "card.json"), str(tmp_path / "b" / "card.json")]) == 1
    err = capsys.readouterr().err
    assert "(A: 1 of 3 entries: --segment 'news one', subset sha256 " in err
    assert "; B: 2 of 3 entries: --segment web, subset sha256 " in err


def test_compare_reads_parallel_text_and_columns_as_the_cards_record(capsys, tmp_path: Path):
    parallel = ["--source-file", str(FIXTURES / "parallel.eng"), "--reference-file", str(FIXTURES / "parallel.spa")]
    for out in ("p1", "p2"):
        assert run(capsys, tmp_path, *parallel, "--quiet", out=out)[0] == 0
    assert main(["compare", str(tmp_path / "p1" / "card.json"), str(tmp_path / "p2" / "card.json"),
                 "--bootstrap", "50", "--trials", "50"]) == 0
    declared = ["--corpus", str(FIXTURES / "columns-flag.tsv"), "--columns", "id,source,reference", "--quiet"]
    for out in ("c1", "c2"):
        assert run(capsys, tmp_path, *declared, out=out)[0] == 0
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "c1" / "card.json"), str(tmp_path / "c2" / "card.json"),
                 "--bootstrap", "50", "--trials", "50", "--corpus", str(FIXTURES / "columns-flag.tsv")]) == 0


def test_doubtful_corpora_are_refused_before_anything_runs_unless_accepted(capsys, tmp_path: Path):
    code, _, err = run(capsys, tmp_path, "--corpus", str(FIXTURES / "old-three-column.tsv"))
    assert code == 1 and "column 1 looks like ids" in err and "--accept-doubt first-column-ids" in err
    assert not (tmp_path / "run" / "results.jsonl").exists()
    code, card, _ = run(capsys, tmp_path, "--corpus", str(FIXTURES / "old-three-column.tsv"),
                        "--columns", "id,source,reference", "--quiet")
    assert code == 0 and card is not None and card.results[0].predicted == "The shop is closed."
    code, _, err = run(capsys, tmp_path, "--corpus", str(FIXTURES / "swapped.tsv"), "--pair", "eng>rus", out="s")
    assert code == 1 and "look swapped" in err
    code, card, err = run(capsys, tmp_path, "--corpus", str(FIXTURES / "swapped.tsv"), "--pair", "eng>rus",
                          "--accept-doubt", "script-mismatch", "--quiet", out="s")
    assert code == 0 and card is not None and card.corpus.reading is not None
    assert card.corpus.reading.accepted_doubts == ["script-mismatch"]
    assert "warning: corpus" in err and "accepted with --accept-doubt script-mismatch" in err
    with pytest.raises(SystemExit) as refused:
        run(capsys, tmp_path, "--corpus", str(FIXTURES / "two-column.tsv"), "--accept-doubt", "nope")
    assert refused.value.code == 2
    assert "argument --accept-doubt: no such doubt 'nope'; give the code a refusal names, one of first-column-ids" \
        in capsys.readouterr().err


def test_a_misspelled_gold_field_or_a_lone_surrogate_stops_the_run_before_the_method_sees_it(capsys, tmp_path: Path):
    code, _, err = run(capsys, tmp_path, "--corpus", str(FIXTURES / "misspelled-field.json"))
    assert code == 1 and 'did you mean "reference"?' in err and not (tmp_path / "run" / "results.jsonl").exists()
    code, _, err = run(capsys, tmp_path, "--corpus", str(FIXTURES / "lone-surrogate.json"))
    assert code == 1 and "$[0].source: holds a lone surrogate (\\ud800)" in err and "predicted" not in err
    code, card, _ = run(capsys, tmp_path, "--corpus", str(FIXTURES / "misspelled-field.json"), "--accept-doubt",
                        "misspelled-field", "--quiet")
    assert code == 0 and card is not None and card.metrics is None  # what was asked: "refrence" is an extra field
    assert card.corpus.reading is not None and card.corpus.reading.accepted_doubts == ["misspelled-field"]


def test_an_empty_corpus_is_one_line_naming_the_file_and_the_fix(capsys, tmp_path: Path):
    for name, message in [("empty.tsv", "is empty (0 bytes); a corpus needs at least one entry"),
                          ("header-only.tsv", "has no entries; the file holds only a header (line 1)"),
                          ("empty-list.json", "has no entries; add entries, e.g. [{")]:
        code, _, err = run(capsys, tmp_path, "--corpus", str(FIXTURES / name))
        assert code == 1
        assert err.count("\n") == 1 and err.startswith(f"mt-eval run: corpus {FIXTURES / name}: {message}")


def test_a_blank_json_reference_is_no_reference_as_an_empty_tsv_cell_is(capsys, tmp_path: Path):
    entry = '{{"id": "{0}", "source": "Good night.", "reference": {1}}}'
    for name, content, place in [
            ("empty-cell.tsv", "Hello.\tHola.\nGood night.\t\nThank you.\tGracias.\n", "(line 2)"),
            ("empty.jsonl", "\n".join(entry.format(i, r) for i, r in [(1, '"Hola."'), (2, '""'), (3, '"Adiós."')]),
             "(line 2)"),
            ("spaces.json", "[" + ", ".join(entry.format(i, r) for i, r in [(1, '"Hola."'), (2, '" \\t"')]) + "]",
             "($[1])")]:
        corpus = tmp_path / name
        corpus.write_text(content, encoding="utf-8")
        code, _, err = run(capsys, tmp_path, "--corpus", str(corpus))
        assert code == 1 and not (tmp_path / "run" / "results.jsonl").exists()
        assert err.startswith(f"mt-eval run: corpus {corpus}: 1 entry of ") and f"has no reference {place}: " \
            "either every entry has a reference or none has; add the missing references" in err
    every_one_blank = tmp_path / "blank.jsonl"
    every_one_blank.write_text(entry.format(1, '""') + "\n" + entry.format(2, '"  "') + "\n", encoding="utf-8")
    code, _, err = run(capsys, tmp_path, "--corpus", str(every_one_blank))
    assert code == 1 and "2 entries of 2 have no reference (lines 1, 2)" in err
    assert "(an empty or white-space reference is no reference)" in err
    controls = tmp_path / "controls.jsonl"  # a negative control needs no reference: a blank one is none either
    controls.write_text(entry.format(1, '"Buenas noches."') + "\n"
                        '{"id": "n", "family": "negative", "source": "", "reference": ""}\n', encoding="utf-8")
    code, card, _ = run(capsys, tmp_path, "--corpus", str(controls), "--quiet")
    assert code == 0 and card is not None and card.metrics is not None


def test_a_corpus_pair_written_with_an_underscore_runs_as_pair_writes_it(capsys, tmp_path: Path):
    corpus = tmp_path / "cmn.json"
    corpus.write_text(json.dumps({"language_pair": {"source": "eng", "target": "cmn_Hans"},
                                  "entries": [{"id": "1", "source": "Hello.", "reference": "你好。"}]}), "utf-8")
    for pair in [(), ("--pair", "eng>cmn_Hans")]:  # --pair reads cmn_Hans as cmn-Hans too: the same pair
        code = main(["run", "--method", SCRIPTED, "--corpus", str(corpus), "--out", str(tmp_path / "run"),
                     "--resamples", "50", "--force", "--quiet", *LENIENT, *pair])
        assert code == 0, capsys.readouterr().err
        card = msgspec.json.decode((tmp_path / "run" / "card.json").read_bytes(), type=RunCard)
        assert card.corpus.pair == "eng>cmn-Hans"
    corpus.write_text(json.dumps({"language_pair": {"source": "eng", "target": "Chinese (Simplified)"},
                                  "entries": [{"id": "1", "source": "Hello."}]}), "utf-8")
    capsys.readouterr()
    code = main(["run", "--method", SCRIPTED, "--corpus", str(corpus), "--out", str(tmp_path / "other")])
    assert code == 1 and capsys.readouterr().err == (
        f"mt-eval run: corpus {corpus} $.language_pair.target: 'Chinese (Simplified)' is not a language code: write "
        "an ISO 639 code such as eng or en (subtags after a -: pt-BR)\n")


def test_champollion_evaluation_reads_corpora_with_the_same_reader(capsys, tmp_path: Path):
    project = make_project(tmp_path, pairs_config({"en:fr": {"methodPlugin": "rot13"}}), plugins=("rot13",))
    project.write("dev.tsv", "# greetings\nHello\tfra: Uryyb\nGood night\tfra: Tbbq avtug\n")
    project.write("dev.en", "Hello\n\nGood night\n")
    project.write("dev.fr", "fra: Uryyb\nfra: \nfra: Tbbq avtug\n")
    config = str(tmp_path / "champollion.config.json")
    base = ["run", "--champollion-config", config, "--resamples", "10", *LENIENT]
    assert main([*base, "--corpus", str(tmp_path / "dev.tsv"), "--out", str(tmp_path / "tsv")]) == 0
    assert "corpus dev.tsv: TSV without a header" in capsys.readouterr().err
    card = json.loads((tmp_path / "tsv" / "card.json").read_text())
    assert [r["predicted"] for r in card["results"]] == ["fra: Uryyb", "fra: Tbbq avtug"]
    assert card["metrics"]["metrics"][0]["score"] == 100.0
    assert main([*base, "--source-file", str(tmp_path / "dev.en"), "--reference-file", str(tmp_path / "dev.fr"),
                 "--out", str(tmp_path / "parallel"), "--quiet"]) == 0
    card = json.loads((tmp_path / "parallel" / "card.json").read_text())
    assert card["corpus"]["reading"]["format"] == "parallel" and len(card["results"]) == 3
    assert main([*base, "--corpus", str(FIXTURES / "swapped.tsv"), "--out", str(tmp_path / "bad"), "--quiet"]) == 1
    assert "--accept-doubt" in capsys.readouterr().err


def test_translate_reads_a_corpus_file_given_with_file_as_run_does(capsys):
    lexicon = str(HERE.parent / "examples" / "lexicon-eng-spa")
    assert main(["translate", lexicon, "--file", str(FIXTURES / "comment-lines.tsv"), "--json"]) == 0
    results = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["predicted"] for r in results] == ["Buenas noches.", "#MondayMotivation es trending.",
                                                 "Where es el library?"]  # the sources only, comments skipped
    assert main(["translate", lexicon, "--file", str(FIXTURES / "old-three-column.tsv")]) == 2
    assert "--accept-doubt first-column-ids" in capsys.readouterr().err
