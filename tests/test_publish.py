"""`mt-eval publish`: verification first, duplicates and tampering refused, the method card settled (from the run,
--method-card, method_card.json beside the card, or the wizard), and clear errors for every bad input."""

from __future__ import annotations

import io
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from mt_eval.cli import main
from mt_eval.harness.verify import canonical_sha256
from mt_eval.leaderboard.store import open_store
from mt_eval.leaderboard.synthetic import write_card


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "board.db")


def stored(db: str) -> list[dict]:
    with open_store(db) as store:
        return store.rows()


def publish(*args: str) -> int:
    return main(["publish", *args])


def test_a_card_with_its_method_card_is_published_once(cards, tmp_path: Path, db: str, capsys):
    card = write_card(cards.card("alpha", quality=0.6), tmp_path / "run" / "card.json")
    assert publish(str(card), "--db", db, "--no-input") == 0
    out = capsys.readouterr().out
    assert "published #1 alpha on synthetic (eng>spa): chrF++" in out and "n=30" in out and db in out
    assert publish(str(card), "--db", db) == 1
    assert "already published as #1" in capsys.readouterr().err
    [row] = stored(db)
    assert row["method_card_source"] == "run card" and row["paradigm"] == "rule-based"


def test_json_of_a_card_whose_name_is_not_utf8_is_utf8(cards, tmp_path: Path, db: str, capsys):
    """Before, the card was stored and then the report was a UnicodeEncodeError traceback."""
    card = write_card(cards.card("alpha", quality=0.6), tmp_path / "run-\udcff" / "card.json")  # (the byte 0xff)
    assert publish(str(card), "--db", db, "--no-input", "--json") == 0
    out = capsys.readouterr().out
    out.encode("utf-8")
    [said] = json.loads(out)
    assert said["status"] == "published" and said["card"] == str(tmp_path / "run-\\udcff" / "card.json")


def test_tampered_and_foreign_version_cards_are_refused_with_the_reason(cards, tmp_path: Path, db: str, capsys):
    data = cards.card("alpha")
    data["results"][0]["predicted"] = "edited"
    tampered = write_card(data, tmp_path / "tampered.json")
    assert publish(str(tampered), "--db", db, "--no-input") == 1
    err = capsys.readouterr().err
    assert "does not verify, so it cannot be published" in err and "$.content_sha256" in err
    data = cards.card("beta")
    data["card_version"] = "run-card/2"
    data["content_sha256"] = canonical_sha256(data)
    newer = write_card(data, tmp_path / "newer.json")
    assert publish(str(newer), "--db", db, "--no-input") == 1
    assert "schema version is 'run-card/2'" in capsys.readouterr().err
    assert publish(str(tmp_path / "absent.json"), "--db", db) == 1
    assert "cannot read" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("board")) == []  # no empty store left
    assert stored(db) == []  # (made here)
    assert publish(str(tampered), "--db", db, "--no-input") == 1
    assert Path(db).is_file()  # a store that was there stays, though nothing was published into it


def test_a_run_that_was_altered_after_publishing_is_refused(cards, tmp_path: Path, db: str, capsys):
    write_card(cards.card("alpha", run_id="run-7"), tmp_path / "a" / "card.json")
    write_card(cards.card("alpha", run_id="run-7", quality=0.9), tmp_path / "b" / "card.json")
    assert publish(str(tmp_path / "a" / "card.json"), "--db", db) == 0
    assert publish(str(tmp_path / "b" / "card.json"), "--db", db) == 1
    assert "run run-7 is already published as #1 with different content" in capsys.readouterr().err


def test_no_input_lists_the_missing_fields_and_publishes_nothing(cards, tmp_path: Path, db: str, capsys):
    card = write_card(cards.card("bare", bare=True), tmp_path / "run" / "card.json")
    assert publish(str(card), "--db", db, "--no-input") == 1
    err = capsys.readouterr().err
    assert "its method card lacks description, paradigm, open_source" in err and "--method-card" in err
    assert stored(db) == [] and not (tmp_path / "run" / "method_card.json").exists()


