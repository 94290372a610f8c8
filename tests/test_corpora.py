"""Every corpus shape in tests/fixtures/corpora/ yields exactly its expected entries, or is refused as expected."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mt_eval.corpus import CorpusError, CorpusSpec, read_corpus
from mt_eval.corpus.describe import reading_facts

FIXTURES = Path(__file__).parent / "fixtures" / "corpora"
CASES = sorted(p.name.removesuffix(".expected.json") for p in FIXTURES.glob("*.expected.json"))


def expected(case: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{case}.expected.json").read_text(encoding="utf-8"))


def read_case(case: str):
    read = expected(case)["read"]
    spec = CorpusSpec(path=FIXTURES / read["corpus"] if "corpus" in read else None,
                      source_file=FIXTURES / read["source_file"] if "source_file" in read else None,
                      reference_file=FIXTURES / read["reference_file"] if "reference_file" in read else None,
                      columns=read.get("columns"), accept=read.get("accept", []))
    return read_corpus(spec, pair=read.get("pair"))


def test_the_folder_has_every_shape_and_every_file_belongs_to_a_case():
    named = set()
    for case in CASES:
        read = expected(case)["read"]
        named.update(read[key] for key in ("corpus", "source_file", "reference_file") if key in read)
    files = {p.name for p in FIXTURES.iterdir() if not p.name.endswith(".expected.json") and p.name != "README.md"}
    assert files == named
    shapes = {(expected(c)["reading"]["format"], expected(c)["reading"].get("columns_from")) for c in CASES
              if "reading" in expected(c)}
    assert {("tsv", "convention"), ("tsv", "header"), ("tsv", "--columns"), ("json", None), ("jsonl", None),
            ("parallel", None)} <= shapes


@pytest.mark.parametrize("case", [c for c in CASES if "entries" in expected(c)])
def test_each_shape_yields_its_entries(case: str):
    want = expected(case)
    corpus = read_case(case)
    assert corpus.entries == want["entries"]
    facts = reading_facts(corpus)
    assert {key: facts[key] for key in want["reading"]} == want["reading"]
    assert corpus.references == all("reference" in e for e in want["entries"])
    assert len(corpus.sha256) == 64
    if "pair" in want:
        assert corpus.pair == want["pair"]
    if "corpus_name" in want:
        assert (corpus.name, corpus.license) == (want["corpus_name"], want["license"])
    assert corpus.given_ids == want.get("given_ids", {})


@pytest.mark.parametrize("case", [c for c in CASES if "error" in expected(c)])
def test_each_bad_shape_is_refused_saying_what_and_how(case: str):
    want = expected(case)["error"]
    with pytest.raises(CorpusError) as caught:
        read_case(case)
    problems = caught.value.problems
    assert any(p.code == want["code"] and want["message"] in p.message for p in problems), str(caught.value)
    assert all(p.hint for p in problems if p.code != "many"), "every refusal says how to fix it"
