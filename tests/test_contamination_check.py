"""What counts as a hit, the planted control that proves "clean", and corpus against corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mt_eval.contamination import matching
from mt_eval.contamination.engine import CheckError, check_bundle, check_corpora
from mt_eval.contamination.settings import CheckSettings

REPO = Path(__file__).parent.parent
DEMO = REPO / "examples" / "data" / "eng-spa-demo.json"
FIXTURES = Path(__file__).parent / "fixtures" / "contamination"
LONG = ("When the autumn storms arrive the fishermen of the northern coast pull their wooden boats far up "
        "onto the stony beach and wait")


def write_corpus(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    rows = [{"id": "long", "source": LONG, "reference": "Cuando llegan las tormentas de otoño los pescadores"},
            {"id": "short", "source": "Close the window, please.", "reference": "Cierra la ventana, por favor."}]
    rows += [{"id": f"n{i}", "source": f"Sentence number {i} talks about topic {i * 7} and nothing else at all.",
              "reference": f"La frase {i} habla del tema {i * 7}."} for i in range(40)]
    return write_corpus(tmp_path / "test.jsonl", rows)


def bundle_with(tmp_path: Path, files: dict[str, str]) -> Path:
    directory = tmp_path / "bundle"
    for name, text in files.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text(text, encoding="utf-8")
    return directory


def kinds(report) -> dict[tuple[str, str], str]:
    return {(h.entry_id, h.side): h.kind for h in report.hits}


def test_exact_near_duplicate_and_long_ngram_hits(tmp_path, corpus):
    words = LONG.split()
    near = " ".join(words[:9] + words[10:])  # one word dropped from the middle
    partial = " ".join(words[3:17])  # 14 words of 23: a long shared run, not a near-duplicate
    bundle = bundle_with(tmp_path, {"a.txt": f"x\n{LONG}\n", "b.txt": f"\n\n{near}\n", "c.txt": f"{partial}\n"})
    report = check_bundle(bundle, [corpus], CheckSettings(plant=0))
    by_file = {h.file: h for h in report.hits}
    assert by_file["a.txt"].kind == "exact" and by_file["a.txt"].line == 2 and by_file["a.txt"].coverage == 1.0
    assert by_file["b.txt"].kind == "near-duplicate" and by_file["b.txt"].line == 3
    assert by_file["b.txt"].coverage == pytest.approx(22 / 23, abs=1e-3) and by_file["b.txt"].longest_run == 13
    assert by_file["c.txt"].kind == "long-ngram" and by_file["c.txt"].longest_run == 14
    assert all((h.entry_id, h.side, h.entry_words) == ("long", "source", 23) for h in report.hits)
    assert report.status == "contaminated" and report.control is None


@pytest.mark.parametrize(("entry", "found"), [
    ("the teacher sat with a small friend friend near the blue school", "friend near the blue school"),
    ("every morning the old night night watchman walks around the small harbour town", "the old night watchman"),
])
def test_a_dropped_copy_of_a_doubled_word_leaves_a_near_duplicate(tmp_path, entry, found):
    corpus = write_corpus(tmp_path / "c.jsonl", [{"id": "d", "source": entry, "reference": "Nada que ver."}])
    words = entry.split()
    doubled = next(i for i in range(len(words) - 1) if words[i] == words[i + 1])
    dropped = " ".join(words[:doubled] + words[doubled + 1:])
    [hit] = check_bundle(bundle_with(tmp_path, {"a.txt": dropped + "\n"}), [corpus], CheckSettings(plant=0)).hits
    assert (hit.entry_id, hit.kind, hit.coverage) == ("d", "near-duplicate", round(1 - 1 / len(words), 4))
    assert found in hit.matched and hit.matched == " ".join(dropped.split())


def test_thresholds_are_configurable(tmp_path, corpus):
    words = LONG.split()
    bundle = bundle_with(tmp_path, {"b.txt": " ".join(words[:9] + words[10:]), "c.txt": " ".join(words[3:17])})
    strict = check_bundle(bundle, [corpus], CheckSettings(plant=0, near_duplicate=1.0, long_ngram=15))
    assert strict.hits == []
    loose = check_bundle(bundle, [corpus], CheckSettings(plant=0, long_ngram=9))
    assert sorted(h.kind for h in loose.hits) == ["long-ngram", "near-duplicate"]


def test_short_entries_count_only_when_they_stand_alone(tmp_path, corpus):
    bundle = bundle_with(tmp_path, {
        "inside.txt": "please close the window please now\n",  # inside a longer sentence: not a hit
        "alone.py": "TIP = 'CLOSE THE WINDOW PLEASE'\n",  # a whole string: a hit
        "cell.tsv": "x\tclose the window please\ty\n"})
    report = check_bundle(bundle, [corpus], CheckSettings(plant=0))
    assert {(h.file, h.entry_id) for h in report.hits} == {("alone.py", "short"), ("cell.tsv", "short")}


def test_entries_under_min_words_are_not_checked_and_counted(tmp_path):
    corpus = write_corpus(tmp_path / "c.jsonl", [{"id": "1", "source": "Yes.", "reference": "Sí."},
                                                 {"id": "2", "source": "Thank you.", "reference": "Gracias."}])
    report = check_bundle(bundle_with(tmp_path, {"a.txt": "Yes.\nThank you.\n"}), [corpus], CheckSettings(plant=0))
    assert report.hits == [] and report.texts_too_short == 4
    assert report.status == "unverified" and "no corpus text is long enough" in " ".join(report.reasons)


def test_several_corpora_and_text_shared_by_several_entries(tmp_path, corpus):
    other = write_corpus(tmp_path / "other.jsonl", [{"id": "o1", "source": LONG.upper(), "reference": "x y z w v"}])
    report = check_bundle(bundle_with(tmp_path, {"a.txt": LONG}), [corpus, other], CheckSettings(plant=0))
    assert {(h.corpus, h.entry_id) for h in report.hits} == {("test.jsonl", "long"), ("other.jsonl", "o1")}


def test_a_text_split_across_chunks_is_still_found(tmp_path, corpus, monkeypatch):
    monkeypatch.setattr(matching, "CHUNK_CHARS", 64)
    lines = [f"filler line {i} with some words" for i in range(30)]
    words = LONG.split()
    lines[12:12] = [" ".join(words[:7]), " ".join(words[7:14]), " ".join(words[14:])]
    report = check_bundle(bundle_with(tmp_path, {"a.txt": "\n".join(lines)}), [corpus], CheckSettings(plant=0))
    assert [(h.line, h.kind) for h in report.hits] == [(13, "exact")]


def test_the_planted_control_proves_clean(tmp_path, corpus):
    bundle = bundle_with(tmp_path, {"pipeline.py": "X = 'nothing of the corpus'\n", "lib.js": "export const a = 1;\n"})
    report = check_bundle(bundle, [corpus], CheckSettings(plant=30, seed=7))
    control = report.control
    assert report.status == "clean" and report.hits == [] and report.reasons == []
    assert control is not None and control.seed == 7 and len(control.planted) == 30
    assert control.found == 30 and control.recall == 1.0 and control.verified
    assert {p.carrier for p in control.planted} >= {"python string", "json glossary", "zip member", "tsv glossary"}
    assert any("split across lines" in p.perturbations for p in control.planted)
    assert any(p.file in ("pipeline.py", "lib.js") for p in control.planted)  # appended to the bundle's own code
    assert (bundle / "pipeline.py").read_text() == "X = 'nothing of the corpus'\n"  # the bundle is untouched
    assert sorted(bundle.iterdir()) == [bundle / "lib.js", bundle / "pipeline.py"]
    again = check_bundle(bundle, [corpus], CheckSettings(plant=30, seed=7)).control
    assert again is not None and [(p.entry_id, p.side, p.file, p.line) for p in again.planted] == \
        [(p.entry_id, p.side, p.file, p.line) for p in control.planted]


def test_code_nested_too_deeply_to_parse_is_read_as_text_and_the_control_still_runs(tmp_path, corpus):
    """The parser gives up on code nested thousands deep (MemoryError, RecursionError): the file is read as text,
    said so, and not chosen to plant into; the check and its control run."""
    deep = {"signs.py": "x = " + "-" * 100_000 + "1\n", "sums.py": "x = " + "+".join(["1"] * 100_000) + "\n"}
    bundle = bundle_with(tmp_path, {**deep, "pipeline.py": "X = 'nothing of the corpus'\n"})
    report = check_bundle(bundle, [corpus], CheckSettings(plant=30, seed=7))
    assert report.status == "clean" and report.control is not None and report.control.found == 30
    notes = {f.file: f.message for f in report.findings}
    assert notes["signs.py"] == notes["sums.py"] == "not valid Python (nested too deeply to parse): read as plain text"
    assert not {p.file for p in report.control.planted} & set(deep)
    assert all((bundle / name).read_text() == text for name, text in deep.items())


def test_a_blind_check_is_unverified_not_clean(tmp_path, corpus):
    # every n-gram "common": entries of five words or more can no longer be found, and the control shows it
    report = check_bundle(bundle_with(tmp_path, {"a.txt": "hello"}), [corpus], CheckSettings(common_ngram=0))
    assert report.hits == [] and report.status == "unverified"
    assert report.control is not None and report.control.recall is not None and report.control.recall < 0.9
    assert "below the floor" in report.reasons[0]
    assert report.texts_uncheckable > 0


def test_without_the_control_the_verdict_is_at_best_unverified(tmp_path, corpus):
    report = check_bundle(bundle_with(tmp_path, {"a.txt": "hello"}), [corpus], CheckSettings(plant=0))
    assert report.status == "unverified" and report.reasons == ["the planted control was not run"]


def test_corpus_against_corpus(tmp_path, corpus):
    dev = write_corpus(tmp_path / "dev.jsonl", [
        {"id": "d1", "source": "Nothing shared here at all, really nothing.", "reference": "Nada."},
        {"id": "d2", "source": "Something else entirely different from the rest.", "reference": LONG.lower()}])
    report = check_corpora(dev, [corpus])
    [hit] = report.hits
    assert (hit.file, hit.against_id, hit.against_side, hit.entry_id, hit.side, hit.kind) == \
        ("dev.jsonl", "d2", "reference", "long", "source", "exact")
    assert hit.where == "dev.jsonl entry d2 (reference)"
    clean = check_corpora(write_corpus(tmp_path / "dev2.jsonl", [{"id": "d1", "source": "Nothing shared here."}]),
                          [corpus], CheckSettings(seed=3))
    assert clean.status == "clean" and clean.control is not None and clean.control.recall == 1.0


def test_a_match_never_runs_from_one_entry_of_the_other_corpus_into_the_next(tmp_path, corpus):
    """Before: the entries of the corpus checked were one document, so words at the end of one entry and the start of
    the next made a hit neither entry holds; a bundle's lines still join (a sentence wrapped over two lines)."""
    half = len(LONG.split()) // 2
    first, second = " ".join(LONG.split()[:half]), " ".join(LONG.split()[half:])
    dev = write_corpus(tmp_path / "dev.jsonl", [{"id": "d1", "source": "Unrelated words.", "reference": first},
                                                {"id": "d2", "source": "More unrelated words.", "reference": second}])
    report = check_corpora(dev, [corpus], CheckSettings(plant=0))
    assert report.hits == [], [(h.against_id, h.kind, h.matched) for h in report.hits]
    wrapped = check_bundle(bundle_with(tmp_path, {"notes.txt": f"{first}\n{second}\n"}), [corpus],
                           CheckSettings(plant=0))
    assert [(h.file, h.entry_id) for h in wrapped.hits] == [("notes.txt", "long")]


