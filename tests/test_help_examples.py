"""Every ``--help`` has an examples block, and every example works when pasted: each parses with the real
parser, and each block's harmless examples run in order — as a user pastes them, in a shell, in a directory
like the repository's root after ``nox -s demo`` (runs/demo, runs/demo-rules) — exiting 0, except that an
example naming the user's own file (``my-method``, ``dev.tsv``) must fail with a message naming it; never a
traceback."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mt_eval.cli import build_parser
from mt_eval.cli.usage_errors import innermost_parser, subcommands

REPO = Path(__file__).parent.parent
# run only to parse: servers, interactive questions, the network, the sandbox, and long-running work
NOT_RUN = [r"^mt-eval leaderboard serve", r"^mt-eval gateway --policy \S+$", r"--listen", r"--official", r"--sandbox",
           r"--gateway-policy", r"coached-llm", r"^mt-eval new my-method$", r"apertium", r"postgresql"]
# the user's own files, which the examples name but a checkout does not hold: such an example must fail clearly
PLACEHOLDERS = {"my-method", "my-method/.mt-eval-answers.json", "plugins/my-llm", "my-judge", "dev.tsv", "dev.jsonl",
                "dev.json", "test.json", "test2.tsv", "devtest.eng_Latn", "devtest.spa_Latn", "requests.jsonl",
                "./my-guest", "my-guest", "app/champollion.config.json", "ana.csv", "ben.jsonl"}


def every_help() -> Iterator[tuple[str, str]]:
    """(the command, its help text) for mt-eval and every subcommand, sub-subcommands too."""
    top = build_parser()
    yield "mt-eval", top.format_help()
    for name, parser in subcommands(top).items():
        yield f"mt-eval {name}", parser.format_help()
        for sub, subparser in subcommands(parser).items():
            yield f"mt-eval {name} {sub}", subparser.format_help()


def examples(text: str) -> list[str]:
    """The lines of the ``examples…:`` block, continuation lines joined."""
    found: list[str] = []
    inside, pending = False, ""
    for line in text.splitlines():
        if re.match(r"^examples\b.*:$", line):
            inside = True
        elif inside and not line.strip():
            inside = False
        elif inside:
            text_line = f"{pending} {line.strip()}".strip()
            pending = text_line[:-1] if text_line.endswith("\\") else ""
            if not pending:
                found.append(text_line)
    return found


HELPS = dict(every_help())
EXAMPLES = sorted({line for text in HELPS.values() for line in examples(text)})


def mt_eval_words(line: str) -> list[str]:
    """The mt-eval command of a pasted line: shell comments, redirections and a leading ``echo … |`` dropped."""
    words = shlex.split(line.split(" | ", 1)[1] if line.startswith("echo ") else line, comments=True)
    for i, word in enumerate(words):
        if word in (">", ">>", "<", "|", "&&"):
            return words[:i]
    return words


@pytest.mark.parametrize("command", sorted(HELPS))
def test_every_help_has_examples(command):
    assert examples(HELPS[command]), f"`{command} --help` has no examples block"


@pytest.mark.parametrize("line", EXAMPLES)
def test_every_example_parses_with_the_real_parser(line):
    words = mt_eval_words(line)
    assert words[0] == "mt-eval", line
    parser = build_parser(words[1:])
    errors = io.StringIO()
    with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(io.StringIO()):
        try:
            args, extra = parser.parse_known_args(words[1:])
        except SystemExit:
            pytest.fail(f"{line}\n{errors.getvalue()}")
    sentences = args.command == "translate" and not any(word.startswith("-") for word in extra)
    assert not extra or sentences, f"{line}: not options of {innermost_parser(parser, words[1:]).prog}: {extra}"


@pytest.mark.parametrize("command", ["mt-eval publish", "mt-eval leaderboard"])
def test_publish_and_the_leaderboard_list_their_exit_statuses(command):
    """Before: neither --help said what its exit status means, as run, gate and grade's do."""
    said = " ".join(HELPS[command].split()).partition("exit status: ")[2]
    for status in ("0 ", "; 1 ", "; 2 usage", "; 130 interrupted", "; 141 the reader of standard output went away"):
        assert status in said, f"`{command} --help` does not list exit status {status.strip('; ')}"


def test_the_gateways_log_is_said_to_be_a_regular_file():
    """Before: --help said only "the audit log, appended to"; a pipe, a socket or a block device is refused."""
    said = " ".join(HELPS["mt-eval gateway"].split())
    assert "a regular file (default gateway.jsonl; a pipe, a socket or a block device is refused)" in said

