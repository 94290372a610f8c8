"""A method that misbehaves in a way the harness must survive — it calls sys.exit() in a latency call, raises
with text that is not valid Unicode, reports an infinite latency, fails or hangs in aclose(), blocks beyond
interruption, or prints — fails only its own entries with a clear message, and `mt-eval run` ends with a card
(or a clear error) that `--resume` can finish; `mt-eval translate` the same."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import msgspec

from gate_policies import LENIENT
from mt_eval.harness.runcard import RunCard

SOURCES = ["Hi", "EXIT", "Bye"]
EXITS = """
import sys

class M:
    async def translate(self, entries, config):
        if any(e["source"] == "EXIT" for e in entries):
            sys.exit(5)
        return [{"id": e["id"], "predicted": "x" + e["source"]} for e in entries]
"""


def plugin(tmp_path: Path, code: str, name: str = "faulty") -> Path:
    """A plugin whose pipeline.py is ``code`` (class M)."""
    directory = tmp_path / name
    directory.mkdir()
    (directory / "method.json").write_text(json.dumps({
        "name": name, "method_id": name, "entry_point": "pipeline:M", "supported_pairs": ["eng>spa"],
        "dependency_class": "S", "dependencies": []}))
    (directory / "pipeline.py").write_text(textwrap.dedent(code))
    return directory


def corpus(tmp_path: Path, sources: list[str] = SOURCES) -> Path:
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps({"id": f"e{i}", "source": s, "reference": "x" + s}) + "\n"
                            for i, s in enumerate(sources)))
    return path


def mt_eval(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mt_eval.cli", *args], capture_output=True, text=True,
                          timeout=timeout)


def run(tmp_path: Path, method: Path, *args: str, out: str = "run"
        ) -> tuple[subprocess.CompletedProcess[str], RunCard | None]:
    """`mt-eval run` in a child process (latency calls over the whole corpus unless ``args`` say otherwise)."""
    done = mt_eval("run", "--method", str(method), "--corpus", str(corpus(tmp_path)), "--pair", "eng>spa",
                   "--out", str(tmp_path / out), "--quiet", "--resamples", "100", *LENIENT, "--retries", "0",
                   "--latency-warmup", "1", "--latency-repetitions", "1", *args)
    card_path = tmp_path / out / "card.json"
    card = msgspec.json.decode(card_path.read_bytes(), type=RunCard) if card_path.exists() else None
    return done, card


EXIT_ERROR = ("the method called sys.exit(5) (pipeline.py:7): a method must not end the process; raise an "
              "exception instead")


def test_sys_exit_in_a_latency_call_fails_the_call_and_its_entry_not_the_run(tmp_path: Path):
    done, card = run(tmp_path, plugin(tmp_path, EXITS), "--batch-size", "1")
    assert done.returncode == 3 and card is not None, done.stderr
    assert [r.error for r in card.results] == [None, EXIT_ERROR, None]
    assert card.latency.hot_failed == 1 and card.latency.hot_calls == 2
    assert "Traceback" not in done.stderr


def test_sys_exit_in_the_first_latency_call_is_its_cold_failure(tmp_path: Path):
    done, card = run(tmp_path, plugin(tmp_path, EXITS), "--batch-size", "1", "--ids", "e1,e2")
    assert done.returncode == 3 and card is not None, done.stderr
    assert card.latency.cold_failed == EXIT_ERROR


def test_translate_gives_a_sentence_whose_call_exits_the_same_error(tmp_path: Path):
    done = mt_eval("translate", str(plugin(tmp_path, EXITS)), "Hi", "EXIT", "Bye")
    assert done.returncode == 1
    assert done.stdout.splitlines() == ["xHi", f"[error] {EXIT_ERROR}", "xBye"]
    assert "faulty: 1 of 3 entries failed" in done.stderr
