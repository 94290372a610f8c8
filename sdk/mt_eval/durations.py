"""Durations as people read them: the unit that fits, three significant figures (``1.23 ms``, ``16.4 ms``,
``2.50 s``), whole microseconds (``20 µs``) and minutes (``3 min 05 s``), never a misleading ``0.0 ms``.

Run cards store latencies in seconds rounded to the microsecond, so a recorded 0 means "under 1 µs".
"""

from __future__ import annotations

import math


def format_duration(seconds: float | None) -> str:
    """``seconds`` in words for a terminal or a page; ``—`` when unknown."""
    if seconds is None or math.isnan(seconds):
        return "—"
    if seconds < 0:
        return "-" + format_duration(-seconds)
    if seconds < 0.5e-6:
        return "< 1 µs"
    if seconds >= 60:
        minutes, rest = divmod(round(seconds), 60)
        return f"{minutes} min {rest:02d} s" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"
    for unit, scale in (("s", 1.0), ("ms", 1e-3)):
        if seconds >= scale * 0.9995:
            return f"{_significant(seconds / scale)} {unit}"
    return f"{seconds * 1e6:.0f} µs"


def _significant(value: float) -> str:
    """Three significant figures without a trailing exponent: 1.23, 12.3, 123."""
    if value >= 99.95:
        return f"{value:.0f}"
    if value >= 9.995:
        return f"{value:.1f}"
    return f"{value:.2f}"
