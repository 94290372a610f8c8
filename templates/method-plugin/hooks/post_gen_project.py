"""Shape the generated plugin: keep the code of the chosen profile and runtime, record the answers.

Cookiecutter renders this file with the answers and runs it inside the new plugin directory. The
template keeps each kind of method under ``_variants/<family>/`` (and ``_variants/<profile>/`` for
what one profile adds); the chosen ones are moved into place and the rest is removed.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

ANSWERS = json.loads(r"""{{ cookiecutter | jsonify }}""")
ANSWERS_FILE = ".mt-eval-answers.json"
FORMATTED_JSON = ("method.json", "method_card.json", "package.json")
HTTP_FAMILIES = ("chat", "http-api")  # methods that share http_json.py / http_json.js
RUNTIME_FILES = {"python": ("*.py",), "node": ("*.js", "package.json")}


def move_into(source: Path, target: Path) -> None:
    """Move every file under ``source`` to the same place under ``target``."""
    for path in sorted(source.rglob("*")):
        if path.is_file():
            destination = target / path.relative_to(source)
            destination.parent.mkdir(parents=True, exist_ok=True)
            path.replace(destination)


def remove_runtime(plugin: Path, runtime: str) -> None:
    """Remove the files of a runtime that was not chosen."""
    for pattern in RUNTIME_FILES[runtime]:
        for path in plugin.rglob(pattern):
            path.unlink()


def reformat_json(path: Path) -> None:
    """Rewrite a rendered JSON file with two-space indents and characters unescaped."""
    if path.is_file():
        data = json.loads(path.read_text(encoding="utf-8"))
        path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def record_answers(plugin: Path, answers: dict[str, object]) -> None:
    """Write the answers so the plugin can be regenerated (``mt-eval new DIR --answers FILE``), and the SHA-256
    of each file as generated, so a regeneration can tell the files the user changed since."""
    public = {key: value for key, value in answers.items() if not key.startswith("_")}
    files = {path.relative_to(plugin).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
             for path in sorted(plugin.rglob("*")) if path.is_file() and path.name != ANSWERS_FILE}
    document = {"template": "method-plugin", "answers": public, "files": files}
    (plugin / ANSWERS_FILE).write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def main() -> None:
    plugin = Path.cwd()
    variants = plugin / "_variants"
    move_into(variants / ANSWERS["__family"], plugin)
    if ANSWERS["__family"] in HTTP_FAMILIES:
        move_into(variants / "http", plugin)
    if (variants / ANSWERS["dependency_profile"]).is_dir():
        move_into(variants / ANSWERS["dependency_profile"], plugin)
    if ANSWERS["runtime"] == "both":  # the parity tests: pipeline.py against the Node entry
        move_into(variants / "both", plugin)
    else:
        (plugin / "tests" / "test_parity.py").unlink()
    shutil.rmtree(variants)
    if ANSWERS["__family"] == "decision":  # a decision method's sample is decisions.jsonl
        (plugin / "sample" / "corpus.jsonl").unlink()
    for cache in list(plugin.rglob("__pycache__")):  # compiled copies of template files, e.g. after pip install
        shutil.rmtree(cache)
    for runtime in RUNTIME_FILES:
        if ANSWERS["runtime"] not in (runtime, "both"):
            remove_runtime(plugin, runtime)
    for name in FORMATTED_JSON:
        reformat_json(plugin / name)
    record_answers(plugin, ANSWERS)


if __name__ == "__main__":
    main()