def test_the_wizard_re_asks_invalid_answers_and_writes_method_card_json(cards, tmp_path: Path, db: str, capsys,
                                                                        monkeypatch):
    card = write_card(cards.card("bare", bare=True), tmp_path / "run" / "card.json")
    answers = ["", "Bare glossary", "", "magic", "4", "glossary, spell checker", "maybe", "yes", "not a url",
               "https://example.org/bare", "NOT-A-LICENCE", "MIT"]
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(answers) + "\n"))
    assert publish(str(card), "--db", db) == 0
    shown = capsys.readouterr()
    assert "lacks" not in shown.out and "Paradigm" not in shown.out  # (stdout is the result: the wizard asks on stderr)
    out = shown.err
    assert "lacks description, paradigm, open_source" in out
    assert "an answer is required; try again" in out
    assert "'magic' is not one of rule-based" in out
    assert "answer yes or no; try again" in out and "is not a web address" in out
    written = json.loads((tmp_path / "run" / "method_card.json").read_text())
    assert written["description"] == "Bare glossary" and written["paradigm"] == "llm"
    assert written["tools_used"] == ["glossary", "spell checker"] and written["open_source"] is True
    assert written["open_source_url"] == "https://example.org/bare" and written["license"] == "MIT"
    assert written["method_id"] == "bare" and written["class"] == "pipeline"
    [row] = stored(db)
    assert row["has_method_card"] and row["method_card_source"].startswith("wizard")
    assert row["tools_used"] == ["glossary", "spell checker"]


def test_publish_json_with_the_wizard_prints_json_alone(cards, tmp_path: Path, db: str, capsys, monkeypatch):
    """Before, the wizard's questions went to stdout before the JSON, which then did not parse."""
    card = write_card(cards.card("bare", bare=True), tmp_path / "run" / "card.json")
    answers = ["", "Bare glossary", "llm", "glossary", "no", "MIT"]
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(answers) + "\n"))
    assert publish(str(card), "--db", db, "--json") == 0
    shown = capsys.readouterr()
    assert [report["status"] for report in json.loads(shown.out)] == ["published"]
    assert "Paradigm" in shown.err


def test_wizard_answers_that_cannot_be_saved_are_published_and_shown_not_lost(cards, tmp_path: Path, db: str,
                                                                             capsys, monkeypatch):
    """Before, the answers were lost to a traceback ("a fault of mt-eval") and nothing was published."""
    card = write_card(cards.card("bare", bare=True), tmp_path / "run" / "card.json")
    (tmp_path / "run" / "method_card.json").mkdir()  # (a write there fails, even for root)
    answers = ["", "Bare glossary", "llm", "glossary", "no", "MIT"]
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(answers) + "\n"))
    assert publish(str(card), "--db", db) == 0
    err = capsys.readouterr().err
    said = f"mt-eval publish: warning: cannot write {tmp_path / 'run' / 'method_card.json'}: Is a directory; "
    assert said in err and "save them to a file and give it with --method-card FILE next time:" in err
    shown = json.loads(err[err.index("next time:\n") + len("next time:\n"):err.index("\n}\n") + 2])
    assert shown["description"] == "Bare glossary" and shown["license"] == "MIT"
    [row] = stored(db)
    assert row["has_method_card"] and row["method_card_source"] == "wizard (not saved)"
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == ["card.json", "method_card.json"]  # no temp file


def test_the_wizard_over_a_real_pipe_and_input_that_ends_early(cards, tmp_path: Path, db: str):
    card = write_card(cards.card("bare", bare=True), tmp_path / "run" / "card.json")
    command = [sys.executable, "-m", "mt_eval.cli", "publish", str(card), "--db", db]
    ended = subprocess.run(command, input="\nA method\n", capture_output=True, text=True, timeout=120)
    assert ended.returncode == 1 and "input ended before every question was answered" in ended.stderr
    assert not (tmp_path / "run" / "method_card.json").exists() and stored(db) == []
    done = subprocess.run(command, input="\nA method\nrule-based\nnone\nno\n\n", capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "run" / "method_card.json").read_text())["open_source"] is False


