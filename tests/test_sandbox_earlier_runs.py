"""An earlier run is kept from a sandboxed method: its card holds the canaries' references and which entries are
canaries and negative controls. Before, a run directory under a ``--sandbox-ro`` path or in the plugin directory
(a run copied there) was there for the method to read; only the corpus itself was refused or locked."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from mt_eval.sandbox.view import earlier_runs
from sandbox_support import actions, needs_sandbox, probe_plugin, run_card, small_corpus

pytestmark = needs_sandbox


def earlier_run(root: Path, plugin: Path, corpus: Path, out: str) -> Path:
    """A finished run of ``plugin`` on ``corpus`` in ``root / out``, its card there."""
    code, card = run_card(root, "--method", str(plugin), "--corpus", str(corpus), *actions("tmp"), out=out)
    assert card is not None, code
    return root / out


def test_sandbox_ro_may_not_expose_an_earlier_run(tmp_path: Path, capsys):
    plugin = probe_plugin(tmp_path, "python")
    corpus = small_corpus(tmp_path, 1)
    artifacts = tmp_path / "artifacts"
    run = earlier_run(artifacts, plugin, corpus, "runs/first")
    (artifacts / "lexicon.txt").write_text("hello=hola\n")
    capsys.readouterr()
    code, card = run_card(tmp_path, "--method", str(plugin), "--corpus", str(corpus), "--sandbox", "--sandbox-ro",
                          str(artifacts), *actions(f"read:{run / 'card.json'}"), out="second")
    said = capsys.readouterr().err
    assert code == 1 and card is None
    assert f"--sandbox-ro {artifacts} holds the run directory {run} (and " in said
    assert "the method would read an earlier run's card and results" in said and "keep run directories" in said


def test_sandbox_ro_may_not_expose_a_run_card_copied_elsewhere(tmp_path: Path, capsys):
    plugin = probe_plugin(tmp_path, "python")
    corpus = small_corpus(tmp_path, 1)
    run = earlier_run(tmp_path, plugin, corpus, "first")
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "lexicon-on-small.json").write_bytes((run / "card.json").read_bytes())
    capsys.readouterr()
    code, card = run_card(tmp_path, "--method", str(plugin), "--corpus", str(corpus), "--sandbox", "--sandbox-ro",
                          str(shared), out="second")
    assert code == 1 and card is None
    assert f"holds the run card {shared / 'lexicon-on-small.json'}: " in capsys.readouterr().err


def test_an_artifact_beside_no_run_is_still_exposed(tmp_path: Path):
    plugin = probe_plugin(tmp_path, "python")
    corpus = small_corpus(tmp_path, 1)
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir()
    (artifacts / "lexicon.json").write_text(json.dumps({"card": "not a run's", "hello": "hola"}))
    _, card = run_card(tmp_path, "--method", str(plugin), "--corpus", str(corpus), "--sandbox", "--sandbox-ro",
                       str(artifacts), *actions(f"read:{artifacts / 'lexicon.json'}"))
    assert card is not None and card.results[0].predicted == '{"card": "not a run\''


def test_a_run_kept_in_the_plugin_directory_is_locked_there(tmp_path: Path):
    plugin = probe_plugin(tmp_path, "python")
    corpus = small_corpus(tmp_path, 1)
    run = plugin / "runs" / "first"  # (copied there: `mt-eval run` writes no run into the method's directory)
    shutil.copytree(earlier_run(tmp_path, plugin, corpus, "first"), run)
    for name in ("card.json", "results.jsonl", "run.json"):
        _, card = run_card(tmp_path, "--method", str(plugin), "--corpus", str(corpus), "--sandbox",
                           *actions(f"read:{run / name}"), out=f"again-{name}")
        assert card is not None and card.results[0].predicted is None, name
        assert card.results[0].error is not None and "Permission denied" in card.results[0].error
    _, card = run_card(tmp_path, "--method", str(plugin), "--corpus", str(corpus), "--sandbox",
                       *actions(f"read:{plugin / 'method.json'}"), out="own-files")
    assert card is not None and card.results[0].predicted is not None  # the plugin's own files are still there


def test_what_counts_as_an_earlier_run(tmp_path: Path):
    run = tmp_path / "runs" / "first"
    run.mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"run_id": "x", "method_dir": "m"}, indent=2))
    (run / "results.jsonl").write_text("{}\n")
    (tmp_path / "config.json").write_text(json.dumps({"run_id": "mine"}))  # not a run.json, not a card
    (tmp_path / "copied.json").write_text('\ufeff{\n  "card_version": "run-card/1"}')
    (tmp_path / "node_modules" / "x").mkdir(parents=True)
    (tmp_path / "node_modules" / "x" / "card.json").write_text('{"card_version": "run-card/1"}')
    assert earlier_runs(str(tmp_path)) == [str(tmp_path / "copied.json"), str(run / "results.jsonl"),
                                           str(run / "run.json")]
    assert earlier_runs(str(run / "results.jsonl")) == [str(run / "results.jsonl")]
    assert earlier_runs(str(tmp_path / "config.json")) == []


def test_sandbox_ro_may_not_hold_this_runs_own_directory(tmp_path: Path, capsys):
    """Before: an --out under a --sandbox-ro path let the method read the run's results as they were written."""
    plugin = probe_plugin(tmp_path, "python")
    corpus = small_corpus(tmp_path, 1)
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "lexicon.txt").write_text("hello=hola\n")
    code, card = run_card(shared, "--method", str(plugin), "--corpus", str(corpus), "--sandbox", "--sandbox-ro",
                          str(shared), out="this-run")
    said = capsys.readouterr().err
    assert code == 1 and card is None
    assert f"--sandbox-ro {shared} holds this run's directory {shared / 'this-run'}: the method would read its " \
           "results and card as they are written. Give --out a directory outside it" in said
