"""``mt-eval new``: a method plugin from the cookiecutter template ``templates/method-plugin``.

The template is rendered into a staging directory beside the destination, its files are validated
(`mt_eval.validate`, strict) and only then moved into place: refused answers or an invalid result leave
nothing behind. Its hooks check the answers (``pre_gen_project``), keep the chosen runtime's files and
record the answers in ``.mt-eval-answers.json`` (``post_gen_project``). Nothing heavy is imported until
it runs.
"""

from __future__ import annotations

TYPE_CHECKING = False  # see mt_eval/__init__.py
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path
    from typing import Any

    from mt_eval.validate import PluginReport

TEMPLATE_NAME = "method-plugin"
YES = ("true", "yes", "y", "on", "1")
NO = ("false", "no", "n", "off", "0")


class AnswerError(Exception):
    """An answer from --set or --answers cannot be used; the message says which and why."""


def template_directory() -> Path:
    """The plugin template: packaged with the SDK (wheel), or in the source tree."""
    from mt_eval.resources import resource

    return resource("templates", TEMPLATE_NAME)


def template_questions(template: Path) -> dict[str, Any]:
    """The questions of the template's cookiecutter.json with their defaults (a list: the choices)."""
    import json

    data = json.loads((template / "cookiecutter.json").read_text(encoding="utf-8"))
    return {key: value for key, value in data.items() if not key.startswith("_")}


def checked_answer(key: str, value: object, questions: dict[str, Any], origin: str) -> str | bool:
    """``value`` as the answer to question ``key``, or `AnswerError` saying what would be accepted."""
    import json

    if key not in questions:
        import difflib

        close = difflib.get_close_matches(key, list(questions), n=1, cutoff=0.6)
        meant = f' (did you mean "{close[0]}"?)' if close else ""
        raise AnswerError(f'{origin}: no question "{key}"{meant}; the questions are {", ".join(questions)}')
    default = questions[key]
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in YES + NO:
            return value.strip().lower() in YES
        raise AnswerError(f"{origin}: {key} is true or false, not {json.dumps(value, ensure_ascii=False)}")
    if isinstance(default, list):
        if value not in default:
            raise AnswerError(f"{origin}: {key} is one of {', '.join(default)}; "
                              f"not {json.dumps(value, ensure_ascii=False)}")
        return str(value)
    if not isinstance(value, str):
        raise AnswerError(f"{origin}: {key} is text, not {json.dumps(value, ensure_ascii=False)}")
    if key == "method_id" and not value:  # (the plugin's directory is named by it: nothing could be rendered)
        from mt_eval.scaffold_answers import key_problems

        raise AnswerError(f"{origin}: method_id {key_problems(key, {key: value}, questions)[0]}")
    return value


def parse_settings(settings: list[str], questions: dict[str, Any], refused: list[str]) -> dict[str, str | bool]:
    """``--set KEY=VALUE`` options → answers; what cannot be used is added to ``refused``."""
    answers: dict[str, str | bool] = {}
    for setting in settings:
        key, equals, value = setting.partition("=")
        if not equals or not key.strip():
            refused.append(f'--set "{setting}": write KEY=VALUE, e.g. --set runtime=node')
            continue
        try:
            answers[key.strip()] = checked_answer(key.strip(), value, questions, f"--set {setting}")
        except AnswerError as exc:
            refused.append(str(exc))
    return answers


def read_answers(file: str, questions: dict[str, Any], refused: list[str]) -> dict[str, str | bool]:
    """Answers from a JSON file: ``{"answers": {...}}`` as recorded in a plugin, or a plain object; an answer that
    cannot be used is added to ``refused`` (a file that cannot be read is an `AnswerError`)."""
    import json
    from pathlib import Path

    try:
        raw = Path(file).read_bytes()
    except OSError as exc:
        raise AnswerError(f"--answers {file}: cannot be read: {exc.strerror or exc}; give a JSON file of answers, "
                          "e.g. a plugin's .mt-eval-answers.json") from exc
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise AnswerError(f"--answers {file}: cannot read it as JSON: {exc}") from exc
    if isinstance(data, dict) and isinstance(data.get("answers"), dict):
        data = data["answers"]
    if not isinstance(data, dict):
        raise AnswerError(f'--answers {file}: expected a JSON object of answers, e.g. {{"runtime": "node"}}')
    answers: dict[str, str | bool] = {}
    for key, value in data.items():
        try:
            answers[key] = checked_answer(key, value, questions, f"--answers {file}")
        except AnswerError as exc:
            refused.append(str(exc))
    return answers