def test_method_card_json_beside_the_card_is_used_when_the_run_had_none(cards, tmp_path: Path, db: str):
    card = write_card(cards.card("bare", bare=True), tmp_path / "run" / "card.json")
    (tmp_path / "run" / "method_card.json").write_text(json.dumps(
        {"description": "From beside.", "paradigm": "hybrid", "open_source": False}))
    assert publish(str(card), "--db", db, "--no-input") == 0
    [row] = stored(db)
    assert row["paradigm"] == "hybrid" and row["method_card_source"].endswith("method_card.json")


def test_method_card_option_is_laid_over_the_runs_card_and_may_not_contradict_it(cards, tmp_path: Path, db: str,
                                                                                 capsys):
    card = write_card(cards.card("alpha"), tmp_path / "run" / "card.json")
    extra = tmp_path / "extra.json"
    extra.write_text(json.dumps({"tools_used": ["termbase"], "open_source": True,
                                 "open_source_url": "https://example.org/alpha", "class": "raw-llm"}))
    assert publish(str(card), "--db", db, "--method-card", str(extra)) == 1
    assert "$.class: says 'raw-llm' but the run recorded 'pipeline'" in capsys.readouterr().err
    extra.write_text(json.dumps({"tools_used": ["termbase"], "paradigm": "magic"}))
    assert publish(str(card), "--db", db, "--method-card", str(extra)) == 1
    assert "the method card is not valid" in capsys.readouterr().err
    extra.write_text(json.dumps({"tools_used": ["termbase"], "open_source": True,
                                 "open_source_url": "https://example.org/alpha"}))
    assert publish(str(card), "--db", db, "--method-card", str(extra), "--json") == 0
    [report] = json.loads(capsys.readouterr().out)
    assert report["status"] == "published" and report["method_card"] == f"--method-card {extra}"
    [row] = stored(db)
    assert row["tools_used"] == ["termbase"] and row["open_source_url"] == "https://example.org/alpha"


def test_class_x_cards_are_stored_but_the_publisher_is_told_they_never_appear(cards, tmp_path: Path, db: str,
                                                                              capsys):
    card = write_card(cards.card("hidden", dependency_class="X"), tmp_path / "run" / "card.json")
    assert publish(str(card), "--db", db) == 0
    assert "class X methods never appear on the leaderboard" in capsys.readouterr().out


def test_a_card_that_fails_the_gate_is_refused_and_a_policy_can_admit_it(tmp_path: Path, db: str, capsys):
    from mt_eval.leaderboard.synthetic import CardFactory, write_corpus

    few = CardFactory(write_corpus(tmp_path / "few.json", entries=12, canaries=0), resamples=50)
    card = write_card(few.card("small", quality=0.7), tmp_path / "run" / "card.json")
    assert publish(str(card), "--db", db, "--no-input") == 1
    err = capsys.readouterr().err
    assert "its headline does not pass the gate (policy default), so it cannot be published" in err
    assert "scored: 12 scored entries: a headline needs at least 30" in err and "canaries: 0 canaries ran" in err
    assert f"mt-eval gate {card}" in err and stored(db) == []
    half = tmp_path / "half way.json"  # (a path the hint quotes for the shell)
    half.write_text(json.dumps({"name": "half", "min_scored": 10}))
    assert publish(str(card), "--db", db, "--no-input", "--policy", str(half)) == 1
    err = capsys.readouterr().err  # the hint shows the rules under the policy that refused the card
    assert "(policy half)" in err and f"mt-eval gate {card} --policy '{half}' shows every rule" in err, err
    policy = tmp_path / "small-corpora.json"
    policy.write_text(json.dumps({"min_scored": 10, "min_canaries": 0}))
    assert publish(str(card), "--db", db, "--no-input", "--policy", str(policy)) == 0
    [row] = stored(db)
    assert row["eligibility"]["gate_passed"] is True
    policy.write_text(json.dumps({"min_scored": "ten"}))
    assert publish(str(card), "--db", db, "--no-input", "--policy", str(policy)) == 1
    assert f"{policy} $.min_scored" in capsys.readouterr().err


