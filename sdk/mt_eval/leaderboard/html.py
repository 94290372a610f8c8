"""The board as one self-contained HTML page: styles and script inlined (no CDN, nothing fetched), so it works
from a file:// URL and any static host. Rows are plain HTML (readable without JavaScript); the script sorts
by a column header and filters by pair, corpus, class and free text. Detail pages are ``cards/KEY.html``."""

from __future__ import annotations

import html
import re
from functools import cache
from importlib import resources
from typing import Any

from mt_eval.leaderboard.board import drawn_how, filters_given

CARDS_DIR = "cards"
WEB_ADDRESS = re.compile(r"^https?://", re.IGNORECASE)  # the only addresses a page links to
C0_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # (not tab, line feed, carriage return)


def escape(text: str) -> str:
    """``text`` for a page, its control characters (ESC, BEL, …) written as character references: a browser shows
    the same text, and a page printed on a terminal (``--format html``) holds no escape sequence a publisher wrote."""
    return C0_CONTROL.sub(lambda found: f"&#x{ord(found.group()):x};", html.escape(text))


@cache
def asset(name: str) -> str:
    return (resources.files("mt_eval.leaderboard") / "static" / name).read_text(encoding="utf-8")


def page(title: str, body: str, *, script: bool = False) -> str:
    """A complete page with the board's styles (and script) inlined."""
    js = f"<script>{asset('board.js')}</script>" if script else ""
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width,initial-scale=1"><title>{escape(title)}</title>'
            f"<style>{asset('board.css')}</style></head><body>{body}{js}</body></html>\n")


def named(text: str) -> str:
    """A name the publisher chose, escaped and isolated (``<bdi>``): a right-to-left override in it (U+202E) turns
    only itself around, not the badges, scores or names that follow it on the page."""
    return f"<bdi>{escape(text)}</bdi>"