def answers_from_directory(directory: Path) -> dict[str, str]:
    """Default name and id from the directory the user named (``my-glossary`` → "My Glossary", my-glossary; ``日本語``
    → "日本語" and no id); bytes of its name that are not UTF-8 are left out of them."""
    import re

    from mt_eval.manifest import kebab_case
    from mt_eval.scaffold_answers import shortened_id

    name = re.sub("[\ud800-\udfff]", "", directory.resolve().name)
    method_id = shortened_id(kebab_case(name))
    words = [w for w in re.split(r"[-_\s]+", name) if w]
    named = {"method_name": " ".join(w[:1].upper() + w[1:] for w in words)} if any(c.isalnum() for c in name) else {}
    return {**named, "method_id": method_id} if method_id else named


def render(template: Path, staging: Path, answers: dict[str, str | bool], *, no_input: bool,
           also: Callable[[str, Any], list[str]] | None = None) -> tuple[Path, dict[str, Any]]:
    """Ask the questions (unless ``no_input``: then every answer is checked at once; ``also(key, value)`` checks
    an answer as it is given) and render the template under ``staging``; `AnswerError` when an answer is
    refused."""
    import sys
    from pathlib import Path

    from cookiecutter.generate import generate_context, generate_files  # type: ignore[import-untyped]
    from cookiecutter.prompt import prompt_for_config  # type: ignore[import-untyped]

    from mt_eval.licenses import check_licence
    from mt_eval.scaffold_answers import answer_problems, ask_questions

    if no_input:  # (cookiecutter renders each answer as a template: the user's are kept literal)
        answers = {key: _literal(value) if isinstance(value, str) else value for key, value in answers.items()}
    context = generate_context(context_file=str(template / "cookiecutter.json"), extra_context=answers)
    context["_cookiecutter"] = {k: v for k, v in context["cookiecutter"].items() if not k.startswith("_")}
    context["cookiecutter"].update(prompt_for_config(context, True) if no_input else ask_questions(context, also))
    if no_input and (problems := answer_problems(context["cookiecutter"], context["_cookiecutter"])):
        for problem in problems:  # (before cookiecutter names the directory: an id made empty would be the staging)
            print(f"error: {problem}", file=sys.stderr)
        raise AnswerError("the answers above were refused; nothing was written")
    licence = context["cookiecutter"].get("method_license")
    if isinstance(licence, str) and (spdx := check_licence(licence).normalized) and spdx != licence:
        print(f'mt-eval new: method_license "{licence}" is taken as {spdx}, its SPDX id', file=sys.stderr)
        context["cookiecutter"]["method_license"] = spdx  # (the card says what validation reads it as)
    context["cookiecutter"].update(_template=str(template), _output_dir=str(staging), _repo_dir=str(template),
                                   _checkout=None)
    with _QuietAndContained(staging):
        project = generate_files(repo_dir=str(template), context=context, output_dir=str(staging))
    return Path(project), dict(context["cookiecutter"])


def _literal(text: str) -> str:
    """``text`` as a Jinja template that renders as itself: each ``{`` (which may start ``{{``, ``{%`` or ``{#``)
    written as an expression giving it."""
    return text.replace("{", "{{ '{' }}")


