"""What a command says when Ctrl-C, SIGTERM or SIGHUP stops it: ``mt-eval verify`` of many cards keeps the report
of each card verified before it (printed as it is verified) and says how many were and where the rest start;
``mt-eval publish`` names the signal that stopped it; a command with no words of its own is named in the line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mt_eval.cli import command_module, main
from mt_eval.leaderboard.synthetic import CardFactory, write_card, write_corpus
from process_support import marked_environment, processes_marked

pytestmark = pytest.mark.skipif(os.name != "posix", reason="signals to a process group")


def many_cards(root: Path, count: int) -> list[Path]:
    cards = CardFactory(write_corpus(root / "corpus.json", entries=60), resamples=1000)
    return [write_card(cards.card(f"m-{i:03d}", run_id=f"run-{i:03d}"), root / f"run-{i:03d}" / "card.json")
            for i in range(count)]


@pytest.mark.parametrize(("sig", "status", "words"), [(signal.SIGINT, 130, "interrupted"),
                                                       (signal.SIGTERM, 143, "interrupted by SIGTERM")])
def test_a_signal_during_verify_keeps_the_reports_of_the_cards_verified(tmp_path: Path, sig: signal.Signals,
                                                                        status: int, words: str):
    """Before, the reports were printed only once every card was verified: a Ctrl-C after 100 of 300 cards printed
    the bare word "interrupted", and the 100 verdicts were lost."""
    paths = many_cards(tmp_path, 200)
    marker, environment = marked_environment()
    process = subprocess.Popen([sys.executable, "-m", "mt_eval.cli", "verify", *map(str, paths)], env=environment,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    assert process.stdout is not None
    first = process.stdout.readline()  # (the first card's report, printed once it is verified)
    if sig == signal.SIGINT:
        os.killpg(process.pid, sig)  # as a terminal does: to the whole process group
    else:
        process.send_signal(sig)  # as kill does: to the command alone
    out, err = process.communicate(timeout=60)
    out = first + out
    assert process.returncode == status, err
    verified = out.count(": verified")
    assert 0 < verified < len(paths), out
    assert err.strip() == (f"mt-eval verify: {words} after verifying {verified} of {len(paths)} cards (their reports "
                           f"are above); {len(paths) - verified} not verified, from {paths[verified]}: verify them "
                           "again"), err
    assert processes_marked(marker) == []


def test_a_command_interrupted_without_words_of_its_own_is_named(monkeypatch, capsys):
    """Before, such a command (gate, leaderboard, compare, corpus) printed only "interrupted"."""

    def interrupted(_args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(command_module("gate"), "run", interrupted)
    assert main(["gate", "card.json"]) == 130
    assert capsys.readouterr().err == "mt-eval gate: interrupted\n"


def test_sigterm_during_publish_is_named_as_it_is_for_every_command(tmp_path: Path):
    """Before, a publish stopped by SIGTERM exited 143 but said "mt-eval publish: interrupted; ...", as for Ctrl-C."""
    paths = many_cards(tmp_path, 100)
    marker, environment = marked_environment()
    process = subprocess.Popen([sys.executable, "-m", "mt_eval.cli", "publish", *map(str, paths), "--db",
                                str(tmp_path / "board.db"), "--no-input"], env=environment,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    assert process.stderr is not None
    seen = ""
    while "verifying" not in seen and process.poll() is None:  # (the progress line: the cards are being prepared)
        seen += process.stderr.read(1)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 143, seen + err
    assert "mt-eval publish: interrupted by SIGTERM; " in err and "Traceback" not in err, seen + err
    assert processes_marked(marker) == []
