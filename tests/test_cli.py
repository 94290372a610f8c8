"""The mt-eval command line as a user runs it."""

from __future__ import annotations

import gzip
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from mt_eval import __version__
from mt_eval.cli import build_parser, main

REPO = Path(__file__).parent.parent


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mt_eval.cli", *args], capture_output=True, text=True,
                          timeout=60, cwd=REPO)


def test_help_and_version():
    shown = run("--help")
    assert shown.returncode == 0
    assert "validate" in shown.stdout and "schemas" in shown.stdout
    assert run("--version").stdout.strip() == f"mt-eval {__version__}"


@pytest.mark.parametrize("command", [[], ["bridge"], ["decide"], ["corpus"], ["freeze"]])  # (a command's help, too)
def test_no_arguments_prints_help_and_fails(capsys, command):
    assert main(command) == 2
    assert f"usage: {' '.join(['mt-eval', *command])} [-h]" in capsys.readouterr().out


def test_validate_valid_plugin_exits_zero(make_plugin):
    shown = run("validate", str(make_plugin()))
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "dependency class S (self-contained)" in shown.stdout
    assert "1 of 1 plugin valid; 0 errors, 0 warnings" in shown.stdout


def test_validate_reports_problems_and_exits_one(make_plugin):
    bad = make_plugin({"name": "x", "entry_point": "pipeline:EchoMethod", "dependencies": [], "clas": "api"})
    shown = run("validate", str(make_plugin()), str(bad))
    assert shown.returncode == 1
    assert f'error: {bad / "method.json"} $.clas: unknown field "clas"' in shown.stdout
    assert 'fix: did you mean "class"?' in shown.stdout
    assert "1 of 2 plugins valid; 1 error, 0 warnings" in shown.stdout


def test_validate_json_for_ci(seed_plugin):
    shown = run("validate", "--json", str(seed_plugin))
    assert shown.returncode == 0
    report = json.loads(shown.stdout)
    assert report["ok"] is True
    [plugin] = report["plugins"]
    assert plugin["method_id"] == "fst-gated-v8"
    assert plugin["derived_class"] == "A2"
    assert [c["class"] for c in plugin["contributions"]] == ["O", "A1", "A2"]


def test_strict_turns_warnings_into_failures(make_plugin):
    seed_era = make_plugin({"name": "Old", "entry_point": "pipeline:EchoMethod"})
    assert run("validate", str(seed_era)).returncode == 0
    strict = run("validate", "--strict", "--json", str(seed_era))
    assert strict.returncode == 1
    assert json.loads(strict.stdout)["plugins"][0]["problems"][0]["severity"] == "warning"
    said = run("validate", "--strict", str(seed_era))  # before: "0 errors, 1 warning", not a word of why it failed
    assert said.stdout.splitlines()[-1] == "0 of 1 plugin valid; 0 errors, 1 warning (--strict: a warning makes its " \
                                           "plugin invalid)"


def test_no_import_skips_the_code(make_plugin):
    broken = make_plugin(files={"pipeline.py": "raise SystemExit('must not run')\n"})
    assert run("validate", "--no-import", str(broken)).returncode == 0
    assert run("validate", str(broken)).returncode == 1


def test_schemas_check(tmp_path: Path):
    assert run("schemas", "--check", "bridge/schemas").returncode == 0
    stale = run("schemas", "--check", str(tmp_path))
    assert stale.returncode == 1
    assert "method.schema.json: missing" in stale.stderr
    assert f"regenerate with: mt-eval schemas {tmp_path}" in stale.stderr