def new_plugin(directory: Path | None, *, settings: Sequence[str] = (), answers_file: str | None = None,
               no_input: bool = False, force: bool = False) -> int:
    """Create a plugin in ``directory`` (None: ./METHOD_ID) with the answers given as ``KEY=VALUE`` ``settings``,
    in ``answers_file`` and (unless ``no_input``) asked for; the exit status: 0 when the plugin was created, 2 for
    unusable answers, 1 when it failed."""
    import shutil
    import sys
    import tempfile
    from pathlib import Path

    from mt_eval.scaffold_files import (
        changed_by_user,
        left_behind,
        may_replace,
        occupied,
        of_another_kind,
        place,
        remove_left_behind,
        unwritable,
    )

    def fail(message: str, status: int = 2) -> int:
        print(f"mt-eval new: {message}", file=sys.stderr)
        return status

    template = template_directory()
    if not (template / "cookiecutter.json").is_file():
        return fail(f"the plugin template is missing ({template}): reinstall mt-eval-sdk", 1)
    destination = directory
    if destination is not None and (problem := occupied(destination, force=force)):
        return fail(problem)
    refused: list[str] = []
    try:
        questions = template_questions(template)
        answers: dict[str, str | bool] = dict(answers_from_directory(destination)) if destination else {}
        given = {**(read_answers(answers_file, questions, refused) if answers_file else {}),
                 **parse_settings(list(settings), questions, refused)}
        answers.update(given)
    except AnswerError as exc:
        return fail(str(exc))
    if refused:  # every answer that cannot be used at once: with them, those given that break a rule
        from mt_eval.scaffold_answers import key_problems

        refused += [f"{key}: {problem}" for key in given for problem in key_problems(key, answers, questions)]
        for problem in refused:
            print(f"error: {problem}", file=sys.stderr)
        return fail("the answers above were refused; nothing was written")
    if destination is not None and no_input and "method_id" not in answers:
        from mt_eval.scaffold_files import display

        return fail(f'no method id can be made from the name "{display(destination)}" (an id is lowercase letters '
                    "a-z and digits in words joined by hyphens): give one with --set method_id=ID, e.g. --set "
                    "method_id=my-method; nothing was written")
    parent = (destination.parent if destination is not None else Path.cwd()).absolute()
    existing = next(p for p in (parent, *parent.parents) if p.is_dir())  # nothing is created before it is needed
    try:
        staging = Path(tempfile.mkdtemp(prefix=".mt-eval-new-", dir=existing))
    except OSError as exc:  # read-only, not ours, a file system that takes no directories (/proc)
        if destination is not None and destination.absolute() == existing:  # (`mt-eval new .`: it is there)
            return fail(f"{existing} cannot be written: {exc.strerror or exc}; make it writable, or choose another "
                        "directory; nothing was written", 1)
        return fail(f"{destination or 'the plugin'} cannot be created in {existing}: {exc.strerror or exc}; "
                    "choose a directory you can write in", 1)
    try:
        also = None if destination is not None else _directory_of_id(force=force)
        generated, answered = _render_reporting_errors(template, staging, answers, no_input=no_input, also=also)
        if generated is None:
            return 2
        target = destination if destination is not None else Path(answered["method_id"])
        if destination is None and (problem := occupied(target, force=force)):
            return fail(problem)
        report = _validated(generated, target)
        if report is None:
            return 1
        if problem := of_another_kind(generated, target):
            return fail(problem)
        if target.exists() and (problem := unwritable(generated, target)):
            return fail(problem, 1)
        changed = changed_by_user(generated, target)
        if changed and not may_replace(changed, target, ask=not no_input):
            return fail("nothing was written: your changed files are as they were", 1)
        earlier = left_behind(generated, target) if target.is_dir() else ([], [])
        if problem := place(generated, target, backups=changed):
            return fail(problem, 1)
        remove_left_behind(target, *earlier)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    print(next_steps(target, answered, report))
    return 0


def next_steps(target: Path, answers: dict[str, Any], report: PluginReport) -> str:
    """What was created and the commands to run next, exactly as they work here (``mt-eval`` and ``python``
    by their full paths when they are not the ones on PATH)."""
    import importlib.util
    import shlex
    import shutil
    from pathlib import Path

    from mt_eval.scaffold_files import display
    from mt_eval.validate import describe_class

    where = display(target)
    where = f"./{where}" if where.startswith("-") else where  # (cd would read -dir as an option)
    mt_eval, python = commands_here()
    here = target.resolve() == Path.cwd().resolve()  # (`mt-eval new .`: no "cd .")
    lines = [f"Created {'it in this directory' if here else where}: {answers['method_name']} ({report.method_id}, "
             f"class {report.method_class}, runtime {answers['runtime']}), {describe_class(report)}", "", "Next:",
             *([] if here else [f"  cd {shlex.quote(where)}"]), f"  {mt_eval} validate ."]
    if answers["runtime"] in ("python", "both"):
        if importlib.util.find_spec("pytest") is None:
            lines.append(f"  {python} -m pip install pytest     # once: the test runner, beside the SDK")
        node_entry = "decide.js" if answers["__family"] == "decision" else "translate.js"
        lines.append(f"  {python} -m pytest tests" + (f"       # pipeline.py, and its parity with {node_entry}"
                                                      if answers["runtime"] == "both" else ""))
    if answers["runtime"] in ("node", "both"):  # (no node on PATH: the line says what it needs, not a bare failure)
        lines.append("  node --test" if shutil.which("node") else
                     "  node --test     # needs Node.js 20+ on PATH, none is here (apt-get install nodejs npm)")
    if answers["__family"] == "glossary":
        lines.append(f'  {mt_eval} translate . "Hello, my friend!"')
        lines.append(f"  {mt_eval} run --method . --corpus sample/corpus.jsonl   # scores and a run card, in ../runs/; "
                     "exit 5: too few entries for a headline")
    elif answers["__family"] == "decision":
        lines.append(f"  {mt_eval} decide run --method . --corpus sample/decisions.jsonl")
    else:
        lines.append("  # a run needs " + ("config.base_url and config.model" if answers["__family"] == "chat"
                                           else 'config.params["api_url"]') + ": see README.md")
    return "\n".join(lines)


