"""The command-line package: one module per command, one table, one error policy in ``main``."""

from __future__ import annotations

import importlib
import subprocess
import sys
import types
from pathlib import Path

import pytest

import mt_eval.cli as cli
from mt_eval.cli import usage_errors
from mt_eval.errors import ExpectedError, UsageError
from mt_eval.harness.run_directory import RunError
from mt_eval.locks import Busy


def fake_command(monkeypatch: pytest.MonkeyPatch, raises: BaseException, **attributes: object) -> None:
    """`mt-eval run` replaced by a command whose ``run`` raises ``raises``."""
    module = types.ModuleType("mt_eval.cli.run")
    module.add_arguments = lambda parser: None  # type: ignore[attr-defined]

    def run(args: object) -> int:
        raise raises

    module.run = run  # type: ignore[attr-defined]
    for name, value in attributes.items():
        setattr(module, name, value)
    monkeypatch.setattr(cli, "command_module", lambda name: module)


@pytest.mark.parametrize(("error", "line", "status"), [
    (ExpectedError("the corpus has no entries"), "mt-eval run: the corpus has no entries", 1),
    (UsageError("give --method DIR"), "mt-eval run: give --method DIR", 2),
    (RunError("cannot resume runs/x: the corpus changed"), "mt-eval run: cannot resume runs/x: the corpus changed", 1),
])
def test_an_expected_error_is_one_line_with_its_exit_status(monkeypatch, capsys, error, line, status):
    fake_command(monkeypatch, error)
    assert cli.main(["run"]) == status
    assert capsys.readouterr().err == line + "\n"


def test_a_busy_run_directory_says_the_fix_and_exits_75(monkeypatch, capsys):
    from mt_eval.harness.run_lock import hold_run_directory

    busy = Busy("run directory runs/x", {"pid": 42, "command": "mt-eval run"})

    def acquire(self: object, **options: object) -> None:
        raise busy

    monkeypatch.setattr("mt_eval.harness.run_lock.RunDirectoryLock.acquire", acquire)
    with pytest.raises(Busy) as caught:
        hold_run_directory(Path("runs/x"), command="mt-eval run", wait_s=None, prog="mt-eval run")
    fake_command(monkeypatch, caught.value)
    assert cli.main(["run"]) == 75
    assert capsys.readouterr().err == ("mt-eval run: run directory runs/x is in use by pid 42 (mt-eval run). Wait for "
                                       "it to finish (or stop it), or give --wait to wait; a run directory is used "
                                       "by one process at a time\n")


def test_a_library_error_the_command_expects_is_one_line(monkeypatch, capsys):
    fake_command(monkeypatch, ValueError("dev.json: --columns names the columns of a .tsv corpus; this corpus has "
                                         "none"), EXPECTED=(ValueError,))
    assert cli.main(["run"]) == 1
    assert capsys.readouterr().err == ("mt-eval run: dev.json: --columns names the columns of a .tsv corpus; this "
                                       "corpus has none\n")


def test_a_bug_shows_its_traceback(monkeypatch):
    fake_command(monkeypatch, ValueError("a bug"))  # not expected by this command: it propagates
    with pytest.raises(ValueError, match="a bug"):
        cli.main(["run"])


def test_ctrl_c_says_what_was_kept_and_exits_130(monkeypatch, capsys):
    fake_command(monkeypatch, KeyboardInterrupt(), INTERRUPTED="mt-eval run: interrupted; finished entries are saved")
    assert cli.main(["run"]) == 130
    assert capsys.readouterr().err == "mt-eval run: interrupted; finished entries are saved\n"


def test_a_command_named_prog_speaks_with_its_name(monkeypatch, capsys):
    fake_command(monkeypatch, ExpectedError("cannot read dev.tsv"), PROG="mt-eval corpus show")
    assert cli.main(["run"]) == 1
    assert capsys.readouterr().err == "mt-eval corpus show: cannot read dev.tsv\n"


@pytest.mark.parametrize("name", list(cli.COMMANDS))
def test_each_command_is_one_module_with_its_arguments_and_run(name):
    module = importlib.import_module(f"mt_eval.cli.{name}")
    assert callable(module.add_arguments) and callable(module.run)
    assert all(isinstance(e, type) and issubclass(e, BaseException) for e in getattr(module, "EXPECTED", ()))


