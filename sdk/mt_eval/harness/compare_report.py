"""The text of ``mt-eval compare``: the paired tests with the interval of each difference and which run scores
better, then what differs between the runs' outputs, the covariates allowed to differ, and the latencies (or why
they are left out)."""

from __future__ import annotations

from typing import Any

from mt_eval.durations import format_duration


def render(report: dict[str, Any]) -> str:
    methods = report["methods"]
    lines = [f"A: {report['a']} ({methods['a']['method_id']}, code {methods['a']['code_sha256'][:12]})",
             f"B: {report['b']} ({methods['b']['method_id']}, code {methods['b']['code_sha256'][:12]})", ""]
    lines.append(f"{'metric':8} {'A':>8} {'B':>8} {'B-A':>8} {'95% CI of B-A':>18} {'p (bootstrap)':>14} "
                 f"{'p (random.)':>12}")
    for row in report["rows"]:
        verdict = "significant" if row["p_randomization"] < 0.05 else "not significant"
        interval = ("" if row["delta_ci_low"] is None else
                    f"[{row['delta_ci_low']:+.2f}, {row['delta_ci_high']:+.2f}]")
        lines.append(f"{row['metric']:8} {row['a']:8.2f} {row['b']:8.2f} {row['delta']:+8.2f} {interval:>18} "
                     f"{row['p_bootstrap']:14.4f} {row['p_randomization']:12.4f}  {_better(row)}, {verdict} at 0.05")
    if report["rows"]:
        first = report["rows"][0]
        lines.append(f"(scored entries only; intervals from {first['bootstrap_resamples']} case-level bootstrap "
                     f"resamples, seed {first['seed']})")
    lines += [_not_compared(left) for left in report.get("not_compared", [])]
    scored = report["scored"]
    for side in report.get("partial", {}):  # (its scored entries that failed: a canary's failure is not scored)
        failed = scored["failed"][side]
        lines.append(f"note: {side.upper()} is a partial run: "
                     + (f"{failed} of its {scored['entries']} scored entries failed, each scored as an empty "
                        "translation" if failed else "none of its scored entries failed (its failed entries are "
                                                     "canaries or negative controls, which are not scored)"))
    for side, count in scored.get("abstained", {}).items():  # (scored as empty translations too, as the run says)
        if count:
            lines.append(f"note: {side.upper()} abstained on {count} of its {scored['entries']} scored entries, each "
                         "scored as an empty translation")
    lines += ["", _outputs(report["outputs"])]
    allowed = report["allowed_differences"]
    if allowed:
        lines.append("covariates that differ (allowed with --allow-diff): "
                     + "; ".join(f"{d['name']}: A {d['a']}, B {d['b']}" for d in allowed))
    else:
        lines.append("covariates: the same in both cards")
    lines.append(_latency(report["latency"]))
    return "\n".join(lines)


def _not_compared(left: dict[str, Any]) -> str:
    """A metric left out of the comparison, with why (TER not computed on one run's outputs, or both)."""
    whys = [(side.upper(), left[side]) for side in ("a", "b") if left[side]]
    if len(whys) == 2 and whys[0][1] == whys[1][1]:
        whys = [("A's and B", whys[0][1])]
    return f"{left['metric']}: not compared: " + "; ".join(f"{side}'s outputs: {why}" for side, why in whys)


def _better(row: dict[str, Any]) -> str:
    """Which run scores better on the row's metric, from the sign of B − A alone (whether that is significant is
    the p-values' to say): "B better (lower is better)" for a TER that B lowers."""
    if row["delta"] == 0:
        return "no difference"
    higher = row["higher_is_better"]
    winner = "B" if (row["delta"] > 0) == higher else "A"
    return f"{winner} better ({'higher' if higher else 'lower'} is better)"


def _outputs(outputs: dict[str, Any]) -> str:
    total = outputs["all"]
    families = ", ".join(f"{outputs[f]['differ']} of {outputs[f]['of']} {name}" for f, name in
                         (("scored", "scored"), ("canary", "canaries"), ("negative", "negative controls"))
                         if outputs[f]["of"])
    text = f"outputs that differ: {total['differ']} of {total['of']} entries ({families})"
    if outputs.get("same_run"):
        text += (f" — A and B are the same run ({outputs['same_run']}), so its outputs cannot differ: compare the card "
                 "of another run of the method for its repeat-run stability")
    elif outputs["same_method_code"]:
        text += " — two runs of the same method code: repeat-run stability"
    if outputs["examples"]:
        text += "; e.g. " + ", ".join(outputs["examples"][:5])
    return text


def _latency(latency: dict[str, Any]) -> str:
    if not latency["compared"]:
        return f"latency: not compared: {latency['reason']}"
    a, b = latency["a"], latency["b"]
    same = latency["hardware"]["a"] == latency["hardware"]["b"]
    where = latency["hardware"]["a"] if same else "different hardware, allowed"
    if latency.get("same_plan") is False:  # (an older report has no plans)
        plans = latency["plans"]
        where += f"; measured differently, allowed: A {plans['a']}, B {plans['b']}"
    shown = {key: (format_duration(a[key]), format_duration(b[key])) for key in ("cold_s", "hot_p50_s", "hot_p95_s")}
    return (f"latency ({where}): cold A {shown['cold_s'][0]}, B {shown['cold_s'][1]}; hot p50 A "
            f"{shown['hot_p50_s'][0]}, B {shown['hot_p50_s'][1]}; hot p95 A {shown['hot_p95_s'][0]}, B "
            f"{shown['hot_p95_s'][1]}")
