"""`mt-eval verify` (and gate, compare) given a file that is not a run card as `mt-eval run` writes one: another
card, not JSON, JSON only Python reads, nested too deep, a name that is not UTF-8, a bootstrap no run takes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gate_policies import LENIENT
from mt_eval.cli import main
from mt_eval.harness.verify import verify_card
from rigor_support import edit_card as edit
from verify_support import run_card


@pytest.fixture
def card_path(tmp_path: Path) -> Path:
    return run_card(tmp_path)


def paths(verification) -> list[str]:
    return [p.path for p in verification.errors]


def test_another_card_version_not_a_card_and_not_json(card_path: Path, tmp_path: Path, capsys):
    def change(data: dict) -> None:
        data["card_version"] = "run-card/9"

    result = verify_card(edit(card_path, change, reseal=True))
    assert paths(result) == ["$.card_version"] and "run-card/9" in result.errors[0].message
    assert result.errors[0].code == "card-version"
    for kind, writer in (("grading", "mt-eval grade"), ("decision", "mt-eval decide run")):
        given = tmp_path / f"{kind}.json"
        given.write_text(json.dumps({"card_version": f"{kind}-card/1", "sdk_version": "0.1.0"}))
        [problem] = verify_card(given).errors  # (not "use the version that wrote it")
        assert problem.message == (f"this is a {kind} card ('{kind}-card/1') that `{writer}` wrote, not a run card: "
                                   "`mt-eval verify` checks the cards `mt-eval run` writes, recomputing every "
                                   "figure from their results and corpus")
        assert problem.hint.startswith(f"no mt-eval command re-verifies a {kind} card")
    other = tmp_path / "other.json"
    other.write_text('{"name": "x"}')
    assert verify_card(other).errors[0].code == "not-a-card"
    other.write_text('{"card_version": ')
    assert verify_card(other).errors[0].code == "syntax"
    assert verify_card(tmp_path / "missing.json").errors[0].code == "io"
    assert main(["verify", str(other), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report[0]["verified"] is False and report[0]["problems"][0]["code"] == "syntax"


@pytest.mark.parametrize(("spoil", "where", "words"), [
    (lambda text: "\ufeff" + text, "$", "starts with a byte-order mark (U+FEFF), which no run card holds"),
    (lambda text: text.replace('"errors": 0', '"errors": NaN', 1), "$.errors", "NaN is not a JSON number"),
    (lambda text: text.replace('"errors": 0', '"errors": -1e400', 1), "$.errors",
     "-Infinity is not a JSON number (a number too large to hold is read as Infinity)"),
    (lambda text: text.replace('"errors": 0', '"errors": 1' + "0" * 5000, 1), "$.errors",
     "Infinity is not a JSON number"),
    (lambda text: text.replace('"run_id": "', '"run_id": "\\ud800', 1), "$.run_id",
     "holds a lone surrogate (\\ud800 to \\udfff written alone): text that is not Unicode"),
])
def test_a_card_json_allows_only_to_python_says_what_and_where(card_path: Path, tmp_path: Path, capsys, spoil,
                                                               where: str, words: str):
    """Before, each of these was "not valid JSON" with neither a place nor a fix."""
    spoilt = tmp_path / "spoilt.json"
    spoilt.write_text(spoil(json.dumps(json.loads(card_path.read_text()), indent=1)), encoding="utf-8")
    [problem] = verify_card(spoilt).errors
    assert problem.path == where and words in problem.message
    assert problem.hint and "the card the run wrote" in problem.hint
    for command in (["verify", str(spoilt)], ["gate", str(spoilt)], ["compare", str(card_path), str(spoilt)]):
        assert main(command) == 1, command
        said = capsys.readouterr()
        assert words in said.out + said.err and "not valid JSON" not in said.out + said.err, command


def test_a_card_that_writes_a_key_twice_is_refused_by_every_command_that_reads_cards(card_path: Path,
                                                                                      tmp_path: Path, capsys):
    """Before, the last value was the one read and hashed, so a card whose file shows ``"errors": 5`` (or a score
    of 99.99) before the run's own value verified, passed the gate and was compared."""
    from mt_eval.harness.card_files import keys_written_twice

    spoilt = tmp_path / "spoilt.json"
    text = json.dumps(json.loads(card_path.read_text()), indent=1)
    spoilt.write_text(text.replace('"errors": 0', '"errors": 5, "errors" \t: 0', 1), encoding="utf-8")
    [problem] = verify_card(spoilt).errors
    assert (problem.path, problem.code) == ("$", "duplicate-key")
    assert problem.message == 'key "errors" appears more than once in an object'
    assert problem.hint.startswith("use the card the run wrote")
    for command in (["verify", str(spoilt)], ["gate", str(spoilt)], ["compare", str(card_path), str(spoilt)]):
        assert main(command) == 1, command
        said = capsys.readouterr()
        assert 'key "errors" appears more than once' in said.out + said.err, command
    assert main(["verify", str(spoilt), "--json"]) == 1
    [report] = json.loads(capsys.readouterr().out)
    assert report["verified"] is False and report["problems"][0]["code"] == "duplicate-key"
    assert keys_written_twice(b'{"a": "b\\":", "c": {"d": 1}}', {"a": 'b":', "c": {"d": 1}}, "x") == []


