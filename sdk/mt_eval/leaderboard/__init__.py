"""The leaderboard: verified run cards published to a store, ranked fairly, shown as text, JSON or a site.

publish.py (``mt-eval publish``) → store.py (SQLite or PostgreSQL, migrations.py) → board.py (rows grouped
and ranked, ranking.py) → text.py, html.py, site.py (``mt-eval leaderboard``) and serve.py.
"""
