"""How every benchmark reports a figure, and the one table `nox -s benchmarks` ends with.

A benchmark script builds `Figure`s — what it measured, the baseline measured in the same run, the ratio the
target is stated on, the target, and a peer measured beside us when there is one — and calls `report`: it
prints the script's own table and, when ``MT_EVAL_BENCHMARK_REPORT`` names a file (the nox session sets it),
appends each figure to it as a JSON line. ``python benchmarks/report.py FILE`` prints every figure of that
file as one table, each with the load average at the time it was measured (the machine is shared).

Run ``python benchmarks/report.py FILE [--check]``; ``--check`` exits 1 when a figure misses its target.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPORT_ENV = "MT_EVAL_BENCHMARK_REPORT"


@dataclass(frozen=True)
class Target:
    """A bound a value must stay within: ``at_most(1.3, "x")`` reads "≤ 1.3x"."""

    op: str  # "<=", "<", ">=" or ">"
    limit: float
    unit: str = ""

    def met_by(self, value: float) -> bool:
        checks: dict[str, Callable[[float, float], bool]] = {
            "<=": lambda a, b: a <= b, "<": lambda a, b: a < b, ">=": lambda a, b: a >= b, ">": lambda a, b: a > b}
        return checks[self.op](value, self.limit)

    def __str__(self) -> str:
        symbol = {"<=": "≤", "<": "<", ">=": "≥", ">": ">"}[self.op]
        return f"{symbol} {self.limit:g}{self.unit}"


def at_most(limit: float, unit: str = "x") -> Target:
    return Target("<=", limit, unit)


def below(limit: float, unit: str = "x") -> Target:
    return Target("<", limit, unit)


def at_least(limit: float, unit: str = "x") -> Target:
    return Target(">=", limit, unit)


@dataclass(frozen=True)
class Figure:
    """One measured figure. ``value`` is what the target is stated on (a ratio, or a quantity in the target's
    unit); ``ours``, ``baseline`` and ``peer`` are the measurements as text, with their units."""

    benchmark: str
    name: str
    ours: str
    value: float
    target: Target | None = None
    baseline: str = ""
    peer: str = ""
    note: str = ""
    unit: str = "x"  # of ``value`` when there is no target (a target states its own)
    load: float = field(default_factory=lambda: os.getloadavg()[0])
    measured_at: float = field(default_factory=time.time)

    @property
    def met(self) -> bool | None:
        return None if self.target is None else self.target.met_by(self.value)

    def shown_value(self) -> str:
        unit = self.target.unit if self.target else self.unit
        if unit == "x":
            return f"{self.value:.2f}x"
        shown = f"{self.value:,.0f}" if abs(self.value) >= 1000 else f"{self.value:,.3g}"
        return f"{shown} {unit.strip()}".strip()

    def verdict(self) -> str:
        return "" if self.met is None else "met" if self.met else "MISSED"


def ratio_figure(benchmark: str, name: str, ours: float, baseline: float, unit: str, target: Target, *,
                 peer: str = "", note: str = "", scale: float = 1.0, digits: int = 1) -> Figure:
    """A figure whose target is the ratio of two measurements in the same unit, ours ÷ baseline (times: lower is
    better; rates: higher is better — the target says which). ``scale`` converts both for display."""
    return Figure(benchmark, name, ours=f"{ours * scale:,.{digits}f} {unit}",
                  baseline=f"{baseline * scale:,.{digits}f} {unit}", value=ours / baseline, target=target, peer=peer,
                  note=note)


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def load_text() -> str:
    """The load averages (1, 5, 15 minutes) and the cores, for a line under a table."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


COLUMNS = (("figure", 44), ("ours", 15), ("baseline", 15), ("ratio", 9), ("target", 9), ("", 6), ("peer", 16),
           ("load", 5))


def table(figures: Sequence[Figure], *, with_benchmark: bool = False) -> str:
    """The figures as a plain-text table, one line each (notes on their own lines below)."""
    lines = []
    header = [name.ljust(width) for name, width in COLUMNS]
    lines.append(" ".join(header).rstrip())
    last = None
    for figure in figures:
        if with_benchmark and figure.benchmark != last:
            lines.append(f"[{figure.benchmark}]")
            last = figure.benchmark
        cells = (figure.name, figure.ours, figure.baseline, figure.shown_value(), str(figure.target or ""),
                 figure.verdict(), figure.peer, f"{figure.load:.1f}")
        lines.append(" ".join(cell.ljust(width) for cell, (_name, width) in zip(cells, COLUMNS, strict=True))
                     .rstrip())
        if figure.note:
            lines.append(f"    {figure.note}")
    return "\n".join(lines)


def report(figures: Sequence[Figure]) -> int:
    """Print the figures as a table (with the load average now) and append them to the run's report file when
    there is one. Returns 1 when a figure missed its target, else 0 (for ``--check``)."""
    print(table(figures))
    print(load_text())
    return record(figures)


def record(figures: Sequence[Figure]) -> int:
    """Append the figures to the run's report file when there is one, printing nothing (for a benchmark that
    prints its own lines). Returns 1 when a figure missed its target, else 0."""
    path = os.environ.get(REPORT_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as file:
            for figure in figures:
                line = asdict(figure)
                line["target"] = asdict(figure.target) if figure.target else None
                file.write(json.dumps(line, ensure_ascii=False) + "\n")
    return 1 if any(figure.met is False for figure in figures) else 0


class NotFigures(ValueError):
    """A line of a figures file that `record` did not write."""


def read(path: Path) -> list[Figure]:
    """The figures `record` appended to ``path``; `NotFigures` names the first line that is not one."""
    figures = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                record = json.loads(line)
                given = record.pop("target", None)
                figures.append(Figure(**record, target=Target(**given) if given else None))
            except (ValueError, TypeError, AttributeError) as exc:
                raise NotFigures(f"{path}, line {number}: not a figure a benchmark recorded ({exc})") from None
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", type=Path, help="the figures, one JSON line each (MT_EVAL_BENCHMARK_REPORT)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a figure misses its target")
    args = parser.parse_args()
    try:
        figures = read(args.file)
    except FileNotFoundError:
        figures = []
    except (OSError, UnicodeDecodeError, NotFigures) as exc:
        print(f"report.py: {exc}", file=sys.stderr)
        return 1
    if not figures:
        print(f"{args.file}: no figures were recorded (run the benchmarks with MT_EVAL_BENCHMARK_REPORT={args.file})",
              file=sys.stderr)
        return 1
    missed = [f for f in figures if f.met is False]
    print(f"\nEvery figure ({len(figures)}; {sum(f.met is True for f in figures)} of "
          f"{sum(f.met is not None for f in figures)} targets met), each measured against its baseline in the same "
          "run; load = the 1-minute load average when it was measured:")
    print(table(figures, with_benchmark=True))
    print(load_text())
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    sys.exit(main())
