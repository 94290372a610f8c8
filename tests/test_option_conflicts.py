"""A value an option does not take, options that cannot go together, and an option that does nothing without
another are usage errors: exit status 2, the command's usage and one line naming the option, the value and the fix,
before anything is read, run or written (they exited 1, as if the run could not start, or were ignored)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mt_eval.cli import main

REPO = Path(__file__).parent.parent
EXAMPLES = REPO / "examples"
FIXTURES = Path(__file__).parent / "fixtures" / "corpora"
LEXICON = str(EXAMPLES / "lexicon-eng-spa")
CORPUS = str(EXAMPLES / "data" / "eng-spa-demo.json")
SOURCES, REFERENCES = str(FIXTURES / "parallel.eng"), str(FIXTURES / "parallel.spa")
CHAMPOLLION = str(EXAMPLES / "champollion-project")
GATEWAY_POLICY = str(EXAMPLES / "coached-llm-eng-spa" / "gateway-policy.json")
DECISIONS = ["--method", str(EXAMPLES / "rules-grader"), "--corpus",
             str(EXAMPLES / "data" / "adequacy-decisions.jsonl")]
RUN = ["run", "--method", LEXICON, "--quiet", "--resamples", "10"]
FREEZE = ["freeze", "init", "--method", LEXICON, "--corpus", CORPUS]
KEY_VALUE = "must be KEY=VALUE, e.g. --param beam=5 (VALUE is read as JSON when it can be), got 'foo'"
NO_DOUBT = "no such doubt 'NOT-A-CODE'; give the code a refusal names, one of first-column-ids, "

# (command line (OUT: where a run would be written), the usage's command, the option, what the line says of it)
CASES: list[tuple[list[str], str, str, str]] = [
    (["run", "--demo", "--param", "foo", "--out", "OUT"], "run", "--param", KEY_VALUE),
    (["run", "--demo", "--param", "a=1", "--param", "a=2", "--out", "OUT"], "run", "--param",
     "a is given twice ('a=1', then 'a=2'): give each parameter once"),
    (["run", "--demo", "--param", "a=NaN", "--out", "OUT"], "run", "--param",
     "'a=NaN': NaN is not a JSON value (a config could not be written or read back with it); for the text, quote "
     "it: --param 'a=\"NaN\"'"),
    (["run", "--demo", "--accept-doubt", "NOT-A-CODE", "--out", "OUT"], "run", "--accept-doubt", NO_DOUBT),
    (["run", "--demo", "--accept-doubt", "first-column-id", "--out", "OUT"], "run", "--accept-doubt",
     "no such doubt 'first-column-id' (did you mean first-column-ids?)"),
    ([*RUN, "--corpus", CORPUS, "--source-file", SOURCES, "--out", "OUT"], "run", "--source-file",
     "not allowed with argument --corpus"),
    (["run", "--champollion-config", CHAMPOLLION, "--method", LEXICON, "--corpus", CORPUS, "--out", "OUT"], "run",
     "--method", "not allowed with argument --champollion-config"),
    (["run", "--demo", "--champollion-config", CHAMPOLLION, "--out", "OUT"], "run", "--champollion-config",
     "not allowed with argument --demo: the config names the method (give the corpus with --corpus FILE)"),
    (["run", "--demo", "--sandbox-ro", "examples", "--out", "OUT"], "run", "--sandbox-ro",
     "exposes examples in the sandbox, and this run has none: add --sandbox (or --official, always sandboxed), or "
     "leave --sandbox-ro out"),
    (["run", "--demo", "--substitution-sample", "3", "--out", "OUT"], "run", "--substitution-sample",
     "sets how many entries are replayed with the gateway policy's second model, and this run has no "
     "--gateway-policy: add one, or leave it out"),  # (it was accepted and did nothing)
    (["run", "--demo", "--base-url", "http://127.0.0.1:9/v1", "--gateway-policy", GATEWAY_POLICY, "--out", "OUT"],
     "run", "--gateway-policy", "not allowed with argument --base-url: with a gateway the method reaches its model at "
                                "the URL the run gives it; leave --base-url out"),
    ([*RUN, "--reference-file", REFERENCES, "--out", "OUT"], "run", "--reference-file",
     "needs --source-file SRC, the sentences it translates"),
    (["run", "--demo", "--reference-file", REFERENCES, "--out", "OUT"], "run", "--reference-file",
     "needs --source-file SRC, the sentences it translates"),
    ([*RUN, "--source-file", SOURCES, "--columns", "id,source", "--pair", "eng>spa", "--out", "OUT"], "run",
     "--columns", "names the columns of a .tsv corpus, and parallel text (--source-file) has none"),
    ([*FREEZE, "--param", "foo", "--out", "OUT"], "freeze init", "--param", KEY_VALUE),
    ([*FREEZE, "--accept-doubt", "NOT-A-CODE", "--out", "OUT"], "freeze init", "--accept-doubt", NO_DOUBT),
    ([*FREEZE, "--source-file", SOURCES, "--out", "OUT"], "freeze init", "--source-file",
     "not allowed with argument --corpus"),
    (["freeze", "init", "--method", LEXICON, "--reference-file", REFERENCES, "--out", "OUT"], "freeze init",
     "--reference-file", "needs --source-file SRC"),
    (["decide", "run", *DECISIONS, "--param", "foo", "--out", "OUT"], "decide run", "--param", KEY_VALUE),
    (["decide", "run", *DECISIONS, "--param", "x=1e400", "--out", "OUT"], "decide run", "--param",
     "'x=1e400': 1e400 (a number past any float: Infinity) is not a JSON value"),
    (["translate", LEXICON, "--file", SOURCES, "--accept-doubt", "NOT-A-CODE"], "translate", "--accept-doubt",
     NO_DOUBT),
    (["translate", LEXICON, "--columns", "id,source", "Hello."], "translate", "--columns",
     "says how a corpus given with --file is read: give --file FILE with it, or leave --columns out"),
    (["compare", "CARD", "CARD", "--corpus", CORPUS, "--source-file", SOURCES], "compare", "--source-file",
     "not allowed with argument --corpus"),
    (["compare", "CARD", "CARD", "--accept-doubt", "NOT-A-CODE"], "compare", "--accept-doubt", NO_DOUBT),
    (["verify", "CARD", "--reference-file", REFERENCES], "verify", "--reference-file", "needs --source-file SRC"),
    (["corpus", "show", CORPUS, "--source-file", SOURCES], "corpus show", "--source-file",
     "not allowed with a corpus file: give the corpus file, or parallel text with --source-file SRC"),
]


def exit_status(argv: list[str]) -> int:
    """``mt-eval ARGV``'s exit status, whether argparse (SystemExit) or the command (its return) refuses it."""
    try:
        return main(argv)
    except SystemExit as stopped:
        return int(stopped.code or 0)


