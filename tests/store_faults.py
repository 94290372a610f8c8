"""Faults put into the store's commits for the publish tests: a Ctrl-C before or after the cards' commit."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mt_eval.leaderboard.store import Store


def around_the_cards_commits(monkeypatch: pytest.MonkeyPatch, *, before: Callable[[], None] = lambda: None,
                             after: Callable[[], None] = lambda: None) -> None:
    """``before`` and ``after`` run around each commit of a transaction that stores cards (not the store's
    creation)."""
    import sqlalchemy as sa

    real_commit, real_publish, publishing = sa.engine.RootTransaction.commit, Store.publish, []

    def commit(self: sa.engine.RootTransaction) -> None:
        if publishing:
            before()
        real_commit(self)
        if publishing:
            after()

    def publish(self: Store, *args: object, **kwargs: object) -> object:
        publishing.append(True)
        try:
            return real_publish(self, *args, **kwargs)  # type: ignore[arg-type]
        finally:
            publishing.clear()

    monkeypatch.setattr(sa.engine.RootTransaction, "commit", commit)
    monkeypatch.setattr(Store, "publish", publish)
