"""This plugin's Node entry run with plain ``node``, for the parity tests: the same entries (or rows) and config
that pipeline.py gets go in, its results come out, as champollion's Node side would get them."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import msgspec

from mt_eval.loader import load_method
from mt_eval.records import RunConfig

PLUGIN = Path(__file__).resolve().parent.parent
NODE_ENTRY = json.loads((PLUGIN / "method.json").read_text(encoding="utf-8-sig"))["node_entry"]
RUNNER = """
const [entry, name, input, output] = process.argv.slice(1);
const { readFileSync, writeFileSync } = await import('node:fs');
const method = await import(entry);
const { items, config } = JSON.parse(readFileSync(input, 'utf8'));
writeFileSync(output, JSON.stringify(await method[name](items, config)));
"""


def node_call(function: str, items: list[dict[str, Any]], config: dict[str, Any]) -> list[dict[str, Any]]:
    """``function(items, config)`` of the Node entry (``translate`` or ``decide``), run by ``node``."""
    node = shutil.which("node")
    if node is None:
        raise RuntimeError(f"node is not on PATH: the parity tests run {NODE_ENTRY} with Node >= 20")
    with tempfile.TemporaryDirectory() as scratch:
        given, answered = Path(scratch, "in.json"), Path(scratch, "out.json")
        given.write_text(json.dumps({"items": items, "config": config}), encoding="utf-8")
        run = subprocess.run([node, "--input-type=module", "-e", RUNNER, (PLUGIN / NODE_ENTRY).as_uri(), function,
                              str(given), str(answered)], capture_output=True, text=True, timeout=120, cwd=PLUGIN)
        if run.returncode != 0:
            raise RuntimeError(f"{NODE_ENTRY} failed under node (exit status {run.returncode}):\n{run.stderr}")
        return json.loads(answered.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def differences(python: list[dict[str, Any]], node: list[dict[str, Any]], fields: tuple[str, ...]) -> str:
    """Where the two runtimes' results differ in ``fields``, one line per result; "" when they agree."""
    lines = []
    for ours, theirs in zip(python, node, strict=False):
        a, b = ({f: r.get(f) for f in fields} for r in (ours, theirs))
        if a != b:
            lines.append(f"  {ours.get('id')}: pipeline.py {json.dumps(a, ensure_ascii=False)}\n"
                         f"  {' ' * len(str(ours.get('id')))}  {NODE_ENTRY} {json.dumps(b, ensure_ascii=False)}")
    if len(python) != len(node):
        lines.append(f"  pipeline.py returned {len(python)} results, {NODE_ENTRY} {len(node)}")
    return "\n".join(lines)


def sample_and(probes: list[str]) -> list[dict[str, Any]]:
    """The sample corpus's entries (without their references), then ``probes`` as entries of their own."""
    lines = (PLUGIN / "sample" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    corpus = [json.loads(line) for line in lines if line.strip()]
    return [*({"id": e["id"], "source": e["source"]} for e in corpus),
            *({"id": f"probe-{i}", "source": text} for i, text in enumerate(probes, start=1))]


def assert_same_translations(entries: list[dict[str, Any]], config: RunConfig, fields: tuple[str, ...],
                             requests: list[dict[str, Any]] | None = None) -> None:
    """pipeline.py and the Node entry translate ``entries`` alike in ``fields`` (and, given the stand-in's
    ``requests``, send it the same requests)."""
    if requests is not None:
        requests.clear()
    python = asyncio.run(load_method(PLUGIN).method.translate([dict(e) for e in entries], config))
    from_python = sorted(requests or [], key=repr)
    if requests is not None:
        requests.clear()
    node = node_call("translate", entries, msgspec.to_builtins(config))
    disagreement = differences(python, node, fields)
    where = "" if requests is None else f" ({config})"
    assert not disagreement, f"pipeline.py and translate.js disagree{where}:\n{disagreement}"
    assert sorted(requests or [], key=repr) == from_python, "the two runtimes send different requests"
