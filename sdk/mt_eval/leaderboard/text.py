"""The board as text tables (``mt-eval leaderboard``, the default format).

Every text is handed to rich as a `Text`, never as markup: a method or corpus named ``v2 [beta]`` or
``[/x]`` is printed as written (rich had read it as a style tag: dropped, or an error that broke the board)."""

from __future__ import annotations

from typing import Any

from mt_eval.control_chars import escaped_for_terminal
from mt_eval.leaderboard.board import drawn_how, filters_given
from mt_eval.leaderboard.html import headline_text, number


def _plain(text: str) -> Any:
    """``text`` as rich prints it verbatim: no markup read, control characters (ESC…) shown as escapes (a store
    written before such names were refused), and so are the characters that turn the text after them around
    (U+202E), and the other invisible ones: on a terminal, nothing of one cell reaches into the next, or into the
    table's borders."""
    from rich.text import Text

    return Text(escaped_for_terminal(text))


def _eligibility(row: dict[str, Any]) -> str:
    verdict = {True: "eligible", False: "not eligible", None: "unknown"}[row["prize"]["eligible"]]
    reasons = row["prize"]["reasons"]
    unrecorded = [r.removesuffix(" not recorded").removeprefix("run ") for r in reasons if r.endswith(" not recorded")]
    others = [r for r in reasons if not r.endswith(" not recorded")]
    parts = others + ([f"not recorded: {', '.join(unrecorded)}"] if unrecorded else [])
    return verdict + (f" ({'; '.join(parts)})" if parts else "")


def _gated(group: dict[str, Any], row: dict[str, Any]) -> str:
    """The policy a row passed the gate under, in a group whose rows passed under different ones."""
    if not group.get("gate_note"):
        return ""
    return f"\n(gate: {row['eligibility'].get('gate_policy') or 'policy not recorded'})"


def _method(row: dict[str, Any]) -> str:
    flags = "".join(f" [{flag}]" for flag in row["flags"])
    open_mark = {True: "open", False: "closed", None: "open?"}[row["open_source"]]
    if row["has_method_card"]:
        about = "tools: " + (", ".join(row["tools_used"]) or "none")
    else:
        s = row["settings"]
        about = (f"no method card; model {s['model'] or '—'}, version {s['version'] or '—'}, temperature "
                 f"{'—' if s['temperature'] is None else s['temperature']}, tools "
                 f"{', '.join(s['tools_called']) or 'none called'}")
    return (f"{row['method_name']}  {row['method_class']} · {row['dependency_class'] or '?'} · {open_mark}{flags}\n"
            f"{about}")


def _reader_gone() -> None:
    """The reader of the board went away (``| head``): stopped as every command stops, 141 and quietly (rich's own
    way exits 1, the status of a store that cannot be read, with nothing said)."""
    raise BrokenPipeError


def render_text(board: dict[str, Any], console: Any = None) -> None:
    from rich.console import Console
    from rich.table import Table

    if console is None:
        console = Console()
        console.on_broken_pipe = _reader_gone
    given = filters_given(board)
    if not board["groups"] and not board["unranked"]:  # (as its page says it)
        console.print(_plain(f"No run cards match {given}.") if given else
                      "No run cards to show." if board["hidden"]["class X"] else  # (the hidden ones counted below)
                      "No run cards are published yet: mt-eval publish runs/NAME/card.json")
    elif given:  # (a board of some rows only says so, as its page does)
        console.print(_plain(f"Only the run cards matching {given}."))
    for group in board["groups"]:
        size = (f"{group['entries_run']} of {group['corpus_size']} entries, part of the corpus, "
                f"{group['denominator']} scored" if group["subset"] else f"{group['denominator']} scored entries")
        table = Table(title=_plain(f"{group['corpus_name']} ({group['pair']}) — sha256 {group['corpus_sha256'][:12]}, "
                                 f"{size}"), caption=_plain(f"{group['metric']}: {group['signature']}"),
                      title_justify="left")
        for column, justify, whole in (("rank", "right", True), ("method", "left", False),
                                       (f"{group['metric']} [95% CI]", "right", False), ("n", "right", True),
                                       ("eligibility", "left", False), ("run", "left", True)):
            table.add_column(_plain(column), justify=justify, no_wrap=whole,  # type: ignore[arg-type]
                             overflow="fold")  # (a narrow terminal: a long word is broken, not cut to "…")
        for row in group["rows"]:
            rank = f"{row['rank']}" + (" (tie)" if row["ties"] else "")
            score = headline_text(row["headline"]) + (f"\n({drawn_how(row)})" if group.get("intervals_note") else "")
            table.add_row(*map(_plain, (rank, _method(row), score,
                                      str(row["headline"]["denominator"]), _eligibility(row) + _gated(group, row),
                                      row["finished_at"][:10])))
        console.print(table)
        for note in (group.get("intervals_note"), group.get("gate_note")):  # (a board written before: neither)
            if note:
                console.print(_plain(f"note: {note}"))
    if board["unranked"]:
        console.print(_plain("Not ranked (no headline): " + ", ".join(f"{r['method_name']} on {r['corpus_name']}"
                                                                    for r in board["unranked"])))
    across = board["across"]
    if across["methods"]:
        table = Table(title="Across corpora (Borda: 100 first … 0 last, equal weight; task average: per pair, then "
                            "across pairs)", title_justify="left")
        table.add_column("method", overflow="fold")
        table.add_column("Borda", justify="right", no_wrap=True)
        table.add_column("task average", justify="right", no_wrap=True)
        for corpus in across["corpora"]:
            table.add_column(_plain(corpus["label"]), justify="right", overflow="fold")
        for m in across["methods"]:
            cells = [number(m["scores"][c["label"]]) if c["label"] in m["scores"] else "missing"
                     for c in across["corpora"]]
            table.add_row(*map(_plain, (m["method_name"], "missing" if m["borda"] is None else number(m["borda"], 1),
                                      "missing" if m["task_average"] is None else number(m["task_average"], 1),
                                      *cells)))
        console.print(table)
    if board["hidden"]["class X"]:
        console.print(f"{board['hidden']['class X']} class X run card(s) not shown: class X methods never appear.")
