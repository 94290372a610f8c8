"""A terminal narrower than the progress bar's line: the count, the errors and the time left are never cut short.
Before: on an 80-column terminal, a run of a method with a long name over 12345 entries showed ``1234…`` for its
count and ``-:--:…`` for the time left; at 40 columns the count of the demo was ``36…``, at 20 it was gone."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from leaderboard_support import GOOD, board_of, db_fixture, publish_all, rows_by_method  # noqa: F401 (db)
from mt_eval.cli import main
from mt_eval.progress import RunProgress

LONG_NAME = "coached-llm-eng-spa-with-a-long-name__v2"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def last_line(columns: int, label: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """What a run's progress shows last on a terminal ``columns`` wide: 12345 entries, one of them failed."""
    monkeypatch.setenv("COLUMNS", str(columns))
    terminal = Terminal()
    progress = RunProgress(12345, 12340, label=label, stream=terminal)
    for failed in (False, True, False, False, False):
        progress.advance(failed)
    progress.close()
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", terminal.getvalue())
    return re.split(r"[\r\n]", shown.rstrip("\n"))[-1]


@pytest.mark.parametrize("columns", [60, 80, 100])
@pytest.mark.parametrize("label", ["lexicon-eng-spa", LONG_NAME])
def test_the_bar_keeps_its_count_and_errors_whole(columns: int, label: str, monkeypatch: pytest.MonkeyPatch):
    line = last_line(columns, label, monkeypatch)
    assert len(line) <= columns
    assert " 12345/12345 " in line and line.endswith(" 1 error"), line
    assert re.search(r"ETA \d+:\d\d:\d\d ", line), line
    shown_label = line.split(" ")[0]
    assert shown_label == label or (shown_label.endswith("…") and label.startswith(shown_label[:-1])), line


@pytest.mark.parametrize("columns", [20, 40])
def test_a_terminal_too_narrow_for_the_bar_gets_the_lines_printed_elsewhere(columns: int,
                                                                            monkeypatch: pytest.MonkeyPatch):
    line = last_line(columns, "lexicon-eng-spa", monkeypatch)
    assert re.fullmatch(r"lexicon-eng-spa: 12345/12345 in \S+ \S+ \(\S+/s\), 1 error", line), line


@pytest.mark.parametrize("columns", [20, 40])
def test_the_leaderboard_on_a_narrow_terminal_still_shows_each_method_and_score(
        columns: int, cards, tmp_path: Path, db: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture):
    """Before: at 20 columns every column but the run's date was cut to nothing (no method, no score, no rank);
    at 40, the method was ``Te``/``rm``/``ba``… down the page."""
    publish_all(db, [cards.card("first-method", quality=0.9, extra=GOOD),
                     cards.card("second-method", quality=0.5, extra=GOOD)], tmp_path)
    monkeypatch.setenv("COLUMNS", str(columns))
    assert main(["leaderboard", "--db", db]) == 0
    shown = capsys.readouterr().out
    rows = rows_by_method(board_of(db)).values()
    words = [word for row in rows for word in (*row["method_name"].split(), f"{row['headline']['score']:.2f}")]
    for word in ("rank", "method", "eligible", "2026-", *words):
        assert word in shown, f"{word!r} not shown whole:\n{shown}"


def screen(written: str, columns: int) -> list[str]:
    """The rows a terminal ``columns`` wide shows once ``written`` (text, ``\\r``, ``\\n``, ``ESC[K``) is written to
    it: a row full when a character comes goes on in the next."""
    rows, row, column = [""], 0, 0
    for part in re.split(r"(\r|\n|\x1b\[K)", written):
        if part == "\r":
            column = 0
        elif part == "\n":
            row, column = row + 1, 0
        elif part == "\x1b[K":
            rows[row] = rows[row][:column]
        else:
            for char in part:
                if column == columns:
                    row, column = row + 1, 0
                rows.extend([""] * (row + 1 - len(rows)))
                rows[row] = rows[row][:column].ljust(column) + char + rows[row][column + 1:]
                column += 1
        rows.extend([""] * (row + 1 - len(rows)))
    return [r for r in rows if r]


@pytest.mark.parametrize(("columns", "first_count_kept"), [(20, True), (80, False)])
def test_locales_waiting_line_wider_than_the_terminal_is_not_left_half_overwritten(
        columns: int, first_count_kept: bool, monkeypatch: pytest.MonkeyPatch):
    """Before: the "still waiting" line (about 150 characters) was written in place like a count, wrapped, and the
    next count overwrote only its last row: what was left read "...(a call may take" and stopped there; at 20
    columns each count left "es: 3/12 strings an" behind too."""
    from mt_eval.champollion.report import waiting_line
    from mt_eval.cli.locales import _Progress

    monkeypatch.setenv("COLUMNS", str(columns))
    terminal = Terminal()
    progress = _Progress(terminal, quiet=False)
    waiting = waiting_line("es", 3, 1, 12.0, 120.0)
    progress("es", 3, 12)
    progress.say(waiting)
    progress("es", 12, 12)
    progress.close()
    shown = "".join(screen(terminal.getvalue(), columns))  # (the rows of a line that wrapped, joined)
    first = "es: 3/12 strings answered" if first_count_kept else ""  # (at 20 columns no count fits in a row)
    assert shown == first + waiting + "es: 12/12 strings answered", screen(terminal.getvalue(), columns)


def test_locales_counts_that_fit_are_still_rewritten_in_place(monkeypatch: pytest.MonkeyPatch):
    from mt_eval.cli.locales import _Progress

    monkeypatch.setenv("COLUMNS", "80")
    terminal = Terminal()
    progress = _Progress(terminal, quiet=False)
    for done in (3, 8, 12):
        progress("es", done, 12)
    progress("fr", 5, 12)
    progress.close()
    assert screen(terminal.getvalue(), 80) == ["es: 12/12 strings answered", "fr: 5/12 strings answered"]
