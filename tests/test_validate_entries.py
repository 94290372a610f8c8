"""`mt-eval validate` checks every entry point a plugin declares by starting it: translate.js through the Node
guest, a command through the bridge handshake, and both entries of a two-runtime plugin against each other."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from mt_eval.validate import validate_plugin

REVERSE = Path(__file__).parent / "fixtures" / "reverse"
GOOD_JS = ("export async function translate(entries) {\n"
           "  return entries.map((e) => ({ id: e.id, predicted: e.source }));\n}\n")


def node_plugin(tmp_path: Path, code: str, *, card: str | None = None, package: dict | None = None) -> Path:
    directory = tmp_path / "node-plugin"
    directory.mkdir()
    (directory / "method.json").write_text(json.dumps({"name": "N", "node_entry": "translate.js", "dependencies": [],
                                                       "dependency_class": "S"}))
    card_code = f"export function methodCard() {{ return {card}; }}\n" if card else ""
    (directory / "translate.js").write_text(code + card_code)
    if package is not None:
        (directory / "package.json").write_text(json.dumps(package))
    return directory


def command_plugin(tmp_path: Path, command: list[str]) -> Path:
    directory = tmp_path / "command-plugin"
    directory.mkdir()
    (directory / "method.json").write_text(json.dumps({"name": "C", "command": command, "dependencies": [],
                                                       "dependency_class": "S"}))
    return directory


def errors(report) -> list[tuple[str, str]]:
    return [(p.file, p.message) for p in report.errors]


def test_a_syntax_error_in_translate_js_is_reported_with_file_and_line(tmp_path: Path):
    broken = "export async function translate(entries) {\n  return entries.map((e) => ({ id: e.id });\n}\n"
    directory = node_plugin(tmp_path, broken)
    report = validate_plugin(directory, scan=False)
    assert errors(report) == [(f"{directory / 'translate.js'}:2", "SyntaxError: missing ) after argument list")]
    assert report.errors[0].hint == "fix the syntax of translate.js at that line"
    assert validate_plugin(directory, run_code=False, scan=False).passed()  # --no-import runs nothing
    # with the static scan, the same line is reported once, in Node's words
    assert errors(validate_plugin(directory)) == [(f"{directory / 'translate.js'}:2",
                                                   "SyntaxError: missing ) after argument list")]


def test_a_commonjs_syntax_error_is_located_too(tmp_path: Path):
    directory = node_plugin(tmp_path, "const x = ;\nmodule.exports = { translate: async () => [] };\n",
                            package={"type": "commonjs"})
    assert errors(validate_plugin(directory, scan=False)) == [(f"{directory / 'translate.js'}:1",
                                                               "SyntaxError: Unexpected token ';'")]


def test_a_syntax_error_thrown_by_code_at_load_is_not_called_the_files_syntax(tmp_path: Path):
    """JSON.parse of a bad file at load time was "SyntaxError: …" with the fix "fix the syntax of translate.js",
    which parses."""
    directory = node_plugin(tmp_path, "const settings = JSON.parse('{\"word\": ');\n" + GOOD_JS)
    [problem] = validate_plugin(directory, scan=False).errors
    assert problem.file == str(directory / "translate.js")
    assert problem.message.startswith("loading translate.js failed: ") and "translate.js:1: SyntaxError: " in \
        problem.message
    assert problem.hint == "translate.js threw while it was being loaded; fix the code that runs at load time"


def test_a_missing_translate_export_is_reported_with_the_fix(tmp_path: Path):
    report = validate_plugin(node_plugin(tmp_path, "export function translat(entries) { return []; }\n"))
    [problem] = report.errors
    assert problem.message == "translate.js does not export translate (it exports translat)"
    assert problem.hint == ("write `export async function translate(entries, config) { ... }` in an ES module, or "
                            "`module.exports = { translate }` in a CommonJS one")  # (the guest's own words)


def test_a_default_export_instead_of_translate_is_named_as_the_guest_names_it(tmp_path: Path):
    """Before: validate said only "does not export translate", where the guest (`mt-eval translate`, `run`) says what
    the module exports instead, which is the fix."""
    code = "export default function translate(entries) { return []; }\n"
    [problem] = validate_plugin(node_plugin(tmp_path, code), scan=False).errors
    assert problem.message == ("translate.js does not export translate (its default export is the function "
                               "translate: export it by the name translate)")


def test_a_syntax_error_in_a_module_the_entry_imports_is_reported_at_that_module(tmp_path: Path):
    """Before: `helper.js:3` (the guest's own words) became `translate.js:1: SyntaxError: Cannot use import statement
    outside a module` with the fix "fix the syntax of translate.js at that line", a file whose syntax is right."""
    directory = node_plugin(tmp_path, "import { up } from './helper.js';\n" + GOOD_JS)
    (directory / "helper.js").write_text("export function up(s) {\n  return s.toUpperCase(\n}\n")
    [problem] = validate_plugin(directory, scan=False).errors
    assert (problem.file, problem.message) == (f"{directory / 'helper.js'}:3", "SyntaxError: Unexpected token '}'")
    assert problem.hint == "fix the syntax of helper.js at that line"


def test_a_syntax_error_the_scan_and_node_both_find_is_one_error_at_nodes_line(tmp_path: Path):
    """Before: two errors for one mistake, the scan's "cannot parse, near line 2" (tree-sitter's error starts at the
    unclosed call) and Node's line 3 (where the file stops making sense)."""
    import subprocess

    directory = node_plugin(tmp_path, "import { up } from './helper.js';\n" + GOOD_JS)
    (directory / "helper.js").write_text("export function up(s) {\n  return s.toUpperCase(\n}\n")
    for sandbox in (["--no-sandbox"], [] if shutil.which("bwrap") else ["--no-sandbox"]):
        done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "validate", "--json", *sandbox, str(directory)],
                              capture_output=True, text=True, timeout=180)
        [plugin] = json.loads(done.stdout)["plugins"]
        assert done.returncode == 1
        assert [(p["file"], p["message"]) for p in plugin["problems"]] == [
            (f"{directory / 'helper.js'}:3", "SyntaxError: Unexpected token '}'")], sandbox
        assert plugin["static_scan"]["unscannable"] == ["helper.js:2: JavaScript the scan cannot parse, near line 2"]


def test_an_es_module_read_as_commonjs_gets_the_guests_fix_not_a_syntax_fix(tmp_path: Path):
    """Before: "fix the syntax of translate.js at that line", for a file whose only fault is its package's "type"."""
    directory = node_plugin(tmp_path, GOOD_JS, package={"type": "commonjs"})
    [problem] = validate_plugin(directory, scan=False).errors
    assert problem.file == f"{directory / 'translate.js'}:1"
    assert problem.message == "SyntaxError: Unexpected token 'export'"
    assert problem.hint is not None and problem.hint.startswith(
        "translate.js is an ES module, but Node reads it as CommonJS")
    assert 'add "type": "module" to the package.json' in problem.hint


def test_a_translate_export_that_is_not_a_function_says_what_it_is(tmp_path: Path):
    report = validate_plugin(node_plugin(tmp_path, 'export const translate = "hello";\n'))
    [problem] = report.errors
    assert problem.message == 'translate.js exports translate, but it is not a function: it is "hello"'
    assert "export async function translate(entries, config)" in (problem.hint or "")


def test_a_node_method_card_that_throws_fails_validate_as_a_python_one_does(tmp_path: Path):
    """Before: the guest logged the throw and sent no card, and validate passed the plugin."""
    directory = node_plugin(tmp_path, GOOD_JS, card='(() => { throw new Error("card boom"); })()')
    [problem] = validate_plugin(directory, scan=False).errors
    assert (problem.file, problem.code) == ("translate.js methodCard()", "method-card")
    assert problem.message == "raised Error: card boom (translate.js:4)"
    assert problem.hint == "make methodCard() return an object of card fields"


def test_a_node_method_card_that_is_a_list_fails_validate_as_a_python_one_does(tmp_path: Path):
    [problem] = validate_plugin(node_plugin(tmp_path, GOOD_JS, card="[1]"), scan=False).errors
    assert (problem.file, problem.message, problem.hint) == (
        "translate.js methodCard()", "a method card must be an object, got list", "return or write a JSON object")


def test_a_missing_decide_export_gets_the_guests_own_problem_and_fix(tmp_path: Path):
    """Before: only a missing translate was recognised (with a rewritten fix); decide's was "loading … failed"."""
    directory = node_plugin(tmp_path, GOOD_JS)
    manifest = json.loads((directory / "method.json").read_text())
    (directory / "method.json").write_text(json.dumps({**manifest, "implements": ["decide"]}))
    [problem] = validate_plugin(directory, scan=False).errors
    assert problem.message == "translate.js does not export decide (it exports translate)"
    assert problem.hint == ("write `export async function decide(rows, config) { ... }` in an ES module, or "
                            "`module.exports = { decide }` in a CommonJS one, or, if it only translates, set "
                            '"implements": ["translate"] in method.json')


def test_the_card_a_node_method_reports_is_checked(tmp_path: Path):
    report = validate_plugin(node_plugin(tmp_path, GOOD_JS, card='{ class: "human" }'))
    [problem] = report.errors
    assert problem.file == "the card guest node-plugin sent at initialize"
    assert problem.message.startswith('says "human" but')


def test_a_command_must_complete_the_bridge_handshake(tmp_path: Path):
    silent = command_plugin(tmp_path, [sys.executable, "-c", "import time; time.sleep(30)"])
    report = validate_plugin(silent, start_timeout_s=1)
    [problem] = report.errors
    assert problem.path == "$.command"
    assert "did not complete the bridge handshake" in problem.message and "within 1 s" in problem.message
    assert "mt-eval bridge check --" in (problem.hint or "")
    assert problem.hint.startswith("do not do long work before it answers initialize (bridge/PROTOCOL.md): ")


def test_a_node_entry_still_loading_at_the_timeout_is_told_to_load_less_not_to_read_its_words(tmp_path: Path):
    """Before: "the guest's own words are above" — a module busy at load time has said nothing."""
    busy = node_plugin(tmp_path, "const until = Date.now() + 30000; while (Date.now() < until) {}\n" + GOOD_JS)
    [problem] = validate_plugin(busy, scan=False, start_timeout_s=1).errors
    assert problem.message.startswith("loading translate.js failed: guest ") and "within 1 s" in problem.message
    assert problem.hint == ("do not do long work at load time (the top level of translate.js): load a model on the "
                            "first call; or, if it must, give validate a longer --start-timeout")


def test_a_command_that_speaks_the_bridge_passes(tmp_path: Path):
    served = shutil.copytree(REVERSE, tmp_path / "reverse")
    directory = command_plugin(tmp_path, [sys.executable, "-m", "mt_eval.cli", "serve", str(served)])
    report = validate_plugin(directory)
    assert report.passed(strict=True), [p.render() for p in report.problems]


def reverse_with(tmp_path: Path, file: str, old: str, new: str) -> Path:
    """A copy of the reverse plugin whose ``file`` has ``old`` replaced by ``new``."""
    directory = Path(shutil.copytree(REVERSE, tmp_path / "reverse"))
    path = directory / file
    code = path.read_text()
    assert old in code
    path.write_text(code.replace(old, new, 1))
    return directory


def test_both_entries_translate_the_probes_alike(tmp_path: Path):
    report = validate_plugin(shutil.copytree(REVERSE, tmp_path / "reverse"))
    assert report.passed(strict=True), [p.render() for p in report.problems]


def test_entries_that_differ_are_warned_about(tmp_path: Path):
    directory = reverse_with(tmp_path, "translate.js", "[...source].reverse().join('')",
                             "[...source].reverse().join('').toUpperCase()")
    report = validate_plugin(directory)
    assert report.passed() and not report.passed(strict=True)
    assert len(report.warnings) == 5
    assert report.warnings[0].message == (
        'the Python and Node entries translate "Good morning, my friend." differently: '
        '"spa:.dneirf ym ,gninrom dooG" (pipeline:ReverseMethod) and "spa:.DNEIRF YM ,GNINROM DOOG" (translate.js)')


def test_an_entry_that_declines_a_probe_the_other_translates_is_said_to_decline(tmp_path: Path):
    """An abstention was quoted as "error: None"."""
    directory = reverse_with(tmp_path, "pipeline.py", '            if source.startswith("!fail"):\n',
                             '            if source.startswith("Thank"):\n'
                             '                results.append({"id": entry["id"], "abstained": True, '
                             '"abstain_reason": "not thanks"})\n'
                             '                continue\n'
                             '            if source.startswith("!fail"):\n')
    [warning] = validate_plugin(directory).warnings
    assert warning.message == (
        'the Python and Node entries translate "Thank you very much!" differently: declined (not thanks) '
        '(pipeline:ReverseMethod) and "spa:!hcum yrev uoy knahT" (translate.js)')


def test_entries_that_report_different_method_cards_are_warned_about(tmp_path: Path):
    """Each runtime's card went unchecked: a run card, the leaderboard and champollion described the method by
    whichever entry ran it."""
    directory = reverse_with(tmp_path, "pipeline.py", 'return {"paradigm": "unknown"}',
                             'return {"paradigm": "llm", "tools_used": ["t5"]}')
    report = validate_plugin(directory)
    assert report.passed() and not report.passed(strict=True)
    [warning] = report.warnings
    assert (warning.code, warning.message) == ("parity", (
        "the Python and Node entries report different method cards (pipeline:ReverseMethod / translate.js): "
        'paradigm "llm" / "unknown"; tools_used ["t5"] / []'))
    assert warning.hint.startswith("a plugin with both entries has one card: return the same fields from both")


def test_decision_entries_that_differ_are_warned_about(tmp_path: Path):
    """The probes were translations only: a decision plugin's decide.py and decide.js were never compared."""
    directory = Path(shutil.copytree(REVERSE, tmp_path / "reverse"))
    manifest = json.loads((directory / "method.json").read_text())
    (directory / "method.json").write_text(json.dumps({**manifest, "implements": ["decide"],
                                                       "decide": {"question_types": ["noul"]}}))
    assert validate_plugin(directory).passed(strict=True)
    code = (directory / "pipeline.py").read_text()
    (directory / "pipeline.py").write_text(code.replace("return {option: 1 / len(options) for option in options}",
                                                        'return {"true": 0.9, "false": 0.1}'))
    report = validate_plugin(directory)
    assert report.passed() and not report.passed(strict=True)
    assert len(report.warnings) == 3
    assert report.warnings[0].message == (
        'the Python and Node entries decide "Good morning, my friend." differently: '
        '{"noul": {"probabilities": {"true": 0.9, "false": 0.1}}} (pipeline:ReverseMethod) and '
        '{"noul": {"probabilities": {"true": 0.5, "false": 0.5}}} (translate.js)')


def test_a_python_entry_that_ignores_cancellation_does_not_hang_the_comparison(tmp_path: Path):
    """The Python entry's probe call gets the guest's timeout; one that catches CancelledError and carries on is
    left behind (said so), and validate ends: it used to wait for it for ever."""
    import time

    directory = Path(shutil.copytree(REVERSE, tmp_path / "reverse"))
    code = (directory / "pipeline.py").read_text()
    (directory / "pipeline.py").write_text(code.replace(
        "    async def translate(self, entries, config):\n",
        "    async def translate(self, entries, config):\n"
        "        while True:  # never returns, and swallows every cancellation\n"
        "            try:\n"
        "                await asyncio.sleep(3600)\n"
        "            except asyncio.CancelledError:\n"
        "                pass\n", 1))
    started = time.monotonic()
    report = validate_plugin(directory, timeout_s=1.0)
    assert time.monotonic() - started < 20
    [first, *_] = report.warnings
    assert first.code == "parity", [p.render() for p in report.problems]
    assert "error: timed out after 1 s, and the method did not stop when cancelled" in first.message


def test_a_plugin_that_prints_as_it_is_imported_is_valid_and_the_json_report_stays_json(make_plugin, tmp_path):
    """In the sandbox the print came before the report the host reads, so a working plugin failed with "importing
    the entry point in the sandbox failed (exit 0): " and nothing after it; with --json it broke the JSON."""
    import subprocess

    code = ('print("hello from import")\n\n\nclass Echo:\n    async def translate(self, entries, config):\n'
            '        return [{"id": e["id"], "predicted": e["source"]} for e in entries]\n')
    plugin = make_plugin({"name": "Echo", "entry_point": "pipeline:Echo", "dependency_class": "S",
                          "dependencies": []}, files={"pipeline.py": code})
    for sandbox in (["--no-sandbox"], [] if shutil.which("bwrap") else ["--no-sandbox"]):
        done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "validate", "--json", *sandbox, str(plugin)],
                              capture_output=True, text=True, timeout=180)
        assert json.loads(done.stdout)["ok"] is True, done.stdout + done.stderr
        assert "hello from import" in done.stderr or not sandbox


def test_a_report_whose_reader_went_away_stops_as_other_commands_do_not_as_an_invalid_plugin(make_plugin):
    """Before: ``mt-eval validate DIR… | head -1`` exited 1, the status that says a plugin is invalid (rich's own
    handling of the closed pipe), where every other command stops with 141."""
    import os
    import subprocess

    plugin = make_plugin()
    read, write = os.pipe()
    os.close(read)  # (the reader is gone before anything is written)
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "validate", "--no-import", *[str(plugin)] * 3],
                          stdout=write, stderr=subprocess.PIPE, text=True, timeout=60)
    os.close(write)
    assert done.returncode == 141, done.stderr
    assert done.stderr == ""
