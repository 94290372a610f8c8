"""The README followed as a new user follows it, from a fresh copy of the repository: its first command, then
each journey of "The first hour" — a method of one's own (``mt-eval new`` and the steps it prints), a translator
program wrapped by the recipe, and an app installing the Node package built by ``nox -s build``.

The commands come from the README itself (its code blocks, with ``/path/to/…`` replaced by real paths), so
the README cannot drift from what works. The copy holds what a clone holds: the files git tracks (and new
files it would track). The machine is as fresh as this one allows: no ``mt-eval`` on PATH, no virtual
environment active, no ``MT_EVAL``; only python3, node and npm (and pip and npm's registries).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
STEP_TIMEOUT = 1800


def fresh_environment() -> dict[str, str]:
    """This machine's environment, minus whatever would make it less fresh than a new user's."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("MT_EVAL", "NOX", "VIRTUAL_ENV", "PYTHON", "npm_", "NODE_OPTIONS"))}
    keep = [d for d in env.get("PATH", "").split(os.pathsep)
            if d and not (Path(d) / "mt-eval").exists() and not (Path(d) / "pyvenv.cfg").exists()
            and not (Path(d).parent / "pyvenv.cfg").exists()]
    env["PATH"] = os.pathsep.join(keep)
    return env


ENV = fresh_environment()


def sh(script: str, cwd: Path, *, env: dict[str, str] | None = None, stdin: str | None = None,
       timeout: float = STEP_TIMEOUT) -> subprocess.CompletedProcess[str]:
    """Run ``script`` with bash, as pasted into a terminal (``-e``: the first failing command ends it)."""
    return subprocess.run(["bash", "-e", "-c", script], cwd=cwd, env=env or ENV, input=stdin, capture_output=True,
                          text=True, timeout=timeout)


def shown(done: subprocess.CompletedProcess[str]) -> str:
    return f"exit {done.returncode}\n--- stdout\n{done.stdout[-4000:]}\n--- stderr\n{done.stderr[-4000:]}"


def block_after(marker: str, language: str = "sh") -> str:
    """The first fenced code block of ``language`` after ``marker`` in the README."""
    start = README.index(marker)
    found = re.compile(rf"```{language}\n(.*?)```", re.S).search(README, start)
    assert found, f"no ```{language} block after {marker!r} in the README"
    return found.group(1)


def without_comments(block: str) -> list[str]:
    return [re.sub(r"\s+#\s.*$", "", line).rstrip() for line in block.splitlines() if line.strip()]


def fresh_copy(target: Path) -> None:
    """The files a clone of the repository holds: tracked ones, and new ones git would track."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for relative in filter(None, listed):
        source = REPO / relative
        if not source.exists() and not source.is_symlink():
            continue  # deleted in the working tree: a commit would not hold it
        destination = target / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            destination.symlink_to(os.readlink(source))
        else:
            shutil.copy2(source, destination)


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fresh") / "mt-eval"
    fresh_copy(root)
    return root


@pytest.fixture(scope="module")
def first_command(clone: Path) -> subprocess.CompletedProcess[str]:
    """The README's first command, run in the fresh copy."""
    command = README.split("```sh\n", 1)[1].split("\n", 1)[0]
    assert command == "python3 -m venv .venv && .venv/bin/pip install -q nox && .venv/bin/nox -s demo"
    return sh(command, clone)


@pytest.fixture(scope="module")
def mt_eval(clone: Path, first_command: subprocess.CompletedProcess[str]) -> Path:
    assert first_command.returncode == 0, shown(first_command)
    return clone / ".venv" / "bin" / "mt-eval"


# ---- 1. the first command ----------------------------------------------------------------------------


def test_the_first_command_leaves_mt_eval_usable(clone, first_command, mt_eval):
    assert mt_eval.is_file()
    version = sh(".venv/bin/mt-eval --version", clone)
    assert version.returncode == 0 and version.stdout.startswith("mt-eval "), shown(version)
    for written in ("runs/demo/card.json", "runs/demo/predictions.txt", "runs/demo-rules/card.json",
                    "runs/leaderboard/site/index.html"):
        assert (clone / written).is_file(), written


