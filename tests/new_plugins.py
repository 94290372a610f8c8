"""What the tests of ``mt-eval new`` share: the template's questions and the runtime × profile matrix."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from mt_eval.cli import main

REPO = Path(__file__).parent.parent
TEMPLATE = REPO / "templates" / "method-plugin"
QUESTIONS = json.loads((TEMPLATE / "cookiecutter.json").read_text(encoding="utf-8"))
RUNTIMES = QUESTIONS["runtime"]
PROFILES = QUESTIONS["dependency_profile"]
CLASSES = QUESTIONS["method_class"]
INTENDED_CLASS = {"self-contained": "S", "open-artifact": "O", "llm-gateway": "A1", "external-api": "A2"}
# Every runtime × every profile; the six method classes take turns, so each appears twice.
MATRIX = [(runtime, profile, CLASSES[i % len(CLASSES)])
          for i, (runtime, profile) in enumerate(itertools.product(RUNTIMES, PROFILES))]
CORPUS = [json.loads(line) for line in (TEMPLATE / "{{cookiecutter.method_id}}" / "sample" / "corpus.jsonl")
          .read_text(encoding="utf-8").splitlines() if line.strip()]
REFERENCES = {entry["source"]: entry["reference"] for entry in CORPUS}
GLOSSARY_OUTPUT = ["Buenas noches, mi amigo!", "El gato bebe agua.", "Gracias por el libro."]


def combo_id(combo: tuple[str, str, str]) -> str:
    return "-".join(combo)


def new(*args: str) -> int:
    """``mt-eval new ARGS``; its exit status."""
    return main(["new", *args])
