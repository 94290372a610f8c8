"""`mt-eval decide run` and `mt-eval decide check`: the card and where each number came from, limits that fail
rows instead of truncating them, gold that never reaches the method, resuming, bad corpora named by row and
question, bad answers named by row and question, and a scorer that disagrees with the closed forms."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from mt_eval.cli import main
from mt_eval.decisions import metrics

REPO = Path(__file__).parent.parent
REVERSE = REPO / "tests" / "fixtures" / "reverse"
EXAMPLE_CORPUS = REPO / "examples" / "data" / "adequacy-decisions.jsonl"
SCORE = {"type": "score", "instructions": "How good?", "levels": [{"value": v} for v in range(5)]}
NOUL = {"type": "noul", "instructions": "Adequate?"}
CHOICE = {"type": "choice", "instructions": "Which?", "options": ["a", "b", "tie"]}
RECORDER = '''
import json, os

class Recorder:
    """Answers like the Uniform baseline (or as a row's state says) and records every row it is given."""

    async def decide(self, rows, config):
        with open(os.environ["DECISIONS_RECORD"], "a") as f:
            for row in rows:
                f.write(json.dumps(row) + "\\n")
        out = []
        for row in rows:
            if "answers" in row["state"]:
                out.append({"id": row["id"], "answers": row["state"]["answers"]})
                continue
            answers = {}
            for name, q in row["questions"].items():
                options = (["true", "false"] if q["type"] == "noul" else q.get("options") or
                           [str(l["value"]) for l in q["levels"]])
                answers[name] = {"probabilities": {o: 1 / len(options) for o in options}}
            out.append({"id": row["id"], "answers": answers})
        return out
'''


def write_corpus(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def rows(n: int = 4) -> list[dict[str, Any]]:
    return [{"id": f"r{i}", "state": {"text": "x" * (i + 1), "prefer": "4"}, "questions": {"s": SCORE, "n": NOUL},
             "gold": {"s": "4", "n": i % 2 == 0}} for i in range(n)]


@pytest.fixture
def recorder(make_plugin, tmp_path, monkeypatch):
    monkeypatch.setenv("DECISIONS_RECORD", str(tmp_path / "record.jsonl"))

    def make(**decide: Any) -> Path:
        manifest = {"name": "Recorder", "entry_point": "pipeline:Recorder", "implements": ["decide"],
                    "dependency_class": "S", "dependencies": []}
        if decide:
            manifest["decide"] = decide
        return make_plugin(manifest, files={"pipeline.py": RECORDER})

    return make


def run(method: Path, corpus: Path, out: Path, *extra: str) -> int:
    return main(["decide", "run", "--method", str(method), "--corpus", str(corpus), "--out", str(out), "--quiet",
                 "--resamples", "100", *extra])


def card_of(out: Path) -> dict[str, Any]:
    return json.loads((out / "card.json").read_text(encoding="utf-8"))


def test_the_card_says_which_run_produced_each_number(tmp_path):
    out = tmp_path / "run"
    assert run(REVERSE, write_corpus(tmp_path / "c.jsonl", rows()), out) == 0
    card = card_of(out)
    assert card["card_version"] == "decision-card/1" and card["content_sha256"]
    assert card["metrics_produced_by"]["run_id"] == card["run_id"] == card["self_check_produced_by"]["run_id"]
    from mt_eval.decisions.card import results_sha256
    from mt_eval.decisions.execution import DecisionLog

    logged = DecisionLog.read(out / "results.jsonl")
    assert card["metrics_produced_by"]["results_sha256"] == results_sha256([logged[f"r{i}"] for i in range(4)])
    assert card["self_check"]["passed"] is True and card["self_check"]["baseline"] == "uniform"
    score = card["metrics"]["groups"]["score"]
    # reverse puts 0.7 on the preferred level "4" and 0.075 on each other: E = 2.8 + 0.075 × (0+1+2+3) = 3.25
    assert score["accuracy"]["value"] == 1.0 and score["ev_mae"]["value"] == pytest.approx(0.75, abs=1e-6)
    assert card["coverage"]["overall"] == {"asked": 8, "answered": 8, "failed": 0, "scored": 8}
    assert card["metrics"]["bootstrap_unit"] == "case" and card["metrics"]["ece_bins"] == 10
    assert card["settings"]["tolerance"] == 0.001 and card["method"]["method_id"] == "reverse"


def test_the_results_table_goes_to_standard_output_before_the_cards_path_and_the_check_to_standard_error(
        tmp_path, capsys):
    """As `mt-eval run` prints its result, so `decide run ... > result.txt` keeps the table. Before: on standard
    error, with only the card's path on standard output."""
    assert main(["decide", "run", "--method", str(REVERSE), "--corpus", str(EXAMPLE_CORPUS), "--out",
                 str(tmp_path / "run"), "--resamples", "50"]) == 0
    shown = capsys.readouterr()
    assert "scorer self-check on the Uniform baseline (46 gold questions): passed" in shown.err
    assert "every number from run" in shown.out and "overall" in shown.out
    assert "every number from run" not in shown.err
    assert shown.out.splitlines()[-1] == f"decision card: {tmp_path / 'run' / 'card.json'}"
    assert main(["decide", "check", "--corpus", str(EXAMPLE_CORPUS), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["passed"] is True


def test_gold_never_reaches_the_method(recorder, tmp_path):
    method = recorder()
    assert run(method, write_corpus(tmp_path / "c.jsonl", rows()), tmp_path / "run") == 0
    sent = [json.loads(line) for line in (tmp_path / "record.jsonl").read_text().splitlines()]
    assert len(sent) == 4 and all(set(row) == {"id", "state", "questions"} for row in sent)


def test_rows_over_the_declared_limit_fail_unsent_and_the_limit_is_in_the_card(recorder, tmp_path):
    method = recorder(max_input_chars=400)
    corpus = [*rows(2), {"id": "big", "state": {"text": "y" * 500}, "questions": {"n": NOUL}, "gold": {"n": True}}]
    assert run(method, write_corpus(tmp_path / "c.jsonl", corpus), tmp_path / "run") == 0
    sent = [json.loads(line)["id"] for line in (tmp_path / "record.jsonl").read_text().splitlines()]
    assert sent == ["r0", "r1"]
    card = card_of(tmp_path / "run")
    assert card["settings"]["max_input_chars"] == 400 and card["rows_over_limit"] == 1
    [big] = [r for r in card["results"] if r["id"] == "big"]
    assert big["error"].startswith("the input is 5") and "over the method's limit of 400" in big["error"]
    assert "never truncated" in big["error"]


def test_questions_of_a_type_the_method_does_not_answer_fail_with_the_reason(recorder, tmp_path):
    method = recorder(question_types=["noul"])
    assert run(method, write_corpus(tmp_path / "c.jsonl", rows(2)), tmp_path / "run") == 0
    card = card_of(tmp_path / "run")
    assert card["results"][0]["answers"]["s"]["error"].startswith("the method does not answer score questions")
    assert list(card["results"][0]["answers"]) == ["s", "n"]
    assert card["coverage"]["score"] == {"asked": 2, "answered": 0, "failed": 2, "scored": 0}
    sent = [json.loads(line) for line in (tmp_path / "record.jsonl").read_text().splitlines()]
    assert all(list(row["questions"]) == ["n"] for row in sent)


def test_bad_answers_are_named_by_row_and_question_in_the_card(recorder, tmp_path):
    bad = {"id": "bad", "state": {"answers": {"c": {"probabilities": {"a": 0.5, "b": 0.3, "tie": 0.1}}}},
           "questions": {"c": CHOICE}, "gold": {"c": "a"}}
    missing = {"id": "missing", "state": {"answers": {"c": {"probabilities": {"a": 1}}}}, "questions": {"c": CHOICE}}
    assert run(recorder(), write_corpus(tmp_path / "c.jsonl", [bad, missing, *rows(2)]), tmp_path / "run") == 0
    card = card_of(tmp_path / "run")
    failures = {(f["example_id"], f["question"]): f["message"] for f in card["failures"]}
    assert failures[("bad", "c")].startswith("probabilities sum to 0.9, not 1")
    assert failures[("missing", "c")] == 'missing options "b", "tie": give a probability for every option'
    assert card["coverage"]["choice"]["failed"] == 2


def test_an_interrupted_run_resumes_with_the_same_results(tmp_path):
    corpus = write_corpus(tmp_path / "c.jsonl", rows(6))
    out = tmp_path / "run"
    assert run(REVERSE, corpus, out) == 0
    complete = card_of(out)
    lines = (out / "results.jsonl").read_text().splitlines()
    (out / "results.jsonl").write_text("\n".join(lines[:3]) + "\n" + lines[3][:20])  # torn by a crash
    (out / "card.json").unlink()
    assert run(REVERSE, corpus, out, "--resume") == 0
    resumed = card_of(out)
    assert resumed["sessions"] == 2 and resumed["run_id"] == complete["run_id"]
    assert resumed["metrics"]["groups"] == complete["metrics"]["groups"]
    assert run(REVERSE, corpus, out) == 1  # an earlier run is never overwritten silently
    assert run(REVERSE, corpus, out, "--force") == 0


def test_resume_refuses_a_changed_corpus(tmp_path, capsys):
    out = tmp_path / "run"
    assert run(REVERSE, write_corpus(tmp_path / "c.jsonl", rows(3)), out) == 0
    assert run(REVERSE, write_corpus(tmp_path / "c.jsonl", rows(4)), out, "--resume") == 1
    assert "the corpus changed since the run started" in capsys.readouterr().err


@pytest.mark.parametrize(("row", "message"), [
    ({"id": "r1", "state": {}, "questions": {"q": {"type": "rating", "instructions": "?"}}},
     'c.jsonl:1 (row "r1") $.questions.q.type: the string "rating" is not a valid question type'),
    ({"id": "r1", "state": {}, "questions": {"q": {"type": "score", "instructions": "?",
                                                   "levels": [{"value": 1}, {"value": 0}]}}},
     'c.jsonl:1 (row "r1") $.questions.q.levels[1].value: the rubric is not in order'),
    ({"id": "r1", "state": {}, "questions": {"q": {"type": "score", "instructions": "?", "levels": {"0": "x"}}}},
     'c.jsonl:1 (row "r1") $.questions.q.levels: expected an array of objects, got an object'),
    ({"id": "r1", "state": {}, "questions": {"q": CHOICE}, "gold": {"q": {"a": 0.5, "b": 0.4, "tie": 0}}},
     'c.jsonl:1 (row "r1") $.gold.q: gold distribution: probabilities sum to 0.9'),
    ({"id": "r1", "state": {}, "questions": {"q": CHOICE}, "gold": {"q": {"a": 1}}},
     'c.jsonl:1 (row "r1") $.gold.q: gold distribution: missing options "b", "tie"'),
    ({"id": "r1", "state": {}, "questions": {"q": CHOICE}, "gold": {"q": "c"}},
     'c.jsonl:1 (row "r1") $.gold.q: gold "c" is not an option of this question'),
    ({"id": "r1", "state": {}, "questions": {"q": NOUL}, "gold": {"p": True}},
     'c.jsonl:1 (row "r1") $.gold.p: no question "p" in this row'),
])
def test_bad_corpora_are_refused_naming_row_and_question(tmp_path, capsys, row, message):
    corpus = write_corpus(tmp_path / "c.jsonl", [row])
    assert run(REVERSE, corpus, tmp_path / "run") == 1
    err = capsys.readouterr().err
    assert message in err.replace(str(tmp_path) + "/", ""), err
    assert not (tmp_path / "run").exists()


def test_every_problem_of_a_corpus_is_reported_at_once(tmp_path, capsys):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"id": "a", "state": {}, "questions": {"q": {"type": "x", "instructions": "?"}}}\n'
                      "not json\n"
                      '{"id": "a", "state": {}, "questions": {"q": {"type": "noul", "instructions": "?"}}}\n'
                      '{"id": "a", "state": {}, "questions": {"q": {"type": "noul", "instructions": "?"}}}\n')
    assert main(["decide", "check", "--corpus", str(corpus)]) == 1
    err = capsys.readouterr().err
    assert "3 problems" in err and ":2: invalid JSON" in err and 'id "a" is already used at' in err
    assert main(["decide", "check", "--corpus", str(corpus), "--json"]) == 1  # (stdout had been empty)
    shown = capsys.readouterr()
    report = json.loads(shown.out)
    assert (report["passed"], report["readable"], len(report["problems"])) == (False, False, 3)
    assert report["problems"][0]["file"] == f"{corpus}:2" and "3 problems" in shown.err


def test_an_integer_of_more_digits_than_python_reads_is_read_as_javascript_reads_it(tmp_path, capsys):
    """Over 4,300 digits, int() refuses it (ValueError: the corpus went unnamed); read as JavaScript reads it (a
    double, Infinity past 308 digits), the row that holds it is named, at its line and path."""
    huge = "9" * 5000
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"id": "a", "state": {}, "questions": {"q": {"type": "noul", "instructions": "?"}}, '
                      f'"gold": {{"q": {huge}}}}}\n', encoding="utf-8")
    assert main(["decide", "check", "--corpus", str(corpus)]) == 1
    err = capsys.readouterr().err
    assert f'{corpus}:1 (row "a") $.gold.q: expected ' in err and "got the number Infinity" in err
    as_array = tmp_path / "c.json"
    as_array.write_text(f'[{{"id": "a", "state": {{"n": -{huge}}}, "questions": {{"q": {json.dumps(NOUL)}}}, '
                        '"gold": {"q": true}}]')
    assert main(["decide", "check", "--corpus", str(as_array)]) == 0  # (-Infinity in a state: a number it may hold)
    assert "Traceback" not in capsys.readouterr().err


def test_a_scorer_that_disagrees_with_the_closed_forms_reports_nothing(tmp_path, capsys, monkeypatch):
    real = metrics.instance_statistics

    def broken(judged, bins=10):
        stats = real(judged, bins)
        stats["kl"] = stats["kl"] * 1.01
        return stats

    monkeypatch.setattr(metrics, "instance_statistics", broken)
    assert run(REVERSE, EXAMPLE_CORPUS, tmp_path / "run") == 1
    err = capsys.readouterr().err
    assert "FAILED" in err and "<-- disagrees" in err and "refusing to run or report" in err
    assert not (tmp_path / "run").exists()
    assert main(["decide", "check", "--corpus", str(EXAMPLE_CORPUS)]) == 1


def test_a_method_that_does_not_decide_is_refused(tmp_path, capsys):
    assert run(REPO / "examples" / "lexicon-eng-spa", EXAMPLE_CORPUS, tmp_path / "run") == 1
    assert "this needs a method that implements decide" in capsys.readouterr().err


def test_help_has_examples_that_name_real_files(capsys):
    with pytest.raises(SystemExit):
        main(["decide", "run", "--help"])
    out = capsys.readouterr().out
    assert "--tolerance" in out and "examples/data/adequacy-decisions.jsonl" in out
    assert (REPO / "examples" / "data" / "adequacy-decisions.jsonl").is_file()


def test_a_corpus_may_be_a_json_array_or_an_object_with_rows(tmp_path):
    as_array = tmp_path / "array.json"
    as_array.write_text(json.dumps(rows(3)), encoding="utf-8")
    as_object = tmp_path / "object.json"
    as_object.write_text(json.dumps({"name": "three rows", "license": "CC0-1.0", "rows": rows(3)}), encoding="utf-8")
    assert run(REVERSE, as_array, tmp_path / "a") == 0
    assert run(REVERSE, as_object, tmp_path / "o") == 0
    first, second = card_of(tmp_path / "a"), card_of(tmp_path / "o")
    assert (second["corpus"]["name"], second["corpus"]["license"]) == ("three rows", "CC0-1.0")
    assert first["corpus"]["name"] == "array" and first["corpus"]["questions"] == {"noul": 3, "choice": 0, "score": 3}
    assert first["metrics"]["groups"] == second["metrics"]["groups"]


def test_a_corpus_without_gold_runs_but_is_not_scored(tmp_path, capsys):
    corpus = write_corpus(tmp_path / "c.jsonl", [{k: v for k, v in r.items() if k != "gold"} for r in rows(2)])
    assert run(REVERSE, corpus, tmp_path / "run") == 0
    card = card_of(tmp_path / "run")
    assert card["metrics"] is None and card["self_check"]["reason"].startswith("the corpus has no gold answers")
    assert main(["decide", "check", "--corpus", str(corpus)]) == 1
    assert "not run: the corpus has no gold answers" in capsys.readouterr().out


def test_a_run_that_answered_no_question_exits_4_with_the_reason(tmp_path, capsys):
    """Every answer failed: the card is written, and the exit status is `mt-eval run`'s for a run that produced
    nothing usable (it was 0, and the reason was only in the card)."""
    failing = [{**row, "state": {**row["state"], "fail": True}} for row in rows()]
    corpus = write_corpus(tmp_path / "rows.jsonl", failing)
    assert run(REVERSE, corpus, tmp_path / "out") == 4
    assert (tmp_path / "out" / "card.json").is_file()
    err = capsys.readouterr().err
    assert err.count("asked to fail") == 1  # (said once: before, again after "no question was answered")
    assert err.endswith('  failed ×4: asked to fail (e.g. row "r0")\nmt-eval decide: no question was answered (8 of 8 '
                        'failed)\n')
    assert run(REVERSE, write_corpus(tmp_path / "fine.jsonl", rows()), tmp_path / "fine") == 0


def test_failures_go_to_standard_error_and_the_result_to_standard_output(tmp_path, capsys):
    """As `mt-eval run` and `mt-eval grade` say theirs, so `decide run ... > result.txt` keeps the result alone.
    Before, the "failed ×N" lines were on standard output, in the result, and under --quiet not said at all."""
    some_fail = [{**row, "state": {**row["state"], "fail": True}} if i % 2 else row for i, row in enumerate(rows())]
    corpus = write_corpus(tmp_path / "rows.jsonl", some_fail)
    assert main(["decide", "run", "--method", str(REVERSE), "--corpus", str(corpus), "--out", str(tmp_path / "run"),
                 "--resamples", "50"]) == 0
    shown = capsys.readouterr()
    assert "every number from run" in shown.out and "asked to fail" not in shown.out
    assert '1 distinct failure (2 in all):\n  failed ×2: asked to fail (e.g. row "r1")\n' in shown.err
    assert run(REVERSE, corpus, tmp_path / "quiet") == 0  # (--quiet)
    quiet = capsys.readouterr()
    assert quiet.out == f"decision card: {tmp_path / 'quiet' / 'card.json'}\n"
    assert 'failed ×2: asked to fail (e.g. row "r1")' in quiet.err


@pytest.mark.parametrize("limit", [None, 400])
@pytest.mark.parametrize("isolate", [False, True])
def test_a_row_that_is_not_valid_unicode_fails_alone_in_the_same_words_in_every_runtime(recorder, tmp_path,
                                                                                       limit, isolate: bool):
    """`decide check` reads a lone surrogate escape (JSON allows it); the run fails that row, unsent, and
    answers the others (it stopped with a UnicodeEncodeError when the method declared max_input_chars)."""
    method = recorder(**({"max_input_chars": limit} if limit else {}))
    corpus = [*rows(2), {"id": "odd", "state": {"text": "caf\ud800"}, "questions": {"n": NOUL}, "gold": {"n": True}}]
    path = write_corpus(tmp_path / "c.jsonl", corpus)
    assert "\\ud800" in path.read_text()
    assert main(["decide", "check", "--corpus", str(path)]) == 0
    assert run(method, path, tmp_path / "run", *(["--isolate"] if isolate else [])) == 0
    sent = [json.loads(line)["id"] for line in (tmp_path / "record.jsonl").read_text().splitlines()]
    assert sent == ["r0", "r1"]
    [odd] = [r for r in card_of(tmp_path / "run")["results"] if r["id"] == "odd"]
    assert odd["error"] == 'the row\'s "state.text" is not valid Unicode (surrogates not allowed at position 3)'


def test_an_in_process_decide_that_blocks_the_loop_fails_its_rows_at_the_timeout(make_plugin, tmp_path):
    """Before, --timeout did nothing against a synchronous call: the run waited for it (forever, for a server that
    never answers)."""
    plugin = make_plugin({"name": "Blocks", "entry_point": "pipeline:Blocks", "implements": ["decide"],
                          "dependencies": []}, files={"pipeline.py": """
        import time

        class Blocks:
            async def decide(self, rows, config):
                if any(r['state'].get('block') for r in rows):
                    time.sleep(60)
                return [{'id': r['id'], 'answers': {'q': {'probabilities': {'true': 1, 'false': 0}}}} for r in rows]
        """})
    corpus = tmp_path / "rows.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "state": {"block": i == "b"}, "questions": {
        "q": {"type": "noul", "instructions": "?"}}, "gold": {"q": "true"}}) + "\n" for i in "abc"))
    started = time.monotonic()
    assert main(["decide", "run", "--method", str(plugin), "--corpus", str(corpus), "--out", str(tmp_path / "out"),
                 "--timeout", "0.5", "--batch-size", "1", "--resamples", "0", "--quiet"]) == 0
    assert time.monotonic() - started < 30
    results = {r["id"]: r for r in map(json.loads, (tmp_path / "out" / "results.jsonl").read_text().splitlines())}
    assert results["b"]["error"].startswith("decide() blocked the event loop for ")
    assert results["a"]["error"] is None and results["c"]["error"] is None



def test_the_watchdog_judges_the_method_not_the_rows_made_ready_before_it(make_plugin, tmp_path, monkeypatch):
    """The rows were made ready (limits, question types) under the watchdog: 40,000 of them took 0.7 s, and the run
    ended with a LoopBlocked traceback and no results. Here making them ready takes 1.2 s against a 0.5 s limit."""
    from mt_eval.decisions import execution

    ready = execution.prepare
    slow = iter([True])
    monkeypatch.setattr(execution, "prepare", lambda case, settings: (next(slow, False) and time.sleep(1.2)) or
                        ready(case, settings))
    plugin = make_plugin({"name": "Sure", "entry_point": "pipeline:Sure", "implements": ["decide"],
                          "dependencies": []}, files={"pipeline.py": """
        class Sure:
            async def decide(self, rows, config):
                return [{'id': r['id'], 'answers': {'q': {'probabilities': {'true': 1, 'false': 0}}}} for r in rows]
        """})
    corpus = tmp_path / "rows.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "state": {}, "questions": {
        "q": {"type": "noul", "instructions": "?"}}, "gold": {"q": "true"}}) + "\n" for i in "abc"))
    assert main(["decide", "run", "--method", str(plugin), "--corpus", str(corpus), "--out", str(tmp_path / "out"),
                 "--timeout", "0.5", "--batch-size", "1", "--resamples", "0", "--quiet"]) == 0
    results = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in results) == ["a", "b", "c"] and all(r["error"] is None for r in results)
