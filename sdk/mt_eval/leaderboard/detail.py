"""A run card's detail page: the method card, what the harness recorded, every metric with its signature, the
eligibility facts, the corpus, covariates, environment and every entry's result."""

from __future__ import annotations

from typing import Any

from mt_eval.durations import format_duration
from mt_eval.leaderboard.html import (
    badges,
    escape,
    headline_text,
    named,
    number,
    open_source,
    page,
    prize_cell,
    settings_text,
)

RESULTS_SHOWN = 2000  # entries listed on the page; the card itself holds them all


def _dl(items: dict[str, Any]) -> str:
    return "<dl>" + "".join(f"<dt>{escape(k)}</dt><dd>{v}</dd>" for k, v in items.items()) + "</dl>"


def _text(value: Any) -> str:
    if value is None:
        return '<span class="muted">—</span>'
    if isinstance(value, list):
        return escape(", ".join(map(str, value))) or '<span class="muted">none</span>'
    return escape(str(value))


def _unknown(card: dict[str, Any], field: str) -> str:
    if field not in card:
        return '<span class="unk">unknown (not recorded by this run)</span>'
    return f"<code>{escape(_json(card[field]))}</code>"


def _json(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


def detail_page(card: dict[str, Any], row: dict[str, Any], *, back: str = "../index.html") -> str:
    method, corpus, metrics = card["method"], card["corpus"], card.get("metrics")
    shown = row.get("method_card") or method.get("card") or {}
    about = {"name": _text(row["method_name"]), "method id": f"<code>{escape(row['method_id'])}</code>",
             "classes": badges(row), "description": _text(row.get("description")),
             "paradigm": _text(row.get("paradigm")), "tools used": _text(row["tools_used"]),
             "open source": open_source(row), "method card": _text(row["method_card_source"])}
    for field in ("version", "author", "license", "homepage", "citation", "prompt_published"):
        if shown.get(field) is not None:
            about[field] = _text(shown[field])
    harness = {"settings": escape(settings_text(row, lead="")), "runtime": _text(method.get("runtime")),
               "code sha256": f"<code>{escape(method.get('code_sha256', ''))}</code>",
               "git": _text(f"{method.get('git_commit') or '—'}{' (dirty)' if method.get('git_dirty') else ''}")}
    contributions = "".join(f"<li><code>{escape(c['path'])}</code> {escape(c['id'])}: {escape(c['dependency_class'])}"
                            f" — {escape(c['reason'])}</li>" for c in method.get("contributions", []))
    scores = _scores(metrics)
    eligibility = {"prize": prize_cell(row), "flags": _text(row.get("flags"))}
    for field in ("status", "eligibility", "sandbox", "contamination"):
        eligibility[field] = _unknown(card, field)
    eligibility["gate"] = _gate(card)
    covariates = {k: _text(v) for k, v in card.get("covariates", {}).items()}
    environment = {k: _text(v) for k, v in card.get("environment", {}).items()}
    latency = {k.removesuffix("_s"): _latency_text(k, v) for k, v in card.get("latency", {}).items()}
    results = card.get("results", [])
    entries = "".join(
        f"<tr><td><code>{escape(r['id'])}</code></td><td>{escape(r.get('predicted') or '')}</td>"
        f"<td class=no>{escape(r.get('error') or '')}</td>"
        f"<td class=n>{escape(format_duration(r.get('latency_s')))}</td></tr>"
        for r in results[:RESULTS_SHOWN])
    more = f"<p class=muted>first {RESULTS_SHOWN} of {len(results)} entries</p>" if len(results) > RESULTS_SHOWN else ""
    table = ("<div class=wide><table><caption class=vh>Each entry's result</caption><thead><tr><th scope=col>id</th>"
             "<th scope=col>prediction</th><th scope=col>error</th><th scope=col>latency</th></tr></thead>"
             f"<tbody>{entries}</tbody></table></div>")
    if not results and (log := card.get("results_log")):
        more, table = _in_log(log), ""
    body = (f'<nav><p><a href="{escape(back)}">← leaderboard</a></p></nav><main>'
            f"<h1>{named(row['method_name'])}</h1>"
            f"<p><b>{escape(row['headline']['metric'] if row['headline'] else 'headline')}</b> "
            f"{headline_text(row['headline'])}"
            f"{'' if not row['headline'] else ', n=' + str(row['headline']['denominator'])} · rank "
            f"{row.get('rank') or '—'} on {named(corpus['name'])} ({escape(corpus['pair'])})</p>"
            f"<h2>Eligibility</h2>{_dl(eligibility)}"
            f"<h2>Method</h2>{_dl(about)}<h3>Dependencies</h3><ul>{contributions or '<li>none declared</li>'}</ul>"
            f"<h3>What the harness recorded</h3>{_dl(harness)}"
            f"<h2>Scores</h2>{scores or '<p>no metrics</p>'}{_families(card)}"
            f"<h2>Corpus</h2>{_dl({k: _text(v) for k, v in corpus.items()})}"
            f"<h2>Run</h2>{_dl(_run(card))}"
            f"<h3>Covariates</h3>{_dl(covariates)}<h3>Latency</h3>{_dl(latency)}"
            f"<h3>Environment</h3>{_dl(environment)}"
            f"<h2>Entries</h2>{more}{table}</main>")
    return page(f"\u2068{row['method_name']}\u2069 — \u2068{corpus['name']}\u2069", body)  # (isolated, as <bdi>)


def _in_log(log: dict[str, Any]) -> str:
    """What the page says of the entries of a card that references its results log (the store keeps the card as
    the run sealed it, without the log)."""
    file, sha256 = escape(str(log.get("file"))), escape(str(log.get("sha256"))[:16])
    return (f"<p>This card's {log.get('results', 0):,} results are in its results log, <code>{file}</code> (sha256 "
            f"<code>{sha256}…</code>), beside the card in the run "
            "directory: the board keeps the card as the run sealed it, and the log is not stored.</p>")


def unreadable_page(row: dict[str, Any], *, back: str = "../index.html") -> str:
    """The page of a row whose stored run card cannot be read (the store is damaged there): the board's link
    leads to what is known and what to do, not to a missing page."""
    body = (f'<nav><p><a href="{escape(back)}">← leaderboard</a></p></nav><main><h1>{named(row["method_name"])}</h1>'
            f"<p>The run card of this row (run <code>{escape(str(row.get('run_id', '')))}</code>, store row "
            f"#{escape(str(row.get('id', '')))}) cannot be read from the leaderboard store: it is damaged there. The "
            "row's figures on the board come from its own record; the card's details are not shown. Delete the row "
            "and publish its card again (<code>mt-eval leaderboard</code> names it when it reads the store).</p>"
            "</main>")
    return page(f"{row['method_name']} — run card unreadable", body)


def _interval(metric: dict[str, Any]) -> str:
    if metric.get("ci_low") is None:
        return "—"
    return f"[{metric['ci_low']:.2f}, {metric['ci_high']:.2f}]"


def _scores(metrics: dict[str, Any] | None) -> str:
    if not metrics:
        return ""
    rows = "".join(f"<tr><td>{escape(m['name'])}</td><td class=n>{number(m['score'])}</td><td class=n>"
                   f"{_interval(m)}</td><td><code>{escape(m['signature'])}</code></td></tr>"
                   for m in metrics["metrics"])
    return ("<div class=wide><table><caption class=vh>Every metric</caption><thead><tr><th scope=col>metric</th>"
            "<th scope=col>score</th><th scope=col>95% interval</th><th scope=col>signature</th></tr></thead>"
            f"<tbody>{rows}</tbody></table></div><p class=muted>{metrics['segments']} segments · "
            f"{metrics['bootstrap_resamples']} bootstrap resamples · seed {metrics['bootstrap_seed']}</p>")


def _ratio(value: Any) -> str:
    return f"{value['numerator']}/{value['denominator']}" if isinstance(value, dict) else "—"


def _families(card: dict[str, Any]) -> str:
    """Each family's figure as numerator/denominator (older cards record none)."""
    families = card.get("families")
    if not isinstance(families, dict):
        return '<h3>Families</h3><p class="unk">unknown (not recorded by this run)</p>'
    return "<h3>Families</h3>" + _dl({
        "entries": _text(f"{families.get('scored')} scored, {families.get('canary')} canaries, "
                         f"{families.get('negative')} negative controls"),
        "canaries passed": _text(_ratio(families.get("canary_pass_rate"))),
        "negative controls violated": _text(_ratio(families.get("negative_violation_rate"))),
        "scored entries abstained on": _text(_ratio(families.get("abstention_rate")))})


def _gate(card: dict[str, Any]) -> str:
    gate = card.get("gate")
    if not isinstance(gate, dict):
        return _unknown(card, "gate")
    verdict = "passed" if gate.get("passed") else "failed: " + "; ".join(str(f) for f in gate.get("failures", []))
    return escape(f"{verdict} (policy {gate.get('policy')}, as the run applied it)")


def _run(card: dict[str, Any]) -> dict[str, str]:
    return {"run id": _text(card["run_id"]), "started": _text(card["started_at"]),
            "finished": _text(card["finished_at"]), "sessions": _text(card["sessions"]),
            "sdk": _text(card["sdk_version"]), "errors": _text(card["errors"]),
            "content sha256": f"<code>{escape(card['content_sha256'])}</code>"}


def _latency_text(key: str, value: Any) -> str:
    """A latency field for a person: durations in fitting units, each timed call of a list too."""
    if key.endswith("_s") and isinstance(value, (int, float)):
        return _text(format_duration(value))
    if key.endswith("_s") and isinstance(value, list):
        return _text(", ".join(format_duration(v) if isinstance(v, (int, float)) else str(v) for v in value))
    return _text(value)
