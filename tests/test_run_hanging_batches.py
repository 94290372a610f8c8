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
                 "--timeout", "0.2", "--batch-size", "4", "--concurrency", "4", "--retries", "0",
                 "--param", f"calls={json.dumps(str(calls))}", *LENIENT])
    assert code == 4
    assert "4 × timed out after 0.2 s (0.2 s per entry)" in capsys.readouterr().err
    made = [json.loads(line) for line in calls.read_text(encoding="utf-8").splitlines()]
    assert made[0][0] == ["e0", "e1", "e2", "e3"]  # the batch, then each entry alone
    alone = sorted(made[1:], key=lambda call: call[1])
    assert sorted(ids for ids, _, _ in alone) == [["e0"], ["e1"], ["e2"], ["e3"]]
    assert all(started >= made[0][2] for _, started, _ in alone)
    in_flight = [sum(other_started <= started < ended for _, other_started, ended in alone)
                 for _, started, _ in alone]
    assert max(in_flight) == at_once  # (each call's end is written before the next one may start)
