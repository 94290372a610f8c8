"""The one table `nox -s benchmarks` ends with (benchmarks/report.py): every recorded figure against its target,
and ``--check`` exiting 1 when one is missed — or when there is nothing to check."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).parent.parent / "benchmarks"
RECORD = """
import sys
sys.path.insert(0, {benchmarks!r})
from report import Figure, at_least, at_most, record
sys.exit(record([Figure("bridge", "quick one", "2.0 ms", 2.0, at_most(3, "ms")),
                 Figure("leaderboard", "slow one", "0.35x", 0.35, at_least(0.5))]))
"""


def report(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(BENCHMARKS / "report.py"), *args], capture_output=True, text=True,
                          timeout=60)


def test_every_recorded_figure_is_in_one_table_and_check_fails_on_a_miss(tmp_path):
    figures = tmp_path / "figures.jsonl"
    done = subprocess.run([sys.executable, "-c", RECORD.format(benchmarks=str(BENCHMARKS))], timeout=60,
                          env={"MT_EVAL_BENCHMARK_REPORT": str(figures), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 1  # (one figure missed its target)
    shown = report(str(figures))
    assert shown.returncode == 0, shown.stderr
    assert "Every figure (2; 1 of 2 targets met)" in shown.stdout
    assert "quick one" in shown.stdout and "slow one" in shown.stdout and "MISSED" in shown.stdout
    assert report(str(figures), "--check").returncode == 1


@pytest.mark.parametrize(("content", "said"), [
    (None, "no figures were recorded"),
    ("", "no figures were recorded"),
    ("not json\n", "line 1: not a figure a benchmark recorded"),
    ('{"colour": "red"}\n', "line 1: not a figure a benchmark recorded"),
])
def test_nothing_to_report_or_a_line_that_is_no_figure_is_said_and_fails(tmp_path, content, said):
    """Before: an empty file passed --check ("0 of 0 targets met"), and a line that was no figure was a traceback."""
    figures = tmp_path / "figures.jsonl"
    if content is not None:
        figures.write_text(content, encoding="utf-8")
    shown = report(str(figures), "--check")
    assert shown.returncode == 1 and said in shown.stderr and "Traceback" not in shown.stderr, shown.stderr
