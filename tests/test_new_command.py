"""``mt-eval new`` on the command line: refused answers write nothing and say why, existing directories,
prompts, ``--help``, lazy imports, the template in the source tree and with plain cookiecutter."""

from __future__ import annotations

import hashlib
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mt_eval.cli import main
from mt_eval.scaffold import template_directory
from new_plugins import (
    QUESTIONS,
    TEMPLATE,
    new,
)

# --- the command line -------------------------------------------------------------------------------------

def test_a_bad_id_is_refused_by_the_pre_gen_hook_with_the_fix(tmp_path, capfd):
    target = tmp_path / "not" / "yet" / "there"
    assert new(str(target), "--no-input", "--set", "method_id=My_Method") == 2
    err = capfd.readouterr().err
    assert 'error: method_id: "My_Method" is not kebab-case' in err and 'e.g. "my-method"' in err
    assert "nothing was written" in err
    assert list(tmp_path.iterdir()) == []  # no plugin, no staging directory


def test_an_empty_id_is_refused_before_anything_is_rendered(tmp_path, capfd):
    """The plugin's directory is named by its id: an empty one was refused with "… directory already exists"."""
    assert new(str(tmp_path / "p"), "--no-input", "--set", "method_id=") == 2
    err = capfd.readouterr().err
    assert 'error: --set method_id=: method_id "" is not kebab-case' in err and "already exists" not in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["!!!", " "])
def test_a_name_that_makes_no_id_is_refused_naming_the_id(tmp_path, monkeypatch, capfd, name: str):
    """Without DIR the id made from the name names the directory: an empty one was cookiecutter's "… directory
    already exists" about a hidden staging directory."""
    monkeypatch.chdir(tmp_path)
    assert new("--no-input", "--set", f"method_name={name}") == 2
    err = capfd.readouterr().err
    assert 'error: method_id: "" is not kebab-case' in err and "nothing was written" in err
    assert "already exists" not in err and ".mt-eval-new-" not in err
    assert list(tmp_path.iterdir()) == []


def test_an_id_too_long_to_name_the_directories_is_refused_and_a_long_name_makes_a_short_one(tmp_path, monkeypatch,
                                                                                           capfd):
    """A 299-character id failed with "path too long" naming a hidden staging directory (or, at 249, generated a
    plugin whose first ``mt-eval run`` failed on its run directory's name)."""
    monkeypatch.chdir(tmp_path)
    words = "-".join(["word"] * 60)
    assert new("p", "--no-input", "--set", f"method_id={words}") == 2
    err = capfd.readouterr().err
    assert f'is {len(words)} characters long' in err and f'at most 64, e.g. "{"-".join(["word"] * 13)}"' in err
    assert ".mt-eval-new-" not in err and list(tmp_path.iterdir()) == []
    assert new("--no-input", "--set", f"method_name={words.replace('-', ' ')}") == 0
    assert new("a" * 100 + "-b", "--no-input") == 0
    ids = {json.loads(p.read_text(encoding="utf-8"))["method_id"] for p in tmp_path.glob("*/method.json")}
    assert ids == {"-".join(["word"] * 13), "a" * 64}
    assert Path("-".join(["word"] * 13)).is_dir()


def test_the_pre_gen_hook_reports_every_problem_at_once(tmp_path, capfd):
    assert new(str(tmp_path / "p"), "--no-input", "--set", "method_name= ", "--set", "open_source=true",
               "--set", "open_source_url=example.org") == 2
    err = capfd.readouterr().err
    assert "error: method_name: empty" in err
    assert 'error: open_source_url: "example.org" is not a web address' in err


@pytest.mark.parametrize("licence", ["Apache 2", "NOPE-1.0"])
def test_a_licence_the_sdk_rejects_is_refused_as_an_answer_and_leaves_nothing_behind(tmp_path, capfd, licence: str):
    """Before, it was found only in the generated card: exit status 1, naming a method_card.json never written."""
    assert new(str(tmp_path / "p"), "--no-input", "--set", f"method_license={licence}") == 2
    err = capfd.readouterr().err
    assert f'error: method_license: "{licence}" is not a valid SPDX licence expression: ' in err
    assert "method_card.json" not in err and "nothing was written" in err
    assert list(tmp_path.iterdir()) == []


