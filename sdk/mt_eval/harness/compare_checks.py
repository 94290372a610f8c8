"""What ``mt-eval compare`` checks before comparing two cards, and what it reports beside the paired tests.

- **Covariates** (`mt_eval.harness.covariates`): the gate's five, the run settings and the method's ``--param``
  values must be equal and recorded in both cards; each difference (or covariate missing from either card)
  refuses the comparison unless ``--allow-diff NAME`` names it, and allowed differences are printed with the
  result. Params are said one parameter at a time (``params: A mark_unknown=true, B mark_unknown=false``).
- **Latency** is compared only between cards measured by the harness on the same hardware label, with the same
  plan (``--latency-warmup``, the entries ``--latency-sample`` timed, ``--latency-repetitions``); otherwise it is
  left out, with the reason, unless ``--allow-diff hardware`` (or ``--allow-diff latency_plan``).
- **Outputs**: how many entries have a different outcome in the two runs (a different prediction, or one
  translated where the other failed or abstained), per family — for two runs of the same method, the
  repeat-run stability.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mt_eval.harness.covariates import PARAMS, SETTINGS, covariate_states, params_differences
from mt_eval.harness.latency import nothing_measured
from mt_eval.harness.policy import COVARIATES

if TYPE_CHECKING:
    from mt_eval.harness.runcard import RunCard

HARDWARE = "hardware"
LATENCY_PLAN = "latency_plan"
NAMES = (*COVARIATES, *SETTINGS, PARAMS, HARDWARE, LATENCY_PLAN)


@dataclass(frozen=True)
class Difference:
    name: str
    a: str
    b: str

    def __str__(self) -> str:
        return f"{self.name}: A {self.a}, B {self.b}"


def check_allowed(names: list[str]) -> list[str]:
    """``--allow-diff`` values, each a known name; raises `ValueError` naming the known ones."""
    unknown = [n for n in names if n not in NAMES]
    if unknown:
        raise ValueError(f"--allow-diff {', '.join(unknown)}: not a covariate; give one of {', '.join(NAMES)}")
    return names


def covariate_differences(a: RunCard, a_data: dict[str, Any] | None, b: RunCard, b_data: dict[str, Any] | None
                          ) -> list[Difference]:
    """Every covariate that differs between the cards or is missing from either."""
    states_a, states_b = covariate_states(a, a_data), covariate_states(b, b_data)
    out = []
    for name in (*COVARIATES, *SETTINGS, PARAMS):
        one, other = states_a[name], states_b[name]
        if name == PARAMS and one.present and other.present:
            out += [Difference(name, in_a, in_b) for in_a, in_b in params_differences(one.value, other.value)]
        elif not one.present or not other.present or one.value != other.value:
            out.append(Difference(name, one.shown, other.shown))
    return out


def latency_comparison(a: RunCard, b: RunCard, allowed: list[str]) -> dict[str, Any]:
    """The two cards' measured latencies side by side, or why they are not compared; ``plans``: how each card's
    latency was measured, and ``same_plan`` whether alike."""
    labels = {"a": a.environment.hardware, "b": b.environment.hardware}
    plans = {"a": latency_plan(a), "b": latency_plan(b)}
    same_plan = _plan_key(a) == _plan_key(b)
    report: dict[str, Any] = {"compared": False, "hardware": labels, "plans": plans, "same_plan": same_plan,
                              "reason": None}
    self_reported = [name for name, card in (("A", a), ("B", b)) if card.latency.measured_by != "harness"]
    if self_reported:
        report["reason"] = (f"{' and '.join(self_reported)}'s latency is what the method reported about itself (a "
                            "card from an older mt-eval): only latencies the harness measured are compared")
    elif unmeasured := [name for name, card in (("A", a), ("B", b)) if nothing_measured(card.latency)]:
        report["reason"] = (f"{' and '.join(unmeasured)}'s latency was not measured (a run with --latency-sample 0, "
                            "no scored entry, or a first call that failed): there is nothing to compare")
    elif labels["a"] != labels["b"] and HARDWARE not in allowed:
        report["reason"] = (f"the hardware differs (A: {labels['a']}; B: {labels['b']}): latencies are compared "
                            "only on the same hardware label (--allow-diff hardware compares them anyway)")
    elif not same_plan and LATENCY_PLAN not in allowed:
        report["reason"] = (f"the latencies were measured differently (A: {plans['a']}; B: {plans['b']}): they are "
                            "compared only when measured alike: run both with the same --latency-warmup, "
                            "--latency-sample and --latency-repetitions (--allow-diff latency_plan compares them "
                            "anyway)")
    else:
        report["compared"] = True
        for name, card in (("a", a), ("b", b)):
            report[name] = {"cold_s": card.latency.cold_s, "hot_p50_s": card.latency.hot_p50_s,
                            "hot_p95_s": card.latency.hot_p95_s, "hot_calls": card.latency.hot_calls}
    return report


def latency_plan(card: RunCard) -> str:
    """How a card's latency was measured, as a reader compares it: "3 warm-up calls, 10 entries timed 3 times"."""
    latency = card.latency
    times = ("" if latency.repetitions is None else " once" if latency.repetitions == 1
             else f" {latency.repetitions} times")
    return (f"{_count(latency.warmup_entries, 'warm-up call')}, {_count(latency.hot_entries, 'entry', 'entries')} "
            f"timed{times}")


def _count(number: int, one: str, many: str | None = None) -> str:
    return f"{number} {one if number == 1 else many or one + 's'}"


def _plan_key(card: RunCard) -> tuple[Any, ...]:
    """What two cards measured alike share: the warm-up calls, the entries timed (by id where the card lists
    them) and the repetitions."""
    latency = card.latency
    sample = latency.hot_entries if latency.sample_ids is None else tuple(latency.sample_ids)
    return latency.warmup_entries, sample, latency.repetitions


def _outcome(result: Any) -> tuple[str, str | None]:
    if result is None:
        return ("missing", None)
    if result.error is not None:
        return ("failed", None)
    if result.abstained:
        return ("abstained", None)
    return ("translated", result.predicted)


def output_differences(a: RunCard, b: RunCard, both: Iterable[tuple[Mapping[str, Any], Any, Any]]) -> dict[str, Any]:
    """How many of the entries have a different outcome in the two cards, in all and per family: ``both`` gives
    each entry, in corpus order, with its result in A and in B (None where a card has none)."""
    from mt_eval.corpus.families import FAMILIES, family_of

    counts = {family: {"differ": 0, "of": 0} for family in FAMILIES}
    examples: list[str] = []
    for entry, in_a, in_b in both:
        family = counts[family_of(entry)]
        family["of"] += 1
        if _outcome(in_a) != _outcome(in_b):
            family["differ"] += 1
            if len(examples) < 10:
                examples.append(str(entry["id"]))
    total = {"differ": sum(c["differ"] for c in counts.values()), "of": sum(c["of"] for c in counts.values())}
    same_method = a.method.code_sha256 == b.method.code_sha256
    same_run = a.run_id if a.run_id == b.run_id else None  # (one card twice, or a copy: not a second run)
    return {"all": total, **counts, "examples": examples, "same_method_code": same_method, "same_run": same_run}
