"""Check the answers before any file is written; print every problem with its fix, then exit 1.

Cookiecutter renders this file with the answers before running it with the Python that runs ``mt-eval new``;
the rules are the SDK's (`mt_eval.scaffold_answers`), the same that check each answer given interactively.
"""

from __future__ import annotations

import json
import sys

from mt_eval.scaffold_answers import answer_problems

ANSWERS = json.loads(r"""{{ cookiecutter | jsonify }}""")
OPTIONS = json.loads(r"""{{ _cookiecutter | jsonify }}""")  # the questions of cookiecutter.json, as asked


def main() -> int:
    found = answer_problems(ANSWERS, OPTIONS)
    for problem in found:
        print(f"error: {problem}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