def test_a_real_run_publishes(tmp_path: Path, db: str, capsys):
    assert main(["run", "--demo", "--out", str(tmp_path / "demo"), "--quiet", "--resamples", "100"]) == 0
    assert publish(str(tmp_path / "demo" / "card.json"), "--db", db, "--no-input") == 0
    assert "published #1 lexicon-eng-spa on eng-spa-demo" in capsys.readouterr().out


def test_a_publish_that_stored_nothing_never_deletes_a_new_store_another_publish_uses(cards, tmp_path: Path, db: str):
    """Two publishes start at once into a store that does not exist yet: the one whose cards are all refused leaves
    the file alone while the other holds it (it was deleted under it: `no such table`, or a card said published into a
    store that was gone). Alone, it still leaves no empty store behind."""
    from mt_eval.leaderboard.bulk import Options, publish_cards

    first, second = open_store(db), open_store(db)  # (the first made the file)
    good = write_card(cards.card("alpha"), tmp_path / "good.json")
    first.close_or_discard()  # stored nothing, while the second holds the file
    assert Path(db).exists()
    result = publish_cards(second, [good], Options(no_input=True))
    second.close_or_discard()
    assert result.stored == 1 and len(stored(db)) == 1
    third, fourth = open_store(db + ".other"), open_store(db + ".other")
    fourth.close_or_discard()  # (it did not make the file: never its to delete)
    third.close_or_discard()  # made it, holds it alone now, and it is empty
    assert not Path(db + ".other").exists()


def test_json_has_every_card_given_and_a_bad_extension_is_one_error_before_any_card(cards, tmp_path: Path, db: str,
                                                                                   capsys):
    good = write_card(cards.card("alpha"), tmp_path / "good.json")
    assert publish(str(tmp_path / "absent.json"), str(good), "--db", db, "--no-input", "--json") == 1
    shown = json.loads(capsys.readouterr().out)
    assert [(r["card"], r["status"]) for r in shown] == [(str(tmp_path / "absent.json"), "refused"),
                                                         (str(good), "published")]
    assert shown[0]["message"].startswith(f"refused {tmp_path / 'absent.json'}: cannot read") and shown[0]["id"] is None
    assert publish(str(good), "--db", db, "--no-input", "--extension", "no_such_ext_xyz") == 1
    err = capsys.readouterr().err
    assert "cannot enable extension no_such_ext_xyz" in err and "fault of mt-eval" not in err
    assert err.count("no_such_ext_xyz: no module named") == 1


def test_json_has_every_card_not_tried_when_the_store_policy_or_an_extension_stops_the_command(cards, tmp_path: Path,
                                                                                                 db: str, capsys):
    """Before, --json printed nothing at all then (but a report of every card when a write failed)."""
    good = write_card(cards.card("alpha"), tmp_path / "good.json")
    given = [str(good), str(tmp_path / "absent.json")]
    for stopped_by, why in [(["--db", str(tmp_path / "no-such-dir" / "x.db")], "the store cannot be opened"),
                            (["--db", db, "--policy", str(tmp_path / "none.json")], "the gate policy cannot be used"),
                            (["--db", db, "--extension", "no_such_ext_xyz"], "an extension cannot be enabled")]:
        assert publish(*given, *stopped_by, "--no-input", "--json") == 1
        captured = capsys.readouterr()
        shown = json.loads(captured.out)
        assert [(r["card"], r["status"], r["id"]) for r in shown] == [(name, "not_tried", None) for name in given]
        assert all(r["message"].startswith(f"not tried {r['card']}: {why}") for r in shown)
        assert "nothing was published" in captured.err or "cannot enable extension" in captured.err
        if why == "the store cannot be opened":  # (why not: the reason stderr gives, in each card's message too)
            reason = captured.err.removeprefix("mt-eval publish: ").partition("; nothing was published")[0]
            assert reason and all(r["message"].endswith(f"{why} ({reason})") for r in shown), (reason, shown)
    assert stored(db) == []


