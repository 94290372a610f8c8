"""A method that hangs: the entries of a batch whose call timed out are each sent alone, as many calls at once as
the method takes, so a method that hangs on every entry fails in about one ``--timeout`` after its batch, not one
per entry; a method that takes one call at a time (``max_concurrency`` 1) still gets them one after another."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gate_policies import LENIENT
from mt_eval.cli import main

HANGS = '''import asyncio
import json
import time


class Hangs:
    capabilities = {CAPABILITIES}

    async def translate(self, entries, config):
        started = time.monotonic()
        try:
            await asyncio.Event().wait()
        finally:
            with open(config.params["calls"], "a", encoding="utf-8") as calls:
                calls.write(json.dumps([[e["id"] for e in entries], started, time.monotonic()]) + "\\n")
'''


def hanging_plugin(root: Path, max_concurrency: int | None) -> Path:
    plugin = root / "hangs"
    plugin.mkdir()
    capabilities = {} if max_concurrency is None else {"max_concurrency": max_concurrency}
    (plugin / "hangs.py").write_text(HANGS.replace("{CAPABILITIES}", repr(capabilities)), encoding="utf-8")
    (plugin / "method.json").write_text(json.dumps({
        "name": "Hangs", "method_id": "hangs", "entry_point": "hangs:Hangs", "supported_pairs": ["eng>spa"],
        "dependency_class": "S", "dependencies": []}), encoding="utf-8")
    return plugin


@pytest.mark.parametrize(("max_concurrency", "at_once"), [(None, 4), (2, 2), (1, 1)])
def test_the_entries_of_a_batch_that_timed_out_are_sent_alone_as_many_at_once_as_the_method_takes(
        tmp_path, capsys, max_concurrency, at_once):
    """Before: one after another whatever the method takes (14.8 s for 10 entries at --timeout 0.3, 8.6 s now)."""
    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps([{"id": f"e{i}", "source": f"Sentence {i}.", "reference": f"Frase {i}."}
                                  for i in range(4)]), encoding="utf-8")
    calls = tmp_path / "calls.jsonl"
    code = main(["run", "--method", str(hanging_plugin(tmp_path, max_concurrency)), "--corpus", str(corpus),
                 "--out", str(tmp_path / "run"), "--quiet", "--latency-sample", "0", "--no-contamination-check",
                 "--timeout", "0.5", "--batch-size", "4", "--concurrency", "4", "--retries", "0",
                 "--param", f"calls={json.dumps(str(calls))}", *LENIENT])
    assert code == 4
    assert "4 × timed out after 0.5 s (0.5 s per entry)" in capsys.readouterr().err
    made = [json.loads(line) for line in calls.read_text(encoding="utf-8").splitlines()]
    assert made[0][0] == ["e0", "e1", "e2", "e3"]  # the batch, then each entry alone
    alone = sorted(made[1:], key=lambda call: call[1])
    assert sorted(ids for ids, _, _ in alone) == [["e0"], ["e1"], ["e2"], ["e3"]]
    assert all(started >= made[0][2] for _, started, _ in alone)
    in_flight = [sum(other_started <= started < ended for _, other_started, ended in alone)
                 for _, started, _ in alone]
    assert max(in_flight) == at_once  # (each call's end is written before the next one may start)


DECIDES_TOO = """async def decide(self, rows, config):
        return await self.translate(rows, config)

    async def translate(self, entries, config):"""
HANGS_ANYWHERE = (HANGS.replace('config.params["calls"]', 'os.environ["HANGING_CALLS"]')
                  .replace("import time\n", "import os\nimport time\n")
                  .replace("async def translate(self, entries, config):", DECIDES_TOO))


def method_that_hangs(root: Path, max_concurrency: int | None, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A plugin whose translate() and decide() hang, recording each call in ``root``/calls.jsonl."""
    monkeypatch.setenv("HANGING_CALLS", str(root / "calls.jsonl"))
    plugin = hanging_plugin(root, max_concurrency)
    (plugin / "hangs.py").write_text(HANGS_ANYWHERE.replace("{CAPABILITIES}", repr(
        {} if max_concurrency is None else {"max_concurrency": max_concurrency})), encoding="utf-8")
    manifest = json.loads((plugin / "method.json").read_text(encoding="utf-8"))
    (plugin / "method.json").write_text(json.dumps(manifest | {"implements": ["translate", "decide"]}),
                                        encoding="utf-8")
    return plugin