def test_translate_reads_a_text_file_as_run_reads_source_text(tmp_path: Path):
    """Before, --file had a reader of its own: the reference after a TAB was translated with its source, UTF-16
    without its byte-order mark was translated as NUL-filled text, and UTF-16 with one or a gzip file was refused
    with advice (iconv -f latin1) that garbles it. Standard input took NUL bytes as text too."""
    lexicon = str(REPO / "examples" / "lexicon-eng-spa")
    tabs = tmp_path / "tabs.eng"
    tabs.write_text("Hello.\tHola.\nGood morning.\tBuenos días.\n", encoding="utf-8")
    refused = run("translate", lexicon, "--file", str(tabs))
    assert refused.returncode == 2 and refused.stdout == ""
    assert "hold TAB-separated columns" in refused.stderr
    assert "translate a TSV corpus with --file tabs.tsv" in refused.stderr
    assert run("translate", lexicon, "--file", str(tabs), "--accept-doubt", "tabs-in-parallel-text").returncode == 0
    no_mark = tmp_path / "no-mark.eng"
    no_mark.write_bytes("Hello.\n".encode("utf-16-le"))
    garbled = run("translate", lexicon, "--file", str(no_mark))
    assert garbled.returncode == 2 and "looks like UTF-16 without its byte-order mark" in garbled.stderr
    assert "iconv -f utf-16le -t utf-8" in garbled.stderr
    expected = run("translate", lexicon, "Hello.").stdout
    marked = tmp_path / "marked.eng"
    marked.write_bytes("Hello.\n".encode("utf-16"))
    packed = tmp_path / "packed.txt.gz"
    packed.write_bytes(gzip.compress(b"Hello.\n"))
    for readable in (marked, packed):
        read = run("translate", lexicon, "--file", str(readable))
        assert (read.returncode, read.stdout) == (0, expected), read.stderr
    piped = subprocess.run([sys.executable, "-m", "mt_eval.cli", "translate", lexicon], input=b"a\0b\n",
                           capture_output=True, check=False)
    assert piped.returncode == 2 and b"standard input: line 1 holds a NUL byte" in piped.stderr


def test_translate_sentences_from_arguments_a_file_and_stdin(tmp_path: Path):
    lexicon = str(REPO / "examples" / "lexicon-eng-spa")
    shown = run("translate", lexicon, "Good morning, my friend.", "--pair", "eng>spa", "The cat.")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines() == ["Buenos días, mi amigo.", "El gato."]
    sentences = tmp_path / "in.txt"
    sentences.write_text("Hello world\n\nThank you\n", encoding="utf-8")
    from_file = run("translate", lexicon, "--file", str(sentences), "--json")
    shown_lines = [json.loads(line) for line in from_file.stdout.splitlines()]
    assert [(r["id"], r["predicted"]) for r in shown_lines] == [("1", "Hola mundo"), ("2", ""), ("3", "Gracias")]
    piped = subprocess.run([sys.executable, "-m", "mt_eval.cli", "translate", lexicon], input="the dog\n",
                           capture_output=True, text=True, timeout=60)
    assert piped.stdout == "el perro\n"


def test_schemas_names_a_stray_schema_to_remove_and_a_file_given_for_the_directory(tmp_path: Path):
    assert run("schemas", str(tmp_path / "out")).returncode == 0
    (tmp_path / "out" / "renamed.schema.json").write_text("{}")
    stale = run("schemas", "--check", str(tmp_path / "out"))
    assert stale.returncode == 1 and "regenerate with" not in stale.stderr  # regenerating would not mend it
    assert "renamed.schema.json: not generated from any Struct: remove it" in stale.stderr
    again = run("schemas", str(tmp_path / "out"))
    assert again.returncode == 0 and "warning: " in again.stderr and "renamed.schema.json" in again.stderr
    (tmp_path / "a-file").write_text("x")
    given_a_file = run("schemas", str(tmp_path / "a-file"))
    assert given_a_file.returncode == 1 and "Traceback" not in given_a_file.stderr
    assert "a-file is a file: give the directory the *.schema.json files live in" in given_a_file.stderr


def test_translate_prints_one_line_per_line_of_its_input_split_on_lf_only(tmp_path: Path):
    """A blank line is printed blank (not sent), a CRLF's CR is dropped, and U+2028 or a form feed stays inside
    its line, as the corpus reader keeps it: the output lines stay aligned with the input lines."""
    lexicon = str(REPO / "examples" / "lexicon-eng-spa")
    text = "Good morning,\u2028my friend.\r\nThe cat.\r\n\r\n  \nThank you.\x0cGood night.\n"
    sentences = tmp_path / "in.txt"
    sentences.write_bytes(text.encode())
    for given in (["--file", str(sentences)], []):
        done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "translate", lexicon, *given],
                              input=text.encode(), capture_output=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert done.stdout.decode().split("\n") == ["Buenos días,\u2028mi amigo.", "El gato.", "", "",
                                                    "Gracias.\x0cBuenas noches.", ""]