@pytest.mark.parametrize("command", ["verify", "gate"])
def test_json_of_a_card_whose_name_is_not_utf8_is_utf8(card_path: Path, tmp_path: Path, capsys, command: str):
    """Before, the bytes of the name went into the JSON as they were: a report no JSON reader could read."""
    import shutil

    odd = tmp_path / "run-\udcff"  # (the byte 0xff in the directory's name)
    shutil.copytree(card_path.parent, odd)
    status = main([command, str(card_path), "--json"])  # (gate: 1 when the card's headline does not pass)
    capsys.readouterr()
    assert main([command, str(odd / "card.json"), "--json"]) == status
    out = capsys.readouterr().out
    out.encode("utf-8")
    assert json.loads(out)[0]["card"] == str(tmp_path / "run-\\udcff" / "card.json")


@pytest.mark.parametrize("command", ["verify", "gate"])
def test_a_card_whose_name_is_not_utf8_is_shown_with_its_escapes_on_a_strict_utf8_terminal(card_path: Path,
                                                                                        tmp_path: Path, command: str):
    """Before, under a UTF-8 locale (standard output strict UTF-8) the report ended in a UnicodeEncodeError
    traceback at the card's name; standard error already showed it with its escapes."""
    import os
    import shutil
    import subprocess
    import sys

    odd = tmp_path / "run-\udcff"  # (the byte 0xff in the directory's name)
    shutil.copytree(card_path.parent, odd)
    policy = LENIENT if command == "gate" else []
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", command, str(odd), *policy], capture_output=True,
                          env={**os.environ, "PYTHONIOENCODING": "utf-8:strict"}, timeout=120)
    assert b"Traceback" not in done.stderr and done.returncode == 0, done.stderr.decode(errors="replace")
    assert str(tmp_path / "run-\\udcff").encode() in done.stdout


def test_a_card_nested_too_deep_to_read_is_refused_by_every_command_that_reads_cards(card_path: Path,
                                                                                        tmp_path: Path, capsys):
    deep = tmp_path / "deep.json"
    deep.write_text('{"card_version": ' + "[" * 1000 + "]" * 1000 + "}")
    words = "arrays and objects nested 1,001 levels deep: too deep to read"
    assert [p.message for p in verify_card(deep).errors] == [words]
    assert main(["gate", str(deep), "--json"]) == 1
    assert words in json.dumps(json.loads(capsys.readouterr().out))
    assert main(["compare", str(deep), str(card_path)]) == 1
    assert words in capsys.readouterr().err
    shallow = tmp_path / "shallow.json"  # read, but its version is no version: said in words, not quoted whole
    shallow.write_text('{"card_version": ' + "[" * 400 + "]" * 400 + "}")
    assert verify_card(shallow).errors[0].message.startswith("this card's schema version is an array; ")


@pytest.mark.parametrize(("field", "value", "words"), [
    ("bootstrap_seed", -1, "the bootstrap's seed -1 is not one a run takes (0 to 9007199254740991, as mt-eval run "
                           "--seed): the card's intervals cannot be drawn again"),
    ("bootstrap_seed", 2**64, "the bootstrap's seed 18446744073709551616 is not one a run takes"),
    ("bootstrap_resamples", -5, "-5 bootstrap resamples is not a number a run takes (0 to 100,000, as mt-eval run "
                                "--resamples)"),
    # (verify, gate and compare drew a hundred million resamples for hours, with nothing shown)
    ("bootstrap_resamples", 10**8, "100000000 bootstrap resamples is not a number a run takes (0 to 100,000, as "
                                   "mt-eval run --resamples): the card's intervals cannot be drawn again, and drawing "
                                   "them would take hours"),
    # (it passed: the intervals, recomputed at 0.95, matched the card's own)
    ("confidence", -1, "the card says its intervals are at -1 confidence; a run draws them at 0.95"),
    ("confidence", 0.99, "the card says its intervals are at 0.99 confidence"),
])
def test_a_bootstrap_no_run_takes_is_named_by_every_command_that_reads_cards(card_path: Path, tmp_path: Path,
                                                                            capsys, field: str, value: int,
                                                                            words: str):
    """Before, a card resealed with a negative seed was a traceback from numpy in verify, gate and compare."""
    edited = edit(card_path, lambda card: card["metrics"].update({field: value}))
    result = verify_card(edited)
    [problem] = [p for p in result.errors if p.code == "bootstrap"]  # (its own gate record disagrees too)
    assert problem.path == f"$.metrics.{field}" and words in problem.message
    assert problem.hint == "use the card the run wrote"
    for command in (["verify", str(edited)], ["gate", str(edited)], ["compare", str(card_path), str(edited)]):
        assert main(command) == 1, command
        said = capsys.readouterr()
        assert words in said.out + said.err and "Traceback" not in said.err, command


