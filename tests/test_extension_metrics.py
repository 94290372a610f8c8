"""Metrics registered by extensions (``--extension MODULE``): their names checked before anything is translated,
named as scoring starts, their output kept off standard output, and their scores held to numbers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy
import pytest

from mt_eval.extensions import extension_scores
from test_hooks import METRIC_EXTENSION, run_cli


def write_extension(directory: Path, name: str, registering: str) -> None:
    (directory / f"{name}.py").write_text(METRIC_EXTENSION.format(registering))


@pytest.mark.parametrize(("extensions", "said"), [
    ({"bleu_metric": "register('BLEU', lambda hypotheses, references: 99.0)"},
     "the metric 'BLEU' an extension registered has the name of a metric mt-eval computes (chrF++, BLEU, TER): "
     "give it another name"),
    ({"first_metric": "register('ratio', lambda hypotheses, references: 1.0)",
      "second_metric": "register('ratio', lambda hypotheses, references: 2.0)"},
     "plugin 'second_metric', hook 'register_metrics': metric 'ratio' is already registered by plugin "
     "'first_metric'"),
    ({"raising_metric": "raise RuntimeError('no model')"},
     "plugin 'raising_metric', hook 'register_metrics': raised RuntimeError: no model (raising_metric.py:6): fix "
     "the hook"),
])
def test_a_metric_name_taken_or_a_failing_register_hook_fails_the_run_before_anything_is_translated(
        tmp_path: Path, make_plugin, extensions: dict[str, str], said: str):
    """Before: every entry was translated first, and only scoring said what was wrong."""
    for name, registering in extensions.items():
        write_extension(tmp_path, name, registering)
    enabled = [argument for name in extensions for argument in ("--extension", name)]
    done = run_cli(tmp_path, "--method", str(make_plugin()), *enabled)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert said in done.stderr and "--resume" not in done.stderr
    assert not (tmp_path / "run").exists()  # no run directory: nothing was sent to the method


def test_the_scoring_line_names_the_metrics_extensions_registered(tmp_path: Path, make_plugin):
    """Before: "scoring 1 entry: chrF++, BLEU, TER", so a slow extension scorer looked like a hang."""
    write_extension(tmp_path, "ratio_metric", "register('ratio', lambda hypotheses, references: 0.5)")
    done = run_cli(tmp_path, "--method", str(make_plugin()), "--extension", "ratio_metric", quiet=False)
    assert done.returncode == 0, done.stderr
    assert "scoring 1 entry: chrF++, BLEU, TER, ratio; 95% intervals" in done.stderr


PRINTING = ("print('registering ratio')\n    register('ratio', lambda hypotheses, references: "
            "print('scoring ratio') or 0.5)")


def test_what_an_extension_prints_goes_to_stderr_in_run_and_in_verify(tmp_path: Path, make_plugin):
    """Before: the scorer's and the hook's output landed on standard output, inside the run's result (and
    inside verify's JSON report)."""
    write_extension(tmp_path, "printing_metric", PRINTING)
    done = run_cli(tmp_path, "--method", str(make_plugin()), "--extension", "printing_metric")
    assert done.returncode == 0, done.stderr
    assert "registering ratio" not in done.stdout and "scoring ratio" not in done.stdout
    assert "registering ratio" in done.stderr and "scoring ratio" in done.stderr
    verified = subprocess.run([sys.executable, "-m", "mt_eval.cli", "verify", str(tmp_path / "run" / "card.json"),
                               "--extension", "printing_metric", "--json"], capture_output=True, text=True,
                              timeout=120, env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "registering ratio" not in verified.stdout and "scoring ratio" not in verified.stdout
    assert "scoring ratio" in verified.stderr


@pytest.mark.parametrize(("returned", "said"), [("'42.5'", 'the string "42.5"'), ("True", "true")])
def test_a_scorer_giving_a_string_or_a_bool_is_not_scored(tmp_path: Path, make_plugin, returned: str, said: str):
    """Before: "42.5" was taken as 42.5, and True as 1.0."""
    write_extension(tmp_path, "word_metric", f"register('wordy', lambda hypotheses, references: {returned})")
    done = run_cli(tmp_path, "--method", str(make_plugin()), "--extension", "word_metric")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"the metric 'wordy' an extension registered gave {said}, not a number: fix its scorer" in done.stderr
    assert not (tmp_path / "run" / "card.json").exists()


def test_a_scorer_may_give_an_int_a_float_or_a_numpy_number():
    scorers = {"int": lambda h, r: 3, "float": lambda h, r: 0.123456, "numpy": lambda h, r: numpy.float32(0.5),
               "numpy int": lambda h, r: numpy.int64(7)}
    assert extension_scores(scorers, lambda: (["a"], ["b"])) == [("int", 3), ("float", 0.1235), ("numpy", 0.5),
                                                                 ("numpy int", 7)]
