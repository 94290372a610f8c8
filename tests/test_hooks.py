"""pluggy hooks: explicit extensions, register callbacks, lifecycle calls, loud misspellings."""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

from gate_policies import LENIENT
from mt_eval import hookspecs
from mt_eval.extensions import (
    ExtensionError,
    RegistrationError,
    enable_extension,
    make_plugin_manager,
    registered_metrics,
)
from mt_eval.hookspecs import hookimpl

README = Path(__file__).parent.parent / "README.md"


def hook_names() -> list[str]:
    return [name for name, f in inspect.getmembers(hookspecs, inspect.isfunction)
            if hasattr(f, "mt_eval_spec")]


def extension(name: str, **hooks: object) -> types.ModuleType:
    module = types.ModuleType(name)
    for hook, impl in hooks.items():
        setattr(module, hook, hookimpl(impl))  # type: ignore[arg-type]
    return module


def test_every_hook_is_documented_in_the_readme_and_tested_here():
    readme = README.read_text(encoding="utf-8")
    this_test = inspect.getsource(test_every_hook_is_documented_in_the_readme_and_tested_here)
    other_tests = Path(__file__).read_text(encoding="utf-8").replace(this_test, "")
    assert hook_names() == ["entry_completed", "register_metrics", "run_finished", "run_started"]
    for name in hook_names():
        assert re.search(rf"^\| `{name}\(", readme, re.M), f"{name} is not in the README's hook table"
        assert f"hook.{name}(" in other_tests or f"{name}=" in other_tests, f"{name} has no test"


def test_register_metrics_collects_scorers_from_every_extension():
    manager = make_plugin_manager()
    enable_extension(manager, extension("ext_a", register_metrics=lambda register: register("a", len)))
    enable_extension(manager, extension("ext_b", register_metrics=lambda register: register("b", max)))
    assert registered_metrics(manager) == {"a": len, "b": max}


def test_no_hook_provides_methods():
    """Every method is a plugin directory: its method.json declares the dependencies that class it."""
    assert not [name for name in hook_names() if "method" in name]


def test_register_metrics_and_duplicates_name_both_plugins():
    manager = make_plugin_manager()
    enable_extension(manager, extension("first", register_metrics=lambda register: register("len", len)))
    assert registered_metrics(manager) == {"len": len}
    enable_extension(manager, extension("second", register_metrics=lambda register: register("len", max)))
    with pytest.raises(RegistrationError, match="plugin 'second', hook 'register_metrics': metric 'len' is "
                                                "already registered by plugin 'first'"):
        registered_metrics(manager)


def test_registering_something_unusable_is_an_error():
    manager = make_plugin_manager()
    enable_extension(manager, extension("bad", register_metrics=lambda register: register("x", 42)))
    with pytest.raises(RegistrationError, match="plugin 'bad', hook 'register_metrics': metric 'x' must be "
                                                "callable, got int"):
        registered_metrics(manager)


def test_run_lifecycle_hooks_are_called_in_order():
    calls: list[tuple[str, object]] = []
    manager = make_plugin_manager()
    enable_extension(manager, extension(
        "recorder",
        run_started=lambda run_id, method_id, config: calls.append(("started", (run_id, method_id))),
        entry_completed=lambda run_id, result: calls.append(("entry", result)),
        run_finished=lambda run_id, card: calls.append(("finished", card)),
    ))
    manager.hook.run_started(run_id="r1", method_id="m", config=None)
    manager.hook.entry_completed(run_id="r1", result={"id": "1"})
    manager.hook.run_finished(run_id="r1", card={"ok": True})
    assert calls == [("started", ("r1", "m")), ("entry", {"id": "1"}), ("finished", {"ok": True})]


def test_misspelled_hook_is_a_problem_with_the_fix_and_is_not_left_registered():
    manager = make_plugin_manager()
    module = extension("typo", register_metric=lambda register: None)
    with pytest.raises(ExtensionError) as caught:
        enable_extension(manager, module)
    [problem] = caught.value.problems
    assert problem.message == 'unknown hook "register_metric"'
    assert problem.hint.startswith('did you mean "register_metrics"? hooks are: entry_completed, register_metrics')
    assert not manager.is_registered(module)


def test_wrong_hook_signature_names_the_plugin_and_hook():
    manager = make_plugin_manager()
    with pytest.raises(ExtensionError, match="register_metrics"):
        enable_extension(manager, extension("sig", register_metrics=lambda register, extra: None))


