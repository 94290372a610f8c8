"""``mt-eval decide`` on what users and plugins really send: soft gold rounded by its annotators, results whose
metadata JSON cannot hold, a plugin that raises KeyboardInterrupt or returns a tuple, a confidence on a bin's
edge, options out of range — each a clear outcome for the rows concerned, never a traceback or a blamed scorer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mt_eval.cli import main

REPO = Path(__file__).parent.parent
RULES = REPO / "examples" / "rules-grader"
ADEQUACY = REPO / "examples" / "data" / "adequacy-decisions.jsonl"
CHOICE3 = {"type": "choice", "instructions": "Which translation is better?", "options": ["a", "b", "c"]}
UNIFORM = '''
def uniform(question):
    options = (question.get("options") or [str(level["value"]) for level in question.get("levels", [])]
               or ["true", "false"])
    return {{"probabilities": dict.fromkeys(options, 1 / len(options))}}


class Uniform:
    """Every option equally likely."""

    async def decide(self, rows, config):
        out = [{{"id": row["id"], "answers": {{name: uniform(q) for name, q in row["questions"].items()}}}}
               for row in rows]
{body}
'''


def corpus(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def uniform(make_plugin, body: str = "        return out\n") -> Path:
    manifest = {"name": "Uniform", "entry_point": "pipeline:Uniform", "implements": ["decide"],
                "dependency_class": "S", "dependencies": []}
    return make_plugin(manifest, files={"pipeline.py": UNIFORM.format(body=body)})


def decide(method: Path, corpus_path: Path, out: Path, *extra: str) -> int:
    return main(["decide", "run", "--method", str(method), "--corpus", str(corpus_path), "--out", str(out),
                 "--quiet", "--resamples", "100", *extra])


def test_soft_gold_rounded_by_its_annotators_is_scored_not_blamed_on_the_scorer(make_plugin, tmp_path, capsys):
    """Before: gold summing to 0.9999 (three shares rounded to 0.3333) passed the corpus check, then the self-check
    failed and the run was refused: "the scorer disagrees with the closed forms"."""
    rows = [{"id": "p1", "state": {}, "questions": {"better": CHOICE3},
             "gold": {"better": {"a": 0.3333, "b": 0.3333, "c": 0.3333}}},
            {"id": "p2", "state": {}, "questions": {"better": CHOICE3}, "gold": {"better": "a"}}]
    soft = corpus(tmp_path / "soft.jsonl", rows)
    assert main(["decide", "check", "--corpus", str(soft)]) == 0
    assert decide(uniform(make_plugin), soft, tmp_path / "run") == 0
    assert "disagrees" not in capsys.readouterr().err


def test_a_confidence_on_a_bins_edge_is_in_the_bin_it_opens(tmp_path):
    """1/49 × 49 is 0.9999999999999999 in floating point: it fell into bin 0, not 1, and the self-check failed."""
    rows = [{"id": f"r{k}", "state": {}, "questions": {"pick": {"type": "choice", "instructions": "Pick",
                                                                "options": [f"o{i}" for i in range(k)]}},
             "gold": {"pick": gold}} for k, gold in ((49, "o0"), (30, "o5"))]
    assert main(["decide", "check", "--corpus", str(corpus(tmp_path / "c49.jsonl", rows)), "--ece-bins", "49"]) == 0


def test_metadata_json_cannot_hold_fails_its_row_and_the_run_goes_on(make_plugin, tmp_path):
    """Before: a traceback from the results log; no card, and --resume crashed on the same row every time."""
    body = '''        for result in out:
            if result["id"] == "adq-10":
                result["metadata"] = {"model": object()}
        return out
'''
    method = uniform(make_plugin, body)
    out = tmp_path / "run"
    assert decide(method, ADEQUACY, out) == 0
    results = [json.loads(line) for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    failed = [r for r in results if r.get("error")]
    assert len(results) == 26 and len(failed) == 1
    assert failed[0]["error"].startswith('the result is malformed: "metadata" cannot be saved as JSON: ')


def test_a_keyboard_interrupt_the_method_raises_fails_its_rows_not_the_run(make_plugin, tmp_path, capsys):
    """Before: taken for the user's Ctrl-C: a traceback, exit status 130, and the same at every --resume."""
    body = '''        if any(row["id"] == "adq-10" for row in rows):
            raise KeyboardInterrupt("not the user's")
        return out
'''
    out = tmp_path / "run"
    assert decide(uniform(make_plugin, body), ADEQUACY, out, "--batch-size", "1") == 0
    results = [json.loads(line) for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["error"] for r in results if r.get("error")] == ["the method failed: KeyboardInterrupt: not the user's"]
    assert "Traceback" not in capsys.readouterr().err