def test_help_imports_no_command_and_a_command_imports_only_its_own_module():
    code = ("import sys, mt_eval.cli as c; c.build_parser(sys.argv[1:]); "
            "print(sorted(m for m in sys.modules if m.startswith('mt_eval.cli.')))")
    top = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert top.stdout.strip() == "[]"
    run = subprocess.run([sys.executable, "-c", code, "run"], capture_output=True, text=True, check=True, timeout=60)
    assert run.stdout.strip() == ("['mt_eval.cli.arguments', 'mt_eval.cli.measurement_arguments', 'mt_eval.cli.run', "
                                  "'mt_eval.cli.usage_errors']")  # (main
    # imports usage_errors before every command: OptionError)
    heavy = ("import sys, mt_eval.cli as c; c.build_parser(sys.argv[1:]); "
             "print(sorted({'mt_eval.harness.session', 'mt_eval.loader', 'msgspec', 'anyio'} & set(sys.modules)))")
    for name in cli.COMMANDS:
        parsed = subprocess.run([sys.executable, "-c", heavy, name], capture_output=True, text=True, check=True,
                                timeout=60)
        assert parsed.stdout.strip() in ("[]", "['msgspec']"), (name, parsed.stdout)  # the work comes when it runs


def test_ctrl_c_while_the_options_are_read_says_nothing_was_done_not_a_traceback():
    """Reading a command's options imports what it needs (a few tenths of a second for `run`): a Ctrl-C then
    printed a traceback."""
    script = ("import sys\nimport mt_eval.cli as cli\n"
              "def reading(*args):\n    raise KeyboardInterrupt  # (as Python raises it for a Ctrl-C)\n"
              "cli.build_parser = reading\nsys.argv = ['mt-eval', 'run', '--demo']\ncli.console_main()\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (130, "\nmt-eval: interrupted before the command started; nothing was "
                                                   "done\n")


@pytest.mark.parametrize("words", [
    ["run", "--demo", "--limit", "2", "--quiet", "--freeze", ""],  # (was: ran without checking any frozen manifest)
    ["run", "--demo", "--limit", "2", "--quiet", "--policy", ""],  # (was: the shipped policy)
    ["run", "--demo", "--limit", "2", "--quiet", "--corpus", ""],  # (was: the demo corpus)
    ["run", "--demo", "--limit", "2", "--quiet", "--method-card", ""],
    ["gate", "CARD", "--policy", ""],
    ["publish", "CARD", "--no-input", "--policy", ""],
    ["grade", "CARD", "--grader", "G", "--out", ""],  # (was: RUN_DIR/grading/GRADER)
    ["grade", "CARD", "--grader", "G", "--corpus", ""],
    ["locales", "--dry-run", "--config", ""],  # (was: ./champollion.config.json)
    ["bridge", "check", "--vectors", "", "--", "true"],  # (was: the bundled transcripts)
    ["run", "--demo", "--limit", "2", "--quiet", "--source-file", ""],  # (was: the current directory, read as a file)
    ["run", "--demo", "--limit", "2", "--quiet", "--reference-file", ""],
    ["freeze", "init", "--method", "M", "--corpus", "C", "--out", ""],  # (was: "--out . is a directory", exit 1)
    ["decide", "run", "--method", "", "--corpus", "C"],
    ["translate", "P", "hi", "-f", ""],
    ["validate", "P", "--corpus", ""],
    ["new", "--no-input", "--answers", "", "P"],
    ["leaderboard", "--out", ""],
    ["gateway", "--policy", "", "--check"],
])
def test_an_empty_path_is_a_usage_error_not_the_default(tmp_path: Path, monkeypatch, capsys, words):
    """``--freeze "$FREEZE"`` with the variable unset: said before any work, never quietly the option's default."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MT_EVAL_DB", str(tmp_path / "board.db"))
    with pytest.raises(SystemExit) as ended:
        cli.main(words)
    option = {"-f": "--file/-f"}.get(words[words.index("") - 1], words[words.index("") - 1])
    assert ended.value.code == 2
    err = capsys.readouterr().err
    assert f"error: argument {option}: must name a path, got '' (a variable meant to hold it that is unset or " \
           "empty?)" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == [], "no work was done"


@pytest.mark.parametrize(("words", "operand"), [
    (["validate", ""], "DIR"),  # (was: "method.json: missing" for the current directory, exit 1)
    (["translate", "", "hi"], "DIR"),
    (["serve", ""], "DIR"),
    (["compare", "", "B.json"], "A.json"),  # (was: "." is not a run directory)
    (["verify", ""], "CARD"),  # (was: ": does not verify")
    (["gate", ""], "CARD"),
    (["publish", "--no-input", ""], "CARD"),
    (["freeze", "show", ""], "FILE"),  # (was: "." is not a freeze manifest)
    (["freeze", "validate", ""], "FILE"),
    (["schemas", "", "--check"], "DIR"),  # (was: every schema missing)
    (["corpus", "show", ""], "FILE"),
    (["grade", "export", ""], "[export|import] CARD"),
])
def test_an_empty_operand_is_a_usage_error_not_the_current_directory(tmp_path: Path, monkeypatch, capsys, words,
                                                                     operand):
    """``mt-eval verify "$CARD"`` with the variable unset: said before any work, not read as ``.``."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MT_EVAL_DB", str(tmp_path / "board.db"))
    with pytest.raises(SystemExit) as ended:
        cli.main(words)
    assert ended.value.code == 2
    err = capsys.readouterr().err
    assert err.endswith(f"error: argument {operand}: must name a path, got '' (a variable meant to hold it that is "
                        "unset or empty?): give the path\n"), err
    assert sorted(p.name for p in tmp_path.iterdir()) == [], "no work was done"


