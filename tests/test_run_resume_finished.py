"""``mt-eval run --resume`` of a run with nothing left to do leaves its card as it was and says so; a partial
run, or a card that is out of date, is resumed as before (its card rewritten)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mt_eval.cli import main
from test_run import SCRIPTED, corpus, params, run

OUTPUTS = ("card.json", "run.json", "results.jsonl", "predictions.txt")


def written(out: Path) -> dict[str, bytes]:
    return {name: (out / name).read_bytes() for name in OUTPUTS}


def test_a_resume_of_a_complete_run_leaves_every_file_as_it_was_and_says_so(tmp_path: Path, capsys):
    """Before: the card was sealed again with a new finished_at, ``sessions`` 2 (in run.json too) and another
    content hash, for a session that translated nothing."""
    args = ["--method", str(SCRIPTED), "--corpus", str(corpus(tmp_path))]
    assert run(tmp_path, *args)[0] == 0
    out = tmp_path / "run"
    before = written(out)
    capsys.readouterr()
    assert run(tmp_path, *args, "--resume")[0] == 0
    said = capsys.readouterr()
    assert said.out == (f"mt-eval run: the run in {out} is complete already: nothing to resume; its card "
                        f"{out / 'card.json'} is unchanged\n"), said
    assert written(out) == before
    assert json.loads(before["card.json"])["sessions"] == 1
    assert main(["verify", str(out / "card.json"), "--quiet"]) == 0


def test_a_resume_of_a_complete_run_whose_headline_the_gate_withheld_still_exits_5(tmp_path: Path, capsys):
    args = ["--method", str(SCRIPTED), "--corpus", str(corpus(tmp_path)), "--latency-sample", "0"]
    assert run(tmp_path, *args, lenient=False)[0] == 5  # (12 entries, no canaries: the default gate withholds it)
    out = tmp_path / "run"
    before = written(out)
    capsys.readouterr()
    assert run(tmp_path, *args, "--resume", lenient=False)[0] == 5
    assert f"is unchanged (the gate withheld its headline: `mt-eval gate {out / 'card.json'}` says why)\n" \
        in capsys.readouterr().out
    assert written(out) == before


def test_a_resume_of_a_partial_run_rewrites_its_card_as_before(tmp_path: Path):
    """Its failed entries keep their results (a resume translates only the missing ones): the card is sealed again
    for the new session and the exit status still says partial."""
    args = ["--method", str(SCRIPTED), "--corpus", str(corpus(tmp_path)), "--max-errors", "0", *params(fail=["e1"])]
    code, card = run(tmp_path, *args)
    assert code == 3 and card is not None and card.status == "partial"
    code, card = run(tmp_path, *args, "--resume")
    assert code == 3 and card is not None and (card.status, card.sessions) == ("partial", 2)


def test_a_resume_rewrites_a_card_that_is_edited_or_older_than_its_log(tmp_path: Path, capsys):
    args = ["--method", str(SCRIPTED), "--corpus", str(corpus(tmp_path))]
    assert run(tmp_path, *args)[0] == 0
    out = tmp_path / "run"
    card = json.loads((out / "card.json").read_text())
    (out / "card.json").write_text(json.dumps({**card, "errors": 1}))  # its content hash no longer holds
    code, resumed = run(tmp_path, *args, "--resume")
    assert code == 0 and resumed is not None and (resumed.errors, resumed.sessions) == (0, 2)
    (out / "results.jsonl").write_bytes((out / "results.jsonl").read_bytes() + b'{"id": "e3", "transl')  # torn
    capsys.readouterr()
    code, resumed = run(tmp_path, *args, "--resume")
    assert code == 0 and resumed is not None and resumed.sessions == 3
    assert "dropped a torn last line" in capsys.readouterr().err


@pytest.mark.parametrize("embed", ["always", "never"])
def test_a_resume_of_a_complete_run_whose_log_was_edited_scores_the_log(tmp_path: Path, capsys, embed: str):
    """A card that embeds its results is as out of date as one that references its log by hash when the log was
    edited since: the resume scores what the log holds (it said the run complete, its card stating the old
    results). One whose log is as sealed is left as it was, integer ids and all."""
    path = corpus(tmp_path)
    data = json.loads(path.read_text())
    data["entries"][0]["id"] = 7  # (the card lists it as 7, the log as "7")
    path.write_text(json.dumps(data))
    args = ["--method", str(SCRIPTED), "--corpus", str(path), "--embed-results", embed]
    assert run(tmp_path, *args)[0] == 0
    out = tmp_path / "run"
    before = written(out)
    capsys.readouterr()
    assert run(tmp_path, *args, "--resume")[0] == 0
    assert "nothing to resume" in capsys.readouterr().out and written(out) == before
    log = (out / "results.jsonl").read_text().splitlines()
    edited = {**json.loads(log[1]), "predicted": "edited since"}
    (out / "results.jsonl").write_text("\n".join([log[0], json.dumps(edited), *log[2:]]) + "\n")
    code, card = run(tmp_path, *args, "--resume")
    assert code == 0 and card is not None and card.sessions == 2
    assert "nothing to resume" not in capsys.readouterr().out
    assert "edited since" in (out / "predictions.txt").read_text()
    assert main(["verify", str(out / "card.json"), "--quiet"]) == 0


@pytest.mark.parametrize("other", [["--resamples", "300"], ["--bootstrap", "upstream"], ["--embed-results", "never"]])
def test_a_resume_of_a_complete_run_asked_to_score_it_otherwise_scores_it_again(tmp_path: Path, other: list[str]):
    """A resume with other scoring options than the card's (its intervals' resamples or draws, its results embedded
    or referenced) rewrites the card, scored as asked, as a resume did before (another --seed is another config:
    refused)."""
    args = ["--method", str(SCRIPTED), "--corpus", str(corpus(tmp_path))]
    assert run(tmp_path, *args)[0] == 0
    code, card = run(tmp_path, *args, "--resume", *other)
    assert code == 0 and card is not None and card.sessions == 2 and card.metrics is not None
    assert (card.metrics.bootstrap_resamples, card.metrics.bootstrap, card.results_log is not None) == (
        300 if "300" in other else 200, "upstream" if "upstream" in other else "fast", "never" in other)
    assert main(["verify", str(tmp_path / "run" / "card.json"), "--quiet"]) == 0


def test_the_card_of_a_resumed_run_says_isolated_only_when_every_session_that_ran_entries_was(tmp_path: Path):
    """Before: the card said the runtime of the last session, "python (isolated)" for a resume with --isolate that
    translated nothing (a partial run: its failed entry keeps its result) or only what an in-process session left."""
    args = ["--method", str(SCRIPTED), "--corpus", str(corpus(tmp_path)), "--max-errors", "0", *params(fail=["e1"])]
    assert run(tmp_path, *args)[0] == 3
    code, card = run(tmp_path, *args, "--resume", "--isolate")
    assert code == 3 and card is not None and (card.sessions, card.method.runtime) == (2, "python")
    args = ["--method", str(SCRIPTED), "--corpus", str(corpus(tmp_path))]
    for first, then, said in ([], ["--isolate"], "python"), (["--isolate"], [], "python"), \
            (["--isolate"], ["--isolate"], "python (isolated)"):
        name = f"stopped-{len(first)}{len(then)}"
        assert run(tmp_path, *args, *first, out=name)[0] == 0
        log = tmp_path / name / "results.jsonl"  # (stopped after five entries: no card yet)
        log.write_text("".join(log.read_text(encoding="utf-8").splitlines(keepends=True)[:5]), encoding="utf-8")
        (tmp_path / name / "card.json").unlink()
        code, card = run(tmp_path, *args, "--resume", *then, out=name)
        assert code == 0 and card is not None and (card.sessions, card.method.runtime) == (2, said), (first, then)
        assert main(["verify", str(tmp_path / name / "card.json"), "--quiet"]) == 0


@pytest.mark.parametrize(("change", "said"), [
    (lambda lines: [lines[0], "edited\n", *lines[2:]], "line 2 is not the prediction of entry e1"),
    (lambda lines: lines[:3], "it ends after line 3, where the run has 12 entries"),
    (lambda lines: [*lines, "one more\n"], "it goes on after line 12, the last of the run's 12 entries")],
    ids=["edited", "cut-short", "longer"])
def test_a_resume_of_a_complete_run_whose_predictions_changed_refuses_and_leaves_every_file(tmp_path: Path, capsys,
                                                                                           change, said):
    """Before: it said the run was complete, its card unchanged, and left predictions.txt as edited. Deleted, the
    file is written again from the results by a resume."""
    args = ["--method", str(SCRIPTED), "--corpus", str(corpus(tmp_path))]
    assert run(tmp_path, *args)[0] == 0
    out = tmp_path / "run"
    predictions = out / "predictions.txt"
    wrote = predictions.read_bytes()
    predictions.write_text("".join(change(predictions.read_text(encoding="utf-8").splitlines(keepends=True))),
                           encoding="utf-8")
    before = written(out)
    capsys.readouterr()
    assert run(tmp_path, *args, "--resume")[0] == 1
    assert capsys.readouterr().err == (
        f"mt-eval run: cannot resume {out}: the run is complete, but {predictions} is not the file it wrote of its "
        f"results ({said}): it was edited or cut short since. Its card and results.jsonl are as the run sealed them "
        f"(`mt-eval verify {out / 'card.json'}` checks them): delete {predictions} and resume again to write it anew "
        "from them, or run again with another --out\n")
    assert written(out) == before
    predictions.unlink()
    code, card = run(tmp_path, *args, "--resume")
    assert code == 0 and card is not None and card.sessions == 2 and predictions.read_bytes() == wrote