def test_a_translation_or_error_of_several_lines_is_printed_on_its_entrys_one_line(make_plugin):
    code = ("class EchoMethod:\n    async def translate(self, entries, config):\n"
            "        return [{'id': e['id'], 'predicted': 'Hola.\\nAdiós.\\r\\nFin.'} if e['source'] == 'two' else\n"
            "                {'id': e['id'], 'error': 'line one\\nline two'} for e in entries]\n")
    shown = run("translate", str(make_plugin(files={"pipeline.py": code})), "--pair", "eng>spa", "two", "bad")
    assert shown.stdout == "Hola. Adiós. Fin.\n[error] line one line two\n"
    as_json = run("translate", str(make_plugin(files={"pipeline.py": code})), "--pair", "eng>spa", "two", "--json")
    assert json.loads(as_json.stdout)["predicted"] == "Hola.\nAdiós.\r\nFin."  # the JSON keeps them


def test_translate_gives_a_result_without_latency_its_share_of_the_call_as_a_run_does(make_plugin):
    code = ("import asyncio\n\nclass EchoMethod:\n    async def translate(self, entries, config):\n"
            "        await asyncio.sleep(0.2)\n"
            "        return [{'id': e['id'], 'predicted': e['source']} for e in entries]\n")
    shown = run("translate", str(make_plugin(files={"pipeline.py": code})), "--pair", "eng>spa", "a", "b", "--json")
    latencies = [json.loads(line)["latency_s"] for line in shown.stdout.splitlines()]
    assert len(latencies) == 2 and all(0.1 / 2 <= s < 2 for s in latencies), latencies  # (was 0.0)


def test_translate_explains_bad_usage(make_plugin, tmp_path: Path):
    lexicon = str(REPO / "examples" / "lexicon-eng-spa")
    bad_pair = run("translate", lexicon, "--pair", "English", "x")
    assert bad_pair.returncode == 2
    assert "'English' is not a language pair: write source and target, e.g. --pair 'eng>spa'" in bad_pair.stderr
    no_pair = run("translate", str(make_plugin()), "x")
    assert no_pair.returncode == 2
    assert no_pair.stderr.startswith("mt-eval translate: plugin-0 declares no supported pair: give one, e.g. --pair "
                                     "'eng>spa' (or --pair eng:spa)")
    missing_file = run("translate", lexicon, "--file", str(tmp_path / "nope.txt"))
    assert missing_file.returncode == 2
    assert missing_file.stderr.startswith(f"mt-eval translate: --file {tmp_path / 'nope.txt'}: cannot read source: No "
                                          "such file or directory")
    broken = run("translate", str(tmp_path / "nowhere"), "x")
    assert broken.returncode == 1
    assert "no such directory" in broken.stderr
    corpus = tmp_path / "dev.tsv"
    corpus.write_text("Hello.\tHola.\n", encoding="utf-8")
    for command in ("translate", "validate"):
        shown = run(command, str(corpus), *(["x"] if command == "translate" else []))
        assert shown.returncode == 1
        assert f"{corpus}: a file, not a directory" in shown.stdout + shown.stderr


def test_translate_says_which_sentence_is_not_utf8_and_shows_a_declined_one(tmp_path: Path):
    lexicon = str(REPO / "examples" / "lexicon-eng-spa")
    piped = subprocess.run([sys.executable, "-m", "mt_eval.cli", "translate", lexicon], input=b"ok\ncaf\xe9\n",
                           capture_output=True, timeout=60)
    assert piped.returncode == 2
    assert b"standard input: line 2 is not valid UTF-8 (byte 0xe9)" in piped.stderr
    latin1 = tmp_path / "in.txt"
    latin1.write_bytes(b"Hello\n\xff\xfe bad\n")
    from_file = run("translate", lexicon, "--file", str(latin1))
    assert from_file.returncode == 2
    assert f"--file {latin1}: not valid UTF-8: byte 0xff at line 2; convert it to UTF-8" in from_file.stderr
    declined = run("translate", lexicon, "???", "Good morning.")
    assert declined.returncode == 0, declined.stderr
    assert declined.stdout.splitlines() == [
        "[declined] no word in the source (empty, or only symbols and control characters): nothing to look up",
        "Buenos días."]


