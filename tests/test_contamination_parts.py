"""A corpus too large for one index is checked part by part, with the same hits, verdict and report as one
index over all of it; the planted control uses the last part; the entries are only read in order."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

import msgspec
import pytest

from mt_eval.contamination import index, parts
from mt_eval.contamination.engine import build_index, check_bundle, check_corpora
from mt_eval.contamination.run_check import check_for_run
from mt_eval.contamination.settings import CheckSettings
from mt_eval.corpus import read_corpus

NOUNS = ["harbour", "lantern", "orchard", "violin", "glacier", "meadow", "library", "compass", "tramway", "quarry"]
PLACES = ["old bridge", "northern pier", "village square", "railway station", "mountain hut", "flower market"]
SHARED = "The same sentence appears in two entries that fall in different parts of the corpus."


def source(i: int) -> str:
    return (f"Entry {i} tells how the {NOUNS[i % len(NOUNS)]} near the {PLACES[i % len(PLACES)]} was found "
            f"on day {i * 7 + 3} by walker {i * 13 + 1}.")


def reference(i: int) -> str:
    return f"La entrada {i} cuenta la historia {i * 11 + 5} del {NOUNS[(i + 3) % len(NOUNS)]} y del paseante {i}."


def rows(count: int, prefix: str = "") -> list[dict[str, Any]]:
    found = [{"id": f"{prefix}{i}", "source": source(i), "reference": reference(i)} for i in range(count)]
    found[5]["source"] = found[57 % count]["source"] = SHARED  # one text, two entries, two parts
    found[9]["source"] = "Too short."
    return found


def write(path: Path, entries: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(entry) + "\n" for entry in entries), encoding="utf-8")
    return path


def bundle_with(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def contaminated(root: Path) -> Path:
    words = source(30).split()
    return bundle_with(root, {
        "prompt.txt": f"Translate:\n{source(0)}\n{SHARED}\n",  # the first part, and a text of two parts
        "pipeline.py": f"EXAMPLE = {reference(59)!r}\n",  # the last entry's reference
        "notes.md": " ".join(words[:6] + words[7:]) + "\n",  # a near-duplicate of an entry in the middle
        "data/glossary.tsv": f"x\t{' '.join(reference(44).split()[1:14])}\ty\n",  # a long shared run
    })


def without_seconds(report: Any) -> dict[str, Any]:
    data = msgspec.to_builtins(report)
    data.pop("seconds")
    return data


def in_parts(monkeypatch: pytest.MonkeyPatch, size: int, check: Any) -> dict[str, Any]:
    monkeypatch.setattr(parts, "PART_ENTRIES", size)
    return without_seconds(check())


def test_hits_and_report_in_parts_equal_one_index(tmp_path, monkeypatch):
    corpus = write(tmp_path / "corpus.jsonl", rows(60))
    bundle = contaminated(tmp_path / "bundle")
    said: list[str] = []

    def check() -> Any:
        return check_bundle(bundle, [corpus], CheckSettings(plant=0), progress=said.append)

    one = in_parts(monkeypatch, 1000, check)
    assert said[0] == "indexing 120 texts of 1 corpus file"
    monkeypatch.setattr(index, "_CHUNK_WORDS", 9)  # the index built a few texts at a time, too
    assert in_parts(monkeypatch, 7, check) == one
    assert "indexing part 9 of 9: entries 54 to 60 of 60" in said
    found = [(h["file"], h.get("line"), h["entry_id"], h["side"], h["kind"]) for h in one["hits"]]
    assert found == [("notes.md", 1, "30", "source", "near-duplicate"),
                     ("pipeline.py", 1, "59", "reference", "exact"),
                     ("prompt.txt", 2, "0", "source", "exact"),
                     ("prompt.txt", 2, "30", "source", "long-ngram"),  # entries 0 and 30 share 12 words
                     ("prompt.txt", 3, "5", "source", "exact"), ("prompt.txt", 3, "57", "source", "exact"),
                     ("data/glossary.tsv", 1, "44", "reference", "near-duplicate")]
    assert one["status"] == "contaminated" and one["texts_too_short"] == 1
    assert one["corpora"][0]["entries"] == 60 and one["corpora"][0]["texts"] == 120


def test_several_corpora_across_parts_and_corpus_against_corpus(tmp_path, monkeypatch):
    first = write(tmp_path / "a.jsonl", rows(60))
    second = write(tmp_path / "b.jsonl", rows(60, prefix="b"))  # the same texts: every hit twice
    bundle = contaminated(tmp_path / "bundle")
    one = in_parts(monkeypatch, 1000, lambda: check_bundle(bundle, [first, second], CheckSettings(plant=0)))
    assert in_parts(monkeypatch, 11, lambda: check_bundle(bundle, [first, second], CheckSettings(plant=0))) == one
    assert {(h["corpus"], h["entry_id"]) for h in one["hits"]} >= {("a.jsonl", "57"), ("b.jsonl", "b57")}

    dev = write(tmp_path / "dev.jsonl", [{"id": "d1", "source": "Nothing of it.", "reference": reference(59)},
                                         {"id": "d2", "source": SHARED, "reference": source(3)}])
    one = in_parts(monkeypatch, 1000, lambda: check_corpora(dev, [first], CheckSettings(plant=0)))
    assert in_parts(monkeypatch, 7, lambda: check_corpora(dev, [first], CheckSettings(plant=0))) == one
    assert [(h["against_id"], h["against_side"], h["entry_id"], h["side"]) for h in one["hits"]] == [
        ("d2", "source", "5", "source"), ("d2", "source", "57", "source"), ("d1", "reference", "59", "reference"),
        ("d2", "reference", "3", "source"), ("d2", "reference", "33", "source")]


def test_the_control_of_a_corpus_in_parts_is_that_of_its_last_part(tmp_path, monkeypatch):
    everything = rows(60)
    corpus = write(tmp_path / "all" / "corpus.jsonl", everything)
    last = write(tmp_path / "last" / "corpus.jsonl", everything[53:])  # the last of 9 parts: entries 54-60
    bundle = bundle_with(tmp_path / "bundle", {"pipeline.py": "X = 'nothing of the corpus'\n", "a.txt": "hello\n"})
    settings = CheckSettings(plant=8, seed=5)
    parted = in_parts(monkeypatch, 7, lambda: check_bundle(bundle, [corpus], settings))
    alone = in_parts(monkeypatch, 1000, lambda: check_bundle(bundle, [last], settings))
    assert parted["status"] == "clean" and parted["control"] == alone["control"]
    assert parted["control"]["found"] == 8
    assert {p["entry_id"] for p in parted["control"]["planted"]} <= {str(i) for i in range(53, 60)}
    blind = in_parts(monkeypatch, 7, lambda: check_bundle(bundle, [corpus], CheckSettings(common_ngram=0)))
    assert blind["status"] == "unverified" and blind["control"]["recall"] < 0.9


def test_parts_built_once_serve_several_bundles(tmp_path, monkeypatch):
    corpus = write(tmp_path / "corpus.jsonl", rows(60))
    dirty = contaminated(tmp_path / "dirty")
    clean = bundle_with(tmp_path / "clean", {"a.txt": "hello\n"})
    monkeypatch.setattr(parts, "PART_ENTRIES", 7)
    shared = build_index([corpus])
    assert len(shared) == 9
    for bundle in (dirty, clean, dirty):
        assert without_seconds(check_bundle(bundle, [corpus], index=shared)) == \
            without_seconds(check_bundle(bundle, [corpus]))


class OnDemand(Sequence[Any]):
    """Entries as a corpus read from disk on demand gives them: read-only, counted passes and lookups."""

    def __init__(self, entries: list[dict[str, Any]]) -> None:
        self._entries = entries
        self.passes = 0
        self.lookups = 0

    def __len__(self) -> int:
        return len(self._entries)

    def __getitem__(self, number: Any) -> Any:
        self.lookups += 1
        return MappingProxyType(dict(self._entries[number]))

    def __iter__(self) -> Iterator[Any]:
        self.passes += 1
        return (MappingProxyType(dict(entry)) for entry in self._entries)


@pytest.mark.parametrize("contaminated_bundle", [True, False])
def test_the_run_check_reads_the_entries_once_in_order(tmp_path, monkeypatch, contaminated_bundle):
    corpus = read_corpus(write(tmp_path / "corpus.jsonl", rows(60)))
    bundle = contaminated(tmp_path / "bundle") if contaminated_bundle else \
        bundle_with(tmp_path / "bundle", {"a.txt": "hello\n"})
    expected = check_for_run(bundle, corpus, tmp_path / "one", code_sha256="x", enabled=True, reuse=False, quiet=True)
    monkeypatch.setattr(parts, "PART_ENTRIES", 7)
    entries = OnDemand(corpus.entries)
    corpus.entries = entries  # type: ignore[assignment]
    record = check_for_run(bundle, corpus, tmp_path / "parts", code_sha256="x", enabled=True, reuse=False,
                           quiet=True)
    assert entries.passes == 1
    if contaminated_bundle:
        assert record.status == "contaminated" and entries.lookups == 0  # ids come from the part being checked
        assert msgspec.to_builtins(record.hits) == msgspec.to_builtins(expected.hits)
        assert record.hits_total == expected.hits_total == 7
    else:
        assert record.status == "clean" and entries.lookups == 14  # the planted texts are read back: all 14
        assert len(record.planted) == 14  # texts of the last part (entries 54-60)


def test_a_last_part_of_short_entries_leaves_the_control_to_another_part(tmp_path, monkeypatch):
    entries = rows(60)
    for entry in entries[53:]:
        entry["source"], entry["reference"] = "Yes.", "Sí."  # nothing long enough to plant in the last part
    corpus = read_corpus(write(tmp_path / "corpus.jsonl", entries))
    monkeypatch.setattr(parts, "PART_ENTRIES", 7)
    corpus.entries = OnDemand(corpus.entries)  # type: ignore[assignment]
    bundle = bundle_with(tmp_path / "bundle", {"a.txt": "hello\n"})
    record = check_for_run(bundle, corpus, tmp_path / "run", code_sha256="x", enabled=True, reuse=False, quiet=True)
    assert record.status == "clean" and len(record.planted) == 14 and record.recall == 1.0
    assert corpus.entries.passes == 2  # the check, then the part with the most texts to plant, built again
    assert all(int(p.entry_id) < 53 for p in record.planted)


def test_a_corpus_kept_on_disk_is_checked_in_parts_as_one_in_memory(tmp_path, monkeypatch):
    from mt_eval.corpus.on_disk import EntriesOnDisk

    path = write(tmp_path / "corpus.jsonl", rows(60))
    in_memory = read_corpus(path)
    monkeypatch.setattr("mt_eval.corpus.jsonfile.ON_DISK_FROM", 0)
    on_disk = read_corpus(path)
    assert isinstance(on_disk.entries, EntriesOnDisk) and not isinstance(in_memory.entries, EntriesOnDisk)
    for bundle in (contaminated(tmp_path / "dirty"), bundle_with(tmp_path / "clean", {"a.txt": "hello\n"})):
        one = check_for_run(bundle, in_memory, tmp_path / "one", code_sha256="x", enabled=True, reuse=False,
                            quiet=True)
        monkeypatch.setattr(parts, "PART_ENTRIES", 7)
        parted = check_for_run(bundle, on_disk, tmp_path / "parts", code_sha256="x", enabled=True, reuse=False,
                               quiet=True)
        monkeypatch.setattr(parts, "PART_ENTRIES", 1000)
        assert parted.status == one.status
        assert msgspec.to_builtins(parted.hits) == msgspec.to_builtins(one.hits)
