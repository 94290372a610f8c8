"""Check the answers before any file is written; print every problem with its fix, then exit 1.

Cookiecutter renders this file with the answers before running it.
"""

from __future__ import annotations

import json
import re
import sys

ANSWERS = json.loads(r"""{{ cookiecutter | jsonify }}""")
OPTIONS = json.loads(r"""{{ _cookiecutter | jsonify }}""")  # the questions of cookiecutter.json, as asked

KEBAB = r"^[a-z0-9]+(-[a-z0-9]+)*$"  # as mt_eval.manifest.KEBAB
CHOICES = {key: value for key, value in OPTIONS.items() if isinstance(value, list)}
BOOLEANS = [key for key, value in OPTIONS.items() if isinstance(value, bool)]
TEXT = [key for key, value in OPTIONS.items() if isinstance(value, str)]


def suggest_id(text: str) -> str:
    return "-".join(re.findall(r"[a-z0-9]+", text.lower())) or "my-method"


def problems(answers: dict[str, object]) -> list[str]:
    found = []
    for key in TEXT:
        value = answers.get(key)
        if not isinstance(value, str):
            found.append(f"{key}: expected text, got {json.dumps(value)}")
        elif any(ord(c) < 32 for c in value):
            found.append(f"{key}: {json.dumps(value)} contains control characters (line breaks, tabs): remove them")
    for key in BOOLEANS:
        if not isinstance(answers.get(key), bool):
            found.append(f"{key}: expected true or false, got {json.dumps(answers.get(key))}")
    for key, choices in CHOICES.items():
        if answers.get(key) not in choices:
            found.append(f"{key}: {json.dumps(answers.get(key))} is not one of {', '.join(choices)}")
    name, method_id = answers.get("method_name"), answers.get("method_id")
    if isinstance(name, str) and not name.strip():
        found.append("method_name: empty: give the name people will call the method by")
    if isinstance(method_id, str) and not re.match(KEBAB, method_id):
        found.append(f'method_id: "{method_id}" is not kebab-case: use lowercase letters and digits in words '
                     f'joined by hyphens, e.g. "{suggest_id(method_id)}"')
    licence = answers.get("method_license")
    if isinstance(licence, str) and not licence.strip():
        found.append('method_license: empty: give an SPDX licence such as "Apache-2.0", or "proprietary"')
    url = answers.get("open_source_url")
    if isinstance(url, str) and url and not url.startswith(("https://", "http://")):
        found.append(f'open_source_url: "{url}" is not a web address: give an https:// URL')
    if answers.get("method_kind") == "decision" and answers.get("dependency_profile") != "self-contained":
        found.append(f"dependency_profile: a decision method is generated self-contained (a word-overlap judge, "
                     f"class S), not {answers.get('dependency_profile')}: answer dependency_profile=self-contained "
                     "and add what your judge needs to method.json (an LLM judge: see the SDK's llm-logprob-grader "
                     "example)")
    if answers.get("open_source") is True and not url:
        found.append("open_source_url: required when open_source is true: give the public address of the code")
    return found


def main() -> int:
    found = problems(ANSWERS)
    for problem in found:
        print(f"error: {problem}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