def test_translate_reports_entries_the_method_dropped(make_plugin):
    code = "class EchoMethod:\n    async def translate(self, entries, config):\n        return []\n"
    shown = run("translate", str(make_plugin(files={"pipeline.py": code})), "--pair", "eng>spa", "hi")
    assert shown.returncode == 1
    assert shown.stdout == "[error] the method returned no result for this entry\n"
    assert "plugin-0: 1 of 1 entry failed" in shown.stderr


def test_translate_reports_a_method_that_raises_or_returns_junk(make_plugin):
    raising = ("class EchoMethod:\n    async def translate(self, entries, config):\n"
               "        raise RuntimeError('model offline')\n")
    shown = run("translate", str(make_plugin(files={"pipeline.py": raising})), "--pair", "eng>spa", "hi")
    assert shown.returncode == 1
    assert shown.stdout == "[error] the method failed: RuntimeError: model offline\n"  # in `mt-eval run`'s words
    junk = "class EchoMethod:\n    async def translate(self, entries, config):\n        return [{'id': 1}]\n"
    shown = run("translate", str(make_plugin(files={"pipeline.py": junk})), "--pair", "eng>spa", "hi")
    assert shown.returncode == 1
    assert ("plugin-1: the method returned results that match no entry it was sent (ids 1); they were dropped (a "
            'result is {"id": entry["id"], "predicted": TEXT}, one per entry)') in shown.stderr


def test_the_readme_lists_the_exit_statuses_of_every_command():
    from mt_eval.cli import COMMANDS

    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    table = readme.split("| command | exit statuses |", 1)[1].split("\n\n", 1)[0]
    assert [line.split("`")[1] for line in table.splitlines() if line.startswith("| `")] == list(COMMANDS)