def test_extensions_are_enabled_by_name_and_never_by_import():
    manager = make_plugin_manager()
    assert manager.get_plugins() == set()
    module = enable_extension(manager, "json")  # any importable module with no hooks
    assert manager.is_registered(module)


def run_cli(tmp_path: Path, *args: str, env_path: Path | None = None, quiet: bool = True
            ) -> subprocess.CompletedProcess[str]:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "1", "source": "Hello.", "reference": "Hola."}) + "\n")
    env = {**os.environ, "PYTHONPATH": str(env_path or tmp_path)}
    return subprocess.run([sys.executable, "-m", "mt_eval.cli", "run", "--corpus", str(corpus), "--pair", "eng>spa",
                           "--out", str(tmp_path / "run"), "--resamples", "20", *["--quiet"] * quiet, *LENIENT,
                           *args],
                          capture_output=True, text=True, env=env, timeout=120)


def test_a_misspelled_hook_in_an_extension_is_reported_like_a_plugin_problem(tmp_path: Path, make_plugin):
    (tmp_path / "my_ext.py").write_text("from mt_eval.hookspecs import hookimpl\n\n@hookimpl\n"
                                        "def run_finshed(run_id, card):\n    pass\n")
    done = run_cli(tmp_path, "--method", str(make_plugin()), "--extension", "my_ext")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "cannot enable extension my_ext" in done.stderr
    assert f'error: {tmp_path / "my_ext.py"}: unknown hook "run_finshed"' in done.stderr
    assert 'fix: did you mean "run_finished"?' in done.stderr


def test_an_extension_that_cannot_be_imported_is_one_clear_line(tmp_path: Path, make_plugin):
    done = run_cli(tmp_path, "--method", str(make_plugin()), "--extension", "no_such_extension_xyz")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "error: no_such_extension_xyz: no module named 'no_such_extension_xyz'" in done.stderr
    (tmp_path / "raising_ext.py").write_text("raise RuntimeError('half-written')\n")
    done = run_cli(tmp_path, "--method", str(make_plugin()), "--extension", "raising_ext")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "error: raising_ext: RuntimeError: half-written" in done.stderr


HOOKED = '''
from pathlib import Path
from mt_eval.hookspecs import hookimpl

class EchoMethod:
    async def translate(self, entries, config):
        return [{"id": e["id"], "predicted": e["source"]} for e in entries]

@hookimpl
def entry_completed(run_id, result):
    Path(__file__).with_name("seen.txt").write_text(result.id)
'''


def test_a_plugins_own_hooks_run_in_process_and_are_reported_under_isolate(tmp_path: Path, make_plugin):
    plugin = make_plugin(files={"pipeline.py": HOOKED})
    done = run_cli(tmp_path, "--method", str(plugin))
    assert done.returncode == 0, done.stderr
    assert (plugin / "seen.txt").read_text() == "1"
    (plugin / "seen.txt").unlink()
    done = run_cli(tmp_path, "--method", str(plugin), "--isolate", "--force")
    assert done.returncode == 0, done.stderr
    assert not (plugin / "seen.txt").exists()
    assert (f"warning: --isolate: the hooks in {plugin / 'pipeline.py'} (entry_completed) do not run: the plugin's "
            "code runs only in its own process") in done.stderr


@pytest.mark.parametrize("tail", ["X = 1" + " + 1" * 200_000 + "\n", "X = 1\0\n"],
                         ids=["nested-too-deeply", "nul-byte"])
def test_under_isolate_a_module_that_cannot_be_parsed_for_hooks_fails_its_load_not_the_command(
        tmp_path: Path, make_plugin, tail: str):
    plugin = make_plugin(files={"pipeline.py": HOOKED + tail})
    done = run_cli(tmp_path, "--method", str(plugin), "--isolate")
    assert "Traceback" not in done.stderr and "RecursionError: maximum recursion depth exceeded during ast" \
        not in done.stderr, done.stderr
    assert done.returncode != 0
    assert "importing \"pipeline\" failed" in done.stderr or "source code" in done.stderr, done.stderr


