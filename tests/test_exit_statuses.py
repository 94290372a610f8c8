"""Every ``--help`` says what its exit statuses mean, and says it truly: each status that is cheap to provoke is
provoked and must be one its command's ``exit status:`` paragraph lists."""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from mt_eval.cli import build_parser, main
from mt_eval.cli.usage_errors import innermost_parser, subcommands

REPO = Path(__file__).parent.parent
GATEWAY_POLICY = str(REPO / "examples" / "coached-llm-eng-spa" / "gateway-policy.json")


def every_parser() -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """``mt-eval`` and each of its commands and their subcommands, by the words that run them."""
    top = build_parser()
    yield "mt-eval", top
    for name, parser in subcommands(top).items():
        yield f"mt-eval {name}", parser
        for sub, subparser in subcommands(parser).items():
            yield f"mt-eval {name} {sub}", subparser


PARSERS = dict(every_parser())


def said(parser: argparse.ArgumentParser) -> str:
    """What a command's --help says besides its options (its description and epilog), on one line."""
    return " ".join(f"{parser.description or ''} {parser.epilog or ''}".split())


def statuses_listed(parser: argparse.ArgumentParser) -> set[int]:
    """The statuses of the ``exit status:`` paragraph: each number that starts it or follows a ``;``."""
    paragraph = said(parser).partition("exit status: ")[2]
    return {int(number) for number in re.findall(r"(?:^|; )(\d+) ", paragraph)}


@pytest.mark.parametrize("command", sorted(PARSERS))
def test_every_help_says_what_its_exit_statuses_mean(command):
    """Before: compare, corpus, gateway, new, schemas, serve, bridge and mt-eval itself did not say it."""
    assert re.search(r"(?i)\bexit status:? [^.]*?\b\d+\b", said(PARSERS[command])), (
        f"`{command} --help` has no exit-status paragraph (`exit status: 0 ...; 1 ...`)")


def test_the_programs_help_says_what_the_statuses_mean_in_general():
    assert {0, 1, 2, 130, 141} <= statuses_listed(PARSERS["mt-eval"])
    assert "2 usage error" in said(PARSERS["mt-eval"])


def status_of(argv: Sequence[str], capsys: pytest.CaptureFixture[str]) -> int:
    """What ``mt-eval ARGV`` exits with (a usage error argparse finds ends in SystemExit)."""
    try:
        status = main(list(argv))
    except SystemExit as exited:
        status = int(exited.code or 0)
    capsys.readouterr()
    return status


# what provokes each status; {tmp} is a directory holding empty/, occupied/ (a file in it), a-file and fifo
CASES: dict[str, tuple[str, int]] = {
    "compare a card that cannot be read": ("compare {tmp}/missing.json {tmp}/missing.json --quiet", 1),
    "compare --allow-diff not a covariate": ("compare {tmp}/missing.json {tmp}/missing.json --allow-diff colour", 2),
    "corpus show a file that cannot be read": ("corpus show {tmp}/missing.json", 1),
    "corpus show without a file": ("corpus show", 2),
    "corpus without its command": ("corpus", 2),
    "gateway a policy that cannot be read": ("gateway --policy {tmp}/missing.json --check", 1),
    "gateway --listen not HOST:PORT": (f"gateway --policy {GATEWAY_POLICY} --listen nowhere", 2),
    "gateway --log a directory": (f"gateway --policy {GATEWAY_POLICY} --log {{tmp}}/empty", 1),
    "gateway --log a pipe": (f"gateway --policy {GATEWAY_POLICY} --log {{tmp}}/fifo", 2),
    "new into a directory that is not empty": ("new {tmp}/occupied --no-input", 2),
    "new with an answer that cannot be used": ("new {tmp}/made --no-input --set runtime=cobol", 2),
    "schemas --check a directory without them": ("schemas --check {tmp}/empty", 1),
    "schemas a file for the directory": ("schemas {tmp}/a-file", 1),
    "schemas --node without package.json": ("schemas {tmp}/empty --node {tmp}/empty", 2),
    "bridge without its command": ("bridge", 2),
    "bridge check --vectors missing": ("bridge check --vectors {tmp}/missing -- true", 2),
    "bridge check a directory as the guest": ("bridge check -- {tmp}/empty", 1),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_status_provoked_is_one_the_help_lists(case, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for directory in ("empty", "occupied"):
        (tmp_path / directory).mkdir()
    (tmp_path / "occupied" / "kept.txt").write_text("mine\n", encoding="utf-8")
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    os.mkfifo(tmp_path / "fifo")
    line, expected = CASES[case]
    argv = shlex.split(line.format(tmp=tmp_path))
    assert status_of(argv, capsys) == expected
    parser = innermost_parser(build_parser(argv), argv)
    assert expected in statuses_listed(parser), f"`{parser.prog} --help` does not list exit status {expected}"
    assert not (tmp_path / "made").exists()  # (a refused `new` writes nothing)


@pytest.mark.parametrize(("argv", "environment", "expected"), [
    (["serve", "missing-plugin"], {}, 1),
    (["serve", str(REPO / "examples" / "lexicon-eng-spa")], {"MT_EVAL_GUEST_POLL_US": "soon"}, 2),
])
def test_serves_statuses_are_ones_its_help_lists(argv, environment, expected, tmp_path):
    """serve answers on its standard output at the descriptor's level: run as a program of its own."""
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", *argv], cwd=tmp_path, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120, env={**os.environ, **environment})
    assert done.returncode == expected, done.stderr
    assert expected in statuses_listed(PARSERS["mt-eval serve"])


def readme_statuses(command: str) -> set[int]:
    """The statuses the README's table of exit statuses gives ``command``."""
    table = (REPO / "README.md").read_text(encoding="utf-8").split("| command | exit statuses |", 1)[1]
    row = next(line for line in table.splitlines() if line.startswith(f"| `{command}` |"))
    return {int(number) for number in re.findall(r"(?:\| |; )(\d+) ", row)}


@pytest.mark.parametrize("command", ["validate", "verify", "locales"])
def test_validate_verify_and_locales_list_their_statuses_as_the_others_and_the_readme_do(command):
    """Before: they said them in a sentence of prose, not in an ``exit status:`` paragraph."""
    listed, readme = statuses_listed(PARSERS[f"mt-eval {command}"]), readme_statuses(command)
    assert readme <= listed and 2 in listed, (
        f"`mt-eval {command} --help` lists exit statuses {sorted(listed)}; the README {sorted(readme)}")