# (command line, the option named, what it must be): each refused by argparse before any work, exit status 2
OUT_OF_RANGE = [
    ("run --demo --seed -1", "--seed", "from 0 to 9007199254740991, got -1"),
    ("compare a.json b.json --seed -1", "--seed", "from 0 to 9007199254740991, got -1"),
    ("freeze init --method m --seed -1", "--seed", "from 0 to 9007199254740991, got -1"),
    ("decide run --method m --corpus c --seed -1", "--seed", "from 0 to 9007199254740991, got -1"),
    ("grade card.json --seed -1", "--seed", "from 0 to 9007199254740991, got -1"),
    ("run --demo --seed x", "--seed", "a whole number (from 0 to 9007199254740991), got 'x'"),
    # past what JavaScript (a Node method's config) holds exactly: refused here, not entry after entry there
    ("run --demo --seed 9007199254740992", "--seed", "from 0 to 9007199254740991, got 9007199254740992"),
    ("run --demo --max-tokens 9007199254740992", "--max-tokens", "at most 9007199254740991, got 9007199254740992"),
    ("run --demo --batch-size 100000000000000000000", "--batch-size", "at most 9007199254740991, got 1000000000000"),
    ("run --demo --timeout inf", "--timeout", "a finite number above 0, got inf"),
    ("run --demo --timeout nan", "--timeout", "a finite number above 0, got nan"),
    ("run --demo --timeout 0", "--timeout", "a finite number above 0, got 0"),
    ("freeze init --method m --timeout inf", "--timeout", "a finite number above 0, got inf"),
    ("decide run --method m --corpus c --timeout -1", "--timeout", "a finite number above 0, got -1"),
    ("grade card.json --timeout inf", "--timeout", "a finite number above 0, got inf"),
    ("validate m --timeout 0", "--timeout", "a finite number above 0, got 0"),
    ("validate m --timeout -1", "--timeout", "a finite number above 0, got -1"),
    ("run --demo --retries -1", "--retries", "at least 0, got -1"),
    ("run --demo --retry-budget -5", "--retry-budget", "at least 0, got -5"),
    ("freeze init --method m --retries -1", "--retries", "at least 0, got -1"),
    ("run --demo --resamples 0", "--resamples", "from 10 to 100000, got 0: a 95% interval from fewer resamples"),
    ("run --demo --resamples 1", "--resamples", "from 10 to 100000, got 1: a 95% interval from fewer resamples"),
    ("run --demo --resamples 9", "--resamples", "from 10 to 100000, got 9: a 95% interval from fewer resamples"),
    ("compare a.json b.json --bootstrap 1", "--bootstrap", "from 10 to 100000, got 1: a 95% interval from fewer"),
    ("decide run --method m --corpus c --resamples -1", "--resamples", "from 10 to 100000, got -1 (or 0: no "),
    ("decide run --method m --corpus c --resamples 5", "--resamples", "from 10 to 100000, got 5 (or 0: no "),
    # a mistyped count of resamples or trials ran for hours with nothing shown
    ("run --method m --corpus c --resamples 100000000", "--resamples",
     "from 10 to 100000, got 100000000: more than 100000 narrow no interval further, while scoring takes hours"),
    ("freeze init --method m --resamples 100001", "--resamples", "from 10 to 100000, got 100001: more than"),
    ("decide run --method m --corpus c --resamples 1000000", "--resamples", "from 10 to 100000, got 1000000: more"),
    ("compare a.json b.json --bootstrap 100001", "--bootstrap", "from 10 to 100000, got 100001: more than 100000"),
    ("compare a.json b.json --trials 100000000", "--trials", "from 1 to 1000000, got 100000000: more than 1000000 "
                                                             "trials move no p-value shown (4 places)"),
    ("run --demo --max-tokens -5", "--max-tokens", "at least 1, got -5"),
    ("decide run --method m --corpus c --max-tokens 0", "--max-tokens", "at least 1, got 0"),
    ("run --demo --temperature 3", "--temperature", "a number from 0 to 2, got 3"),
    ("run --demo --temperature nan", "--temperature", "a number from 0 to 2, got nan"),
    ("run --demo --latency-repetitions 0", "--latency-repetitions", "from 1 to 100, got 0"),
    # extra calls before the run, one at a time: a mistyped count delayed it for days with nothing shown
    ("run --method m --corpus c --latency-repetitions 100000000", "--latency-repetitions",
     "from 1 to 100, got 100000000: latency calls are extra calls made one at a time"),
    ("run --method m --corpus c --latency-warmup 100000000", "--latency-warmup",
     "from 0 to 100, got 100000000: latency calls are"),
    ("freeze init --method m --latency-warmup 101", "--latency-warmup", "from 0 to 100, got 101: latency calls are"),
    ("run --demo --limit 0", "--limit", "at least 1, got 0"),
    ("leaderboard --max-p95 -1", "--max-p95", "a finite number above 0, got -1"),
    ("leaderboard serve --db x --port 99999", "--port", "from 0 to 65535, got 99999"),
    ("leaderboard serve --db x --port -1", "--port", "from 0 to 65535, got -1"),
    ("run --demo --substitution-sample 0", "--substitution-sample", "at least 1, got 0"),
    ("corpus show c.json --rows -1", "--rows", "at least 0, got -1"),
    ("contamination --method m --corpus c --show -1", "--show", "at least 0, got -1"),
]


