"""Ctrl-C held back while a step must finish whole (`mt_eval.interrupts.held`), and a second Ctrl-C that does not
wait."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from mt_eval.interrupts import CutShort, held
from store_faults import around_the_cards_commits
from test_bulk_publish import many, publish_with_faults


def test_one_ctrl_c_waits_for_the_block_and_a_second_one_cuts_it_short():
    done = []
    with pytest.raises(KeyboardInterrupt) as raised, held():
        signal.raise_signal(signal.SIGINT)
        done.append("the step")  # (still run: the interrupt waits for the block's end)
    assert done == ["the step"] and not isinstance(raised.value, CutShort)
    with pytest.raises(CutShort), held():
        signal.raise_signal(signal.SIGINT)
        signal.raise_signal(signal.SIGINT)
        done.append("never")  # (a commit that hangs on its server: the user will not wait)
    assert done == ["the step"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_an_ignored_ctrl_c_stays_ignored_in_a_held_block():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with held():
            signal.raise_signal(signal.SIGINT)
            signal.raise_signal(signal.SIGINT)
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_second_ctrl_c_during_a_commit_that_hangs_ends_publish_saying_the_batch_may_be_stored(
        cards, tmp_path: Path, monkeypatch, capsys):
    """Before, Ctrl-C was held until the commit returned, however many times it was pressed: a PostgreSQL commit
    waiting for a synchronous standby kept publish running for good."""
    def twice() -> None:
        signal.raise_signal(signal.SIGINT)
        signal.raise_signal(signal.SIGINT)  # (the second Ctrl-C: the commit is left now)

    paths = many(cards, tmp_path, 30)
    around_the_cards_commits(monkeypatch, before=twice)
    kept, err = publish_with_faults(paths, tmp_path, monkeypatch, capsys, status=130)
    assert kept == 0
    assert err.endswith("mt-eval publish: interrupted again while a batch was being committed, which was cut short; "
                        "nothing was published, and that batch may or may not be; 30 cards are not known to be stored: "
                        "run the same command again (the stored ones are refused as duplicates)\n"), err