def test_the_example_plugins_contaminated_and_clean():
    caught = check_bundle(FIXTURES / "memorizer-eng-spa", [DEMO])
    assert caught.status == "contaminated"
    assert {(h.file, h.line, h.entry_id, h.side) for h in caught.hits} == {
        ("glossary.tsv", 3, "demo-10", "source"), ("glossary.tsv", 3, "demo-10", "reference"),
        ("glossary.tsv", 5, "demo-15", "source"), ("glossary.tsv", 5, "demo-15", "reference"),
        ("prompt.txt", 3, "demo-18", "source"), ("prompt.txt", 5, "demo-18", "reference"),
        ("pipeline.py", 6, "demo-12", "source"), ("pipeline.py", 6, "demo-12", "reference")}
    clean = check_bundle(FIXTURES / "careful-eng-spa", [DEMO])
    assert clean.status == "clean" and clean.control is not None and clean.control.recall == 1.0


def test_bad_input_is_a_clear_error(tmp_path, corpus):
    with pytest.raises(CheckError, match="is not a directory"):
        check_bundle(tmp_path / "missing", [corpus])
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(CheckError, match="invalid JSON at line 1"):
        check_bundle(bundle_with(tmp_path, {"a.txt": "x"}), [broken])
    with pytest.raises(CheckError, match="no corpus given"):
        check_bundle(tmp_path / "bundle", [])
    with pytest.raises(ValueError, match="standalone_below"):
        CheckSettings(min_words=9, standalone_below=8)


