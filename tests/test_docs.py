"""The README documents every field of the file formats and the CLI's commands."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import pytest

from mt_eval.cli import build_parser
from mt_eval.harness.freeze import FreezeManifest
from mt_eval.harness.policy import GatePolicy
from mt_eval.manifest import Dependency, Manifest
from mt_eval.method_card import MethodCard

README = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")


def encoded_fields(struct: type[msgspec.Struct]) -> list[str]:
    return list(struct.__struct_encode_fields__)


@pytest.mark.parametrize("struct", [Manifest, Dependency, MethodCard, GatePolicy, FreezeManifest],
                         ids=lambda s: s.__name__)
def test_every_field_is_in_the_readme(struct):
    prose = re.sub(r"```.*?```", "", README, flags=re.S)
    in_code = {word for span in re.findall(r"`([^`]+)`", prose) for word in re.findall(r"[$\w]+", span)}
    missing = [f for f in encoded_fields(struct) if f not in in_code]
    assert missing == [], f"document these {struct.__name__} fields in the README: {missing}"


def test_every_subcommand_is_shown_in_the_readme():
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    for name in commands:
        assert f"mt-eval {name}" in README, f"mt-eval {name} is not in the README"


def test_the_readme_lists_every_corpus_doubt_in_order():
    from mt_eval.corpus.doubts import DOUBTS

    table = README.split("**No silent misread.**", 1)[1].split("\n\n", 2)[1]
    assert re.findall(r"^\| `([a-z-]+)` \|", table, flags=re.M) == list(DOUBTS)


def test_readme_starts_with_the_two_commands():
    block = README.split("```sh\n", 1)[1].split("```", 1)[0].strip().splitlines()
    assert block == [
        "python3 -m venv .venv && .venv/bin/pip install -q nox && .venv/bin/nox -s demo",
        "python3 -m venv .venv && .venv/bin/pip install -q nox && .venv/bin/nox",
    ]
    ci = (Path(__file__).parent.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert block[1] in ci


def test_the_using_it_commands_follow_on_from_each_other():
    """Each run directory and file the "Using it" commands read was written by one before it, or is in the
    checkout: `mt-eval run --demo` alone writes runs/lexicon-eng-spa__eng-spa-demo/, not runs/demo/."""
    block = re.search(r"## Using it\n\n```sh\n(.*?)```", README, flags=re.S)
    assert block is not None
    root = Path(__file__).parent.parent
    written = {"my-method"}  # (by `mt-eval new my-method`, the first command after activating)
    for line in block.group(1).splitlines():
        command = line.split("#", 1)[0].split()
        outs = {command[at + 1] for at, word in enumerate(command[:-1]) if word == "--out"}
        for word in command:
            in_checkout = (root / word).exists() and not word.startswith("runs/")  # (runs/: nox -s demo's too)
            if "/" in word and not word.startswith((".", "-")) and word not in outs and not in_checkout:
                assert word.split("/")[0] in written or str(Path(word).parent) in written, \
                    f"{line}: {word} is written by no command before it"
        written |= outs