def commands_here() -> tuple[str, str]:
    """How to run this ``mt-eval`` and its Python from anywhere: their names when PATH finds these very
    programs, else their full paths."""
    import os
    import shlex
    import shutil
    import sys

    script = os.path.abspath(sys.argv[0]) if sys.argv and os.path.basename(sys.argv[0]) == "mt-eval" else None
    on_path = shutil.which("mt-eval")
    if script is None:
        mt_eval = "mt-eval" if on_path else f"{shlex.quote(sys.executable)} -m mt_eval.cli"
    else:
        mt_eval = "mt-eval" if on_path and os.path.samefile(on_path, script) else shlex.quote(script)
    found = shutil.which("python")
    python = "python" if found and os.path.abspath(found) == os.path.abspath(sys.executable) else shlex.quote(
        sys.executable)
    return mt_eval, python


def _directory_of_id(*, force: bool) -> Callable[[str, Any], list[str]]:
    """Without DIR the plugin is made in ./METHOD_ID: a check of the id, asked, that this directory can be used."""
    from pathlib import Path

    from mt_eval.scaffold_files import occupied

    def check(key: str, value: Any) -> list[str]:
        problem = occupied(Path(value), force=force) if key == "method_id" and value else None
        return [f"{problem} (without DIR the plugin is made in ./METHOD_ID)"] if problem else []
    return check


def _render_reporting_errors(template: Path, staging: Path, answers: dict[str, str | bool], *, no_input: bool,
                             also: Callable[[str, Any], list[str]] | None) -> tuple[Path | None, dict[str, Any]]:
    import sys

    from cookiecutter.exceptions import (  # type: ignore[import-untyped]
        CookiecutterException,
        FailedHookException,
        UndefinedVariableInTemplate,
    )

    try:
        return render(template, staging, answers, no_input=no_input, also=also)
    except FailedHookException:
        message = "the answers above were refused; nothing was written"
    except AnswerError as exc:
        message = str(exc)
    except UndefinedVariableInTemplate as exc:  # its str() would print the whole context
        message = (f"{exc.message}: {exc.error.message} (answers are Jinja templates: write {{{{ '{{{{' }}}} for "
                   "a literal {{); nothing was written")
    except EOFError:
        print()  # (ends the unanswered question's line)
        message = "standard input ended before every question was answered: use --no-input with --set"
    except (CookiecutterException, ValueError) as exc:
        message = f"{exc}; nothing was written"
    print(f"mt-eval new: {message}", file=sys.stderr)
    return None, {}


def _validated(generated: Path, target: Path) -> PluginReport | None:
    """The strict validation report of the rendered plugin, or None (after printing why) if it fails."""
    import sys

    from mt_eval.validate import validate_plugin

    report = validate_plugin(generated, run_code=False)
    if report.passed(strict=True):
        return report
    print("mt-eval new: the generated plugin does not validate; nothing was written:", file=sys.stderr)
    for problem in report.problems:
        print("  " + problem.render().replace(str(generated), str(target)), file=sys.stderr)
    return None


class _QuietAndContained:
    """While rendering: cookiecutter's rendered hook scripts go to ``staging`` (removed afterwards; cookiecutter
    would leave them in the system temporary directory), and its log record of a refused answer stays silent
    (the hook has already printed why)."""

    def __init__(self, staging: Path) -> None:
        self.staging = staging

    def __enter__(self) -> None:
        import logging
        import tempfile

        self.logger = logging.getLogger("cookiecutter")
        self.null = logging.NullHandler()
        self.saved = tempfile.tempdir, self.logger.propagate
        tempfile.tempdir, self.logger.propagate = str(self.staging), False
        self.logger.addHandler(self.null)

    def __exit__(self, *exc_info: object) -> None:
        import tempfile

        tempfile.tempdir, self.logger.propagate = self.saved
        self.logger.removeHandler(self.null)
