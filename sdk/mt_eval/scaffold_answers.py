"""The answers of ``mt-eval new``: the rules each one must meet, and asking the questions one at a time.

One set of rules serves both places that check answers: the template's pre-generation hook
(``templates/method-plugin/hooks/pre_gen_project.py``) checks every answer at once (``--no-input``, ``--set``,
``--answers``), and `ask_questions` checks each answer as it is given and asks again with the reason, so a bad
id never discards the answers before it.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Mapping
from typing import Any

from mt_eval.control_chars import first_control
from mt_eval.manifest import KEBAB

METHOD_ID_MAX = 64  # the plugin's directory and its runs' (``ID__CORPUS``) are named by it, in 255 bytes


def suggest_id(text: str) -> str:
    return shortened_id("-".join(re.findall(r"[a-z0-9]+", text.lower()))) or "my-method"


def shortened_id(method_id: str) -> str:
    """``method_id`` cut after its last whole word that keeps it within `METHOD_ID_MAX` characters."""
    if len(method_id) <= METHOD_ID_MAX:
        return method_id
    return method_id[:METHOD_ID_MAX + 1].rsplit("-", 1)[0][:METHOD_ID_MAX]


def answer_problems(answers: Mapping[str, Any], questions: Mapping[str, Any]) -> list[str]:
    """Every problem of a whole set of answers, as ``key: what is wrong and the fix``."""
    return [f"{key}: {problem}" for key in questions if not key.startswith("_")
            for problem in key_problems(key, answers, questions)]


def key_problems(key: str, answers: Mapping[str, Any], questions: Mapping[str, Any]) -> list[str]:
    """What is wrong with the answer to ``key``, judged with the answers given so far."""
    value, default = answers.get(key), questions.get(key)
    found = []
    if isinstance(default, bool):
        if not isinstance(value, bool):
            found.append(f"expected true or false, got {json.dumps(value)}")
        return found
    if isinstance(default, list):
        if value not in default:
            found.append(f"{json.dumps(value)} is not one of {', '.join(default)}")
    elif not isinstance(value, str):
        return [f"expected text, got {json.dumps(value)}"]
    elif (what := _line_breaker(value)) is not None:
        found.append(f"{json.dumps(value)} contains {what}: remove it")
    found += _rule(key, value, answers)
    return found


def _line_breaker(text: str) -> str | None:
    """The first character of ``text`` that would break a generated file's line or a terminal's display, in words:
    a byte that is not UTF-8 (a lone surrogate: no file can hold it), a control character (C0 with tabs and line
    breaks, DEL, C1 such as U+0085, the next line) or U+2028/U+2029, which Python's and editors' line splitting take
    for line breaks; None when there is none."""
    lone = next((c for c in text if "\ud800" <= c <= "\udfff"), None)
    if lone is not None:  # (bytes that are not UTF-8, as a terminal or an argument gives them)
        return (f"a byte that is not UTF-8 (0x{ord(lone) - 0xDC00:02x}: the terminal or file is not UTF-8)"
                if lone >= "\udc80" else f"a lone surrogate (U+{ord(lone):04X}), which is not valid Unicode")
    control = first_control(text)
    if control is not None:
        return f"a control character ({control}; line breaks, tabs and the like)"
    separator = next((c for c in text if c in "\u2028\u2029"), None)
    if separator is not None:
        return f"a {'line' if separator == chr(0x2028) else 'paragraph'} separator (U+{ord(separator):04X})"
    return None


def _rule(key: str, value: Any, answers: Mapping[str, Any]) -> list[str]:
    """The rule particular to one question."""
    if key == "method_name" and isinstance(value, str) and not value.strip():
        return ["empty: give the name people will call the method by"]
    if key == "method_id" and isinstance(value, str) and not re.match(KEBAB, value):
        return [f'"{value}" is not kebab-case: use lowercase letters and digits in words joined by hyphens, e.g. '
                f'"{suggest_id(value)}"']
    if key == "method_id" and isinstance(value, str) and len(value) > METHOD_ID_MAX:
        return [f'"{value[:24]}…" is {len(value)} characters long: the plugin\'s directory and its runs\' directories '
                f'are named by it; give one of at most {METHOD_ID_MAX}, e.g. "{shortened_id(value)}"']
    if key == "method_license" and isinstance(value, str):
        if not value.strip():
            return ['empty: give an SPDX licence such as "Apache-2.0", or "proprietary"']
        from mt_eval.licenses import check_licence

        licence = check_licence(value)  # (as the method card is validated: refused before anything is generated)
        if not licence.ok:
            return [f"{licence.message}; {licence.hint}" if licence.hint else str(licence.message)]
    if key == "dependency_profile" and answers.get("method_kind") == "decision" and value != "self-contained":
        return [f"a decision method is generated self-contained (a word-overlap judge, class S), not {value}: answer "
                "dependency_profile=self-contained and add what your judge needs to method.json (an LLM judge: see "
                "the SDK's llm-logprob-grader example)"]
    if key == "open_source_url" and isinstance(value, str):
        if value and not value.startswith(("https://", "http://")):
            return [f'"{value}" is not a web address: give an https:// URL']
        if answers.get("open_source") is True and not value:
            return ["required when open_source is true: give the public address of the code"]
    return []


def ask_questions(context: dict[str, Any], also: Callable[[str, Any], list[str]] | None = None) -> dict[str, Any]:
    """Ask the template's questions one at a time (cookiecutter's prompts, its defaults and ``--set`` values
    as proposals), checking each answer at once (by the rules, and by ``also(key, value)`` when given) and asking
    again with the reason; the answers, rendered."""
    from cookiecutter.environment import StrictEnvironment  # type: ignore[import-untyped]
    from cookiecutter.prompt import (  # type: ignore[import-untyped]
        read_user_variable,
        read_user_yes_no,
        render_variable,
    )

    questions = context["cookiecutter"]
    prompts = questions.pop("__prompts__", {})
    env = StrictEnvironment(context=context)
    visible = [key for key in questions if not key.startswith("_")]
    answers: dict[str, Any] = {}
    for key, raw in questions.items():
        if key.startswith("__"):
            answers[key] = render_variable(env, raw, answers)
            continue
        if key.startswith("_"):
            answers[key] = raw
            continue
        prefix = f"  [dim][{visible.index(key) + 1}/{len(visible)}][/] "
        while True:
            if isinstance(raw, list):
                value = ask_choice(key, [render_variable(env, option, answers) for option in raw], prompts, prefix)
            elif isinstance(raw, bool):
                value = read_user_yes_no(key, raw, prompts, prefix)
            else:
                value = read_user_variable(key, render_variable(env, raw, answers), prompts, prefix)
            problems = key_problems(key, {**answers, key: value}, _kinds(questions))
            problems = problems or (also(key, value) if also is not None else [])
            if not problems:
                break
            for problem in problems:
                print(f"  error: {key}: {problem}; answer again", file=sys.stderr)
        answers[key] = value
    return answers


def ask_choice(key: str, options: list[str], prompts: Mapping[str, Any], prefix: str) -> str:
    """One choice question as cookiecutter asks it (its options numbered, the first proposed), answered by a
    number or by an option's name in any case ("node" for runtime, as ``--help`` and ``--set`` name it)."""
    from rich.prompt import Prompt

    texts = prompts.get(key)
    texts = texts if isinstance(texts, dict) else {"__prompt__": texts or f"Select {key}"}
    numbers = {str(number): option for number, option in enumerate(options, 1)}
    by_name = {option.lower(): number for number, option in numbers.items()}

    class ChoicePrompt(Prompt):
        illegal_choice_message = (f"[prompt.invalid]answer with a number (1-{len(options)}) or a name: "
                                  f"{', '.join(options)}")

        def process_response(self, value: str) -> str:
            return super().process_response(by_name.get(value.strip().lower(), value))

    lines = [f"{prefix}{texts['__prompt__']}",
             *(f"    [bold magenta]{number}[/] - [bold]{texts.get(option, option)}[/]"
               for number, option in numbers.items()), "    Choose from"]
    return numbers[ChoicePrompt.ask("\n".join(lines), choices=list(numbers), default="1")]


def _kinds(questions: Mapping[str, Any]) -> dict[str, Any]:
    """Each question's kind as the rules read it: a list of choices, a bool, or text (``""``)."""
    return {key: raw if isinstance(raw, (list, bool)) else "" for key, raw in questions.items()}
