"""Champollion test projects: a config, ``.champollion/methods/`` with copies of test plugins, locale files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures"
PLUGINS = {
    "upper": FIXTURES / "champollion-upper",  # translate.js only
    "rot13": FIXTURES / "champollion-rot13",  # pipeline.py only
    "reverse": FIXTURES / "reverse",  # both
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
