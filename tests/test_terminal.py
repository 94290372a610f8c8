"""What the terminal shows, command by command: the result on stdout and the rest on stderr, --quiet hiding
progress but not the result, usage errors with the subcommand's usage and a suggestion, ``mt-eval serve`` with
files, durations in units that fit, output cut short by ``| head`` without a traceback, and the control characters
of an error's path or value escaped."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mt_eval.durations import format_duration

REPO = Path(__file__).parent.parent
LEXICON = str(REPO / "examples" / "lexicon-eng-spa")
DEMO = str(REPO / "examples" / "data" / "eng-spa-demo.json")
GRADER = str(REPO / "examples" / "rules-grader")
DECISIONS = str(REPO / "examples" / "data" / "adequacy-decisions.jsonl")
MT_EVAL = [sys.executable, "-m", "mt_eval.cli"]


def mt_eval(*args: str, cwd: Path | None = None, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*MT_EVAL, *args], cwd=cwd, capture_output=True, text=True, timeout=180,
                          **kwargs)  # type: ignore[call-overload]


def test_the_result_goes_to_stdout_and_the_rest_to_stderr(tmp_path):
    done = mt_eval("run", "--demo", "--out", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert out[0] == "lexicon-eng-spa on eng-spa-demo (eng>spa): 36 entries, 0 errors"
    assert out[1].startswith("  chrF++ ") and "BLEU" in out[1] and "TER" in out[1]
    assert any(line.startswith("  latency (measured by the harness): cold ") for line in out)
    assert any(line.startswith("headline: chrF++ ") for line in out)
    assert out[-2].startswith("  run card     ") and out[-1].startswith("  predictions  ")  # the files come last
    assert f"  run card     {tmp_path / 'run' / 'card.json'}" in out or any(
        line.startswith("  run card     ") and line.endswith("card.json") for line in out)
    assert any(line.startswith("  predictions  ") for line in out)
    assert "contamination check" not in done.stdout and "36/36" not in done.stdout
    assert "contamination check: clean" in done.stderr and "lexicon-eng-spa: 36/36 in " in done.stderr
    assert "corpus eng-spa-demo.json: JSON" in done.stderr
    shown = os.path.relpath(tmp_path / "run" / "card.json")
    shown = shown if not shown.startswith("../..") else str(tmp_path / "run" / "card.json")
    nexts = done.stderr.splitlines()[-3:]  # what the card is for next: guidance, so on stderr, and not --quiet
    assert nexts[0] == "next:" and nexts[1].endswith(f" verify {shown}    # its hash, results and scores checked again")
    assert nexts[2].endswith(f" publish {shown}   # onto the leaderboard (the `leaderboard` command shows it)")
    assert nexts[1].startswith(("  mt-eval verify ", f"  {sys.executable} -m mt_eval.cli verify "))  # (as it ran)


def test_next_steps_leave_out_publishing_a_card_whose_headline_the_gate_withheld(tmp_path):
    done = mt_eval("run", "--demo", "--limit", "5", "--out", str(tmp_path / "run"))
    assert done.returncode == 5, done.stderr
    nexts = done.stderr.splitlines()[done.stderr.splitlines().index("next:"):]
    assert len(nexts) == 2 and " verify " in nexts[1] and "publish" not in done.stderr


def test_quiet_hides_progress_not_the_result(tmp_path):
    done = mt_eval("run", "--demo", "--out", str(tmp_path / "run"), "--quiet")
    assert done.returncode == 0
    assert "chrF++ " in done.stdout and "run card" in done.stdout
    assert done.stderr == ""


def test_figures_have_units_that_fit(tmp_path):
    done = mt_eval("run", "--demo", "--out", str(tmp_path / "run"), "--quiet")
    latency = next(line for line in done.stdout.splitlines() if line.startswith("  latency ("))
    assert " 0.0 ms" not in latency and "0.000" not in latency
    assert "hot p50 " in latency and "timed calls" in latency
    card = json.loads((tmp_path / "run" / "card.json").read_text(encoding="utf-8"))
    assert format_duration(card["latency"]["hot_p50_s"]) in latency


@pytest.mark.parametrize(("seconds", "shown"), [
    (None, "—"), (0, "< 1 µs"), (2e-7, "< 1 µs"), (1e-6, "1 µs"), (2e-5, "20 µs"), (0.000999, "999 µs"),
    (0.0016384, "1.64 ms"), (0.0164, "16.4 ms"), (0.1234, "123 ms"), (0.99999, "1.00 s"), (2.5, "2.50 s"),
    (12.345, "12.3 s"), (125.4, "2 min 05 s"), (7300, "2 h 01 min")])
def test_durations_read_in_the_unit_that_fits(seconds, shown):
    assert format_duration(seconds) == shown


def test_run_without_arguments_says_what_to_give():
    done = mt_eval("run")
    assert done.returncode == 2
    assert done.stderr.startswith("usage: mt-eval run")
    assert ("mt-eval run: give --method DIR (a method plugin directory) and --corpus FILE (or --source-file SRC "
            "--reference-file REF); or try the bundled example with --demo") in done.stderr
    only_method = mt_eval("run", "--method", LEXICON)
    assert only_method.returncode == 2 and "mt-eval run: give --corpus FILE" in only_method.stderr


@pytest.mark.parametrize(("argv", "usage", "hint"), [
    (["run", "--metod", "x"], "usage: mt-eval run", "--metod: did you mean --method?"),
    (["run", "--demo", "--quite"], "usage: mt-eval run", "--quite: did you mean --quiet?"),
    (["validate", "--strcit", LEXICON], "usage: mt-eval validate", "--strcit: did you mean --strict?"),
    (["corpus", "show", DEMO, "--rwos", "2"], "usage: mt-eval corpus show", "--rwos: did you mean --rows?"),
    (["rn", "--demo"], "usage: mt-eval ", "unknown command 'rn'; did you mean run?"),
    (["new", "--", "p", "--force"], "usage: mt-eval new",  # (before: "--force: did you mean --force?")
     "--force: it comes after `--`, where no word is read as an option: put it before `--`"),
])
def test_a_misspelling_shows_that_commands_usage_and_the_closest_option(argv, usage, hint):
    done = mt_eval(*argv)
    assert done.returncode == 2
    assert done.stderr.startswith(usage), done.stderr
    assert hint in done.stderr


def test_help_says_percent_once():
    assert "95% bootstrap" in mt_eval("run", "--help").stdout and "%%" not in mt_eval("run", "--help").stdout


def test_serve_answers_into_a_file(tmp_path):
    requests = tmp_path / "requests.jsonl"
    requests.write_text(
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocol_versions":["mt-eval-bridge/1"]}}\n'
        '{"jsonrpc":"2.0","id":2,"method":"translate","params":{"entries":[{"id":"a","source":"Good night."}],'
        '"config":{"source_lang":"eng","target_lang":"spa"}}}\n', encoding="utf-8")
    with requests.open("rb") as given, (tmp_path / "answers.jsonl").open("wb") as answers:
        done = subprocess.run([*MT_EVAL, "serve", LEXICON], stdin=given, stdout=answers, stderr=subprocess.PIPE,
                              timeout=60)
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    lines = [json.loads(line) for line in (tmp_path / "answers.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [line["id"] for line in lines] == [1, 2]
    assert lines[1]["result"]["results"][0]["predicted"] == "Buenas noches."
    with (tmp_path / "nothing.jsonl").open("wb") as nothing:
        empty = subprocess.run([*MT_EVAL, "serve", LEXICON], stdin=subprocess.DEVNULL, stdout=nothing,
                               stderr=subprocess.PIPE, timeout=60)
    assert empty.returncode == 0 and empty.stderr == b""


def test_output_cut_short_ends_quietly(tmp_path):
    done = subprocess.run(f"{' '.join(MT_EVAL)} run --demo --out {tmp_path / 'run'} --quiet | head -1", shell=True,
                          capture_output=True, text=True, timeout=180)
    assert done.stdout.startswith("lexicon-eng-spa on eng-spa-demo")
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr


def test_demo_without_its_bundled_example_says_so(tmp_path, monkeypatch, capsys):
    import mt_eval.resources
    from mt_eval.cli import main

    missing = tmp_path / "no-examples" / "lexicon-eng-spa"
    monkeypatch.setattr(mt_eval.resources, "demo_method", lambda: missing)
    assert main(["run", "--demo"]) == 2
    err = capsys.readouterr().err
    assert f"mt-eval run: --demo runs the bundled example method, which this installation is missing ({missing})" in err
    assert "give --method DIR and --corpus FILE" in err


@pytest.mark.parametrize(("name", "text", "says"), [
    ("dev.csv", "Hello,Hola\n", "unsupported format: use .json, .jsonl or .tsv"),
    ("dev.tsv", "Hello there.\tHola.\nGood night.    Buenas noches.\n",
     "line 2 seems to separate its columns with spaces: TSV columns are separated by one TAB"),
])
def test_a_corpus_mt_eval_cannot_read_is_refused_with_what_to_do(tmp_path, name, text, says):
    corpus = tmp_path / name
    corpus.write_text(text, encoding="utf-8")
    done = mt_eval("run", "--method", LEXICON, "--corpus", str(corpus), "--out", str(tmp_path / "run"))
    assert done.returncode == 1, done.stderr
    assert says in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == "" and not (tmp_path / "run").exists()


ODD = "no\x1b[31mpe\u202e.json"  # ESC starting a colour, and U+202E, which turns around what follows it
ODD_SHOWN = "no\\x1b[31mpe\\u202e.json"


@pytest.mark.parametrize(("argv", "status"), [
    (["corpus", "show", "{odd}"], 1),
    (["grade", "{odd}", "--grader", LEXICON], 1),
    (["compare", "{odd}", "{odd}"], 1),  # (its progress lines name the cards too)
    (["verify", "--{odd}", "card.json"], 2),  # argparse's own message
    (["{odd}"], 2),  # a command mt-eval does not have
    (["run", "--demo", "--out", "run", "--sandbox-ro", "{odd}"], 2),  # options that do not go together
])
def test_an_errors_control_and_invisible_characters_are_shown_escaped(argv, status, tmp_path):
    """Before, the message `main` prints for a command printed a path or a value as it was: ESC acted on the
    terminal, U+202E turned the rest of the line around."""
    done = mt_eval(*[word.replace("{odd}", ODD) for word in argv], cwd=tmp_path, stdin=subprocess.DEVNULL)
    assert done.returncode == status, done.stderr
    assert ODD_SHOWN in done.stderr and "\\\\x1b" not in done.stderr, done.stderr  # escaped once
    assert "\x1b" not in done.stderr and "\u202e" not in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_an_error_escaped_already_is_not_escaped_twice(tmp_path):
    """The gateway's policy escapes a model id it refuses; the file's name is escaped where the line is printed."""
    policy = tmp_path / "policy\x1b[2J.json"
    policy.write_text(json.dumps({"base_url": "https://api.example.com/v1", "api_key_env": "MY_KEY",
                                  "models": [{"id": "gpt\x1b]0;owned\x07-2024-07-18"}]}), encoding="utf-8")
    done = mt_eval("gateway", "--policy", str(policy), "--check", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert f"mt-eval gateway: {tmp_path}/policy\\x1b[2J.json is not a valid GatewayPolicy\n" in done.stderr
    assert '"gpt\\x1b]0;owned\\x07-2024-07-18" holds the control character U+001B' in done.stderr
    assert "\x1b" not in done.stderr and "\x07" not in done.stderr


def test_a_plain_error_is_printed_as_it_was(tmp_path):
    done = mt_eval("corpus", "show", "missing.json", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr == ("mt-eval corpus show: corpus missing.json: cannot read corpus: No such file or directory; "
                           "check the path\n")


@pytest.mark.parametrize(("argv", "status", "stream", "odd_file"), [
    (["translate", "{odd}", "Good night."], 1, "stderr", False),  # cannot load method plugin …
    (["serve", "{odd}"], 1, "stderr", False),
    (["schemas", "--check", "{odd}"], 1, "stderr", False),  # each missing schema's path
    (["freeze", "show", "{odd}"], 1, "stderr", True),  # … is not a freeze manifest
    (["freeze", "validate", "{odd}"], 1, "stdout", True),
    (["bridge", "check", "--vectors", "{odd}", "--", "true"], 2, "stderr", False),  # --vectors … does not exist
    (["bridge", "check", "--", "{odd}"], 1, "stdout", False),  # checking `…` against …, then it cannot start
    (["run", "--demo", "--out", "run", "--pair", "{odd}"], 2, "stderr", False),  # … is not a language pair
    (["publish", "card.json", "--policy", "{odd}", "--no-input"], 1, "stderr", True),  # the gate policy … is not valid
    (["publish", "card.json", "--db", "{odd}", "--no-input"], 1, "stderr", True),  # cannot open the store …
    (["decide", "run", "--method", GRADER, "--corpus", DECISIONS, "--out", "{odd}", "--quiet"], 0, "stdout", False),
])
def test_a_commands_own_lines_show_a_paths_control_and_invisible_characters_escaped(argv, status, stream, odd_file,
                                                                                   tmp_path):
    """Before, these commands printed their own lines (not `main`'s) with the path as it was."""
    if odd_file:
        (tmp_path / ODD).write_text("not JSON\n", encoding="utf-8")
    done = mt_eval(*[word.replace("{odd}", ODD) for word in argv], cwd=tmp_path, stdin=subprocess.DEVNULL)
    shown = getattr(done, stream)
    assert done.returncode == status, done.stderr
    assert ODD_SHOWN in shown and "\\\\x1b" not in shown, shown  # escaped once
    assert "\x1b" not in done.stdout + done.stderr and "\u202e" not in done.stdout + done.stderr
    assert "Traceback" not in done.stderr


@pytest.fixture(scope="module")
def odd_run_done(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """A demo run written to a directory whose name holds ESC and U+202E: where, and what the run printed."""
    where = tmp_path_factory.mktemp("odd")
    done = mt_eval("run", "--demo", "--out", ODD, "--quiet", cwd=where)
    assert done.returncode == 0, done.stderr
    return where, done


@pytest.fixture(scope="module")
def odd_run(odd_run_done) -> Path:
    """The directory that holds the demo run `ODD` (its card: ODD/card.json)."""
    return odd_run_done[0]


def test_runs_summary_shows_the_run_cards_path_escaped(odd_run_done):
    """Before, the summary's last lines printed the paths of the run card and the predictions as they were."""
    done = odd_run_done[1]
    assert done.stdout.splitlines()[-2:] == [f"  run card     {ODD_SHOWN}/card.json", f"  predictions  {ODD_SHOWN}/"
                                             "predictions.txt (one line per entry, in corpus order)"]
    assert "\x1b" not in done.stdout and "\u202e" not in done.stdout


@pytest.mark.parametrize(("argv", "status"), [
    (["gate", "{odd}", "--policy", "{odd}/policy.json"], 0),  # the verdict's card, the policy's path
    (["compare", "{odd}", "{odd}", "--quiet"], 0),
    (["freeze", "init", "--method", LEXICON, "--corpus", DEMO, "--out", "{odd}/init.json", "--force"], 0),
    (["freeze", "show", "{odd}/freeze.json"], 0),  # its path, and a value read from it (the hardware label)
    (["gateway", "--policy", "{odd}/gateway.json", "--check"], 0),
    (["grade", "{odd}/card.json", "--grader", GRADER, "--out", "{odd}/grading", "--force", "--quiet"], 0),
    (["grade", "export", "{odd}/card.json", "--out", "{odd}/sheets", "--force"], 0),  # sheets: …
])
def test_what_a_command_prints_of_a_card_or_manifest_shows_control_and_invisible_characters_escaped(argv, status,
                                                                                                   odd_run):
    """Before, the lines printed the path of the card, manifest or policy, and values read from them, as they were."""
    (odd_run / ODD / "policy.json").write_text('{"name": "default"}', encoding="utf-8")
    (odd_run / ODD / "gateway.json").write_text(json.dumps({
        "base_url": "https://api.example.com/v1", "api_key_env": "MY_KEY", "models": [{"id": "gpt-4o"}]}),
        encoding="utf-8")
    if "{odd}/freeze.json" in argv:
        made = mt_eval("freeze", "init", "--method", LEXICON, "--corpus", DEMO, "--out", f"{ODD}/freeze.json",
                       "--force", cwd=odd_run)
        assert made.returncode == 0, made.stderr
        manifest = json.loads((odd_run / ODD / "freeze.json").read_text(encoding="utf-8"))
        manifest["hardware"]["label"] = "cpu\u202e"
        (odd_run / ODD / "freeze.json").write_text(json.dumps(manifest, ensure_ascii=False), encoding="utf-8")
    done = mt_eval(*[word.replace("{odd}", ODD) for word in argv], cwd=odd_run, stdin=subprocess.DEVNULL)
    assert done.returncode == status, done.stdout + done.stderr
    assert ODD_SHOWN in done.stdout and "\\\\x1b" not in done.stdout, done.stdout  # escaped once
    assert "\x1b" not in done.stdout + done.stderr and "\u202e" not in done.stdout + done.stderr, done.stdout
    if "{odd}/freeze.json" in argv:
        assert '  label: "cpu\\u202e"' in done.stdout  # quoted, as a value holding ESC is


@pytest.mark.parametrize(("argv", "field"), [
    (["freeze", "validate", "{odd}", "--json"], "manifest"),
    (["decide", "check", "--corpus", "{odd}", "--json"], "corpus"),  # (before: U+202E as it was)
])
def test_a_json_report_writes_a_paths_invisible_characters_as_json_escapes(argv, field, tmp_path):
    (tmp_path / ODD).write_text("not JSON\n", encoding="utf-8")
    done = mt_eval(*[word.replace("{odd}", ODD) for word in argv], cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert f'"{field}": "no\\u001b[31mpe\\u202e.json"' in done.stdout and "\u202e" not in done.stdout
    assert json.loads(done.stdout)[field] == ODD


def test_contamination_shows_a_corpus_and_a_reports_path_escaped(tmp_path):
    """Before, its progress and its report printed the corpus's path as it was, --json and --report held U+202E as it
    was, and the lines saying that the report or the result could not be written printed the --report path raw."""
    (tmp_path / ODD).write_text(Path(DEMO).read_text(encoding="utf-8"), encoding="utf-8")
    check = ["contamination", "--method", LEXICON, "--corpus", ODD, "--plant", "5"]
    shown = mt_eval(*check, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert f"contamination: reading corpus {ODD_SHOWN} (" in shown.stderr
    assert f" against {ODD_SHOWN} (36 entries)\n" in shown.stdout
    as_json = mt_eval(*check, "--json", "--quiet", "--report", "report.json", cwd=tmp_path)
    assert as_json.returncode == 0, as_json.stderr
    for document in (as_json.stdout, (tmp_path / "report.json").read_text(encoding="utf-8")):
        assert '"name": "no\\u001b[31mpe\\u202e.json"' in document and "\u202e" not in document
        assert json.loads(document)["corpora"][0]["name"] == ODD
    os.mkfifo(tmp_path / f"unread-{ODD}")  # (a named pipe that no process reads: the report cannot be written)
    unread = mt_eval(*check, "--quiet", "--report", f"unread-{ODD}", cwd=tmp_path)
    assert unread.returncode == 2, unread.stderr
    assert f"but its report could not be written to unread-{ODD_SHOWN}: it is a named pipe" in unread.stderr
    with open(os.devnull if not Path("/dev/full").exists() else "/dev/full", "w") as full:
        lost = subprocess.run([*MT_EVAL, *check, "--quiet", "--report", f"kept-{ODD}"], cwd=tmp_path, stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=180)
    assert lost.returncode == 2, lost.stderr
    assert lost.stderr.endswith(f"could not be written to standard output: No space left on device; the report is in "
                                f"kept-{ODD_SHOWN}\n")
    for done in (shown, as_json, unread, lost):
        assert "\x1b" not in (done.stdout or "") + done.stderr and "\u202e" not in (done.stdout or "") + done.stderr


def test_leaderboard_shows_the_sites_and_the_stores_path_escaped(odd_run):
    """Before, ``leaderboard --out`` printed where it wrote the site, and ``leaderboard serve`` the store it serves,
    as they were."""
    published = mt_eval("publish", ODD, "--db", f"{ODD}/board.db", "--no-input", cwd=odd_run)
    assert published.returncode == 0, published.stderr
    site = mt_eval("leaderboard", "--db", f"{ODD}/board.db", "--out", f"{ODD}/site", cwd=odd_run)
    assert site.returncode == 0, site.stderr
    assert site.stdout.startswith(f"wrote {odd_run}/{ODD_SHOWN}/site/index.html (1 run card, 1 detail page); open "
                                  "file://"), site.stdout
    serve = subprocess.Popen([*MT_EVAL, "leaderboard", "serve", "--db", f"{ODD}/board.db", "--port", "0"],
                             cwd=odd_run, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = serve.stdout.readline() if serve.stdout else ""
    finally:
        serve.send_signal(signal.SIGINT)
        _, err = serve.communicate(timeout=60)
    assert first.startswith("serving the leaderboard of ") and f"{ODD_SHOWN}/board.db on http://" in first, first + err
    for shown in (site.stdout + site.stderr, first + err):
        assert "\x1b" not in shown and "\u202e" not in shown


def test_publish_shows_a_store_error_escaped(odd_run, tmp_path, monkeypatch, capsys):
    """Before, the store's error (which names the store) was printed as it was."""
    from mt_eval.cli import main
    from mt_eval.leaderboard.store import Store, StoreError

    def failing(self, *args, **kwargs):
        raise StoreError(f"cannot write to the leaderboard store {ODD}: disk I/O error")

    monkeypatch.setattr(Store, "publish", failing)
    assert main(["publish", str(odd_run / ODD), "--db", str(tmp_path / "board.db"), "--no-input"]) == 1
    err = capsys.readouterr().err
    assert (f"mt-eval publish: cannot write to the leaderboard store {ODD_SHOWN}: disk I/O error; nothing was "
            "published; 1 card was not stored: ") in err
    assert "\x1b" not in err and "\u202e" not in err


def test_grade_shows_why_nothing_was_graded_escaped(odd_run, tmp_path):
    """Before, when no entry could be graded, the first translation's error was printed as the run card holds it."""
    from mt_eval.harness.verify import canonical_sha256

    card = json.loads((odd_run / ODD / "card.json").read_text(encoding="utf-8"))
    card["results"] = [{**result, "predicted": None, "error": f"engine down: {ODD}"} for result in card["results"]]
    card["content_sha256"] = canonical_sha256(card)
    (tmp_path / "card.json").write_text(json.dumps(card), encoding="utf-8")
    done = mt_eval("grade", "card.json", "--corpus", DEMO, "--grader", GRADER, "--out", "g", cwd=tmp_path)
    assert done.returncode == 4, done.stderr
    assert done.stderr.endswith(f"mt-eval grade: no entry was graded (30 not graded: not translated): the translation "
                                f"failed: engine down: {ODD_SHOWN}\n"), done.stderr
    assert "\x1b" not in done.stdout + done.stderr and "\u202e" not in done.stdout + done.stderr


def test_the_summary_counts_one_entry_in_the_singular(tmp_path):
    """A one-entry corpus was summed up as "1 entries"."""
    corpus = tmp_path / "one.json"
    corpus.write_text(json.dumps([{"id": "a", "source": "Good morning.", "reference": "Buenos días."}]),
                      encoding="utf-8")
    done = mt_eval("run", "--method", LEXICON, "--corpus", str(corpus), "--pair", "eng>spa", "--out",
                   str(tmp_path / "run"))
    assert done.stdout.splitlines()[0] == "lexicon-eng-spa on one (eng>spa): 1 entry, 0 errors", done.stderr
    chosen = mt_eval("run", "--demo", "--ids", "demo-01", "--out", str(tmp_path / "selection"))
    assert chosen.stdout.splitlines()[0] == ("lexicon-eng-spa on eng-spa-demo (eng>spa): 1 of 36 entries (a "
                                             "selection), 0 errors"), chosen.stderr