@pytest.mark.parametrize("command", ["validate", "translate"])
def test_a_plugins_method_json_stands_for_its_directory_on_every_command(tmp_path: Path, capsys, command):
    """As `load_method` takes it: what a command says given the manifest is what it says given the directory."""
    plugin = Path(__file__).parent.parent / "examples" / "rules-eng-spa"
    words = {"validate": ["validate", "--no-scan"], "translate": ["translate"]}[command]
    extra = ["Hello."] if command == "translate" else []
    said = []
    for given in (plugin, plugin / "method.json"):
        code = cli.main([*words, str(given), *extra])
        said.append((code, capsys.readouterr().out))
    assert said[0] == said[1] and said[0][0] == 0
    assert usage_errors.method_directory(str(plugin / "method.json")) == str(plugin)
    assert usage_errors.named_plugin(str(plugin / "method.json")) == str(plugin)
    assert usage_errors.method_directory(str(tmp_path / "method.json")) == str(tmp_path / "method.json")  # (none)


@pytest.mark.parametrize(("typed", "meant"), [("--lim", "--limit"), ("--max-t", "--max-tokens"),
                                              ("--corp", "--corpus")])
def test_an_abbreviated_option_is_unknown_with_the_whole_name_suggested(tmp_path: Path, monkeypatch, capsys, typed,
                                                                        meant):
    """``--lim 3`` had silently meant --limit 3: a later option beginning the same would have changed its meaning."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as ended:
        cli.main(["run", "--demo", "--quiet", typed, "3"])
    assert ended.value.code == 2
    err = capsys.readouterr().err
    assert f"mt-eval run: error: unrecognized arguments: {typed} 3\n  {typed}: did you mean {meant}?\n" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == [], "no work was done"


def test_no_parser_reads_abbreviations():
    """Every command and subcommand (they share the top parser's class) takes an option only by its whole name."""
    def parsers(parser):
        yield parser
        for sub in usage_errors.subcommands(parser).values():
            yield from parsers(sub)
    assert all(not each.allow_abbrev for each in parsers(cli.build_parser()))


@pytest.mark.parametrize(("words", "argument"), [(["verify", "-"], "CARD"), (["gate", "-"], "CARD"),
                                                 (["compare", "-", "b.json"], "A.json"), (["publish", "-"], "CARD")])
def test_a_dash_for_a_run_card_is_a_usage_error_on_every_command_that_reads_cards(capsys, words, argument):
    """Before, verify, gate and compare looked for a file named - ("cannot read the card: No such file")."""
    with pytest.raises(SystemExit) as ended:
        cli.main(words)
    assert ended.value.code == 2
    assert f"argument {argument}: run cards are read from files, not standard input" in capsys.readouterr().err
