"""What Ctrl-C says about continuing a run: the command it names must work as given."""

from __future__ import annotations

from pathlib import Path

import pytest

from mt_eval.cli import main

REPO = Path(__file__).parent.parent


def interrupted_run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    """The last line `mt-eval run ... EXTRA` prints when Ctrl-C stops it while it translates."""
    import mt_eval.harness.session as session

    def stopped(request: object) -> object:
        raise KeyboardInterrupt

    monkeypatch.setattr(session, "run_evaluation", stopped)
    words = ["run", "--method", str(REPO / "examples" / "rules-eng-spa"), "--corpus",
             str(REPO / "examples" / "data" / "eng-spa-demo.json"), "--out", "runs/x", *extra]
    monkeypatch.setattr("sys.argv", ["mt-eval", *words])
    assert main(words) == 130
    return capsys.readouterr().err.strip().splitlines()[-1]


def test_a_run_started_over_with_force_is_told_to_resume_without_force(monkeypatch: pytest.MonkeyPatch,
                                                                        capsys: pytest.CaptureFixture[str]):
    """Before: "Continue with the same command and --resume.", and the same command with --resume (its --force
    kept) is a usage error: --resume and --force exclude each other."""
    said = interrupted_run(monkeypatch, capsys, "--force")
    assert said.startswith("mt-eval run: interrupted; finished entries are saved. Continue with --resume in place "
                           "of --force: mt-eval run --method ")
    assert said.endswith("--out runs/x --resume")
    assert "--force" not in said.split(": ", 2)[2]


def test_a_run_without_force_is_told_to_add_resume(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]):
    assert interrupted_run(monkeypatch, capsys) == ("mt-eval run: interrupted; finished entries are saved. Continue "
                                                    "with the same command and --resume.")
