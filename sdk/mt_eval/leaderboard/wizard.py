"""The publish wizard: asks for the method-card fields a run card lacks, re-asking with the reason until
each answer is valid. Enter keeps the value shown in brackets. Its questions and words go to stderr: standard
output is publish's result (its JSON with --json), which a redirection must get alone."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, get_args

from mt_eval.control_chars import escaped_for_terminal
from mt_eval.method_card import Paradigm

Ask = Callable[[str], str]
Say = Callable[[str], None]
PARADIGMS = [p for p in get_args(Paradigm) if p != "unknown"]
YES, NO = ("y", "yes", "true", "1"), ("n", "no", "false", "0")


class WizardAborted(Exception):
    """Input ended before every question was answered."""


def _ask(ask: Ask, say: Say, question: str, default: str | None, check: Callable[[str], Any]) -> Any:
    """Ask until there is an answer (or a default) that ``check`` accepts; it raises ValueError with the reason.
    The default, the card's own value, is shown with its invisible characters escaped (and kept as it is)."""
    shown = f" [{escaped_for_terminal(default)}]" if default else ""
    while True:
        try:
            answer = ask(f"{question}{shown}: ").strip()
        except EOFError as exc:
            raise WizardAborted("input ended before every question was answered") from exc
        if not answer and default is not None:
            answer = default
        if not answer:
            say("  an answer is required; try again")
            continue
        try:
            return check(answer)
        except ValueError as exc:
            say(f"  {exc}; try again")


def _paradigm(answer: str) -> str:
    if answer.isdigit() and 1 <= int(answer) <= len(PARADIGMS):
        return str(PARADIGMS[int(answer) - 1])
    if answer not in PARADIGMS:
        raise ValueError(f"{answer!r} is not one of {', '.join(PARADIGMS)} (or their numbers)")
    return str(answer)


def _tools(answer: str) -> list[str]:
    if answer.lower() in ("", "none", "-"):
        return []
    tools = [t.strip() for t in answer.split(",")]
    if any(not t for t in tools):
        raise ValueError("separate tool names with commas, e.g. glossary, spell-checker")
    return tools


def _yes_no(answer: str) -> bool:
    if answer.lower() in YES:
        return True
    if answer.lower() in NO:
        return False
    raise ValueError("answer yes or no")


def _url(answer: str) -> str:
    if not answer.startswith(("https://", "http://")) or len(answer) < 12 or " " in answer:
        raise ValueError(f"{answer!r} is not a web address (http:// or https://...)" if answer else
                         "an open-source method needs the public address of its code")
    return answer


def _licence(answer: str) -> str | None:
    if not answer or answer == "-":
        return None
    from mt_eval.licenses import check_licence

    licence = check_licence(answer)
    if not licence.ok:
        raise ValueError(licence.message or f"{answer!r} is not an SPDX licence expression")
    return answer


def ask_on_stderr(prompt: str) -> str:
    """``input()`` with its prompt on stderr (line editing kept at a terminal); EOFError when input ends."""
    sys.stderr.write(prompt)
    sys.stderr.flush()
    return input()


def say_on_stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def run_wizard(card: dict[str, Any], missing: list[str], ask: Ask = ask_on_stderr,
               say: Say = say_on_stderr) -> dict[str, Any]:
    """The card with the wizard's answers: every question is asked, the current value as its default."""
    say(f"The method card of {card.get('method_id')} lacks {', '.join(missing)}. Answer a few questions "
        "(Enter keeps the value in brackets).")
    say(f"  method class {card.get('class')}, dependency class {card.get('dependency_class') or 'undeclared'} "
        "(from method.json, not asked)")
    answers = dict(card)
    answers["name"] = _ask(ask, say, "Method name", card.get("name"), str)
    answers["description"] = _ask(ask, say, "One-sentence description (what it is, not how it works)",
                                  card.get("description"), str)
    say("  paradigms: " + ", ".join(f"{i}) {p}" for i, p in enumerate(PARADIGMS, start=1)))
    current = card.get("paradigm")
    answers["paradigm"] = _ask(ask, say, "Paradigm", current if current in PARADIGMS else None, _paradigm)
    answers["tools_used"] = _ask(ask, say, "Tools used, comma-separated (none: Enter or 'none')",
                                 ", ".join(card.get("tools_used") or []) or "none", _tools)
    was = card.get("open_source")
    answers["open_source"] = _ask(ask, say, "Is the method open source? (yes/no)",
                                  None if was is None else ("yes" if was else "no"), _yes_no)
    if answers["open_source"]:
        answers["open_source_url"] = _ask(ask, say, "Public address of its code", card.get("open_source_url"), _url)
    else:
        answers.pop("open_source_url", None)
    licence = _ask(ask, say, "The method's licence, SPDX (Enter or '-' to skip)", card.get("license") or "-",
                   _licence)
    if licence is None:
        answers.pop("license", None)
    else:
        answers["license"] = licence
    return answers
