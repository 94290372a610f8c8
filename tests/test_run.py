"""`mt-eval run` end to end: cards, failures that never stop a run, retries, timeouts, resume, hooks."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest

from gate_policies import LENIENT as LENIENT_POLICY_ARGS
from mt_eval.cli import main
from mt_eval.harness.run_directory import FILES
from mt_eval.harness.runcard import RunCard

HERE = Path(__file__).parent
REPO = HERE.parent
SCRIPTED = HERE / "fixtures" / "methods"
REVERSE = HERE / "fixtures" / "reverse"
# These tests are about the run's mechanics on tiny corpora without families: a lenient gate, and no extra
# latency calls (their scripted methods count calls). The gate and latency have tests of their own.
LENIENT = [*LENIENT_POLICY_ARGS, "--latency-sample", "0"]


def corpus(tmp_path: Path, n: int = 12, **extra: object) -> Path:
    entries = [{"id": f"e{i}", "source": f"Sentence number {i}.", "reference": f"Sentence number {i}!", **extra}
               for i in range(n)]
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps({"dataset": {"name": "tiny", "license": "CC0-1.0"},
                                "language_pair": {"source": "eng", "target": "spa"}, "entries": entries}))
    return path


def run(tmp_path: Path, *args: str, out: str = "run", lenient: bool = True) -> tuple[int, RunCard | None]:
    code = main(["run", "--out", str(tmp_path / out), "--quiet", "--resamples", "200", *(LENIENT if lenient else []),
                 *args])
    card_path = tmp_path / out / "card.json"
    card = msgspec.json.decode(card_path.read_bytes(), type=RunCard) if code in (0, 3, 4) else None
    return code, card


def params(**values: object) -> list[str]:
    return [arg for key, value in values.items() for arg in ("--param", f"{key}={json.dumps(value)}")]


def test_demo_run_writes_a_complete_valid_card(tmp_path: Path):
    code, card = run(tmp_path, "--demo", lenient=False)
    assert code == 0 and card is not None
    assert card.method.method_id == "lexicon-eng-spa"
    assert card.method.dependency_class == "S"
    assert card.method.contributions[0].dependency_class == "S"
    assert len(card.method.code_sha256) == 64
    assert card.corpus.entries == 36 and card.corpus.pair == "eng>spa" and card.corpus.license == "CC0-1.0"
    assert card.metrics is not None and card.metrics.segments == 30  # the scored entries only
    assert card.metrics is not None and card.metrics.headline == "chrF++"
    assert [m.name for m in card.metrics.metrics] == ["chrF++", "BLEU", "TER"]
    for metric in card.metrics.metrics:
        assert metric.ci_low <= metric.score <= metric.ci_high
        assert "version:" in metric.signature
    assert card.environment.cpu_count >= 1 and card.environment.hardware
    assert card.latency.cold_s is not None and card.latency.hot_entries == 10 and card.latency.hot_calls == 30
    assert card.latency.measured_by == "harness" and card.latency.self_reported is not None
    assert len(card.results) == 36 and card.errors == 0
    assert card.families is not None and str(card.families.canary_pass_rate) == "3/3 (100.0%)"
    assert card.gate is not None and card.gate.passed and card.gate.policy == "default"
    body = msgspec.to_builtins(card)
    sealed = body.pop("content_sha256")
    assert sealed == hashlib.sha256(msgspec.json.encode(body, order="sorted")).hexdigest()


def test_cards_of_python_and_node_methods_validate_against_the_checked_in_schema(tmp_path: Path):
    import jsonschema

    schema = json.loads((REPO / "bridge" / "schemas" / "run-card.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    plugin = tmp_path / "reverse-js"
    plugin.mkdir()
    shutil.copy(REVERSE / "translate.js", plugin)
    (plugin / "method.json").write_text(json.dumps({"name": "Reverse JS", "node_entry": "translate.js",
                                                    "dependency_class": "S", "dependencies": []}))
    for method, out in [(str(REVERSE), "python"), (str(plugin), "node")]:
        code, _ = run(tmp_path, "--method", method, "--corpus", str(corpus(tmp_path)), out=out)
        assert code == 0
        card = json.loads((tmp_path / out / "card.json").read_text())
        assert [e.message for e in validator.iter_errors(card)] == []
    card["metrics"]["metrics"][0]["score"] = "high"
    [error] = validator.iter_errors(card)
    assert list(error.absolute_path) == ["metrics"]
    assert "'high' is not of type 'number'" in jsonschema.exceptions.best_match([error]).message or any(
        "'high' is not of type 'number'" in sub.message for sub in error.context)


def test_a_translate_js_plugin_runs_through_the_bridge(tmp_path: Path):
    plugin = tmp_path / "reverse-js"
    plugin.mkdir()
    shutil.copy(REVERSE / "translate.js", plugin)
    (plugin / "method.json").write_text(json.dumps({"name": "Reverse JS", "node_entry": "translate.js",
                                                    "dependency_class": "S", "dependencies": []}))
    code, card = run(tmp_path, "--method", str(plugin), "--corpus", str(corpus(tmp_path)))
    assert code == 0 and card is not None
    assert card.method.runtime == "node"
    assert card.results[0].predicted == "spa:" + "Sentence number 0."[::-1]
    _, python_card = run(tmp_path, "--method", str(REVERSE), "--corpus", str(corpus(tmp_path)),
                                   out="python")
    assert python_card is not None and python_card.method.runtime == "python"
    assert [r.predicted for r in python_card.results] == [r.predicted for r in card.results]
    assert python_card.metrics == card.metrics


def test_entry_failures_and_raising_batches_never_stop_the_run(tmp_path: Path):
    code, card = run(tmp_path, "--method", str(SCRIPTED), "--corpus", str(corpus(tmp_path)), "--batch-size", "2",
                     "--retries", "0", *params(fail=["e1"], **{"raise": ["e4"]}))
    assert code == 3 and card is not None  # partial
    errors = {r.id: r.error for r in card.results if r.error}
    # the batch [e4, e5] raised: it was split, and only e4, which makes the method raise, failed
    assert errors == {"e1": "asked to fail", "e4": "the method failed: RuntimeError: asked to raise"}
    assert card.errors == 2 and card.status == "partial"
    assert card.usage.prompt_tokens == 3 * 10


def test_retries_within_the_budget(tmp_path: Path):
    flaky = ["e1", "e2", "e3"]
    code, card = run(tmp_path, "--method", str(SCRIPTED), "--corpus", str(corpus(tmp_path)), *params(flaky=flaky))
    assert code == 0 and card is not None
    assert card.errors == 0 and card.covariates.retries_used == 3
    _, card = run(tmp_path, "--method", str(SCRIPTED), "--corpus", str(corpus(tmp_path)), "--retry-budget", "1",
                     "--batch-size", "1", "--concurrency", "1", *params(flaky=flaky), out="tight")
    assert card is not None and card.covariates.retries_used == 1 and card.covariates.retry_budget == 1
    assert card.errors == 2


def test_slow_entries_time_out(tmp_path: Path):
    code, card = run(tmp_path, "--method", str(SCRIPTED), "--corpus", str(corpus(tmp_path, 2)), "--timeout", "0.1",
                     "--retries", "0", "--batch-size", "1", *params(sleep_s=2))
    assert code == 4 and card is not None and card.status == "failed" and card.metrics is None
    assert [r.error for r in card.results] == ["timed out after 0.1 s (0.1 s per entry)"] * 2


def test_extra_entry_fields_reach_the_method_untouched_but_never_the_reference(tmp_path: Path):
    record = tmp_path / "calls.jsonl"
    run(tmp_path, "--method", str(SCRIPTED), "--corpus", str(corpus(tmp_path, 3, domain="news", meta={"k": [1]})),
        *params(record=str(record)))
    seen = [e for line in record.read_text().splitlines() for e in json.loads(line)]
    assert all(e["domain"] == "news" and e["meta"] == {"k": [1]} and "reference" not in e for e in seen)


def test_usage_errors_are_explained(tmp_path: Path, capsys):
    assert main(["run"]) == 2
    assert "mt-eval run: give --method DIR (a method plugin directory) and --corpus FILE" in capsys.readouterr().err
    assert main(["run", "--method", str(REPO / "examples" / "lexicon-eng-spa"), "--corpus",
                 str(corpus(tmp_path)), "--pair", "eng>fra", "--out", str(tmp_path / "x")]) == 1
    assert "the corpus declares the pair 'eng>spa', but --pair says 'eng>fra'" in capsys.readouterr().err
    assert main(["run", "--method", str(REPO / "examples" / "lexicon-eng-spa"), "--corpus",
                 str(corpus(tmp_path)), "--pair", "eng:fra", "--accept-doubt", "pair-mismatch",
                 "--out", str(tmp_path / "x")]) == 1
    assert "lexicon-eng-spa supports 'eng>spa', not 'eng>fra': choose one with --pair" in capsys.readouterr().err
    assert main(["run", "--demo", "--corpus", str(tmp_path / "missing.json")]) == 1
    assert "cannot read corpus" in capsys.readouterr().err


def test_an_existing_run_is_never_overwritten_silently(tmp_path: Path, capsys):
    args = ["--method", str(SCRIPTED), "--corpus", str(corpus(tmp_path))]
    assert run(tmp_path, *args)[0] == 0
    assert run(tmp_path, *args)[0] == 1
    assert "holds an earlier run: continue it with --resume, start over with --force" in capsys.readouterr().err
    other = corpus(tmp_path / "other", n=5)  # (dev.tsv, then dev.json: one default directory for both)
    assert run(tmp_path, "--method", str(SCRIPTED), "--corpus", str(other))[0] == 1
    assert capsys.readouterr().err.endswith(
        f"{tmp_path / 'run'} holds an earlier run of other inputs (the corpus differs), which --resume cannot "
        "continue: choose another --out, or start over with --force (which deletes that run)\n")
    assert run(tmp_path, *args, "--force")[0] == 0


@pytest.mark.parametrize("name", ["run.json", "results.jsonl", "contamination.json"])
def test_a_directory_named_like_a_run_file_is_refused_and_kept_even_with_force(tmp_path: Path, capsys, name: str):
    folder = tmp_path / "run" / name
    folder.mkdir(parents=True)
    (folder / "mine.txt").write_text("kept")
    args = ["--method", str(SCRIPTED), "--corpus", str(corpus(tmp_path))]
    for given in ([], ["--resume"], ["--force"]):
        assert run(tmp_path, *args, *given)[0] == 1
        err = capsys.readouterr().err
        assert f"{folder} is a directory, where a run keeps its {name} file, so {tmp_path / 'run'} is not a run " \
               "directory mt-eval wrote: choose another --out" in err and "Errno" not in err
        assert (folder / "mine.txt").read_text() == "kept"


@pytest.mark.parametrize("names", [["card.json"], ["predictions.txt", "results.jsonl"]])
def test_run_outputs_without_their_run_json_are_never_overwritten_silently(tmp_path: Path, capsys, names: list[str]):
    (tmp_path / "run").mkdir()
    for name in names:
        (tmp_path / "run" / name).write_text('{"x": 1}\n')
    args = ["--method", str(SCRIPTED), "--corpus", str(corpus(tmp_path))]
    held = f"{', '.join(sorted(names, key=FILES.index))} but no run.json, so there is no run to resume: start " \
           f"over with --force (which deletes {'it' if len(names) == 1 else 'them'}), or choose another --out"
    for resume in ([], ["--resume"]):
        assert run(tmp_path, *args, *resume)[0] == 1
        assert f"{tmp_path / 'run'} holds {held}" in capsys.readouterr().err
        assert all((tmp_path / "run" / name).read_text() == '{"x": 1}\n' for name in names)
    assert run(tmp_path, *args, "--force")[0] == 0


def test_resume_refuses_changed_inputs(tmp_path: Path, capsys):
    path = corpus(tmp_path)
    assert run(tmp_path, "--method", str(SCRIPTED), "--corpus", str(path))[0] == 0
    corpus(tmp_path, 13)
    assert run(tmp_path, "--method", str(SCRIPTED), "--corpus", str(path), "--resume")[0] == 1
    assert "the corpus changed since the run started" in capsys.readouterr().err


def test_a_refused_resume_names_each_setting_that_changed_and_its_values(tmp_path: Path, capsys):
    path = corpus(tmp_path)
    assert run(tmp_path, "--method", str(SCRIPTED), "--corpus", str(path), "--timeout", "30")[0] == 0
    capsys.readouterr()
    assert run(tmp_path, "--method", str(SCRIPTED), "--corpus", str(path), "--timeout", "5", "--resume")[0] == 1
    err = capsys.readouterr().err
    assert "the run configuration changed since the run started (the run configuration: timeout_s 30.0 → 5.0); " \
        "resume" in err and "run settings" not in err  # each change said once
    assert run(tmp_path, "--method", str(SCRIPTED), "--corpus", str(path), "--timeout", "30", "--retries", "4",
               "--resume")[0] == 1
    assert "(the run settings: retries 1 → 4)" in capsys.readouterr().err
    other = tmp_path / "other-method"
    shutil.copytree(SCRIPTED, other)
    (other / "behaviours.py").write_text((other / "behaviours.py").read_text() + "\n# changed\n")
    assert run(tmp_path, "--method", str(other), "--corpus", str(path), "--timeout", "30", "--resume")[0] == 1
    assert f"the method (this run is for {SCRIPTED.resolve()}, not {other.resolve()})" in capsys.readouterr().err
    (tmp_path / "run" / "run.json").unlink()
    assert run(tmp_path, "--method", str(SCRIPTED), "--corpus", str(path), "--resume")[0] == 1
    missing = "but no run.json, so there is no run to resume: start over with --force"
    assert missing in capsys.readouterr().err


def test_interrupted_run_resumes_to_the_same_metrics(tmp_path: Path):
    path = corpus(tmp_path, 30)
    slow = ["--method", str(SCRIPTED), "--corpus", str(path), "--batch-size", "1", "--concurrency", "2",
            "--resamples", "200", *LENIENT, *params(sleep_s=0.05)]
    out = tmp_path / "interrupted"
    command = [sys.executable, "-m", "mt_eval.cli", "run", "--out", str(out), *slow]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    log = out / "results.jsonl"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if log.exists() and log.read_text().count("\n") >= 8:
            break
        time.sleep(0.02)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    assert "interrupted; finished entries are saved" in stderr
    done_before = log.read_text().count("\n")
    assert 8 <= done_before < 30
    resumed = subprocess.run([*command, "--resume"], capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert log.read_text().count("\n") == 30
    card = msgspec.json.decode((out / "card.json").read_bytes(), type=RunCard)
    assert card.sessions == 2
    _, straight = run(tmp_path, *slow, out="straight")
    assert straight is not None
    assert card.metrics == straight.metrics
    assert [r.id for r in card.results] == [r.id for r in straight.results]


def test_lifecycle_hooks_and_extension_metrics(tmp_path: Path, monkeypatch):
    extension = tmp_path / "ext_recorder.py"
    calls = tmp_path / "calls.txt"
    extension.write_text(
        "from mt_eval.hookspecs import hookimpl\n"
        f"LOG = {str(calls)!r}\n"
        "def note(text):\n    with open(LOG, 'a') as log:\n        log.write(text + '\\n')\n"
        "@hookimpl\ndef run_started(run_id, method_id, config):\n    note(f'started {method_id} {config.pair}')\n"
        "@hookimpl\ndef entry_completed(run_id, result):\n    note('entry ' + result.id)\n"
        "@hookimpl\ndef run_finished(run_id, card):\n    note(f'finished {card.errors}')\n"
        "@hookimpl\ndef register_metrics(register):\n"
        "    register('length-ratio', lambda hyps, refs: sum(map(len, hyps)) / sum(map(len, refs)))\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    code, card = run(tmp_path, "--method", str(SCRIPTED), "--corpus", str(corpus(tmp_path, 3)),
                     "--extension", "ext_recorder")
    assert code == 0 and card is not None and card.metrics is not None
    assert calls.read_text().splitlines()[0] == "started scripted eng>spa"
    assert sorted(calls.read_text().splitlines()[1:4]) == ["entry e0", "entry e1", "entry e2"]
    assert calls.read_text().splitlines()[-1] == "finished 0"
    assert card.metrics.metrics[-1].name == "length-ratio" and card.metrics.metrics[-1].score == 1.0


def test_method_card_override_and_isolated_python(tmp_path: Path):
    card_file = tmp_path / "card.json"
    card_file.write_text(json.dumps({"paradigm": "hybrid", "description": "from --method-card"}))
    code, card = run(tmp_path, "--method", str(REVERSE), "--corpus", str(corpus(tmp_path, 2)), "--method-card",
                     str(card_file), "--isolate")
    assert code == 0 and card is not None
    assert card.method.card["description"] == "from --method-card" and card.method.runtime == "python (isolated)"
    assert card.results[0].predicted == "spa:" + "Sentence number 0."[::-1]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_commit_and_dirty_flag_are_recorded(tmp_path: Path):
    plugin = tmp_path / "repo" / "plugin"
    shutil.copytree(SCRIPTED, plugin)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org"}
    for git in (["init", "-q"], ["add", "."], ["commit", "-qm", "plugin"]):
        subprocess.run(["git", *git], cwd=plugin.parent, check=True, env=env)
    _, card = run(tmp_path, "--method", str(plugin), "--corpus", str(corpus(tmp_path, 2)))
    assert card is not None and len(card.method.git_commit or "") == 40 and card.method.git_dirty is False
    (plugin / "behaviours.py").write_text((plugin / "behaviours.py").read_text() + "\n# changed\n")
    _, card = run(tmp_path, "--method", str(plugin), "--corpus", str(corpus(tmp_path, 2)), out="dirty")
    assert card is not None and card.method.git_dirty is True


def test_compare_two_runs_of_the_same_corpus(tmp_path: Path, capsys):
    demo = str(REPO / "examples" / "data" / "eng-spa-demo.json")
    assert run(tmp_path, "--demo", out="lexicon")[0] == 0
    assert run(tmp_path, "--method", str(SCRIPTED), "--corpus", demo, out="copy")[0] == 0
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "copy" / "card.json"), str(tmp_path / "lexicon" / "card.json"),
                 "--trials", "2000", "--bootstrap", "300", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    rows = {row["metric"]: row for row in report["rows"]}
    assert set(rows) == {"chrF++", "BLEU", "TER"}
    assert rows["chrF++"]["delta"] > 20 and rows["chrF++"]["p_randomization"] < 0.01
    assert rows["chrF++"]["p_bootstrap"] < 0.01
    assert 0 < rows["chrF++"]["delta_ci_low"] < rows["chrF++"]["delta"] < rows["chrF++"]["delta_ci_high"]
    assert main(["compare", str(tmp_path / "copy" / "card.json"), str(tmp_path / "lexicon" / "card.json")]) == 0
    assert "significant at 0.05" in capsys.readouterr().out
    assert run(tmp_path, "--method", str(SCRIPTED), "--corpus", str(corpus(tmp_path)), out="other")[0] == 0
    assert main(["compare", str(tmp_path / "copy" / "card.json"), str(tmp_path / "other" / "card.json")]) == 1
    assert "the cards come from different corpora" in capsys.readouterr().err
    assert main(["compare", str(tmp_path / "nope.json"), str(tmp_path / "other" / "card.json")]) == 1
    assert "cannot read" in capsys.readouterr().err


def test_ctrl_c_while_the_method_loads_says_nothing_was_started(tmp_path: Path):
    stuck = tmp_path / "stuck-at-import"
    shutil.copytree(SCRIPTED, stuck, ignore=shutil.ignore_patterns("__pycache__"))
    marker = tmp_path / "importing"
    code = (stuck / "behaviours.py").read_text()
    (stuck / "behaviours.py").write_text(f"import pathlib, time\npathlib.Path({str(marker)!r}).touch()\n"
                                         f"time.sleep(60)\n{code}")
    out = tmp_path / "never"
    process = subprocess.Popen([sys.executable, "-m", "mt_eval.cli", "run", "--method", str(stuck), "--corpus",
                                str(corpus(tmp_path)), "--out", str(out)], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    assert "interrupted before the run started: nothing was translated, and no run directory was written" in stderr
    assert "finished entries are saved" not in stderr and "Traceback" not in stderr
    assert not out.exists()


def test_work_that_cannot_show_progress_says_it_is_still_going(capsys):
    from mt_eval.progress import still_working

    with still_working("still importing after {seconds} s", every_s=0.05):
        time.sleep(0.18)
    said = capsys.readouterr().err.splitlines()
    assert 2 <= len(said) <= 4 and said[0] == "still importing after 0 s"
    time.sleep(0.1)
    assert capsys.readouterr().err == ""  # quiet once the work is done


@pytest.mark.parametrize("command", ["run", "decide run"])
@pytest.mark.parametrize(("out", "message"), [
    ("afile", "--out {tmp}/afile is a file, not a directory: give a directory for the {what}"),
    ("afile/sub", "cannot create --out {tmp}/afile/sub: {tmp}/afile is a file, not a directory"),
    pytest.param("/proc/x", "cannot create --out /proc/x: No such file or directory",
                 marks=pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="Linux's /proc")),
])
def test_an_out_that_cannot_be_a_run_directory_is_named_before_the_corpus_is_read(tmp_path: Path, capsys,
                                                                                  command: str, out: str, message: str):
    (tmp_path / "afile").write_text("mine")
    for force in ([], ["--force"]):
        code = main([*command.split(), "--method", str(SCRIPTED), "--corpus", str(tmp_path / "never-read.json"),
                     "--out", str(tmp_path / out), "--quiet", *force])
        what = "run" if command == "run" else "decision run"
        assert code == 1 and capsys.readouterr().err == (
            f"mt-eval {command.split()[0]}: {message.format(tmp=tmp_path, what=what)}\n")
    assert (tmp_path / "afile").read_text() == "mine" and [p.name for p in tmp_path.iterdir()] == ["afile"]