@pytest.mark.parametrize(("where", "value"), [
    (("sessions",), 0), (("errors",), -1), (("usage", "prompt_tokens"), -5), (("covariates", "batch_size"), 0),
    (("covariates", "timeout_s"), 0), (("corpus", "entries"), -30),
])
def test_a_count_no_run_writes_is_named_at_its_path(card_path: Path, where: tuple[str, ...], value: int):
    """Before, a card resealed with no session, or a negative number of errors or tokens, verified."""
    def change(card: dict) -> None:
        *parents, last = where
        for key in parents:
            card = card[key]
        card[last] = value

    [problem] = [p for p in verify_card(edit(card_path, change)).errors if p.code == "schema"]
    assert problem.path == "$." + ".".join(where)
    assert problem.message.startswith("must be >") and problem.message.endswith(f", got {value}")  # (not "Expected `")
    assert problem.hint == "the card does not have the run-card shape; use the card the run wrote"


@pytest.mark.parametrize(("field", "value", "said"), [
    ("errors", "x", 'expected an integer, got the string "x"'),
    ("results", 5, "expected an array of objects, got the number 5"),
])
def test_a_card_of_the_wrong_shape_is_said_in_words(card_path: Path, field: str, value: object, said: str, capsys):
    """Before, msgspec's own words: "Expected `int`, got `str`", its path in the check's line."""
    edited = edit(card_path, lambda card: card.__setitem__(field, value))
    [problem] = [p for p in verify_card(edited).errors if p.code == "schema"]
    assert (problem.path, problem.message) == (f"$.{field}", said)
    assert problem.hint == "the card does not have the run-card shape; use the card the run wrote"
    assert main(["verify", str(edited)]) == 1
    out = capsys.readouterr().out
    assert f"✗ schema        $.{field}: {said}\n" in out and "Expected `" not in out, out


def test_verify_of_a_decision_or_grading_card_names_its_kind_and_what_to_do_instead(demo_run: Path, tmp_path: Path,
                                                                                      capsys):
    """Before: both said only that `mt-eval verify` checks the cards `mt-eval run` writes, and a grading card's fix
    named a field (its run.card_path) rather than the run card it grades."""
    examples = Path(__file__).parent.parent / "examples"
    assert main(["decide", "run", "--method", str(examples / "rules-grader"), "--quiet", "--corpus",
                 str(examples / "data" / "adequacy-decisions.jsonl"), "--out", str(tmp_path / "decided")]) == 0
    assert main(["grade", str(demo_run), "--grader", str(examples / "rules-grader"), "--out", str(tmp_path / "graded"),
                 "--resamples", "50", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["verify", str(tmp_path / "decided" / "card.json")]) == 1
    said = capsys.readouterr().out
    assert "this is a decision card ('decision-card/1') that `mt-eval decide run` wrote, not a run card" in said
    assert "fix: no mt-eval command re-verifies a decision card: to check its figures, run `mt-eval decide run` " \
           "again with the same --method and --corpus" in said
    assert main(["verify", str(tmp_path / "graded" / "grading-card.json")]) == 1
    said = capsys.readouterr().out
    assert "this is a grading card ('grading-card/1') that `mt-eval grade` wrote, not a run card" in said
    assert f"give `mt-eval verify` the run card it grades, {demo_run}\n" in said



@pytest.mark.parametrize("text", [
    b'{"a": 1, "a": 2}', b'{"a" : 1, "b": {"a": 2, "a" : 3}}',
    b'{"t": "\\": \\" :", "t": 1}',  # (a quote inside a text, before a colon: no key, however it is spaced)
    b'{"k\\\\": 1, "k\\\\" : 2}',  # (a key ending in a backslash)
])
def test_a_key_written_twice_is_found_whatever_texts_hold_quotes_and_colons(text: bytes):
    """The keys written are counted exactly, so no text can make up for a key written twice."""
    import msgspec

    from mt_eval.harness.card_files import keys_written_twice

    [problem] = keys_written_twice(text, msgspec.json.decode(text), "card.json")
    assert problem.code == "duplicate-key"
    once = json.dumps(msgspec.json.decode(text), indent=1).encode()  # (the same keys, each written once)
    assert keys_written_twice(once, msgspec.json.decode(once), "card.json") == []