def test_an_extension_that_ends_the_process_on_import_is_a_problem(tmp_path: Path, monkeypatch):
    (tmp_path / "exiting_ext_a1.py").write_text("import sys\nsys.exit(2)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ExtensionError) as caught:
        enable_extension(make_plugin_manager(), "exiting_ext_a1")
    [problem] = caught.value.problems
    assert problem.message == "importing it called sys.exit(2) (exiting_ext_a1.py:2)"
    assert problem.hint == "an extension must not end the process: raise an exception instead"


def test_an_extension_missing_a_module_it_imports_is_not_told_its_own_name_is_wrong(tmp_path: Path, monkeypatch):
    (tmp_path / "needy_ext_a1.py").write_text("import json\nimport absent_dependency_a1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ExtensionError) as caught:
        enable_extension(make_plugin_manager(), "needy_ext_a1")
    [problem] = caught.value.problems
    assert problem.message == "ModuleNotFoundError: No module named 'absent_dependency_a1' (needy_ext_a1.py:2)"
    assert problem.hint == "install 'absent_dependency_a1', or fix the import in the extension"


def test_a_wrong_hook_signature_says_which_argument_and_the_one_specified():
    module = extension("sig_a1", run_started=lambda run_id, method, config: None)
    with pytest.raises(ExtensionError) as caught:
        enable_extension(make_plugin_manager(), module)
    [problem] = caught.value.problems
    assert problem.message.startswith("hook run_started(run_id, method, config): Argument(s) {'method'} are declared "
                                      "in the hookimpl but can not be found in the hookspec")
    assert problem.hint.startswith("write it as run_started(run_id, method_id, config), taking some or all")


def test_an_async_hook_is_refused_rather_than_never_run():
    async def run_finished(run_id, card):
        pass

    manager = make_plugin_manager()
    module = extension("async_a1", run_finished=run_finished)
    with pytest.raises(ExtensionError) as caught:
        enable_extension(manager, module)
    [problem] = caught.value.problems
    assert problem.message == "hook run_finished is async: hooks are called, never awaited, so it would never run"
    assert problem.hint.startswith("write it as a plain def run_finished(run_id, card)")
    assert not manager.is_registered(module)


@pytest.mark.parametrize("given", [None, 5, Path("my_ext.py"), ".relative", "my_ext/metrics"])
def test_an_extension_that_is_no_module_or_module_name_is_refused(given: object):
    manager = make_plugin_manager()
    with pytest.raises(ExtensionError) as caught:
        enable_extension(manager, given)
    [problem] = caught.value.problems
    assert "not a module" in problem.message and "dotted name" in problem.hint
    assert manager.get_plugins() == set()


FAULTY_HOOKS = """\
from mt_eval.hookspecs import hookimpl


@hookimpl
def run_started(run_id, method_id, config):
    raise RuntimeError("no dashboard")


@hookimpl
def entry_completed(run_id, result):
    raise ValueError("bad " + result.id)


@hookimpl
def run_finished(run_id, card):
    raise KeyError("card")
"""
RECORDING_HOOKS = """\
from mt_eval.hookspecs import hookimpl

SEEN = []


@hookimpl
def entry_completed(run_id, result):
    SEEN.append(result.id)


@hookimpl
def run_finished(run_id, card):
    print("recorded", SEEN)
"""


def test_a_hook_that_raises_is_said_once_and_the_run_goes_on_with_the_others(tmp_path: Path, make_plugin):
    """Before: entry_completed raising ended the run with an exception-group traceback; run_started or run_finished,
    with a traceback (the card written or not)."""
    (tmp_path / "faulty_ext.py").write_text(FAULTY_HOOKS)
    (tmp_path / "recording_ext.py").write_text(RECORDING_HOOKS)
    done = run_cli(tmp_path, "--method", str(make_plugin()), "--extension", "recording_ext", "--extension",
                   "faulty_ext")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and (tmp_path / "run" / "card.json").is_file()
    for hook, raised in (("run_started", "RuntimeError: no dashboard"), ("entry_completed", "ValueError: bad 1"),
                         ("run_finished", "KeyError: 'card'")):
        said = [line for line in done.stderr.splitlines() if f"hook {hook} raised" in line]
        assert len(said) == 1 and raised in said[0] and "faulty_ext.py:" in said[0], done.stderr
    assert "recorded ['1']" in done.stdout + done.stderr


def test_a_registered_metric_that_gives_no_number_is_named_and_the_translations_kept(tmp_path: Path, make_plugin):
    (tmp_path / "word_ext.py").write_text("from mt_eval.hookspecs import hookimpl\n\n\n@hookimpl\n"
                                          "def register_metrics(register):\n"
                                          "    register('wordy', lambda hypotheses, references: 'lots')\n")
    done = run_cli(tmp_path, "--method", str(make_plugin()), "--extension", "word_ext")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert ("the metric 'wordy' an extension registered gave the string \"lots\", not a number: fix its scorer"
            in done.stderr)
    assert (tmp_path / "run" / "results.jsonl").read_text().count("\n") == 1


METRIC_EXTENSION = "from mt_eval.hookspecs import hookimpl\n\n\n@hookimpl\ndef register_metrics(register):\n    {}\n"


@pytest.mark.parametrize(("registering", "said"), [
    ("register('ratio', lambda hypotheses, references: 1 / 0)",
     "the metric 'ratio' an extension registered raised ZeroDivisionError: division by zero (bad_metric.py:6): fix "
     "its scorer"),
    ("register('ratio', lambda hypotheses, references: float('nan'))",
     "the metric 'ratio' an extension registered gave the number NaN, not a finite number: fix its scorer"),
    ("register('ratio', lambda hypotheses, references: float('inf'))",
     "the metric 'ratio' an extension registered gave the number Infinity, not a finite number"),
])
def test_a_registered_metric_that_raises_or_gives_no_finite_number_writes_no_card(
        tmp_path: Path, make_plugin, registering: str, said: str):
    """Before: a scorer that raised ended the run in a traceback; NaN or infinity was sealed into a card as null,
    which then failed its own schema check. (A hook that raises, or a name taken: tests/test_extension_metrics.py.)"""
    (tmp_path / "bad_metric.py").write_text(METRIC_EXTENSION.format(registering))
    done = run_cli(tmp_path, "--method", str(make_plugin()), "--extension", "bad_metric")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert said in done.stderr and "run again with --resume to score them" in done.stderr
    assert not (tmp_path / "run" / "card.json").exists()
    assert (tmp_path / "run" / "results.jsonl").read_text().count("\n") == 1


EDITING_HOOKS = """\
from mt_eval.hookspecs import hookimpl


@hookimpl
def run_started(run_id, method_id, config):
    config.seed = 7


@hookimpl
def run_finished(run_id, card):
    card.metrics.metrics[0].score = 99.99
    card.gate.passed = False
"""


def test_a_hook_that_edits_the_config_or_the_card_changes_nothing_the_run_says_or_seals(tmp_path: Path,
                                                                                         make_plugin):
    """Before: the edited seed was sealed into a card that failed verify, and the summary printed the edited score
    and the exit status followed the edited gate."""
    (tmp_path / "editing_ext.py").write_text(EDITING_HOOKS)
    done = run_cli(tmp_path, "--method", str(make_plugin()), "--extension", "editing_ext")
    assert done.returncode == 0, done.stderr
    assert "99.99" not in done.stdout and "(gate passed" in done.stdout
    verified = subprocess.run([sys.executable, "-m", "mt_eval.cli", "verify", str(tmp_path / "run" / "card.json")],
                              capture_output=True, text=True, timeout=120)
    assert verified.returncode == 0, verified.stdout + verified.stderr


@pytest.mark.parametrize(("scoring", "said"), [
    ("1 / 0", "the metric 'ratio' an extension registered raised ZeroDivisionError: division by zero "
              "(ratio_metric.py:6): fix its scorer"),
    ("float('nan')", "the metric 'ratio' an extension registered gave the number NaN, not a finite number"),
])
def test_verify_with_an_extension_whose_scorer_fails_says_so_and_does_not_verify(tmp_path: Path, make_plugin,
                                                                                 scoring: str, said: str):
    """Before: a scorer that raised was a traceback, and one that gave NaN let any score verify."""
    good, bad = tmp_path / "good", tmp_path / "bad"
    for directory, score in ((good, "0.5"), (bad, scoring)):
        directory.mkdir()
        (directory / "ratio_metric.py").write_text(METRIC_EXTENSION.format(
            f"register('ratio', lambda hypotheses, references: {score})"))
    assert run_cli(tmp_path, "--method", str(make_plugin()), "--extension", "ratio_metric",
                   env_path=good).returncode == 0
    verified = subprocess.run([sys.executable, "-m", "mt_eval.cli", "verify", str(tmp_path / "run" / "card.json"),
                               "--extension", "ratio_metric"], capture_output=True, text=True, timeout=120,
                              env={**os.environ, "PYTHONPATH": str(bad)})
    output = verified.stdout + verified.stderr
    assert verified.returncode == 1 and "Traceback" not in output, output
    assert "does not verify" in output and said in output and "not recomputed" not in output
