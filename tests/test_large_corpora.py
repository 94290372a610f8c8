"""A large JSONL corpus stays on disk (`mt_eval.corpus.on_disk`), a run's results are read back from its log
(`mt_eval.harness.logged_results`), and its scorers read both a chunk at a time: a run over entries on disk
reads, checks, selects, translates, resumes, scores and writes exactly what the same run in memory does."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import msgspec
import pytest

from gate_policies import LENIENT
from mt_eval.cli import main
from mt_eval.corpus import on_disk
from mt_eval.corpus.model import CorpusError
from mt_eval.corpus.on_disk import EntriesOnDisk, in_blocks, kept
from mt_eval.corpus.reader import read_corpus
from mt_eval.corpus.selection import SelectionRequest, select
from mt_eval.harness.logged_results import LoggedResults
from mt_eval.harness.runcard import RunCard
from mt_eval.harness.scoring import score, score_segments, segment_statistics
from mt_eval.records import TranslationResult
from result_logs import result, write_log

HERE = Path(__file__).parent
COPYING = str(HERE / "fixtures" / "methods")  # translates by copying the source


@pytest.fixture
def on_disk_always(monkeypatch):
    """Every plain JSONL corpus stays on disk, however small; blocks of 3 entries."""
    monkeypatch.setattr("mt_eval.corpus.jsonfile.ON_DISK_FROM", 0)
    monkeypatch.setattr(on_disk, "BLOCK", 3)


def write_jsonl(path: Path, rows: list[object], *, newline: str = "\n", bom: bool = False) -> Path:
    text = newline.join(row if isinstance(row, str) else json.dumps(row) for row in rows) + newline
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    return path


def rows(count: int = 10) -> list[dict[str, object]]:
    return [{"id": f"e{i}", "source": f"sentence number {i} of the test", "reference": f"frase número {i}"}
            for i in range(count)]


def read_both(path: Path, monkeypatch, **kwargs):
    """The corpus read in memory, then on disk."""
    in_memory = read_corpus(path, **kwargs)
    monkeypatch.setattr("mt_eval.corpus.jsonfile.ON_DISK_FROM", 0)
    monkeypatch.setattr(on_disk, "BLOCK", 3)
    return in_memory, read_corpus(path, **kwargs)


@pytest.mark.parametrize("shape", ["plain", "crlf-bom-blank-lines", "aliases", "no-ids", "integer-ids", "families"])
def test_entries_on_disk_are_the_entries_read_in_memory(tmp_path: Path, monkeypatch, shape: str):
    data: list[object] = list(rows(8))
    options: dict[str, object] = {}
    if shape == "crlf-bom-blank-lines":
        data.insert(3, "   ")
        data.insert(6, "")
        options = {"newline": "\r\n", "bom": True}
    elif shape == "aliases":
        data = [{"id": f"a{i}", "src": f"text {i}", "tgt": f"texto {i}"} for i in range(7)]
    elif shape == "no-ids":
        data = [{"source": f"text {i}", "reference": f"texto {i}"} for i in range(7)]
        data.insert(2, "")
    elif shape == "integer-ids":
        data = [{"id": i * 10, "source": f"text {i}", "reference": f"texto {i}"} for i in range(7)]
    elif shape == "families":
        data.append({"id": "c1", "source": "hello", "reference": "hola", "family": "canary", "pass_rule": "exact"})
        data.append({"id": "n1", "source": "", "family": "negative", "pair": "eng>deu"})
    path = write_jsonl(tmp_path / "corpus.jsonl", data, **options)  # type: ignore[arg-type]
    in_memory, from_disk = read_both(path, monkeypatch)
    assert isinstance(from_disk.entries, EntriesOnDisk) and not isinstance(in_memory.entries, EntriesOnDisk)
    assert list(from_disk.entries) == list(in_memory.entries)
    assert [from_disk.entries[i] for i in range(len(in_memory.entries))] == list(in_memory.entries)
    assert from_disk.entries[-1] == in_memory.entries[-1] and list(from_disk.entries[2:5]) == in_memory.entries[2:5]
    assert from_disk.sha256 == in_memory.sha256 and from_disk.references == in_memory.references
    assert from_disk.given_ids == in_memory.given_ids and from_disk.aliases == in_memory.aliases
    assert from_disk.ids_from == in_memory.ids_from
    assert [from_disk.where(i) for i in range(len(in_memory.entries))] == \
        [in_memory.where(i) for i in range(len(in_memory.entries))]


def test_an_entry_read_from_disk_is_a_fresh_copy(tmp_path: Path, on_disk_always):
    corpus = read_corpus(write_jsonl(tmp_path / "corpus.jsonl", rows(4)))
    corpus.entries[0]["source"] = "changed"
    assert corpus.entries[0]["source"] == "sentence number 0 of the test"


@pytest.mark.parametrize(("content", "message"), [
    (b'{"id": "1", "source": "a"}\n{"id": "2", "source": \n', "line 2: invalid JSON"),
    (b'{"id": "1", "source": "caf\xe9"}\n', "not valid UTF-8: byte 0xe9 at line 1"),
    (b'{"id": "1", "source": "a"}\n{"id": "1", "source": "b"}\n', 'duplicate id "1" (first at line 1)'),
    (b'{"id": "1", "source": "a", "reference": "x"}\n{"id": "2", "source": "b"}\n', "has no reference (line 2)"),
    (b'{"id": "1", "src": "a", "original": "b"}\n', '"src" and "original" could each be the source'),
    (b"", "is empty (0 bytes)"),
])
def test_a_bad_large_corpus_gets_the_message_a_small_one_gets(tmp_path: Path, monkeypatch, content: bytes,
                                                             message: str):
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(content)
    with pytest.raises(CorpusError) as in_memory:
        read_corpus(path)
    monkeypatch.setattr("mt_eval.corpus.jsonfile.ON_DISK_FROM", 0)
    with pytest.raises(CorpusError) as from_disk:
        read_corpus(path)
    assert str(from_disk.value) == str(in_memory.value)
    assert message in str(from_disk.value)


def test_duplicate_ids_in_different_blocks_are_found(tmp_path: Path, on_disk_always):
    data = [*rows(9), {"id": "e1", "source": "again", "reference": "otra vez"}]
    with pytest.raises(CorpusError, match=re.escape('line 10.id: duplicate id "e1" (first at line 2)')):
        read_corpus(write_jsonl(tmp_path / "corpus.jsonl", data))


def test_compressed_and_nan_corpora_are_read_in_memory(tmp_path: Path, on_disk_always):
    packed = tmp_path / "corpus.jsonl.gz"
    packed.write_bytes(gzip.compress(write_jsonl(tmp_path / "plain.jsonl", rows(4)).read_bytes()))
    assert isinstance(read_corpus(packed).entries, list)
    nan = write_jsonl(tmp_path / "nan.jsonl", ['{"id": "1", "source": "a", "score": NaN}'])
    assert isinstance(read_corpus(nan).entries, list)


def test_selections_of_entries_on_disk_stay_on_disk_and_match(tmp_path: Path, monkeypatch):
    data = [{**row, "segment": "news" if i % 3 else "web"} for i, row in enumerate(rows(12))]
    path = write_jsonl(tmp_path / "corpus.jsonl", data)
    in_memory, from_disk = read_both(path, monkeypatch)
    for request in (SelectionRequest(ids=["e2..e5,e9"]), SelectionRequest(segments=["web"]),
                    SelectionRequest(segments=["news"], limit=4), SelectionRequest(limit=5)):
        expected, got = select(in_memory, request), select(from_disk, request)
        assert isinstance(got.entries, EntriesOnDisk)
        assert list(got.entries) == list(expected.entries) and got.facts == expected.facts


def test_blocks_and_filters_keep_corpus_order(tmp_path: Path, on_disk_always):
    entries = read_corpus(write_jsonl(tmp_path / "corpus.jsonl", rows(10))).entries
    assert [[e["id"] for e in block] for block in in_blocks(entries, 4)] == \
        [["e0", "e1", "e2", "e3"], ["e4", "e5", "e6", "e7"], ["e8", "e9"]]
    odd = kept(entries, lambda e: int(e["id"][1:]) % 2 == 1)
    assert isinstance(odd, EntriesOnDisk) and [e["id"] for e in odd] == ["e1", "e3", "e5", "e7", "e9"]
    assert [e["id"] for e in kept(list(entries), lambda e: e["id"] == "e4")] == ["e4"]


def run(tmp_path: Path, corpus: Path, out: str, *args: str) -> tuple[int, RunCard]:
    code = main(["run", "--method", COPYING, "--corpus", str(corpus), "--pair", "eng>spa", "--out",
                 str(tmp_path / out), "--resamples", "60", "--quiet", *LENIENT, *args])
    return code, msgspec.json.decode((tmp_path / out / "card.json").read_bytes(), type=RunCard)


def comparable(card: RunCard) -> dict[str, object]:
    return {"metrics": msgspec.to_builtins(card.metrics), "results": [(r.id, r.predicted, r.error) for r in
                                                                       card.results],
            "families": msgspec.to_builtins(card.families), "status": card.status, "errors": card.errors,
            "selection": msgspec.to_builtins(card.selection), "failures": msgspec.to_builtins(card.failures)}


@pytest.mark.parametrize("extra", [[], ["--ids", "e3..e40"], ["--batch-size", "2", "--concurrency", "3"]])
def test_a_run_over_entries_on_disk_writes_what_a_run_in_memory_writes(tmp_path: Path, monkeypatch, extra):
    data: list[object] = list(rows(60))
    data.insert(10, {"id": "c1", "source": "hello", "reference": "hello", "family": "canary", "pass_rule": "exact"})
    data.insert(20, {"id": "n1", "source": "", "family": "negative", "pair": "eng>deu"})
    path = write_jsonl(tmp_path / "corpus.jsonl", data)
    code, in_memory = run(tmp_path, path, "memory", *extra)
    monkeypatch.setattr("mt_eval.corpus.jsonfile.ON_DISK_FROM", 0)
    monkeypatch.setattr(on_disk, "BLOCK", 7)
    code_on_disk, from_disk = run(tmp_path, path, "disk", *extra)
    assert code_on_disk == code and comparable(from_disk) == comparable(in_memory)
    assert in_memory.metrics is not None
    assert (tmp_path / "disk" / "predictions.txt").read_text() == (tmp_path / "memory" / "predictions.txt").read_text()


def test_a_resumed_run_on_disk_translates_only_what_is_missing(tmp_path: Path, on_disk_always):
    path = write_jsonl(tmp_path / "corpus.jsonl", rows(20))
    code, whole = run(tmp_path, path, "run")
    assert code == 0
    log = tmp_path / "run" / "results.jsonl"
    kept_lines = log.read_bytes().splitlines(keepends=True)[:7]
    log.write_bytes(b"".join(kept_lines))
    code, resumed = run(tmp_path, path, "run", "--resume")
    assert code == 0 and resumed.sessions == 2
    assert comparable(resumed)["results"] == comparable(whole)["results"]
    assert len(log.read_bytes().splitlines()) == 20


def test_a_card_of_a_large_run_references_its_log_and_verifies(tmp_path: Path, on_disk_always, capsys):
    path = write_jsonl(tmp_path / "corpus.jsonl", rows(30))
    code, card = run(tmp_path, path, "run", "--embed-results", "never")
    assert code == 0 and card.results == [] and card.results_log is not None and card.results_log.results == 30
    capsys.readouterr()
    assert main(["verify", str(tmp_path / "run" / "card.json")]) == 0


def test_logged_results_come_back_in_corpus_order(tmp_path: Path):
    entries = [{"id": f"e{i}", "source": "s"} for i in range(6)]
    log = write_log(tmp_path / "results.jsonl",
                    [result("e4", "four"), result("e0", "zero"), result("e2", error="boom"), result("e5", "five"),
                     result("e0", "zero again"), result("stray", "not in the corpus")], tail=b'{"id": "e1", "pre')
    results = LoggedResults(log, entries)
    assert len(results) == 4
    assert [(r.id, r.predicted) for r in results] == [("e0", "zero"), ("e2", None), ("e4", "four"), ("e5", "five")]
    assert [(e["id"], r.id if r else None) for e, r in results.aligned()] == [
        ("e0", "e0"), ("e1", None), ("e2", "e2"), ("e3", None), ("e4", "e4"), ("e5", "e5")]
    assert results.get("e4") is not None and results.get("e4").predicted == "four"  # type: ignore[union-attr]
    assert results.get("e1") is None and "e2" in results and "e3" not in results
    assert [r.id for r in results.excluding({"e2", "e3"})] == ["e0", "e4", "e5"]
    assert [r.id for r in results] == ["e0", "e2", "e4", "e5"]  # excluding leaves the original whole


def test_the_family_tally_of_many_results_counts_each_once_from_the_log_as_from_a_dict(tmp_path: Path):
    from mt_eval.harness.families import tally

    count = 10_001  # more than two chunks of scored results, with canaries and negatives among them
    entries: list[dict[str, object]] = []
    for i in range(count):
        entry: dict[str, object] = {"id": f"e{i}", "source": "s"}
        if i % 997 == 0:
            entry.update(family="canary", pass_rule="exact", reference="x")
        elif i % 991 == 0:
            entry["family"] = "negative"
        entries.append(entry)
    logged = []
    for i in range(count):
        if i % 7 == 3:
            continue  # no result
        if i % 11 == 5:
            logged.append(result(f"e{i}", error="boom"))
        elif i % 13 == 6:
            logged.append(TranslationResult(id=f"e{i}", abstained=True))
        else:
            logged.append(result(f"e{i}"))
    facts = tally(entries, LoggedResults(write_log(tmp_path / "results.jsonl", logged), entries))
    assert facts == tally(entries, {r.id: r for r in logged})
    by_id = {r.id: r for r in logged}
    scored = [by_id.get(str(e["id"])) for e in entries if "family" not in e]
    assert facts.scored == len(scored)
    assert facts.scored_errors.numerator == sum(1 for r in scored if r is not None and r.error is not None)
    assert facts.abstention_rate.numerator == sum(1 for r in scored if r is not None and r.abstained)
    assert facts.canary == sum(1 for e in entries if e.get("family") == "canary") > 0
    assert facts.negative == sum(1 for e in entries if e.get("family") == "negative") > 0


def test_logged_results_match_ids_themselves_when_two_ids_share_a_hash(tmp_path: Path, monkeypatch):
    monkeypatch.setattr("mt_eval.harness.logged_results.hash", lambda text: len(text), raising=False)
    entries = [{"id": i, "source": "s"} for i in ("a", "b", "cc", "dd")]  # "a" and "b" share a "hash"
    log = write_log(tmp_path / "results.jsonl", [result("dd", "4"), result("b", "2"), result("a", "1")])
    results = LoggedResults(log, entries)
    assert [(e["id"], r.predicted if r else None) for e, r in results.aligned()] == [
        ("a", "1"), ("b", "2"), ("cc", None), ("dd", "4")]
    assert results.get("b").predicted == "2" and [r.id for r in results.excluding({"a"})] == ["b", "dd"]  # type: ignore[union-attr]


def test_logged_results_of_an_empty_log(tmp_path: Path):
    log = tmp_path / "results.jsonl"
    log.write_bytes(b"")
    results = LoggedResults(log, [{"id": "a", "source": "s"}])
    assert len(results) == 0 and list(results) == [] and [r for _e, r in results.aligned()] == [None]


def test_scores_read_chunk_by_chunk_are_the_scores_of_the_lists(monkeypatch):
    hypotheses = [f"the cat {i} sat on the mat" for i in range(40)]
    references = [f"the cat {i % 7} sat on a mat today" for i in range(40)]
    whole = score(hypotheses, [references], resamples=80, seed=3)
    monkeypatch.setattr("mt_eval.harness.scoring.STATS_CHUNK", 6)

    def segments():
        for start in range(0, 40, 9):
            yield hypotheses[start:start + 9], [references[start:start + 9]]

    assert score_segments(segments, 40, resamples=80, seed=3) == whole
    assert score(hypotheses, [references], resamples=80, seed=3) == whole
    with pytest.raises(ValueError, match="more than the 39 segments announced"):
        score_segments(segments, 39, resamples=0)


@pytest.mark.parametrize("long", [False, True])
def test_segment_statistics_are_kept_small_and_exact(long: bool):
    from sacrebleu.metrics import BLEU, CHRF, TER

    word = "abcdefghij" * (7_000 if long else 3)  # 70,000 characters: more n-grams than 2 bytes can count
    hypotheses = [f"a {word} b c d", "x y z"]
    references = [[f"a {word} b c e", "x y"]]
    for metric in (CHRF(word_order=2), BLEU(), TER()):
        stats = segment_statistics(metric, hypotheses, references)
        expected = metric._extract_corpus_statistics(hypotheses, references)
        assert stats.tolist() == [[float(v) for v in row] for row in expected]
        kind = "float64" if isinstance(metric, TER) else "float32" if long and isinstance(metric, CHRF) else "uint16"
        assert stats.dtype.name == kind


def test_resampled_sums_are_exact_however_large():
    import numpy as np

    from mt_eval.harness.metric_statistics import weighted_sums

    rng = np.random.default_rng(5)
    counts = rng.multinomial(200_000, np.full(200_000, 1 / 200_000), size=3)
    for stats in (rng.integers(0, 60_000, (200_000, 4)).astype(np.uint16),
                  rng.integers(0, 3_000_000, (200_000, 4)).astype(np.float32)):  # beyond float32's exact sums
        assert np.array_equal(weighted_sums(counts, stats), counts.astype(np.float64) @ stats.astype(np.float64))


@pytest.mark.parametrize("segments", [3, 257, 5_000])
@pytest.mark.parametrize("dtype", ["uint16", "float64"])
def test_resamples_summed_many_at_once_are_each_resample_summed_alone(monkeypatch, segments: int, dtype: str):
    import numpy as np

    from mt_eval.harness import metric_statistics

    # 3 resamples drawn at a time, 7 kept: groups of 6
    monkeypatch.setattr(metric_statistics, "_CHUNK_CELLS", 3 * segments)
    monkeypatch.setattr(metric_statistics, "_KEPT_CELLS", 7 * segments)
    monkeypatch.setattr(metric_statistics, "_KEPT_RESAMPLES", 7)
    stats = np.random.default_rng(1).integers(0, 60_000, (segments, 5)).astype(dtype)
    expected = np.random.default_rng(2).multinomial(segments, np.full(segments, 1 / segments), size=41)
    summed = list(metric_statistics.resampled_sums(stats, 41, np.random.default_rng(2)))
    assert np.array_equal(np.array(summed), expected.astype(np.float64) @ stats.astype(np.float64))


def test_a_resample_drawing_a_segment_over_255_times_is_summed_as_drawn_in_its_place(monkeypatch):
    import numpy as np

    from mt_eval.harness import metric_statistics

    rows = [np.array([[2, 0, 298]]), np.array([[100, 100, 100]]), np.array([[0, 300, 0]]), np.array([[1, 1, 298]])]

    class Drawn:  # the resamples of a 300-segment corpus in which one segment is drawn 300 or 298 times
        def multinomial(self, n, pvals, size):
            return rows.pop(0)

    monkeypatch.setattr(metric_statistics, "_CHUNK_CELLS", 1)
    stats = np.arange(3 * 2, dtype=np.uint16).reshape(3, 2)
    summed = np.array(list(metric_statistics.resampled_sums(stats, 4, Drawn())))
    expected = np.array([[2, 0, 298], [100, 100, 100], [0, 300, 0], [1, 1, 298]]) @ stats.astype(np.float64)
    assert np.array_equal(summed, expected)


@pytest.mark.parametrize("long", [False, True])
def test_scores_from_worker_processes_are_the_scores_from_this_process(monkeypatch, long: bool):
    hypotheses = [f"the cat {i % 9} sat on the mat {i}" for i in range(600)]
    references = [f"the cat sat {i % 7} on a mat" for i in range(600)]
    if long:  # a count beyond 2 bytes: that metric's statistics are extracted again in this process
        hypotheses[5] = references[5] = "x" * 70_000
    monkeypatch.setattr("mt_eval.harness.scorer_processes.PARALLEL_FROM", 500)
    shared = score(hypotheses, [references], resamples=40)
    monkeypatch.setattr("mt_eval.harness.scorer_processes.PARALLEL_FROM", 10**9)
    assert shared == score(hypotheses, [references], resamples=40)