def test_the_demo_ends_by_saying_where_things_are_and_what_to_run_next(clone, first_command, mt_eval):
    tail = first_command.stdout[first_command.stdout.index("What the demo wrote:"):]
    assert "runs/demo/card.json, runs/demo-rules/card.json" in tail
    assert "runs/demo/predictions.txt" in tail
    assert (clone / "runs" / "leaderboard" / "site" / "index.html").as_uri() in tail
    assert "mt-eval is installed in .venv: run it as .venv/bin/mt-eval" in tail
    assert "  .venv/bin/mt-eval new my-method" in tail
    assert "  .venv/bin/mt-eval run --method my-method --corpus my-method/sample/corpus.jsonl" in tail
    assert "hot p50 0.0 ms" not in first_command.stdout and "chrF++" in first_command.stdout
    assert "headline: chrF++ " in first_command.stdout and "(gate passed, policy default)" in first_command.stdout


def test_the_demo_rows_are_eligible_where_the_host_can_sandbox(clone, first_command, mt_eval):
    probe = sh(".venv/bin/python -c 'from mt_eval.sandbox.isolation import find_tool; find_tool()'", clone)
    if probe.returncode != 0:
        assert "the demo runs unconfined, so its rows are not eligible" in first_command.stdout + first_command.stderr
        return
    for card in ("runs/demo/card.json", "runs/demo-rules/card.json"):
        eligibility = json.loads((clone / card).read_text(encoding="utf-8"))["eligibility"]
        assert eligibility["eligible"] is True, (card, eligibility)
    assert "not eligible" not in first_command.stdout


# ---- 2. a method of one's own ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def my_method(clone: Path, mt_eval: Path) -> subprocess.CompletedProcess[str]:
    """`.venv/bin/mt-eval new my-method`, as the README and the demo say, every question answered by its
    default (Enter) — but a bad id first, which is asked again."""
    first = without_comments(block_after("**Your own method.**"))[0]
    assert first == ".venv/bin/mt-eval new my-method"
    answers = "\n\nMy Method!\n" + "\n" * 10  # kind, name, a bad id, the default id, then every default
    return sh(first, clone, stdin=answers)


def test_a_new_method_asks_again_for_a_bad_answer(my_method):
    assert my_method.returncode == 0, shown(my_method)
    assert 'method_id: "My Method!" is not kebab-case' in my_method.stderr and "answer again" in my_method.stderr


def test_its_printed_next_steps_work_as_printed(clone, my_method):
    steps = my_method.stdout.split("Next:\n", 1)[1].splitlines()
    assert steps[0] == "  cd my-method"
    assert any(" -m pip install pytest" in step for step in steps), "pytest is not in .venv: the steps install it"
    assert steps[-1].endswith("exit 5: too few entries for a headline")
    done = sh("\n".join(steps), clone)
    assert done.returncode == 5, shown(done)  # bash -e: every step before the last exited 0
    assert "headline withheld: the gate failed" in done.stdout and "5 scored entries" in done.stdout
    assert re.search(r"\b6 passed\b", done.stdout), done.stdout
    assert "Hola, mi amigo!" in done.stdout
    assert "chrF++" in done.stdout and "run card     ../runs/my-method__corpus/card.json" in done.stdout
    assert "the corpus sample/corpus.jsonl is inside the method's directory" in done.stderr
    assert not (clone / "my-method" / "runs").exists()


def test_a_run_from_inside_the_plugin_resumes(clone, my_method):
    done = sh("cd my-method && ../.venv/bin/mt-eval run --method . --corpus sample/corpus.jsonl --resume", clone)
    assert done.returncode == 5, shown(done)  # complete; the sample is too small for a headline
    assert "code changed" not in done.stderr