def test_a_tuple_is_said_to_be_a_tuple(make_plugin, tmp_path, capsys):
    """Before: "the method returned [{...}], not a list", for a tuple JSON shows as a list."""
    assert decide(uniform(make_plugin, "        return tuple(out)\n"), ADEQUACY, tmp_path / "run") == 4
    err = capsys.readouterr().err
    assert "the method returned a tuple, not a list with one result per row" in err and "[{" not in err


@pytest.mark.parametrize(("option", "said"), [
    (["--ece-bins", "1000000000"], "argument --ece-bins: must be from 1 to 1000, got 1000000000"),
    (["--source-lang", "english"], "argument --source-lang: 'english' is not a language code"),
    (["--param", "x=1e400"], "1e400 (a number past any float: Infinity) is not a JSON value"),
])
def test_options_out_of_range_are_refused_before_the_method_runs(tmp_path, capsys, option: list[str], said: str):
    """Before: a memory-error traceback after every row was decided; a regex after the self-check (exit 1); the
    method given Infinity while the card recorded null."""
    with pytest.raises(SystemExit) as refused:
        decide(RULES, ADEQUACY, tmp_path / "run", *option)
    assert refused.value.code == 2
    assert said in capsys.readouterr().err
    assert not (tmp_path / "run" / "results.jsonl").exists()


def test_a_score_gold_written_as_a_number_is_said_with_the_level_name_to_write(tmp_path, capsys):
    """As grade --labels says it. Before: "expected a string or true or false or an object, got the number 3", which
    said neither that the level is named "3" nor how to write it."""
    levels = [{"value": v} for v in range(5)]
    score = {"type": "score", "instructions": "How adequate is it?", "levels": levels}
    rows = corpus(tmp_path / "rows.jsonl", [
        {"id": "s1", "state": {}, "questions": {"adequacy": score}, "gold": {"adequacy": 3}},
        {"id": "s2", "state": {}, "questions": {"adequacy": score}, "gold": {"adequacy": "4"}}])
    assert main(["decide", "check", "--corpus", str(rows)]) == 1
    err = capsys.readouterr().err
    assert f'{rows}:1 (row "s1") $.gold.adequacy: gold 3 is a number: an option\'s name is a string; write "3"' in err
    assert "1 problem" in err and "s2" not in err
    assert decide(RULES, rows, tmp_path / "run") == 1
    assert 'write "3"' in capsys.readouterr().err and not (tmp_path / "run").exists()


def test_isolate_on_a_node_plugin_records_node(tmp_path):
    """Before: "python (isolated)", for a method that ran in Node (--isolate moves a Python entry only)."""
    plugin = tmp_path / "node-grader"
    plugin.mkdir()
    (plugin / "decide.js").write_text(f"export {{ decide }} from {json.dumps((RULES / 'decide.js').as_uri())};\n")
    manifest = json.loads((RULES / "method.json").read_text(encoding="utf-8"))
    manifest.pop("entry_point", None)
    (plugin / "method.json").write_text(json.dumps({**manifest, "method_id": "node-grader", "node_entry": "decide.js"}))
    out = tmp_path / "run"
    assert decide(plugin, ADEQUACY, out, "--isolate") == 0
    assert json.loads((out / "card.json").read_text(encoding="utf-8"))["method"]["runtime"] == "node"


def test_ctrl_c_while_waiting_for_the_run_directory_says_nothing_was_decided(tmp_path: Path):
    """Before: "interrupted; finished rows are saved. Continue with the same command and --resume." when no row had
    been decided, in a directory that was another process's."""
    import subprocess
    import sys

    from mt_eval.locks import RunDirectoryLock
    from process_support import interrupted_while_waiting

    out = tmp_path / "run"
    with RunDirectoryLock(out, command="mt-eval decide run --first").acquire():
        waiting = subprocess.Popen([sys.executable, "-m", "mt_eval.cli", "decide", "run", "--method", str(RULES),
                                    "--corpus", str(ADEQUACY), "--out", str(out), "--quiet", "--wait"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        with waiting:
            said = interrupted_while_waiting(waiting)
    assert (f"mt-eval decide: interrupted before the run started: nothing was decided, and {out} was left as it "
            "was") in said
    assert "finished rows are saved" not in said and "--resume" not in said
    assert sorted(path.name for path in out.iterdir()) == [".lock"]
