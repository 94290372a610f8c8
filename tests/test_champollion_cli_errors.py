"""``mt-eval locales`` and the Node ``mt-eval-locales`` refuse alike: ``--wait`` values, a project still in use once
``--wait`` has run out, and (with ``--json``) every error as a JSON report on stdout."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from champollion_project import both, make_project, needs_node, pairs_config, run_locales, twins
from mt_eval.cli import main

WAIT_WORDS = ("give a number of seconds, 0 or more (e.g. --wait 300), or inf (or --wait alone) to wait as long as it "
              "takes")


@pytest.mark.parametrize("value", ["-1", "nan", "INF", "infinity", "abc", "1e3", ""])
def test_wait_takes_only_seconds_zero_or_more_or_inf(tmp_path: Path, capsys, value: str):
    project = make_project(tmp_path, pairs_config({"en:es": {"methodPlugin": "reverse"}}), {"locales/en.json": {}})
    assert main(["locales", "--config", str(project.root), "--wait", value]) == 2
    assert capsys.readouterr().err == f"mt-eval locales: --wait {value}: {WAIT_WORDS}\n"


def test_run_and_locales_take_the_same_wait_values_said_in_the_same_words(tmp_path: Path, capsys):
    project = make_project(tmp_path, pairs_config({"en:es": {"methodPlugin": "reverse"}}), {"locales/en.json": {}})
    assert main(["locales", "--config", str(project.root), "--wait", "inf"]) == 0
    for value in ("-1", "nan", "1e3", "-.5"):
        with pytest.raises(SystemExit) as refused:
            main(["run", "--demo", "--wait", value])
        assert refused.value.code == 2
        assert f"mt-eval run: error: argument --wait: {WAIT_WORDS}; got {value}\n" in capsys.readouterr().err
    for command in (["run"], ["locales"]):
        with pytest.raises(SystemExit):
            main([*command, "--help"])
        assert "(at most SECONDS, 0 or more; inf, or --wait alone: as long as it takes)" in " ".join(
            capsys.readouterr().out.split())


@needs_node
def test_both_sides_refuse_the_same_wait_values_in_the_same_words(tmp_path: Path):
    projects = twins(tmp_path, pairs_config({"en:es": {"methodPlugin": "reverse"}}), {"locales/en.json": {}})
    for value in ("-1", "nan", "INF", "abc", "-.5"):
        runs = both(projects, "--wait", value)
        first = {side: (status, err.splitlines()[0]) for side, (status, _, err) in runs.items()}
        assert first["node"] == first["python"] == (2, f"<prog>: --wait {value}: {WAIT_WORDS}")
    for value in ("0", "0.2", ".5", "3.", "inf"):
        assert [status for status, _, _ in both(projects, "--wait", value).values()] == [0, 0], value


@needs_node
def test_once_wait_runs_out_it_says_how_long_it_waited_and_who_still_holds_the_project(tmp_path: Path):
    from mt_eval.locks import ProjectLock

    projects = twins(tmp_path, pairs_config({"en:es": {"methodPlugin": "reverse"}}), {"locales/en.json": {"a": "A"}})
    holders = [ProjectLock(p.root / "locales", command="a test").acquire() for p in projects.values()]
    try:
        runs = both(projects, "--wait", "0.3")
    finally:
        for holder in holders:
            holder.release()
    for status, _, err in runs.values():
        assert status == 1
        last = err.splitlines()[-1]
        assert last.startswith(f"<prog>: champollion project <project>/locales is still in use by pid {os.getpid()} "
                               "(a test, started "), last
        assert last.endswith(") after waiting 0.3 s for it. Let it finish, then run again, or give a longer --wait")
        assert "give --wait to wait" not in err


@needs_node
def test_with_json_an_error_is_a_report_on_stdout_of_the_same_shape_on_both_sides(tmp_path: Path):
    from mt_eval.locks import ProjectLock

    good = pairs_config({"en:es": {"methodPlugin": "reverse"}})
    projects = twins(tmp_path, good, {"locales/en.json": {"a": "A"}})

    def reports() -> dict[str, dict[str, object]]:
        out = {}
        for side, (status, stdout, stderr) in both(projects, "--json").items():
            assert status == 1, stderr
            report = json.loads(stdout)
            assert stderr.endswith(f"<prog>: {report['error']['message']}\n")
            out[side] = report
        return out

    def rewrite(path: str, value: object) -> None:
        for project in projects.values():
            project.write(path, value)

    rewrite("champollion.config.json", pairs_config({"en:es": {"methodPlugin": "reverse", "temperature": "warm"}}))
    found = reports()
    assert found["node"] == found["python"]
    assert found["python"] == {"dryRun": False, "ok": False, "error": {"kind": "config", "message": (
        "<project>/champollion.config.json is not a valid champollion config\nerror: <project>/champollion.config.json "
        '$.pairs["en:es"].temperature: expected a number, got the string "warm"\n'
        '    fix: give "temperature" as a number, e.g. "temperature": 1')}, "locales": []}

    rewrite("champollion.config.json", good)
    holders = [ProjectLock(p.root / "locales", command="a test").acquire() for p in projects.values()]
    try:
        found = reports()
    finally:
        for holder in holders:
            holder.release()
    assert found["node"] == found["python"]
    assert found["python"]["error"]["kind"] == "busy"
    assert found["python"]["error"]["message"].endswith("Wait for it to finish, or give --wait to wait")

    rewrite("locales/.champollion-lock.json", "[")
    found = reports()
    assert found["node"] == found["python"]
    assert found["python"]["error"]["kind"] == "project"
    assert found["python"]["error"]["message"].startswith("<project>/locales/.champollion-lock.json: cannot read the "
                                                          "lock file: invalid JSON at line 1, column 2")

    rewrite("locales/.champollion-lock.json", '{"version": 1, "files": {}}')
    rewrite("broken/method.json", {"name": "Broken", "node_entry": "translate.mjs", "dependencies": []})
    rewrite("broken/translate.mjs", "export const translate = ;\n")
    rewrite("champollion.config.json", pairs_config({"en:es": {"methodPlugin": "./broken"}}))
    found = reports()
    # How a plugin fails to load is worded by each runtime; what failed is the same.
    assert found["node"]["error"]["kind"] == found["python"]["error"]["kind"] == "method"
    assert found["python"]["error"]["message"].startswith("pair en:es: broken (<project>/broken) cannot start: ")

    rewrite("champollion.config.json", good)
    for side, (status, stdout, _) in both(projects, "--json").items():
        assert status == 0 and json.loads(stdout)["error"] is None, side


@needs_node
def test_a_pair_key_naming_no_locale_says_which_half_is_no_locale_code_on_both_sides(tmp_path: Path):
    """Before: "en:xx-!!" was "not a language pair", with the advice to write "src:tgt" that it already is."""
    projects = twins(tmp_path, pairs_config({"en:xx-!!": {"methodPlugin": "reverse"}}), {"locales/en.json": {}})
    runs = both(projects)
    assert runs["node"] == runs["python"]
    status, _, err = runs["python"]
    assert status == 1 and err == (
        "<prog>: <project>/champollion.config.json is not a valid champollion config\nerror: "
        '<project>/champollion.config.json $.pairs["en:xx-!!"]: "xx-!!" is not a locale code\n'
        '    fix: use a locale code such as "en", "es" or "pt-BR"\n')


@needs_node
def test_a_number_too_large_to_hold_is_said_as_written_on_both_sides(tmp_path: Path):
    """Before: a batchSize of 5,000 digits was "got the number Infinity", on both sides."""
    config = json.dumps(pairs_config({"en:es": {"methodPlugin": "reverse", "batchSize": 7}}))
    projects = twins(tmp_path, config.replace('"batchSize": 7', '"batchSize": ' + "9" * 5000), {"locales/en.json": {}})
    runs = both(projects)
    assert runs["node"] == runs["python"]
    status, _, err = runs["python"]
    assert status == 1 and err.endswith('$.pairs["en:es"].batchSize: expected an integer, got a number too large to '
                                        "hold: 99999999999999999999… (5,000 digits)\n"
                                        '    fix: give "batchSize" as an integer, e.g. "batchSize": 1\n')


@needs_node
def test_a_config_with_errors_says_its_warnings_with_them_every_problem_in_one_go_on_both_sides(tmp_path: Path):
    """Before, Python said the errors alone: "no pairs" came only once an inputLocale was given."""
    def problem(severity: str, path: str, message: str, fix: str) -> str:
        return f"{severity}: <project>/champollion.config.json {path}: {message}\n    fix: {fix}"

    projects = twins(tmp_path, {"version": 3, "pairs": {}}, {"locales/en.json": {}})
    runs = both(projects, "--json")
    assert runs["node"] == runs["python"]
    status, out, _ = runs["python"]
    assert status == 1 and json.loads(out)["error"]["message"] == "\n".join([
        "<project>/champollion.config.json is not a valid champollion config",
        problem("error", "$.inputLocale", "no inputLocale, and no pair key to take it from",
                'add "inputLocale": the locale of your source strings, e.g. "en"'),
        problem("warning", "$.pairs", "no pairs: nothing will be translated",
                'add one, e.g. "en:es": {"methodPlugin": "my-method"}')])
    for project in projects.values():
        project.write("champollion.config.json", {"version": 3, "inputLocal": "en", "localesDir": 5,
                                                  "pairs": {"en:es": {"methodPlugin": "reverse"}}})
    runs = both(projects)
    assert runs["node"] == runs["python"]
    assert runs["python"] == (1, "", "\n".join([
        "<prog>: <project>/champollion.config.json is not a valid champollion config",
        problem("error", "$.localesDir", "expected a string, got the number 5",
                'give "localesDir" as a string, in double quotes'),
        problem("warning", "$.inputLocal", 'unknown field "inputLocal"', 'did you mean "inputLocale"? Known fields: '
                "version, inputLocale, pairs, localesDir, $schema")]) + "\n")


def _with_mark(encoding: str, mark: str) -> str:
    return f"{encoding} text, not UTF-8 (it starts with the byte-order mark {mark})"


def _without_mark(encoding: str, start: str) -> str:
    return f"{encoding} text, not UTF-8 (it starts with {start}, ASCII in {encoding} without a byte-order mark)"


@needs_node
@pytest.mark.parametrize(("encoded", "said"), [
    pytest.param({"a.json": b"\xff\xfe" + '{"a": "Oné"}'.encode("utf-16-le"),
                  "b.json": b"\xfe\xff" + '{"b": "Two"}'.encode("utf-16-be"),
                  "c.json": '{"c": "Three"}'.encode("utf-32")},  # (with its byte-order mark, FF FE 00 00)
                 {"a.json": ("UTF-16", _with_mark("UTF-16", "FF FE")),
                  "b.json": ("UTF-16", _with_mark("UTF-16", "FE FF")),
                  "c.json": ("UTF-32", _with_mark("UTF-32", "FF FE 00 00"))}, id="with a byte-order mark"),
    # JSON text starts with ASCII, so which of the first four bytes are NUL says it (RFC 4627, section 3)
    pytest.param({"a.json": '{"a": "Oné"}'.encode("utf-16-le"), "b.json": ' {"b": "Two"}'.encode("utf-16-be"),
                  "c.json": '{"c": "Three"}'.encode("utf-32-le")},
                 {"a.json": ("UTF-16LE", _without_mark("UTF-16LE", "7B 00 22 00")),
                  "b.json": ("UTF-16BE", _without_mark("UTF-16BE", "00 20 00 7B")),
                  "c.json": ("UTF-32LE", _without_mark("UTF-32LE", "7B 00 00 00"))}, id="without one"),
])
def test_a_utf16_or_utf32_locale_file_is_named_as_such_with_the_command_that_converts_it_on_both_sides(
        tmp_path: Path, encoded: dict[str, bytes], said: dict[str, tuple[str, str]]):
    """Before: "not valid UTF-8: byte 0xff at line 1 (offset 0); save the file as UTF-8" (or, without a byte-order
    mark, a syntax error at the first NUL byte), with nothing said of what the file is (saved as "Unicode" by an
    editor) nor how to convert it."""
    import shutil
    import subprocess

    projects = twins(tmp_path, pairs_config({"en:es": {"methodPlugin": "reverse"}}), {"locales/en/d.json": {}})
    for project in projects.values():
        for name, raw in encoded.items():
            (project.root / "locales" / "en" / name).write_bytes(raw)
    runs = both(projects, "--json")
    assert runs["node"] == runs["python"]
    status, out, _ = runs["python"]
    assert status == 1
    errors = {f["file"]: f["error"] for f in json.loads(out)["locales"][0]["files"] if f["error"]}

    def refused(name: str, encoding: str, what: str) -> str:
        path = f"<project>/locales/en/{name}"
        return (f"{path}: {what}; save it as UTF-8, e.g. iconv -f {encoding} -t UTF-8 {path} > {path}.utf8 && "
                f"mv {path}.utf8 {path}")

    assert errors == {f"es/{name}": refused(name, *encoding_and_words) for name, encoding_and_words in said.items()}
    if shutil.which("iconv") is None:
        return
    project = projects["python"]
    for error in errors.values():  # the fix, as said, makes the files readable
        command = error.split("e.g. ", 1)[1].replace("<project>", str(project.root))
        subprocess.run(command, shell=True, check=True)  # (the command the error prints)
    done = run_locales("python", project)
    assert (done.returncode, done.stderr) == (0, "")
    assert project.json("locales/es/a.json") == {"a": "spa:énO"}


@needs_node
def test_keys_file_names_and_fields_holding_esc_or_u202e_are_shown_escaped_and_json_escapes_them_on_both_sides(
        tmp_path: Path):
    """Before, a key, a file's name or a config's unknown field reached the terminal raw: ESC acted on it, U+202E
    turned around the rest of the line; and --json wrote U+202E as it is."""
    odd = "x\x1b[2J\u202e"
    config = pairs_config({"en:es": {"methodPlugin": "reverse"}}, **{odd: 1})
    projects = twins(tmp_path, config, {f"locales/en/{odd}.json": {odd: "Hi"}})
    shown = "x\\x1b[2J\\u202e"
    for argv in (("--dry-run",), ()):
        runs = both(projects, *argv)
        assert runs["node"] == runs["python"]
        status, out, err = runs["python"]
        assert status == 0
        assert f"  es/{shown}.json  " in out and (f"+ {shown} (new)" in out if argv else True)
        assert f'unknown field "{shown}"' in err
        assert not {"\x1b", "\u202e"} & set(out + err)
    for project in projects.values():
        project.write(f"locales/es/{odd}.json", {odd: "Hola"})
    runs = both(projects, "--json", "--force", "--dry-run")
    assert runs["node"] == runs["python"]
    status, out, err = runs["python"]
    assert status == 0 and "\\u001b[2J\\u202e" in out and not {"\x1b", "\u202e"} & set(out + err)
    file = json.loads(out)["locales"][0]["files"][0]
    assert file["file"] == f"es/{odd}.json" and file["due"] == [{"key": odd, "reason": "forced"}]
    runs = both(projects, "--json", "--locale", odd)  # (a refusal: its JSON report, and its line on stderr)
    assert runs["node"] == runs["python"]
    status, out, err = runs["python"]
    assert status == 1 and f"--locale {shown}: not a target locale" in err and "\\u001b[2J\\u202e" in out
    assert not {"\x1b", "\u202e"} & set(out + err)


@needs_node
def test_a_path_through_dotdot_is_said_resolved_on_both_sides(tmp_path: Path):
    """Before, Python said "<project>/../x" (and a --config of "sub/.." as written) where Node said the path meant."""
    import subprocess

    from champollion_project import PROGS, locales_command

    projects = twins(tmp_path, pairs_config({"en:es": {"methodPlugin": "reverse"}}, localesDir="../x"),
                     {"locales/en.json": {}})
    runs = both(projects, "--json")
    assert runs["node"] == runs["python"]
    status, out, err = runs["python"]
    said = (f'localesDir {tmp_path}/x does not exist: set "localesDir" in <project>/champollion.config.json to the '
            "directory that holds the locale files (en/*.json or en.json), relative to the config")
    assert (status, json.loads(out)["error"]["message"], err) == (1, said, f"<prog>: {said}\n")
    for side, project in projects.items():  # the config named through a directory and back
        (project.root / "sub").mkdir()
        command = locales_command(side, project)
        command[command.index("--config") + 1] = str(project.root / "sub" / "..")
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        assert (done.returncode, done.stderr) == (1, f"{PROGS[side]}: {said}\n".replace("<project>", str(project.root)))
    for project in projects.values():
        project.write("champollion.config.json", pairs_config({"en:es": {"methodPlugin": "../nowhere"}}))
    runs = both(projects)
    assert runs["node"] == runs["python"] == (1, "", f'<prog>: pair "en:es": methodPlugin "../nowhere": {tmp_path}/'
                                                     "nowhere: no such directory\n")


@needs_node
def test_a_pair_whose_plugin_is_invalid_is_refused_naming_the_pair_on_both_sides(tmp_path: Path):
    """Before, Node said "cannot load method plugin …", with no word of the pair, where Python named it."""
    projects = twins(tmp_path, pairs_config({"en:es": {"methodPlugin": "./broken"}}), {
        "locales/en.json": {}, "broken/method.json": {"name": "Broken", "entry_point": "pipeline:M",
                                                      "supported_pairs": [["eng", "spa"]], "dependencies": []}})
    runs = both(projects, "--json")
    assert runs["node"] == runs["python"]
    status, out, err = runs["python"]
    said = ("methodPlugin of en:es: <project>/broken is not a valid plugin\nerror: <project>/broken/method.json "
            '$.supported_pairs[0]: expected a string, got an array\n    fix: write the pair as "source>target" with '
            'ISO 639 codes, e.g. "eng>spa"')
    assert (status, json.loads(out)["error"], err) == (1, {"kind": "config", "message": said}, f"<prog>: {said}\n")


@needs_node
def test_both_sides_help_shows_the_same_examples(tmp_path: Path):
    """`mt-eval-locales --help` had no examples where `mt-eval locales --help` has four."""
    project = make_project(tmp_path, pairs_config({"en>es": "upper"}))
    shown = {side: run_locales(side, project, "--help") for side in ("node", "python")}
    examples = {side: done.stdout.split("\nexamples:\n")[1].split("\n\n")[0] for side, done in shown.items()
                if "\nexamples:\n" in done.stdout}
    assert examples.get("node") == examples["python"].replace("mt-eval locales", "npx mt-eval-locales")
