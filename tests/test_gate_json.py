"""`mt-eval gate --json`: every verdict has the same keys, a card that cannot be read too; and `--help` names every
field of a policy file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mt_eval.cli import main
from mt_eval.harness.policy import GatePolicy, shipped_policy
from rigor_support import family_corpus, honest, run


def test_the_verdict_on_a_card_that_cannot_be_read_has_every_key(tmp_path: Path, capsys):
    """Before, the verdict on a missing card (or a decision card) had no "policy_sha256", which every other verdict
    of the same output has: a script reading it from each verdict stopped at the card it most needed to report."""
    corpus = family_corpus(tmp_path / "corpus.json")
    assert run(tmp_path / "good", corpus, *honest())[0] == 0
    capsys.readouterr()
    missing = tmp_path / "missing.json"
    assert main(["gate", str(tmp_path / "good" / "card.json"), str(missing), "--json"]) == 1
    good, unread = json.loads(capsys.readouterr().out)
    assert unread.keys() == good.keys()
    assert unread["policy_sha256"] == good["policy_sha256"] == shipped_policy().sha256
    assert (unread["card"], unread["passed"], unread["headline"]) == (str(missing), False, None)


def test_the_help_names_every_field_a_policy_file_takes(capsys):
    """Before, `mt-eval gate --help` listed the policy's fields without "contamination" (nor "name")."""
    with pytest.raises(SystemExit):
        main(["gate", "--help"])
    fields = capsys.readouterr().out.split("its fields:", 1)[1].split("exit status:", 1)[0]
    assert [name for name in GatePolicy.__struct_fields__ if name not in fields] == ["schema"]  # ($schema: any)


@pytest.mark.parametrize("kind", ["pipe", "device"])
def test_a_policy_that_is_a_pipe_or_device_is_refused_not_read(tmp_path: Path, kind: str) -> None:
    """A pipe would wait for a writer for ever, /dev/zero be read until memory ran out: neither is read."""
    import os

    from mt_eval.harness.policy import PolicyError, load_policy

    path = tmp_path / "policy.json"
    if kind == "pipe":
        os.mkfifo(path)
    else:
        path = Path("/dev/zero")
    with pytest.raises(PolicyError) as caught:
        load_policy(path)
    [problem] = caught.value.problems
    assert problem.message == "not a regular file (a pipe, socket or device): it is not read"
