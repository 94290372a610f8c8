"""Helpers for the sandbox and gateway tests: whether this host can isolate, probe plugins, corpora."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgspec
import pytest

from gate_policies import LENIENT
from mt_eval.cli import main
from mt_eval.harness.runcard import RunCard
from mt_eval.sandbox import SandboxUnavailable, find_tool

PROBE = Path(__file__).parent / "fixtures" / "probe"
GATEWAY_DEPENDENCY = {"id": "llm", "kind": "model", "license": "proprietary", "access": "gateway",
                      "source": "config.base_url", "substitutable": True, "redistributable": False,
                      "transferable": False}


def isolation_reason() -> str | None:
    try:
        find_tool()
    except SandboxUnavailable as exc:
        return str(exc)
    return None


needs_sandbox = pytest.mark.skipif(isolation_reason() is not None, reason=f"no sandbox here: {isolation_reason()}")


def probe_plugin(root: Path, runtime: str, *, dependency_class: str = "S",
                 dependencies: list[dict[str, Any]] | None = None, name: str | None = None) -> Path:
    """A copy of the probe method in ``runtime`` ("python" or "node") with the given declared class."""
    directory = root / (name or f"probe-{runtime}-{dependency_class.lower()}")
    directory.mkdir(parents=True)
    entry = {"python": ("pipeline.py", "entry_point", "pipeline:ProbeMethod"),
             "node": ("translate.js", "node_entry", "translate.js")}[runtime]
    shutil.copy(PROBE / entry[0], directory / entry[0])
    manifest = {"name": f"Probe ({runtime})", entry[1]: entry[2], "dependency_class": dependency_class,
                "dependencies": dependencies if dependencies is not None else []}
    (directory / "method.json").write_text(json.dumps(manifest))
    return directory


def small_corpus(root: Path, n: int = 3) -> Path:
    entries = [{"id": f"s{i}", "source": f"Sentence {i}.", "reference": f"Frase {i}."} for i in range(n)]
    path = root / "small.json"
    path.write_text(json.dumps({"dataset": {"name": "small"}, "language_pair": {"source": "eng", "target": "spa"},
                                "entries": entries}))
    return path


def run_card(root: Path, *args: str, out: str = "run") -> tuple[int, RunCard | None]:
    # about confinement, not the gate or latency: a lenient gate, and no extra latency calls to the method
    code = main(["run", "--out", str(root / out), "--quiet", "--resamples", "50", "--retries", "0", *LENIENT,
                 "--latency-sample", "0", *args])
    card_path = root / out / "card.json"
    if code not in (0, 3, 4) or not card_path.exists():  # complete, partial or failed runs write their card
        return code, None
    return code, msgspec.json.decode(card_path.read_bytes(), type=RunCard)


def actions(*names: str) -> list[str]:
    return ["--param", "actions=" + json.dumps(list(names))]


@contextmanager
def confining_with(name: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The sandbox confines with ``name`` (``MT_EVAL_SANDBOX_TOOL``) in the block; the test is skipped where that
    tool cannot confine."""
    monkeypatch.setenv("MT_EVAL_SANDBOX_TOOL", name)
    find_tool.cache_clear()
    try:
        try:
            find_tool()
        except Exception as exc:
            pytest.skip(f"{name} cannot confine here: {exc}")
        yield
    finally:
        monkeypatch.delenv("MT_EVAL_SANDBOX_TOOL")
        find_tool.cache_clear()