def test_an_own_corpus_with_a_quoted_pair(clone, my_method):
    command = without_comments(block_after("evaluate on a corpus of your own, kept outside"))[0]
    assert command == ".venv/bin/mt-eval run --method my-method --corpus dev.tsv --pair 'eng>spa'"
    entries = json.loads((clone / "examples" / "data" / "eng-spa-demo.json").read_text(encoding="utf-8"))["entries"]
    (clone / "dev.tsv").write_text("".join(f"{e['source']}\t{e['reference']}\n" for e in entries[:12]),
                                   encoding="utf-8")  # a corpus of the user's own, outside the plugin
    done = sh(command, clone)
    assert done.returncode == 5, shown(done)  # complete, with scores; no headline without canaries and controls
    assert done.stdout.startswith("my-method on dev (eng>spa): 12 entries, 0 errors")
    assert "headline withheld: the gate failed" in done.stdout
    assert 'mark entries with a family column (named in a header line) holding canary' in done.stderr
    assert "run card     runs/my-method__dev/card.json" in done.stdout
    assert "contamination check: clean" in done.stderr
    unquoted = sh(command.replace("'eng>spa'", "eng>spa"), clone, env=ENV)
    assert unquoted.returncode == 2 and "quote the pair, --pair 'eng>spa'" in unquoted.stderr


# ---- 3. a translator program, wrapped -----------------------------------------------------------------


@pytest.fixture(scope="module")
def wrapper(clone: Path, mt_eval: Path) -> Path:
    """The recipe's files, as the README gives them."""
    recipe = README[README.index("### Recipe: a program as a method"):README.index("### How the adapter drives")]
    files = re.findall(r"\*\*`(my-wrapper/[^`]+)`\*\*.*?```\w*\n(.*?)```", recipe, re.S)
    assert [name for name, _ in files] == ["my-wrapper/method.json", "my-wrapper/pipeline.py",
                                           "my-wrapper/bin/word-mt.py"]
    for name, text in files:
        (clone / name).parent.mkdir(parents=True, exist_ok=True)
        (clone / name).write_text(text, encoding="utf-8")
    return clone / "my-wrapper"


def test_the_recipe_validates_translates_and_runs(clone, wrapper):
    commands = without_comments(block_after("Then, with `mt-eval` from this repository's `.venv`:"))
    assert len(commands) == 3
    done = sh("\n".join(".venv/bin/" + command for command in commands), clone)
    assert done.returncode == 0, shown(done)
    assert "1 of 1 plugin valid" in done.stdout and "dependency class S" in done.stdout
    assert "Buenos días, mi amigo!" in done.stdout
    assert "my-wrapper on eng-spa-demo (eng>spa): 36 entries, 0 errors" in done.stdout
    assert "(gate passed, policy default)" in done.stdout  # canaries pass, negative controls are declined


def test_the_recipe_run_from_inside_its_directory(clone, wrapper):
    done = sh("cd my-wrapper && ../.venv/bin/mt-eval run --method . --corpus ../examples/data/eng-spa-demo.json "
              "--force --quiet", clone)  # the same run directory as from the repository's root: ../runs/…
    assert done.returncode == 0, shown(done)
    assert "run card     ../runs/my-wrapper__eng-spa-demo/card.json" in done.stdout
    assert not (wrapper / "runs").exists()


def test_a_program_that_buffers_is_named_with_the_fixes(clone, wrapper):
    program = wrapper / "bin" / "word-mt.py"
    buffering = clone / "buffering"
    shutil.copytree(wrapper, buffering)
    text = program.read_text(encoding="utf-8")
    assert ", flush=True)" in text
    (buffering / "bin" / "word-mt.py").write_text(text.replace(", flush=True)", ")"), encoding="utf-8")
    done = sh(".venv/bin/mt-eval run --method buffering --corpus examples/data/eng-spa-demo.json --limit 2 "
              "--timeout 3 --out runs/buffering --no-contamination-check", clone)
    assert done.returncode == 4, shown(done)  # nothing translated
    assert ("word-mt.py gave no answer within 3 s and wrote nothing at all, and waits for more input: it buffers "
            "its output") in done.stderr  # (named by its script, with the fixes that work for Python)
    assert " -u …" in done.stderr and "PYTHONUNBUFFERED=1" in done.stderr and "persistent=False" in done.stderr