def number(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def headline_text(headline: dict[str, Any] | None) -> str:
    if headline is None:
        return "no headline"
    interval = "" if headline["ci_low"] is None else f" [{headline['ci_low']:.2f}, {headline['ci_high']:.2f}]"
    return f"{headline['score']:.2f}{interval}"


def badges(row: dict[str, Any]) -> str:
    dclass = row["dependency_class"] or "?"
    out = (f'<span class=b>{escape(row["method_class"])}</span> '
           f'<span class="b d-{escape(dclass)}">{escape(dclass)}</span>')
    return out + "".join(f' <span class="b flag">{escape(flag)}</span>' for flag in row.get("flags", []))


def open_source(row: dict[str, Any]) -> str:
    if row["open_source"] is None:
        return '<span class="unk">not stated</span>'
    if not row["open_source"]:
        return '<span class="no" title="not open source">closed</span>'
    url = row.get("open_source_url")
    if url and not WEB_ADDRESS.match(url):  # (a store written before such addresses were refused: no javascript:)
        return f'<span class="yes" title="{escape(url)}">open</span>'
    # (read out of its row, "open" alone says nothing: the method is named to a screen reader)
    code = f'<span class=vh>: the code of {escape(row.get("method_name") or "the method")}</span>'
    return f'<a class="yes" href="{escape(url)}">open{code}</a>' if url else '<span class="yes">open</span>'


def method_cell(row: dict[str, Any], link: str | None) -> str:
    """The method's name (linked to its detail page, when there is one), badges and tools."""
    about = ("tools: " + (", ".join(row["tools_used"]) or "none")) if row["has_method_card"] else settings_text(row)
    name = f'<b>{named(row["method_name"])}</b>'
    if link:
        name = f'<a href="{escape(link)}">{name}</a>'
    return (f'{name} {badges(row)}'
            f'<br><small>{escape(about)}</small>')


def settings_text(row: dict[str, Any], *, lead: str = "no method card · ") -> str:
    """The harness-native settings, shown when the run had no method card."""
    s = row["settings"]
    tools = ", ".join(s["tools_called"]) or "none called"
    return (f"{lead}model {s['model'] or '—'} · version {s['version'] or '—'} · temperature "
            f"{'—' if s['temperature'] is None else s['temperature']} · tools {tools}")


def prize_cell(row: dict[str, Any]) -> str:
    verdict = row["prize"]["eligible"]
    word, css = {True: ("eligible", "yes"), False: ("not eligible", "no"), None: ("unknown", "unk")}[verdict]
    facts = row["eligibility"]
    sandbox = facts["sandbox"] or "sandbox unknown"
    gate = {True: "gate passed", False: "gate failed", None: "gate unknown"}[facts["gate_passed"]]
    status = facts["status"] or "status unknown"
    said = {"run status not recorded", "gate not recorded"}  # the line of facts shows these already
    more = "; ".join(r for r in row["prize"]["reasons"] if r not in said)
    return (f"<span class={css}>{word}</span><br><small>{escape(status)} · {escape(sandbox)} · {escape(gate)}</small>"
            + (f"<br><small>{escape(more)}</small>" if more else ""))


def row_html(row: dict[str, Any], detail_pages: bool, *, placed: bool = False, drawn: bool = False,
             gated: bool = False) -> str:
    """A table row; its pair and corpus are its section's unless ``placed`` (a section of mixed rows); ``drawn``:
    how its interval was drawn is shown under it (its section's rows were not drawn alike); ``gated``: the policy
    it passed the gate under (its section's rows passed under different ones)."""
    h = row["headline"]
    rank = row.get("rank")
    ties = row.get("ties", 0)
    overlaps = f'95% interval overlaps {ties} other row{"s" if ties != 1 else ""}'
    tie = f' <span class="tie" title="{overlaps}">tie<span class=vh>: {overlaps}</span></span>' if ties else ""
    verdict = {True: "2", None: "1", False: "0"}[row["prize"]["eligible"]]
    attributes = (f'data-mclass="{escape(row["method_class"])}" data-dclass="{escape(row["dependency_class"] or "")}" '
                  f'data-rank="{rank or ""}" data-score="{h["score"] if h else ""}" '
                  f'data-date="{escape(row["finished_at"])}" data-prize="{verdict}"')
    if placed:
        attributes += f' data-pair="{escape(row["pair"])}" data-corpus="{escape(row["corpus_name"])}"'
    link = f"{CARDS_DIR}/{row['key']}.html" if detail_pages else None
    return (f"<tr {attributes}><td class=n>{rank or '—'}{tie}</td><td>{method_cell(row, link)}</td>"
            f"<td>{open_source(row)}</td><td class=n>{headline_text(h)}"
            + (f"<br><small>{escape(drawn_how(row))}</small>" if drawn else "") + "</td>"
            f"<td class=n>{h['denominator'] if h else '—'}</td><td>{prize_cell(row)}"
            + (f"<br><small>gate: {escape(row['eligibility'].get('gate_policy') or 'policy not recorded')}</small>"
               if gated else "") + "</td>"
            f"<td><small>{escape(row['finished_at'][:10])}</small></td></tr>")


HEAD = ('<thead><tr><th scope=col data-sort="rank" data-numeric>Rank</th><th scope=col data-sort="name">Method</th>'
        '<th scope=col>Open source</th><th scope=col data-sort="score" data-numeric>{metric} [95% CI]</th>'
        '<th scope=col>n<span class=vh> (scored entries)</span></th><th scope=col data-sort="prize" data-numeric>'
        'Prize eligibility</th><th scope=col data-sort="date">Run</th></tr></thead>')
RANKS = ("Rank: 1 + the number of rows whose 95% interval lies wholly above the row's; “tie”: the row's interval "
         "overlaps another row's, so their order is not settled.")


def group_html(group: dict[str, Any], detail_pages: bool) -> str:
    subset = (f" · {group['entries_run']} of {group['corpus_size']} entries (part of the corpus), "
              f"{group['denominator']} scored" if group["subset"] else f" · {group['denominator']} scored entries")
    order = "higher is better" if group["higher_is_better"] else "lower is better"
    return (f'<section class="group" data-pair="{escape(group["pair"])}" data-corpus="{escape(group["corpus_name"])}">'
            f'<h2>{named(group["corpus_name"])} <span class="b">{escape(group["pair"])}'
            f'</span></h2><p class="muted">corpus sha256 <code>{escape(group["corpus_sha256"][:16])}</code>{subset} · '
            f'{escape(group["metric"])} ({order}) <code>{escape(group["signature"] or "")}</code></p>'
            f'<div class=wide><table><caption class=vh>Ranking on {named(group["corpus_name"])} '
            f'({escape(group["pair"])}) by {escape(group["metric"])}</caption>'
            f'{HEAD.format(metric=escape(group["metric"]))}<tbody>'
            + "".join(row_html(r, detail_pages, drawn=bool(group.get("intervals_note")),
                               gated=bool(group.get("gate_note"))) for r in group["rows"]) + "</tbody></table></div>"
            + "".join(f'<p class="muted">note: {escape(note)}</p>'
                      for note in (group.get("intervals_note"), group.get("gate_note")) if note)
            + "</section>")


def across_html(across: dict[str, Any]) -> str:
    if not across["methods"]:
        return ""
    corpora = across["corpora"]
    head = "".join(f"<th scope=col class=corpus>{escape(c['label'])}</th>" for c in corpora)
    rows = []
    for m in across["methods"]:
        cells = "".join(f"<td class=n>{number(m['scores'].get(c['label']))}</td>" if c["label"] in m["scores"]
                        else '<td class="missing">missing</td>' for c in corpora)
        borda = number(m["borda"], 1) if m["borda"] is not None else '<span class="missing">missing</span>'
        average = number(m["task_average"], 1) if m["task_average"] is not None else \
            '<span class="missing">missing</span>'
        rows.append(f"<tr><td>{named(m['method_name'])}</td><td class=n>{borda}</td><td class=n>{average}</td>"
                    f"{cells}</tr>")
    return ('<section><h2>Across corpora</h2><p class="muted">Borda: per corpus 100 for first to 0 for last, '
            "averaged with equal weight. Task average: scores normalised to 0–100 (higher better), averaged per "
            "language pair, then across pairs. Each method's latest run card per corpus; a method missing a corpus "
            "has no aggregate.</p><div class=wide><table><caption class=vh>Methods across corpora</caption><thead><tr>"
            "<th scope=col>Method</th><th scope=col>Borda</th><th scope=col>Task average</th>"
            f"{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div></section>")


def _options(name: str, label: str, values: list[str]) -> str:
    options = "".join(f'<option value="{escape(v)}">{escape(v)}</option>' for v in values)
    return (f'<label>{label} <select data-filter="{name}"><option value="">all</option>'
            f"{options}</select></label>")


def index_page(board: dict[str, Any], *, title: str = "mt-eval leaderboard", detail_pages: bool = False) -> str:
    """The board's page. Its methods link to their detail pages (``cards/KEY.html``) only with ``detail_pages``,
    where those are written or served beside it: the page alone (``--format html``) has no links that lead nowhere."""
    groups = board["groups"]
    rows = [r for g in groups for r in g["rows"]] + board["unranked"]
    classes = sorted({r["method_class"] for r in rows}) + sorted({r["dependency_class"] or "" for r in rows} - {""})
    # (hidden until the script shows them: without it they would do nothing)
    filters = ('<div class="filters" hidden>' + _options("pair", "Pair", sorted({r["pair"] for r in rows}))
               + _options("corpus", "Corpus", sorted({r["corpus_name"] for r in rows}))
               + _options("class", "Class", classes)
               + '<label>Search <input id="search" type="search" placeholder="method, tool…"></label>'
               + f'<span class="muted" role="status"><span id="shown">{sum(len(g["rows"]) for g in groups)}</span>'
               ' rows shown</span>'
               + "</div>")
    hidden = board["hidden"]["class X"]
    note = (f"<p class=muted>{board['cards']} run cards · generated {escape(board['generated_at'])} · class X methods "
            f"are never shown ({hidden} hidden) · A2 rows depend on an external service and are not prize-eligible"
            "</p>" + (f"<p class=muted>{RANKS}</p>" if groups else ""))
    unranked = ""
    if board["unranked"]:
        unranked = ('<section class="group"><h2>Not ranked</h2><p class="muted">runs without a headline</p>'
                    '<div class=wide><table><caption class=vh>Runs without a headline</caption>'
                    + HEAD.format(metric="headline") + "<tbody>"
                    + "".join(row_html(r, detail_pages, placed=True) for r in board["unranked"])
                    + "</tbody></table></div></section>")
    given = filters_given(board)
    if given:  # (a board of some rows only says so: it is not the whole board)
        note += f"<p class=muted>only the run cards matching <code>{escape(given)}</code></p>"
    empty = "" if rows else (f"<p>No run cards match <code>{escape(given)}</code>.</p>" if given else
                             "<p>No run cards to show.</p>" if hidden else  # (the line above counts the hidden ones)
                             "<p>No run cards are published yet: <code>mt-eval publish runs/NAME/card.json</code></p>")
    body = (f"<header><h1>{escape(title)}</h1>{note}</header><main>{filters}{empty}"
            + "".join(group_html(g, detail_pages) for g in groups) + unranked + across_html(board["across"])
            + "</main>")
    return page(title, body, script=True)