def most_alone_at_once(root: Path, first: list[list[str]]) -> int:
    """The most calls of a single entry in flight at once, after the calls of ``first`` (batches that timed out)."""
    made = [json.loads(line) for line in (root / "calls.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sorted(ids for ids, _, _ in made if len(ids) > 1) == sorted(first)
    alone = [call for call in made if len(call[0]) == 1]
    assert sorted(ids for ids, _, _ in alone) == sorted([entry] for batch in first for entry in batch)
    assert all(started >= min(ended for ids, _, ended in made if len(ids) > 1) for _, started, _ in alone)
    return max(sum(other_started <= started < ended for _, other_started, ended in alone) for _, started, _ in alone)


@pytest.mark.parametrize(("max_concurrency", "at_once"), [(None, 8), (1, 1)])
def test_translate_sends_the_sentences_of_a_call_that_timed_out_alone_as_many_at_once_as_the_method_takes(
        tmp_path, capsys, monkeypatch, max_concurrency, at_once):
    """10 sentences: 5 calls of 2, at most 8 calls at once. Before: each call's 2 one after another (at most 5 in
    flight)."""
    plugin = method_that_hangs(tmp_path, max_concurrency, monkeypatch)
    texts = [f"Sentence {i}." for i in range(1, 11)]
    assert main(["translate", str(plugin), *texts, "--timeout", "0.5"]) == 1
    assert capsys.readouterr().out == "[error] timed out after 0.5 s (0.5 s per entry)\n" * 10
    assert most_alone_at_once(tmp_path, [[str(n), str(n + 1)] for n in range(1, 11, 2)]) == at_once


@pytest.mark.parametrize(("max_concurrency", "at_once"), [(None, 4), (1, 1)])
def test_decide_run_sends_the_rows_of_a_batch_that_timed_out_alone_as_many_at_once_as_the_method_takes(
        tmp_path, capsys, monkeypatch, max_concurrency, at_once):
    """Before: one after another whatever the method takes."""
    from test_decide_run import rows, write_corpus

    plugin = method_that_hangs(tmp_path, max_concurrency, monkeypatch)
    corpus = write_corpus(tmp_path / "c.jsonl", rows(4))
    code = main(["decide", "run", "--method", str(plugin), "--corpus", str(corpus), "--out", str(tmp_path / "run"),
                 "--quiet", "--resamples", "100", "--timeout", "0.5", "--batch-size", "4", "--concurrency", "4"])
    assert code == 4, capsys.readouterr().err
    assert most_alone_at_once(tmp_path, [["r0", "r1", "r2", "r3"]]) == at_once


@pytest.mark.parametrize(("max_concurrency", "at_once"), [(None, 4), (1, 1)])
def test_locales_sends_the_strings_of_a_batch_that_timed_out_alone_as_many_at_once_as_the_method_takes(
        tmp_path, capsys, monkeypatch, max_concurrency, at_once):
    """Before: one after another whatever the method takes."""
    from champollion_project import make_project, pairs_config

    plugin = method_that_hangs(tmp_path, max_concurrency, monkeypatch)
    project = make_project(tmp_path / "project", pairs_config({"en:es": {"methodPlugin": "hangs", "timeoutS": 0.5,
                                                                           "batchSize": 4}}),
                           {"locales/en/a.json": {f"k{i}": f"Sentence {i}." for i in range(4)}}, plugins=())
    (project.root / ".champollion" / "methods").mkdir(parents=True)
    plugin.rename(project.root / ".champollion" / "methods" / "hangs")
    assert main(["locales", "--config", str(project.root), "--quiet"]) == 1
    assert capsys.readouterr().out.count("timed out after 0.5 s") == 4
    assert most_alone_at_once(tmp_path, [["1", "2", "3", "4"]]) == at_once