def test_an_existing_directory_is_refused_unless_forced(tmp_path, capsys):
    target = tmp_path / "taken"
    target.mkdir()
    (target / "notes.txt").write_text("mine", encoding="utf-8")
    assert new(str(target), "--no-input") == 2
    assert f"mt-eval new: {target} already exists: choose a new directory, or add --force" in capsys.readouterr().err
    assert sorted(p.name for p in target.iterdir()) == ["notes.txt"]
    assert new(str(target), "--no-input", "--force") == 0
    assert (target / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert (target / "method.json").is_file()
    file = tmp_path / "a-file"
    file.write_text("x", encoding="utf-8")
    assert new(str(file), "--no-input", "--force") == 2
    assert capsys.readouterr().err == (f"mt-eval new: {file} exists and is not a directory: name a new directory "
                                       "for the plugin, or move that file away\n")


def test_an_empty_existing_directory_is_used_and_missing_parents_are_made(tmp_path):
    (tmp_path / "empty").mkdir()
    assert new(str(tmp_path / "empty"), "--no-input") == 0
    assert json.loads((tmp_path / "empty" / "method.json").read_text(encoding="utf-8"))["method_id"] == "empty"
    assert new(str(tmp_path / "plugins" / "deep" / "glossary_v2"), "--no-input") == 0
    manifest = json.loads((tmp_path / "plugins" / "deep" / "glossary_v2" / "method.json").read_text(encoding="utf-8"))
    assert (manifest["name"], manifest["method_id"]) == ("Glossary V2", "glossary-v2")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty", "plugins"]  # no staging directory left


@pytest.mark.parametrize(("setting", "message"), [
    ("colour=blue", '--set colour=blue: no question "colour"; the questions are method_kind, method_name, method_id'),
    ("runtme=node", '--set runtme=node: no question "runtme" (did you mean "runtime"?); the questions are method_kind'),
    ("runtime=rust", "--set runtime=rust: runtime is one of python, node, both; not \"rust\""),
    ("open_source=maybe", '--set open_source=maybe: open_source is true or false, not "maybe"'),
    ("runtime", '--set "runtime": write KEY=VALUE, e.g. --set runtime=node'),
    ("__family=chat", '--set __family=chat: no question "__family"'),
])
def test_bad_set_options_are_explained(tmp_path, capsys, setting, message):
    assert new(str(tmp_path / "p"), "--no-input", "--set", setting) == 2
    err = capsys.readouterr().err
    assert f"error: {message}" in err and err.endswith("mt-eval new: the answers above were refused; nothing was "
                                                        "written\n")
    assert list(tmp_path.iterdir()) == []


def test_every_answer_that_cannot_be_used_is_said_at_once(tmp_path, capsys):
    """Those refused as --set options and those that break a rule alike, not the first of them alone."""
    assert new(str(tmp_path / "p"), "--no-input", "--set", "method_id=Bad_ID", "--set", "open_source=maybe",
               "--set", "runtime=ruby", "--set", "bogus=1") == 2
    refused = [line.split(":", 2)[1].strip() for line in capsys.readouterr().err.splitlines()
               if line.startswith("error: ")]
    assert refused == ["--set open_source=maybe", "--set runtime=ruby", "--set bogus=1", "method_id"]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("text", "said"), [
    ("Next\x85Line", "a control character (U+0085; line breaks, tabs and the like)"),
    ("Del\x7f", "a control character (U+007F; line breaks, tabs and the like)"),
    ("Tab\there", "a control character (U+0009; line breaks, tabs and the like)"),
    ("Line\u2028Break", "a line separator (U+2028)"),
    ("Para\u2029", "a paragraph separator (U+2029)"),
    ("Caf\udce9", "a byte that is not UTF-8 (0xe9: the terminal or file is not UTF-8)"),  # (was a codec error)
])
def test_an_answer_that_would_break_a_generated_line_is_refused(tmp_path, capfd, text, said):
    """C1 controls (U+0085 is a line break to Python's splitlines), DEL and U+2028/U+2029 are refused as C0 ones are:
    they would split the name's line in the README and the card, or move a terminal's cursor."""
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"answers": {"method_name": "Fine", "description": text}}), encoding="utf-8")
    assert new(str(tmp_path / "p"), "--no-input", "--answers", str(answers)) == 2
    assert f"description: {json.dumps(text)} contains {said}: remove it" in capfd.readouterr().err
    assert not (tmp_path / "p").exists()


def test_bad_answers_files_are_explained(tmp_path, capsys):
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    assert new(str(tmp_path / "p"), "--no-input", "--answers", str(broken)) == 2
    assert f"--answers {broken}: cannot read it as JSON" in capsys.readouterr().err
    unknown = tmp_path / "unknown.json"
    unknown.write_text(json.dumps({"answers": {"runtime": "node", "flavour": "x"}}), encoding="utf-8")
    assert new(str(tmp_path / "p"), "--no-input", "--answers", str(unknown)) == 2
    assert f'--answers {unknown}: no question "flavour"' in capsys.readouterr().err