@pytest.fixture
def card(tmp_path: Path) -> str:
    """A run card's path (compare and verify are refused before they read it)."""
    return str(tmp_path / "card.json")


@pytest.mark.parametrize(("argv", "command", "option", "said"), CASES, ids=[" ".join(c[0][:2]) + " " + c[2]
                                                                            for c in CASES])
def test_a_usage_error_exits_2_with_the_usage_naming_the_option_and_writes_nothing(
        argv: list[str], command: str, option: str, said: str, tmp_path: Path, monkeypatch, capsys, card: str):
    here = tmp_path / "cwd"
    here.mkdir()
    monkeypatch.chdir(here)  # (a default run directory or freeze.json would be written here)
    out = tmp_path / "out"
    argv = [str(out) if word == "OUT" else card if word == "CARD" else word for word in argv]
    status = exit_status(argv)
    err = capsys.readouterr().err
    assert status == 2, err
    assert f"usage: mt-eval {command} " in err and "Traceback" not in err
    assert f"mt-eval {command}: error: argument {option}: {said}" in err
    assert not out.exists() and list(here.iterdir()) == []  # nothing run, nothing written, no lock taken


def test_sandbox_ro_is_taken_with_sandbox_or_official(tmp_path: Path):
    """--official runs sandboxed, so it takes --sandbox-ro as --sandbox does (it is refused only without either)."""
    from mt_eval.cli import build_parser
    from mt_eval.cli.run import refuse_options_apart

    for sandboxed in ("--sandbox", "--official"):
        args = build_parser(["run"]).parse_args(["run", "--demo", sandboxed, "--sandbox-ro", str(tmp_path)])
        refuse_options_apart(args)  # (no OptionError)
    args = build_parser(["run"]).parse_args(["run", "--demo", "--gateway-policy", GATEWAY_POLICY,
                                             "--substitution-sample", "3"])
    refuse_options_apart(args)  # (with a gateway policy it is taken)


def test_the_demo_method_runs_on_parallel_text_given_with_it(tmp_path: Path, capsys):
    """--demo with --source-file: the bundled method on that text (it said `give --corpus FILE or --source-file SRC,
    not both`, when no --corpus was given)."""
    import json

    status = main(["run", "--demo", "--source-file", SOURCES, "--reference-file", REFERENCES, "--pair", "eng>spa",
                   "--out", str(tmp_path / "run"), "--quiet", "--resamples", "10", "--no-contamination-check"])
    assert status in (0, 5), capsys.readouterr().err  # (5: too small a corpus for a headline)
    card = json.loads((tmp_path / "run" / "card.json").read_text(encoding="utf-8"))
    assert card["corpus"]["entries"] == len(Path(SOURCES).read_text(encoding="utf-8").splitlines())


def test_method_params_still_refuses_what_the_command_line_refuses():
    """`method_params`, for callers from Python, says what the option says (after its name)."""
    from mt_eval.cli.method_params import method_params

    assert method_params(["beam=5", "name=x"]) == {"beam": 5, "name": "x"}
    with pytest.raises(ValueError, match=r"--param must be KEY=VALUE"):
        method_params(["foo"])
    with pytest.raises(ValueError, match=r"--param a is given twice \('a=1', then 'a=2'\)"):
        method_params(["a=1", "a=2"])


@pytest.mark.parametrize("more", [["C.json"], ["C.json", "D.json"]])
def test_compare_given_more_than_two_cards_says_it_takes_two_and_how_to_compare_more(more: list[str], capsys):
    """It said only `unrecognized arguments: C.json`."""
    assert exit_status(["compare", "A.json", "B.json", *more, "--json"]) == 2
    err = capsys.readouterr().err
    too_many = "one argument" if len(more) == 1 else f"{len(more)} arguments"
    assert err.startswith("usage: mt-eval compare ") and "Traceback" not in err
    assert (f"mt-eval compare: error: {too_many} too many ({' '.join(more)}): compare takes exactly two run cards, "
            "A.json and B.json; to compare more runs, compare each with the baseline in turn (mt-eval compare A.json "
            "C.json), or publish their cards to the leaderboard (mt-eval publish CARD ...; mt-eval leaderboard)") in err
    assert exit_status(["compare", "A.json", "B.json", "--jsn"]) == 2  # (a misspelled option: as before)
    assert "unrecognized arguments: --jsn\n  --jsn: did you mean --json?" in capsys.readouterr().err
