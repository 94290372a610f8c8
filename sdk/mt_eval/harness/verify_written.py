"""What a run writes into every card, checked so that a card edited and resealed to say otherwise does not verify
(`mt-eval verify`, step 3). A few reads a card: no result and no corpus entry is looked at.

- **covariates** (`mt_eval.harness.covariates.run_covariates`): a run marks a covariate not applicable only when
  it has no value to record — ``model`` without a model dependency, ``temperature`` without a served model — so a
  covariate is either given or marked not applicable, never both, and no other covariate is marked;
- **runtime**: the plugin's own (`mt_eval.loader.Runtime`), ``"python (isolated)"`` (`mt_eval.loader.runtime_label`,
  and a method moved out of process for blocking the event loop, which says so), or its own with the tool that
  confined it (``"node (sandboxed: unshare)"``);
- **sandbox** (`mt_eval.sandbox.isolation.find_tool`): the tool is bubblewrap or unshare, the one the method's
  runtime names (``"python (sandboxed: bubblewrap)"``), and the policy has a gateway address exactly when its
  network is the gateway;
- **fields every run writes**: ``results_log`` is the field cards gained last, so a card that has it (null when the
  card lists its results) was written by a run that writes ``status``, ``failures`` and the other fields of
  `WRITTEN`; a run that records its failures records its status. (``static_scan``, ``sandbox``, ``gateway``,
  ``eligibility``, ``families``, ``gate`` and ``freeze`` are not required: cards made without a run,
  `mt_eval.leaderboard.synthetic`, leave some of them out.)
- **how the run ended** (`older_card_problems`): ``status``, ``failures`` and ``results_log`` are in every card
  mt-eval writes; without them a card that had failures reads as a clean run, so a card that lacks one does not
  verify. mt-eval 0.1.0 wrote run-card/1 cards without them until 1 December 2026 (``status`` and ``failures``
  came first, then ``results_log``): such a card is named as older, with how to get one that verifies, since
  nothing in it tells it apart from a card whose fields were taken out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:
    from mt_eval.harness.runcard import RunCard

MARKED = ("model", "temperature")  # the covariates a run may mark not applicable
TOOLS = ("bubblewrap", "unshare")  # the tools a run confines a method with
SANDBOXED = " (sandboxed: "  # how ``method.runtime`` names the tool (mt_eval.harness.session)
ISOLATED = "python (isolated)"  # what ``method.runtime`` says of a Python entry run out of process, and why after ": "
NEWEST = "results_log"
WRITTEN = ("status", "failures", "selection", "contamination", "cached", "normalised", "pins")
# how a run ended, which every card states (run-card/1 cards gained them in 0.1.0, NEWEST last): what each says
OUTCOME = {"status": "complete, partial or failed", "failures": "the errors of the entries that failed",
           NEWEST: "whether its results are in it or in results.jsonl"}
OLDER_CARD_FIX = ("run the evaluation again with this mt-eval (`mt-eval run --method METHOD --corpus CORPUS`, with "
                  "the run's settings) for a card it can verify: no command adds these fields to an existing card")


def _json(value: object) -> str:
    return msgspec.json.encode(value).decode()


def written_problems(card: RunCard, data: dict[str, Any]) -> list[tuple[str, str]]:
    """(JSON path, message) for each fact of the module docstring the card states otherwise than a run writes it."""
    return _covariates(card) + _runtime(card) + _sandbox(card) + _fields(card, data)


def _covariates(card: RunCard) -> list[tuple[str, str]]:
    covariates, wrong = card.covariates, []
    for name, why in (covariates.not_applicable or {}).items():
        if name not in MARKED:
            where = f".{name}" if name.isidentifier() else f"[{_json(name)}]"
            wrong.append((f"$.covariates.not_applicable{where}", f"the card marks {_json(name)} not applicable, but a "
                          "run marks only model and temperature so (when the method has no model, or no served one, "
                          "and the run was given none); it records every other covariate, or leaves it missing"))
        elif (value := getattr(covariates, name)) is not None:
            wrong.append((f"$.covariates.{name}", f"the card says {_json(value)}, but it marks {name} not applicable "
                          f"($.covariates.not_applicable.{name}: {_json(why)}): a run records a covariate's value or "
                          "why it does not apply, never both"))
    return wrong


def _runtime(card: RunCard) -> list[tuple[str, str]]:
    from typing import get_args

    from mt_eval.loader import Runtime

    runtime = card.method.runtime
    own, _, confined = runtime.partition(SANDBOXED)
    if own in get_args(Runtime) and confined in ("", *(f"{tool})" for tool in TOOLS)):
        return []
    if runtime == ISOLATED or runtime.startswith(ISOLATED + ": "):
        return []
    return [("$.method.runtime", f"the card says {_json(runtime)}, a runtime no run records: a run records the "
             f"plugin's ({', '.join(get_args(Runtime))}), {_json(ISOLATED)}, or the plugin's with the tool that "
             "confined it (\"python (sandboxed: bubblewrap)\")")]


def _sandbox(card: RunCard) -> list[tuple[str, str]]:
    sandbox, runtime = card.sandbox, card.method.runtime
    if sandbox is None:  # (an eligible card without one is named by its eligibility: mt_eval.harness.verify_fairness)
        return []
    wrong = []
    if sandbox.tool not in TOOLS:
        wrong.append(("$.sandbox.tool", f"the card says {_json(sandbox.tool)}, a tool mt-eval never confines a method "
                      f"with: a run records {' or '.join(map(_json, TOOLS))}"))
    elif runtime.endswith(")") and SANDBOXED in runtime and sandbox.tool != (
            named := runtime.rpartition(SANDBOXED)[2].removesuffix(")")):
        wrong.append(("$.sandbox.tool", f"the card says {_json(sandbox.tool)}, but its method ran sandboxed with "
                      f"{_json(named)} ($.method.runtime: {_json(runtime)})"))
    policy = sandbox.policy
    if (policy.network == "gateway") != (policy.gateway_url is not None):
        wrong.append(("$.sandbox.policy.gateway_url", f"the card says {_json(policy.gateway_url)} with network "
                      f"{_json(policy.network)} ($.sandbox.policy.network): a run gives the gateway's address exactly "
                      "when the network is the gateway"))
    return wrong


def _fields(card: RunCard, data: dict[str, Any]) -> list[tuple[str, str]]:
    wrong = []
    if NEWEST in data:
        wrong = [(f"$.{name}", f"the card has no {_json(name)}, which a run always writes (every card with "
                  f"$.{NEWEST}, as this one has, states it)") for name in WRITTEN if name not in data]
    if "status" in data and card.status is None and card.failures is not None:  # (absent: named as missing)
        wrong.append(("$.status", "the card says null, but it lists the run's failures ($.failures): a run that "
                      "records its failures records how it ended too (complete, partial or failed)"))
    return wrong


def older_card_problems(data: dict[str, Any]) -> list[tuple[str, str]]:
    """(JSON path, message) for each field of `OUTCOME` a card without ``results_log`` lacks (one with it is
    `written_problems`'): the card is of an older mt-eval, or had them taken out; the fix is `OLDER_CARD_FIX`."""
    if NEWEST in data:
        return []
    return [(f"$.{name}", f"the card has no {_json(name)} ({what}): every run card mt-eval writes states it, and "
             "this one is from an older mt-eval (0.1.0 before 1 December 2026) or had it taken out: without it, how "
             "the run ended cannot be checked") for name, what in OUTCOME.items() if name not in data]