def test_a_plain_program_declared_as_command_is_refused_at_once(clone, wrapper):
    plain = clone / "plain"
    shutil.copytree(wrapper, plain)
    manifest = json.loads((plain / "method.json").read_text(encoding="utf-8"))
    del manifest["entry_point"]
    manifest["command"] = ["python3", "bin/word-mt.py"]
    (plain / "method.json").write_text(json.dumps(manifest), encoding="utf-8")
    started = time.monotonic()
    done = sh(".venv/bin/mt-eval run --method plain --corpus examples/data/eng-spa-demo.json --out runs/plain "
              "--no-contamination-check", clone)
    assert time.monotonic() - started < 20, "refused after the start timeout, not at once"
    assert done.returncode == 1, shown(done)
    assert "my-wrapper is not a bridge guest" in done.stderr and "ProcessTranslator" in done.stderr


# ---- 4. an app, from Node ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def app(clone: Path, my_method: subprocess.CompletedProcess[str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    app = tmp_path_factory.mktemp("app") / "my-app"
    (app / "locales").mkdir(parents=True)
    (app / "package.json").write_text(json.dumps({"name": "my-app", "private": True, "type": "module"}),
                                      encoding="utf-8")
    (app / "locales" / "en.json").write_text(json.dumps({"greeting": "Good morning, my friend!",
                                                         "farewell": "Good night, {{name}}!"}), encoding="utf-8")
    return app


def app_block(clone: Path, app: Path) -> list[str]:
    commands = without_comments(block_after("**Your app.**"))
    return [line.replace("/path/to/mt-eval", str(clone)).replace("/path/to/my-app", str(app)) for line in commands]


def test_the_app_installs_the_built_package_and_translates_its_locales(clone, app):
    commands = app_block(clone, app)
    assert commands[0] == ".venv/bin/nox -s build"
    done = sh("\n".join(commands), clone)
    assert done.returncode == 0, shown(done)
    assert list((clone / "dist").glob("mt_eval_sdk-*-py3-none-any.whl"))
    assert list((clone / "dist").glob("mt-eval-bridge-*.tgz"))
    assert "mt-eval-bridge" in json.loads((app / "package.json").read_text(encoding="utf-8"))["dependencies"]
    spanish = json.loads((app / "locales" / "es.json").read_text(encoding="utf-8"))
    assert spanish["greeting"] == "Buenos días, mi amigo!" and "{{name}}" in spanish["farewell"]
    assert (app / "locales" / ".champollion-lock.json").is_file()


def test_the_app_without_mt_eval_is_told_once_how_to_point_node_at_it(clone, app):
    (app / "locales" / "es.json").unlink(missing_ok=True)
    (app / "locales" / ".champollion-lock.json").unlink(missing_ok=True)
    done = sh("npx mt-eval-locales", app)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "the mt-eval command is not on PATH (ENOENT)" in lines[0] and "MT_EVAL=" in lines[0]
    assert not (app / "locales" / "es.json").exists()


# ---- 5. the plugin's tests elsewhere, from the wheel -------------------------------------------------


def test_the_plugins_tests_run_from_the_built_wheel_as_its_readme_says(clone, app, tmp_path):
    assert list((clone / "dist").glob("mt_eval_sdk-*.whl")), "nox -s build (the app's journey) wrote no wheel"
    plugin = tmp_path / "my-method"
    shutil.copytree(clone / "my-method", plugin, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    readme = (plugin / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## Tests\n.*?```sh\n(.*?)```", readme, re.S)
    assert block, "the plugin's README has no Tests commands"
    commands = [line.replace("/path/to/mt-eval", str(clone)) for line in without_comments(block.group(1))]
    done = sh("\n".join(commands), plugin)
    assert done.returncode == 0, shown(done)
    assert re.search(r"\b6 passed\b", done.stdout), done.stdout

