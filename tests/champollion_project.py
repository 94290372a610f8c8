"""Champollion test projects: a config, ``.champollion/methods/`` with copies of test plugins, locale files."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
PLUGINS = {
    "upper": FIXTURES / "champollion-upper",  # translate.js only
    "rot13": FIXTURES / "champollion-rot13",  # pipeline.py only
    "reverse": FIXTURES / "reverse",  # both
    "french": FIXTURES / "champollion-french",  # translate.js only: a few sentences in French
}


class Project:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.log = root / "calls.jsonl"

    def write(self, path: str, value: Any) -> None:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        text = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False) + "\n"
        target.write_text(text, encoding="utf-8")

    def read(self, path: str) -> str:
        return (self.root / path).read_text(encoding="utf-8")

    def json(self, path: str) -> Any:
        return json.loads(self.read(path))

    def calls(self) -> list[dict[str, Any]]:
        """The translate calls the test plugins recorded (``CHAMPOLLION_FIXTURE_LOG``)."""
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text(encoding="utf-8").splitlines() if line]


def make_project(root: Path, config: dict[str, Any] | str, files: dict[str, Any] | None = None,
                 plugins: tuple[str, ...] = ("upper", "rot13", "reverse")) -> Project:
    project = Project(root)
    for name in plugins:
        shutil.copytree(PLUGINS[name], root / ".champollion" / "methods" / name)
    project.write("champollion.config.json", config)
    for path, value in (files or {}).items():
        project.write(path, value)
    return project


def pairs_config(pairs: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"version": 3, "inputLocale": "en", "localesDir": "locales", "pairs": pairs, **extra}


REPO = Path(__file__).parent.parent
NODE = shutil.which("node")
NODE_LOCALES = REPO / "bridge" / "node" / "bin" / "mt-eval-locales.js"
PROGS = {"node": "mt-eval-locales", "python": "mt-eval locales"}
SIDES = tuple(PROGS)
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed")


def locales_command(side: str, project: Project, *argv: str) -> list[str]:
    """The command line of ``mt-eval locales`` (python) or ``mt-eval-locales`` (node) on ``project``."""
    head = [NODE or "node", str(NODE_LOCALES)] if side == "node" else [sys.executable, "-m", "mt_eval.cli", "locales"]
    return [*head, "--config", str(project.root), "--quiet", *argv]


def run_locales(side: str, project: Project, *argv: str, env: dict[str, str] | None = None,
                timeout: float = 120) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "CHAMPOLLION_FIXTURE_LOG": str(project.log),
                   "MT_EVAL": str(Path(sys.executable).with_name("mt-eval")), **(env or {})}
    return subprocess.run(locales_command(side, project, *argv), capture_output=True, text=True, timeout=timeout,
                          env=environment, check=False)


def twins(root: Path, config: dict[str, Any] | str, files: dict[str, Any] | None = None,
          plugins: tuple[str, ...] = ("reverse",)) -> dict[str, Project]:
    """The same project twice, under ``root/node`` and ``root/python``, for the two commands to run on."""
    return {side: make_project(root / side, config, files, plugins) for side in ("node", "python")}


def both(projects: dict[str, Project], *argv: str) -> dict[str, tuple[int, str, str]]:
    """Each side run on its own project: (exit status, stdout, stderr), paths and command names made neutral."""
    out = {}
    for side in SIDES:
        done = run_locales(side, projects[side], *argv)
        out[side] = (done.returncode, same_words(done.stdout, side, projects[side]),
                     same_words(done.stderr, side, projects[side]))
    return out


def same_words(text: str, side: str, project: Project) -> str:
    """``text`` as either side would have written it: the project's path and the command's name made neutral."""
    return text.replace(str(project.root), "<project>").replace(PROGS[side], "<prog>")


def tree(project: Project, under: str = "locales") -> dict[str, bytes]:
    """Every file below ``under`` (by path relative to it), with its bytes."""
    root = project.root / under
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
