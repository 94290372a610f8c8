"""Where `mt-eval contamination`'s result goes when things go wrong around it: a standard output that cannot be
written (the report file is kept, and said), a --report given as a link (written through it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from test_contamination_cli import DEMO, MEMORIZER, mt_eval

REPO = Path(__file__).parent.parent


def test_a_full_standard_output_keeps_the_report_file_and_says_where_it_is(tmp_path: Path):
    """Before: "cannot write to standard output" alone (exit 1), and no report file: it was written after the
    verdict was printed."""
    report = tmp_path / "report.json"
    with open("/dev/full", "w") as full:
        shown = subprocess.run([sys.executable, "-m", "mt_eval.cli", "contamination", "--method", str(MEMORIZER),
                                "--corpus", str(DEMO), "--report", str(report), "--quiet"], stdout=full,
                               stderr=subprocess.PIPE, text=True, timeout=120, cwd=REPO)
    assert shown.returncode == 2, shown.stderr
    assert ("the check ran (contaminated), but its result could not be written to standard output: No space left "
            f"on device; the report is in {report}") in shown.stderr, shown.stderr
    assert "Traceback" not in shown.stderr
    assert '"status": "contaminated"' in report.read_text()


def test_a_report_written_through_a_link_keeps_the_link(tmp_path: Path):
    report = tmp_path / "report.json"
    report.write_text("old")
    link = tmp_path / "latest.json"
    link.symlink_to(report)
    shown = mt_eval("contamination", "--method", str(MEMORIZER), "--corpus", str(DEMO), "--report", str(link),
                    "--quiet")
    assert shown.returncode == 1, shown.stderr
    assert link.is_symlink() and '"status": "contaminated"' in report.read_text()