@pytest.mark.parametrize(("line", "option", "allowed"), OUT_OF_RANGE, ids=[case[0] for case in OUT_OF_RANGE])
def test_a_number_out_of_range_is_refused_naming_the_option_and_the_range(line: str, option: str, allowed: str,
                                                                           capsys, tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stopped:
        main(line.split())
    assert stopped.value.code == 2
    assert f"error: argument {option}: must be {allowed}" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # nothing was run, nothing written


BAD_VALUES = [  # (exit status 1 and no usage before, as if the run could not start; --out '': the default written)
    ("run --demo --max-errors lots", "--max-errors", "be a number of entries (5) or a share of the entries run "
                                                     "(2.5%), got 'lots'"),
    ("run --demo --max-errors -1", "--max-errors", "be a number of entries (5) or a share of the entries run (2.5%), "
                                                   "got '-1'"),
    ("run --demo --max-errors 150%", "--max-errors", "be a share of at most 100% (all the entries run), got '150%'"),
    ("run --demo --out=", "--out", "name a directory, got '' (a variable meant to hold it that is unset or empty?)"),
    ("decide run --method m --corpus c --out=", "--out", "name a directory, got ''"),
]


@pytest.mark.parametrize(("line", "option", "allowed"), BAD_VALUES, ids=[case[0] for case in BAD_VALUES])
def test_a_bad_value_is_a_usage_error_naming_the_option(line: str, option: str, allowed: str, capsys,
                                                        tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stopped:
        main(line.split())
    assert stopped.value.code == 2
    assert f"error: argument {option}: must {allowed}" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # nothing was run, nothing written (no runs/ for the default --out)


@pytest.mark.parametrize("command", ["run", "decide"])
def test_resume_and_force_together_are_refused(command: str, capsys):
    """Continue the run, or delete it: given both, the refusal of a changed run told the user to add the --force
    they had given."""
    argv = [command, "--demo", "--resume", "--force"] if command == "run" else [
        command, "run", "--method", "m", "--corpus", "c", "--resume", "--force"]
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    assert "argument --force: not allowed with argument --resume" in capsys.readouterr().err


def test_zero_is_kept_where_it_means_something():
    parser = build_parser(["run"])
    args = parser.parse_args(["run", "--demo", "--retries", "0", "--retry-budget", "0", "--latency-warmup", "0",
                              "--latency-sample", "0", "--wait", "0"])
    assert (args.retries, args.retry_budget, args.latency_warmup, args.latency_sample, args.wait) == (0, 0, 0, 0, 0)
    assert parser.parse_args(["run", "--wait"]).wait == parser.parse_args(["run", "--wait", "inf"]).wait == math.inf
    assert build_parser(["leaderboard"]).parse_args(["leaderboard", "serve", "--port", "0"]).port == 0
    assert build_parser(["decide"]).parse_args(["decide", "run", "--method", "m", "--corpus", "c",
                                                "--resamples", "0"]).resamples == 0


def test_a_gateway_port_out_of_range_is_refused(capsys):
    policy = str(REPO / "examples" / "coached-llm-eng-spa" / "gateway-policy.json")
    assert main(["gateway", "--policy", policy, "--listen", "127.0.0.1:99999"]) == 2
    assert "--listen '127.0.0.1:99999': write it as HOST:PORT with a port from 0 to 65535" in capsys.readouterr().err


def test_translate_reads_a_doubtful_tsv_as_its_refusal_says_with_columns_or_accept_doubt(tmp_path: Path):
    """The refusal of a TSV whose first column looks like ids offers --columns and --accept-doubt: translate takes
    both (it said `unrecognized arguments`), and only with --file."""
    lexicon = str(REPO / "examples" / "lexicon-eng-spa")
    tsv = tmp_path / "ids.tsv"
    tsv.write_text("1\tGood morning.\tBuenos días.\n2\tThe cat.\tEl gato.\n3\tThanks.\tGracias.\n", encoding="utf-8")
    refused = run("translate", lexicon, "--file", str(tsv))
    assert refused.returncode == 2 and "--columns id,source,reference" in refused.stderr
    assert "--accept-doubt first-column-ids" in refused.stderr
    read = run("translate", lexicon, "--file", str(tsv), "--columns", "id,source,reference")
    assert read.returncode == 0 and len(read.stdout.splitlines()) == 3, read.stderr
    accepted = run("translate", lexicon, "--file", str(tsv), "--accept-doubt", "first-column-ids")
    assert accepted.returncode == 0 and accepted.stdout.splitlines() == ["1", "2", "3"], accepted.stderr
    alone = run("translate", lexicon, "--columns", "id,source", "Hi")
    assert alone.returncode == 2 and "give --file FILE with it" in alone.stderr


@pytest.mark.parametrize("command", [["verify", "{Z}"], ["gate", "{Z}"], ["compare", "{Z}", "{Z}"], ["validate", "{Z}"],
                                     ["translate", "{Z}", "hi"], ["run", "--method", "{Z}", "--corpus", "{Z}"]])
def test_a_path_too_long_for_the_system_is_named_not_a_traceback(command: list[str], capsys):
    """Before, verify, gate, compare, validate and translate ended in ``OSError: [Errno 36] File name too long``."""
    too_long = "z" * 300
    assert main([word.replace("{Z}", too_long) for word in command]) == 1
    err = capsys.readouterr().err
    assert f"{'z' * 40}…{'z' * 15}: the path is too long for this system (File name too long: a name in it over " \
           "255 bytes, or the whole over 4096); check the path you gave" in err