def test_without_a_directory_the_plugin_is_named_by_its_id(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert new("--no-input", "--set", "method_name=Quick Check", "--set", "runtime=node") == 0
    out = capsys.readouterr().out
    assert (tmp_path / "quick-check" / "translate.js").is_file()
    assert not (tmp_path / "quick-check" / "pipeline.py").exists()
    assert "cd quick-check" in out and "node --test" in out and " validate ." in out
    assert "pytest" not in out
    assert new("--no-input", "--set", "method_name=Quick Check") == 2  # now it exists
    assert "already exists" in capsys.readouterr().err


def test_interactive_prompts_ask_every_question(tmp_path, monkeypatch, capsys):
    # kind (default: translation), name, id (default), runtime 2=node, profile 4=external-api, class 5=api,
    # description, author, licence, open_source, url
    answers = "\nRemote API\n\n2\n4\n5\nCalls a service.\n\nMIT\nn\n\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO(answers))
    assert new(str(tmp_path / "remote")) == 0
    manifest = json.loads((tmp_path / "remote" / "method.json").read_text(encoding="utf-8"))
    assert (manifest["name"], manifest["method_id"], manifest["class"]) == ("Remote API", "remote", "api")
    assert (manifest["node_entry"], manifest["dependency_class"], manifest["description"]) == (
        "translate.js", "A2", "Calls a service.")
    assert "entry_point" not in manifest and "author" not in manifest
    assert "config.params[\"api_url\"]" in capsys.readouterr().out


def test_standard_input_ending_mid_way_writes_nothing_and_ends_the_questions_line(tmp_path, monkeypatch, capsys):
    """The reason was printed on the unanswered question's line: "…(int1): mt-eval new: standard input ended…"."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO("1\nHalf Done\n"))
    assert new("half") == 2
    said = capsys.readouterr()
    assert said.out.endswith("(half): \n")
    assert said.err == ("mt-eval new: standard input ended before every question was answered: use --no-input with "
                        "--set\n")
    assert list(tmp_path.iterdir()) == []


def test_help_lists_every_question_and_choice(capsys):
    with pytest.raises(SystemExit):
        main(["new", "--help"])
    text = capsys.readouterr().out
    for key, value in QUESTIONS.items():
        if not key.startswith("_"):
            assert key in text
            for choice in value if isinstance(value, list) else []:
                assert choice in text


def test_the_command_line_does_not_import_cookiecutter_until_new_runs():
    code = ("import sys, mt_eval.cli as c; c.build_parser(); "
            "print(sorted({'cookiecutter', 'jinja2'} & set(sys.modules)))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert run.stdout.strip() == "[]"


def test_the_template_also_works_with_plain_cookiecutter(tmp_path):
    argv = [sys.executable, "-m", "cookiecutter", "--no-input", str(TEMPLATE), "-o", str(tmp_path / "out"),
            "runtime=node", "dependency_profile=open-artifact", "method_id=plain"]
    run = subprocess.run(argv, capture_output=True, text=True, timeout=60,
                         env={"HOME": str(tmp_path), "TMPDIR": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr
    assert main(["validate", "--strict", str(tmp_path / "out" / "plain")]) == 0
    assert sorted(p.name for p in (tmp_path / "out" / "plain").iterdir()) == [
        ".gitignore", ".mt-eval-answers.json", "README.md", "glossary.tsv", "method.json", "method_card.json",
        "package.json", "sample", "tests", "translate.js"]


def test_the_source_tree_template_is_used_in_a_checkout():
    assert template_directory() == TEMPLATE.resolve()


def test_the_tests_talk_to_loopback_only():
    for file in [*Path(__file__).parent.glob("test_new*.py"), *TEMPLATE.rglob("*test*")]:
        if file.is_file():
            addresses = set(re.findall(r"\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b", file.read_text(encoding="utf-8")))
            assert addresses <= {"127.0.0.1"}, file


# --- the first hour: next steps as printed, answers checked as given, changed files kept -------------------

def test_the_printed_next_steps_work_as_printed(tmp_path):
    script = Path(sys.executable).parent / "mt-eval"
    if not script.is_file():
        pytest.skip("mt-eval is not installed beside this Python")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "TMPDIR": str(tmp_path)}  # no mt-eval on PATH
    made = subprocess.run([str(script), "new", "first", "--no-input", "--set", "runtime=both"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, env=env)
    assert made.returncode == 0, made.stderr
    steps = made.stdout.split("Next:\n", 1)[1].splitlines()
    assert steps[0] == "  cd first" and f"  {script} validate ." in steps
    assert any(line.startswith(f"  {Path(sys.executable).parent}/python") and " -m pytest tests" in line
               for line in steps)
    assert steps[-1].endswith("# scores and a run card, in ../runs/; exit 5: too few entries for a headline")
    done = subprocess.run(["bash", "-e", "-c", "\n".join(steps)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600, env=env)
    assert done.returncode == 5, done.stdout + done.stderr  # every step but the last exits 0 (bash -e)
    assert "headline withheld: the gate failed" in done.stdout and "5 scored entries" in done.stdout
    assert "7 passed" in done.stdout and "# fail 0" in done.stdout  # pytest (with the parity test), node --test
    assert "Hola, mi amigo!" in done.stdout and "chrF++" in done.stdout
    assert (tmp_path / "runs" / "first__corpus" / "card.json").is_file() and not (tmp_path / "first" / "runs").exists()


def test_each_interactive_answer_is_checked_as_it_is_given(tmp_path, monkeypatch, capsys):
    # kind, name, a bad id then a good one, runtime, profile, class, description, author, licence,
    # open_source=yes, a bad address then a good one
    answers = "\nRemote API\nRemote_API\nremote-api\n2\n4\n5\nCalls a service.\n\nMIT\ny\nexample.org\nhttps://e.org/x\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO(answers))
    assert new(str(tmp_path / "remote")) == 0
    err = capsys.readouterr().err
    assert ('error: method_id: "Remote_API" is not kebab-case: use lowercase letters and digits in words joined by '
            'hyphens, e.g. "remote-api"; answer again') in err
    assert 'error: open_source_url: "example.org" is not a web address: give an https:// URL; answer again' in err
    manifest = json.loads((tmp_path / "remote" / "method.json").read_text(encoding="utf-8"))
    assert (manifest["name"], manifest["method_id"], manifest["class"]) == ("Remote API", "remote-api", "api")
    card = json.loads((tmp_path / "remote" / "method_card.json").read_text(encoding="utf-8"))
    assert card["open_source_url"] == "https://e.org/x"


def test_force_never_replaces_a_changed_file_silently(tmp_path, monkeypatch, capsys):
    target = tmp_path / "mine"
    assert new(str(target), "--no-input") == 0
    recorded = json.loads((target / ".mt-eval-answers.json").read_text(encoding="utf-8"))["files"]
    assert recorded["pipeline.py"] == hashlib.sha256((target / "pipeline.py").read_bytes()).hexdigest()
    (target / "pipeline.py").write_text((target / "pipeline.py").read_text(encoding="utf-8") + "# my change\n",
                                        encoding="utf-8")
    regenerate = [str(target), "--answers", str(target / ".mt-eval-answers.json"), "--force"]
    capsys.readouterr()
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n" * 11 + "n\n"))  # every default, then: do not replace
    assert new(*regenerate) == 1
    err = capsys.readouterr().err
    assert "1 file(s) in" in err and "pipeline.py  (yours is kept as pipeline.py.orig)" in err
    assert "nothing was written" in err
    assert (target / "pipeline.py").read_text(encoding="utf-8").endswith("# my change\n")
    assert not (target / "pipeline.py.orig").exists()
    assert new(*regenerate, "--no-input") == 0  # without questions: replaced, and yours kept
    assert "pipeline.py  (yours is kept as pipeline.py.orig)" in capsys.readouterr().err
    assert (target / "pipeline.py.orig").read_text(encoding="utf-8").endswith("# my change\n")
    assert not (target / "pipeline.py").read_text(encoding="utf-8").endswith("# my change\n")
    assert new(*regenerate, "--no-input") == 0  # unchanged since: replaced without a word
    assert "yours is kept" not in capsys.readouterr().err
    # a second change: the first backup stays, and the message names the backup it writes
    (target / "pipeline.py").write_text("# changed again\n", encoding="utf-8")
    assert new(*regenerate, "--no-input") == 0
    assert "pipeline.py  (yours is kept as pipeline.py.1.orig)" in capsys.readouterr().err
    assert (target / "pipeline.py.1.orig").read_text(encoding="utf-8") == "# changed again\n"
    assert (target / "pipeline.py.orig").read_text(encoding="utf-8").endswith("# my change\n")


def test_a_directory_name_too_long_for_the_file_system_is_named_not_a_traceback(tmp_path, capsys):
    assert new(str(tmp_path / ("a" * 300)), "--no-input") == 2
    err = capsys.readouterr().err
    assert " characters): File name too long: choose another directory" in err and "Traceback" not in err


@pytest.mark.parametrize("name", ["Curly {{ brace", "Price {{ 5 * 5 }}", "Odd {% raw %} {# c"])
def test_an_answer_that_looks_like_template_syntax_is_kept_as_written(tmp_path, name: str):
    """Answers are text: one holding {{, {% or {# was a Jinja traceback, or evaluated ("Price 25"); so was the
    regeneration from the answers file it was recorded in."""
    assert main(["new", str(tmp_path / "a"), "--no-input", "--set", f"method_name={name}", "--set",
                 "method_id=curly"]) == 0
    assert json.loads((tmp_path / "a" / "method.json").read_text())["name"] == name
    recorded = tmp_path / "a" / ".mt-eval-answers.json"
    assert json.loads(recorded.read_text())["answers"]["method_name"] == name
    assert main(["new", str(tmp_path / "a"), "--answers", str(recorded), "--no-input", "--force"]) == 0
    assert json.loads((tmp_path / "a" / "method.json").read_text())["name"] == name


def test_a_parent_that_is_a_file_or_takes_no_directory_is_named_not_a_traceback(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    Path("afile").write_text("x", encoding="utf-8")
    assert new("afile/a/plugin", "--no-input") == 2
    err = capsys.readouterr().err
    assert err == ("mt-eval new: afile/a/plugin cannot be created: afile is a file, not a directory; "
                   "choose another place\n")
    assert new("/proc/self/plugin", "--no-input") == 1  # (no directory can be made there)
    err = capsys.readouterr().err
    assert err.startswith("mt-eval new: /proc/self/plugin cannot be created in /proc/self: ") and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


def test_the_next_steps_change_into_a_directory_named_with_a_leading_dash(tmp_path, monkeypatch, capsys):
    """``cd -dash`` is read as an option by the shell's cd: the step says ``cd ./-dash``."""
    monkeypatch.chdir(tmp_path)
    assert new("--no-input", "--", "-dash") == 0
    out = capsys.readouterr().out
    assert out.startswith("Created ./-dash: ") and "\n  cd ./-dash\n" in out
    assert (tmp_path / "-dash" / "method.json").is_file()


def test_bytes_that_are_not_utf8_are_asked_again_or_left_out_of_the_name_a_directory_gives(tmp_path, monkeypatch,
                                                                                         capsys):
    """Before: an answer typed at a terminal that is not UTF-8 (or a directory so named) failed the whole command
    after the last question with "'utf-8' codec can't encode character '\\udce9' …", every answer lost."""
    monkeypatch.setattr(sys, "stdin", io.StringIO("\nCaf\udce9 Method\nCafe Method\n" + "\n" * 9))
    assert new(str(tmp_path / "cafe")) == 0
    assert ('error: method_name: "Caf\\udce9 Method" contains a byte that is not UTF-8 (0xe9: the terminal or file '
            'is not UTF-8): remove it; answer again') in capsys.readouterr().err
    assert json.loads((tmp_path / "cafe" / "method.json").read_text(encoding="utf-8"))["name"] == "Cafe Method"
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "new", "--no-input", str(tmp_path / "caf\udce9")],
                          capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    manifest = json.loads((tmp_path / "caf\udce9" / "method.json").read_text(encoding="utf-8"))
    assert (manifest["name"], manifest["method_id"]) == ("Caf", "caf")


@pytest.mark.parametrize("blank", ["", "  "])
def test_a_blank_directory_is_a_usage_error_not_the_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys,
                                                             blank: str):
    """`mt-eval new "$NAME"` with NAME unset had created ./my-translation-method without a word."""
    monkeypatch.chdir(tmp_path)
    assert main(["new", blank, "--no-input"]) == 2
    assert "error: argument DIR: is blank: give the directory to create, or leave it out" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_a_directory_starting_with_dashes_is_refused_saying_to_put_the_end_of_options_before_it(tmp_path, monkeypatch,
                                                                                                capsys):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exited:
        new("----", "--no-input")
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "error: unrecognized arguments: ----\n  ----: if it is the DIR, put `--` before it: `mt-eval new " \
           "--no-input -- ----`\n" in err and list(tmp_path.iterdir()) == []
    assert new("--no-input", "--set", "method_id=dashes", "--", "----") == 0
    assert (tmp_path / "----" / "method.json").is_file()