def test_the_largest_seed_run_help_states_is_one_it_takes():
    """Before: --help said "at most 2^53", and --seed 9007199254740992 (2^53) was refused as past the largest."""
    said = " ".join(HELPS["mt-eval run"].split())
    assert "(default 12345; below 2^53)" in said
    parser = build_parser()
    assert parser.parse_args(["run", "--demo", "--seed", str(2 ** 53 - 1)]).seed == 2 ** 53 - 1
    with contextlib.redirect_stderr(io.StringIO()), pytest.raises(SystemExit) as refused:
        parser.parse_args(["run", "--demo", "--seed", str(2 ** 53)])
    assert refused.value.code == 2


def test_translate_says_it_translates_the_texts_given_and_then_those_of_its_file(tmp_path: Path):
    """Before: given both, it translated both, the arguments first, and --help said neither."""
    said = " ".join(HELPS["mt-eval translate"].split())
    assert "translate the sentences given as arguments and those of --file FILE (the arguments first)" in said
    assert "read the sentences from FILE, one per line (-: standard input), translated after any TEXT" in said
    sentences = tmp_path / "in.txt"
    sentences.write_text("Thank you\n", encoding="utf-8")
    both = subprocess.run([sys.executable, "-m", "mt_eval.cli", "translate", str(REPO / "examples" / "lexicon-eng-spa"),
                           "The cat.", "--file", str(sentences)], capture_output=True, text=True, timeout=60)
    assert (both.returncode, both.stdout) == (0, "El gato.\nGracias\n"), both.stderr



@pytest.fixture(scope="module")
def demo_state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository's examples/ and bridge/ (copies), a shim for mt-eval, and runs/demo and runs/rules."""
    root = tmp_path_factory.mktemp("paste")
    shutil.copytree(REPO / "examples", root / "examples", symlinks=True)
    shutil.copytree(REPO / "bridge", root / "bridge", symlinks=True, ignore=shutil.ignore_patterns("node_modules"))
    bin_dir = root / ".bin"
    bin_dir.mkdir()
    shim = bin_dir / "mt-eval"
    shim.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m mt_eval.cli \"$@\"\n", encoding="utf-8")
    shim.chmod(0o755)
    for setup in ("mt-eval run --demo --out runs/demo --force --quiet",  # as nox -s demo does
                  "mt-eval run --method examples/rules-eng-spa --corpus examples/data/eng-spa-demo.json "
                  "--out runs/demo-rules --force --quiet"):
        subprocess.run(["bash", "-c", setup], cwd=root, env=shell_env(root, root), check=True, capture_output=True,
                       timeout=300)
    return root


@pytest.fixture
def pasted_here(demo_state: Path, tmp_path: Path) -> Path:
    """A working directory of its own, like the repository's root after the demo, for each example."""
    for shared in ("examples", "bridge"):
        (tmp_path / shared).symlink_to(demo_state / shared)
    shutil.copytree(demo_state / "runs", tmp_path / "runs")
    return tmp_path


def shell_env(here: Path, state: Path) -> dict[str, str]:
    return {**os.environ, "PATH": f"{state / '.bin'}{os.pathsep}{os.environ['PATH']}", "MT_EVAL_DB": str(here / "db"),
            "MT_EVAL": str(state / ".bin" / "mt-eval")}


def paste(line: str, here: Path, state: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", line], cwd=here, env=shell_env(here, state), capture_output=True, text=True,
                          timeout=300, stdin=subprocess.DEVNULL)


def runnable(line: str) -> bool:
    return not any(re.search(pattern, shlex.join(mt_eval_words(line))) for pattern in NOT_RUN)


BLOCKS: dict[tuple[str, ...], str] = {}  # each distinct examples block, under the first command showing it
for command, help_text in sorted(HELPS.items()):
    BLOCKS.setdefault(tuple(examples(help_text)), command)


@pytest.mark.parametrize("command", sorted(BLOCKS.values()))
def test_every_harmless_example_runs_when_pasted_in_order(command, pasted_here, demo_state):
    if command == "mt-eval leaderboard":  # a leaderboard shows what was published: publish the demo's runs first
        for store in ("db", "team-board.db"):
            paste(f"mt-eval publish runs/demo/card.json runs/demo-rules/card.json --db {store} --no-input",
                  pasted_here, demo_state)
    for line in filter(runnable, examples(HELPS[command])):
        words = mt_eval_words(line)
        done = paste(line, pasted_here, demo_state)
        shown = f"{line}\nexit {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        assert "Traceback" not in done.stderr, shown
        placeholders = PLACEHOLDERS.intersection([*words, *re.findall(r"< (\S+)", line)])
        if placeholders and not (words[1] == "new" and "--answers" not in words):  # new makes what it names
            assert done.returncode != 0, shown  # the user's own file: a clear message about it
            assert any(name in done.stderr + done.stdout for name in placeholders), shown
        else:
            ok = {0, 1, 3} if words[1] == "contamination" else {0}  # contamination: clean, contaminated, unverified
            assert done.returncode in ok, shown