def test_every_gold_field_of_the_corpus_is_checked(tmp_path):
    corpus = tmp_path / "gold.json"
    corpus.write_text(json.dumps({"dataset": {"name": "g", "gold_fields": ["post_edit"]}, "entries": [
        {"id": "g1", "source": "Nothing in the bundle says this sentence.", "reference": "Una referencia.",
         "post_edit": "The post-edited answer hides in the bundle's prompt file."}]}), encoding="utf-8")
    prompt = "Example:\nthe post edited answer hides in the bundle's prompt file\n"
    bundle = bundle_with(tmp_path, {"prompt.txt": prompt})
    [hit] = check_bundle(bundle, [corpus], CheckSettings(plant=0)).hits
    assert (hit.file, hit.line, hit.entry_id, hit.side, hit.kind) == ("prompt.txt", 2, "g1", "reference", "exact")


def test_the_planted_control_drops_a_word_of_a_long_entry_in_one_pass(monkeypatch: pytest.MonkeyPatch):
    """The control's word drop counted the words before and after every token again (a 1 MB corpus line kept
    `mt-eval run` at "planted control" for minutes): it reads each token once, and still leaves at least `ngram`
    words on either side of the word it drops."""
    import random

    from mt_eval.contamination import perturb

    calls = []
    counted = perturb.words
    monkeypatch.setattr(perturb, "words", lambda text: calls.append(text) or counted(text))
    text = " ".join(f"word{i % 97}, and more" if i % 5 == 0 else f"word{i}" for i in range(2000))
    tokens = text.split(" ")
    dropped = perturb.drop_word(text, random.Random(3), CheckSettings())
    assert dropped is not None and len(calls) <= len(tokens) + 1
    kept = dropped.split(" ")
    position = next(i for i, (a, b) in enumerate(zip(kept, tokens, strict=False)) if a != b)
    assert kept == tokens[:position] + tokens[position + 1:] and tokens[position].isalnum()
    assert len(counted(" ".join(tokens[:position]))) >= 5 and len(counted(" ".join(tokens[position + 1:]))) >= 5
    short = "one two three four five six seven eight nine ten eleven"  # (a word with 5 on either side: 6th only)
    assert perturb.drop_word(short, random.Random(1), CheckSettings()) == short.replace(" six", "", 1)


def test_progress_counts_files_in_words_one_file_and_many(tmp_path, corpus):
    """Before: "read 1 files" as the first file of a bundle was read."""
    said: list[str] = []
    bundle = bundle_with(tmp_path, {"a.txt": "nothing of the corpus\n", "b.txt": "nor here\n"})
    check_bundle(bundle, [corpus], CheckSettings(plant=0), progress=said.append)
    read = [line.split(",")[0] for line in said if line.startswith("read ")]
    assert read[:2] == ["read 1 file", "read 2 files"], said
