"""The dual-runtime example behaves the same in Python and in Node, whoever hosts it: the Python harness
(`mt-eval run`) with either entry, and the Node host (`startGuest`) with either guest."""

from __future__ import annotations

import asyncio
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gate_policies import LENIENT
from mt_eval.bridge.runtimes import node_guest_script
from mt_eval.cli import main
from mt_eval.loader import load_method
from mt_eval.records import RunConfig

REPO = Path(__file__).parent.parent
EXAMPLE = REPO / "examples" / "rules-eng-spa"
DEMO = REPO / "examples" / "data" / "eng-spa-demo.json"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")

TRICKY = ["", "  The  cat  ", "A very big house\nand a small dog.", "These red cars are new.", "I am happy, I said.",
          "The cities of the world.", "Zebras are green!", "¿Qué? 日本語 🙂 don't", "THE HOUSE IS RED", "tab\tthe\tcat"]


def random_texts(count: int, seed: int = 5) -> list[str]:
    lexicon = (EXAMPLE / "lexicon.tsv").read_text(encoding="utf-8").splitlines()
    words = [line.split("\t")[0] for line in lexicon if line.strip() and not line.startswith("#")]
    pieces = [*words, "cats", "cities", "boxes", "The", "I", "A", ",", ".", "!", "?", "\n", "  ", "\t", "Zebra",
              "éclair", "日本", "🙂", "don't", "De", "el"]
    rng = random.Random(seed)
    texts = [" ".join(rng.choice(pieces) for _ in range(rng.randint(0, 15))) for _ in range(count)]
    return [t[:1].upper() + t[1:] if rng.random() < 0.5 else t for t in texts]


def comparable(results: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(r["id"], r.get("predicted"), r.get("error"), r.get("metadata") or {}, r.get("abstained") or False,
             r.get("abstain_reason")) for r in results]


def entries_of(texts: list[str]) -> list[dict[str, Any]]:
    return [{"id": f"t{i}", "source": text} for i, text in enumerate(texts)]


def in_process(entries: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    method = load_method(EXAMPLE).method
    return comparable(asyncio.run(method.translate(entries, RunConfig(source_lang="eng", target_lang="spa"))))


def node(script: str, *args: str, stdin: str = "") -> Any:
    done = subprocess.run([NODE or "node", "--input-type=module", "-e", script, *args], input=stdin,
                          capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_both_entries_agree_on_the_demo_corpus_and_random_texts():
    demo = [e["source"] for e in json.loads(DEMO.read_text(encoding="utf-8"))["entries"]]
    entries = entries_of(demo + TRICKY + random_texts(1500))
    direct = node("import { readFileSync } from 'node:fs';\n"
                  "const m = await import(process.argv[1]);\n"
                  "const entries = JSON.parse(readFileSync(0, 'utf8'));\n"
                  "process.stdout.write(JSON.stringify(await m.translate(entries, {})));",
                  (EXAMPLE / "translate.js").as_uri(), stdin=json.dumps(entries))
    assert comparable(direct) == in_process(entries)


def plugin_copy(tmp_path: Path, runtime: str) -> Path:
    copy = tmp_path / f"rules-{runtime}"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    manifest = json.loads((copy / "method.json").read_text(encoding="utf-8"))
    del manifest["node_entry" if runtime == "python" else "entry_point"]
    (copy / "method.json").write_text(json.dumps(manifest), encoding="utf-8")
    return copy


def test_the_python_harness_gets_the_same_run_from_either_entry(tmp_path: Path):
    corpus = tmp_path / "corpus.jsonl"
    demo = json.loads(DEMO.read_text(encoding="utf-8"))["entries"]
    rows = demo + [{"id": f"x{i}", "source": text, "reference": "referencia"} for i, text in enumerate(TRICKY) if text]
    corpus.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    cards = {}
    for runtime in ("python", "node"):
        out = tmp_path / f"run-{runtime}"
        code = main(["run", "--method", str(plugin_copy(tmp_path, runtime)), "--corpus", str(corpus), "--pair",
                     "eng>spa", "--out", str(out), "--quiet", "--resamples", "100", "--batch-size", "4",
                     *LENIENT])  # (its tricky texts are in the plugin's README and tests: a contaminated bundle)
        assert code == 0
        cards[runtime] = json.loads((out / "card.json").read_text(encoding="utf-8"))
    python, node_card = cards["python"], cards["node"]
    assert (python["method"]["runtime"], node_card["method"]["runtime"]) == ("python", "node")
    assert comparable(python["results"]) == comparable(node_card["results"])
    assert python["errors"] == 0 and python["metrics"]["metrics"] == node_card["metrics"]["metrics"]
    assert python["results"][3]["predicted"] == "Hay una escuela nueva en la ciudad."


NODE_HOST = """
const { startGuest } = await import(process.argv[1]);
const [guestScript, plugin, python] = process.argv.slice(2);
const entries = JSON.parse(process.argv[5]);
const config = { source_lang: 'eng', target_lang: 'spa' };
const commands = {
  node: [process.execPath, guestScript, plugin],
  python: [python, '-m', 'mt_eval.cli', 'serve', plugin],
};
const out = {};
for (const [runtime, command] of Object.entries(commands)) {
  const guest = await startGuest(command, { config, logger: {} });
  try {
    const halves = [entries.slice(0, 20), entries.slice(20)];
    out[runtime] = { results: (await Promise.all(halves.map((batch) => guest.translate(batch)))).flat(),
                     runtime: guest.info.guest.runtime };
  } finally {
    await guest.close();
  }
}
process.stdout.write(JSON.stringify(out));
"""


def test_the_node_host_gets_the_same_results_from_either_guest():
    entries = entries_of(TRICKY + random_texts(60, seed=9))
    found = node(NODE_HOST, (REPO / "bridge" / "node" / "index.js").as_uri(), str(node_guest_script()),
                 str(EXAMPLE), sys.executable, json.dumps(entries))
    assert found["node"]["runtime"].startswith("node") and found["python"]["runtime"].startswith("python")
    expected = in_process(entries)
    assert comparable(found["node"]["results"]) == expected
    assert comparable(found["python"]["results"]) == expected