def _cannot_create(path: Path) -> bool:
    try:
        os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644))
    except PermissionError:
        return True
    except OSError:
        return False
    path.unlink()
    return False


@pytest.mark.skipif(not _cannot_create(Path("/sys/mt-eval-test.db")), reason="needs a directory no one may create in")
def test_a_store_that_cannot_be_created_is_said_not_a_traceback(cards, tmp_path: Path, capsys):
    """Before, creating the store's file in a directory it cannot write ended in an OSError traceback."""
    card = write_card(cards.card("alpha"), tmp_path / "run" / "card.json")
    assert publish(str(card), "--db", "/sys/mt-eval-test.db") == 1
    err = capsys.readouterr().err
    assert "cannot create the leaderboard store /sys/mt-eval-test.db: Permission denied; give --db a file in a " \
           "directory this user can write; nothing was published" in err


def test_a_directory_without_card_json_says_what_it_holds_not_is_a_directory(cards, tmp_path: Path, db: str, capsys):
    """Before, both said "cannot read it: Is a directory"."""
    write_card(cards.card("alpha"), tmp_path / "runs" / "alpha" / "card.json")
    assert publish(str(tmp_path / "runs"), "--db", db) == 1
    assert (f"{tmp_path / 'runs'}: this directory holds no card.json, but its directories alpha do: give "
            f"{tmp_path / 'runs'}/*/card.json") in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert publish(str(tmp_path / "empty"), "--db", db) == 1
    assert "this directory holds no card.json, so it is not a run directory" in capsys.readouterr().err


def test_next_steps_paste_as_they_are_with_the_runs_policy_and_extensions(tmp_path):
    """Before: `publish CARD` gated the card under the shipped policy, not the run's --policy, and refused it; and
    `verify CARD` left the metrics of the run's --extension unchecked."""
    (tmp_path / "small.json").write_text('{"name": "small", "min_scored": 1, "min_canaries": 0, "min_negatives": 0}')
    (tmp_path / "ratio_metric.py").write_text("from mt_eval.hookspecs import hookimpl\n\n\n@hookimpl\ndef "
                                              "register_metrics(register):\n    register('ratio', lambda h, r: 0.5)\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "MT_EVAL_DB": str(tmp_path / "board.db")}
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "run", "--demo", "--limit", "5", "--out", "it's run",
                           "--policy", "small.json", "--extension", "ratio_metric", "--resamples", "50"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    verify_command, publish_command = (line.partition("   # ")[0].strip() for line in lines[lines.index("next:") + 1:])
    assert verify_command.endswith(" verify 'it'\"'\"'s run/card.json' --extension ratio_metric"), verify_command
    assert publish_command.endswith(" publish 'it'\"'\"'s run/card.json' --policy small.json --extension ratio_metric")
    verified = subprocess.run(shlex.split(verify_command), cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=180)
    assert verified.returncode == 0 and "not recomputed" not in verified.stderr + verified.stdout, verified.stderr
    published = subprocess.run([*shlex.split(publish_command), "--no-input"], cwd=tmp_path, env=env,
                               capture_output=True, text=True, timeout=180)
    assert published.returncode == 0, published.stderr


def test_a_dash_for_standard_input_is_a_usage_error_that_says_cards_are_read_from_files(cards, tmp_path: Path,
                                                                                       db: str, capsys, monkeypatch):
    """Before, `mt-eval publish -` looked for a file named - and said "cannot read it: No such file or directory"."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exited:
        main(["publish", "-", "--db", db])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: mt-eval publish") and "No such file" not in err
    assert "argument CARD: run cards are read from files, not standard input: give the card's path, or its run " \
           "directory (write the card to a file first; a file named - is ./-)" in err
    assert not Path(db).exists()
    write_card(cards.card("alpha"), tmp_path / "-")
    assert main(["publish", "./-", "--db", db, "--no-input"]) == 0
    assert [row["method_id"] for row in stored(db)] == ["alpha"]
