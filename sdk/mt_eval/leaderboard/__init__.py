"""The leaderboard: verified run cards published to a store, ranked fairly, shown as text, JSON or a site.

publish.py (``mt-eval publish``) → store.py (SQLite or PostgreSQL: address.py, migrations.py) → board.py (rows
grouped and ranked, ranking.py) → text.py, html.py, site.py (``mt-eval leaderboard``) and serve.py.
"""

from mt_eval.errors import ExpectedError


class StoreError(ExpectedError):
    """The store cannot be found, opened or written; the message says which store, why, and what to do."""
