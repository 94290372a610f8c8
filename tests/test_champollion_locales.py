"""``mt-eval locales`` on test projects: what is sent, what is written, what the lock file keeps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from champollion_project import both, make_project, needs_node, pairs_config, tree, twins
from mt_eval.cli import main

SOURCE = """{
  "greeting": "Hello {{name}}!",
  "nav": {"home": "Home", "about": "About <b>us</b>"},
  "cart_one": "You have {{count}} item",
  "cart_other": "You have {{count}} items",
  "404": "Page not found",
  "total": "%s of %d",
  "version": 2,
  "only": "{{x}}"
}
"""


@pytest.fixture
def run(monkeypatch, capsys):
    def run(project, *argv: str) -> tuple[int, str, str]:
        monkeypatch.setenv("CHAMPOLLION_FIXTURE_LOG", str(project.log))
        status = main(["locales", "--config", str(project.root), "--quiet", *argv])
        out, err = capsys.readouterr()
        return status, out, err

    return run


def test_first_run_translates_second_sends_nothing_one_change_sends_one(tmp_path: Path, run):
    project = make_project(tmp_path, pairs_config({"en:es": {"methodPlugin": "rot13"}}),
                           {"locales/en/common.json": SOURCE})
    status, out, _ = run(project, "--json")
    assert status == 0
    report = json.loads(out)
    assert report["locales"][0]["sent"] == 7  # cart_many and cart_other share one source text
    assert report["locales"][0]["files"][0]["copied"] == ["only"]
    assert project.read("locales/es/common.json") == "\n".join([
        "{",
        '  "greeting": "spa: Uryyb {{name}}!",',
        '  "nav": {',
        '    "home": "spa: Ubzr",',
        '    "about": "spa: Nobhg <b>hf</b>"',
        "  },",
        '  "cart_one": "spa: Lbh unir {{count}} vgrz",',
        '  "cart_many": "spa: Lbh unir {{count}} vgrzf",',
        '  "cart_other": "spa: Lbh unir {{count}} vgrzf",',
        '  "404": "spa: Cntr abg sbhaq",',
        '  "total": "spa: %s bs %d",',
        '  "version": 2,',
        '  "only": "{{x}}"',
        "}",
        ""])
    assert len(project.calls()) == 1

    status, out, _ = run(project, "--json")
    assert status == 0
    assert json.loads(out)["locales"][0]["sent"] == 0
    assert json.loads(out)["locales"][0]["files"][0]["upToDate"] == 9
    assert len(project.calls()) == 1, "nothing was sent"

    before = project.read("locales/es/common.json")
    project.write("locales/en/common.json", SOURCE.replace('"Home"', '"Start"'))
    status, out, _ = run(project)
    assert status == 0
    assert project.calls()[-1]["sources"] == ["Start"]
    assert project.read("locales/es/common.json") == before.replace("spa: Ubzr", "spa: Fgneg")
    assert "es/common.json  1 translated, 8 up to date" in out


def test_a_lost_or_repeated_placeholder_fails_the_key_and_keeps_the_previous_value(tmp_path: Path, run):
    project = make_project(tmp_path, pairs_config({"en:es": {"methodPlugin": "rot13"}}),
                           {"locales/en/a.json": {"a": "Hi {{name}}", "b": "Bye {{name}}", "c": "Ok"}})
    assert run(project)[0] == 0
    project.write("locales/en/a.json", {"a": "Hi {{name}} #drop", "b": "Bye {{name}} #double", "c": "Ok #fail",
                                        "d": "New #fail"})
    status, out, _ = run(project)
    assert status == 1
    assert 'failed a: the translation "spa: Uv  #qebc" lost placeholder {{name}}; kept the previous value' in out
    assert "failed b: the translation \"spa: Olr ⟦0⟧⟦0⟧ #qbhoyr\" repeated placeholder {{name}} (2 times); kept" in out
    assert "failed c: asked to fail; kept the previous value" in out
    assert "failed d: asked to fail; left out of the file" in out
    assert project.json("locales/es/a.json") == {"a": "spa: Uv {{name}}", "b": "spa: Olr {{name}}", "c": "spa: Bx"}
    status, out, _ = run(project, "--json", "--dry-run")
    due = json.loads(out)["locales"][0]["files"][0]["due"]
    assert [(d["key"], d["reason"]) for d in due] == [("a", "source changed"), ("b", "source changed"),
                                                       ("c", "source changed"), ("d", "new")]


def test_dry_run_adopted_values_locale_filter_and_force(tmp_path: Path, run):
    project = make_project(tmp_path, pairs_config({"en:es": {"methodPlugin": "rot13"},
                                                   "en:fr": {"methodPlugin": "reverse"}}),
                           {"locales/en/a.json": {"a": "One", "b": "Two"},
                            "locales/es/a.json": {"a": "Uno (by hand)", "gone": "x"}})
    status, out, _ = run(project, "--dry-run")
    assert status == 0
    assert out == "\n".join([
        "es (en:es) via champollion-rot13 (eng>spa)",
        "  es/a.json  1 to translate, 1 adopted, 1 to remove",
        "    + b (new)",
        "    - gone",
        "  would send 1 string in 1 call",
        "fr (en:fr) via reverse (eng>fra)",
        "  fr/a.json  2 to translate",
        "    + a (new)",
        "    + b (new)",
        "  would send 2 strings in 1 call",
        "dry run: nothing was sent or written",
        ""])
    assert not (tmp_path / "locales" / "fr").exists()
    assert not (tmp_path / "locales" / ".champollion-lock.json").exists()
    assert project.calls() == []
    run(project, "--locale", "es")
    assert project.json("locales/es/a.json") == {"a": "Uno (by hand)", "b": "spa: Gjb"}
    assert not (tmp_path / "locales" / "fr").exists()
    status, _, err = run(project, "--locale", "es", "--force")
    assert status == 0, err
    assert project.json("locales/es/a.json") == {"a": "spa: Bar", "b": "spa: Gjb"}
    status, _, err = run(project, "--locale", "de")
    assert status == 1
    assert "--locale de: not a target locale" in err


def test_a_new_model_sends_again_and_removed_keys_leave_target_and_lock(tmp_path: Path, run):
    project = make_project(tmp_path, pairs_config({"en:es": {"methodPlugin": "rot13"}}),
                           {"locales/en.json": {"a": "One", "b": "Two"}})
    run(project)
    assert project.json("locales/es.json") == {"a": "spa: Bar", "b": "spa: Gjb"}
    project.write("champollion.config.json", pairs_config({"en:es": {"methodPlugin": "rot13", "model": "other"}}))
    project.write("locales/en.json", {"a": "One"})
    _, out, _ = run(project, "--json")
    file = json.loads(out)["locales"][0]["files"][0]
    assert file["due"] == [{"key": "a", "reason": "method changed"}]
    assert file["removed"] == ["b"]
    assert project.json("locales/es.json") == {"a": "spa: Bar"}
    assert list(project.json("locales/.champollion-lock.json")["files"]["es.json"]) == ["a"]


def test_nested_folders_plurals_for_the_target_language_and_lock_entries(tmp_path: Path, run):
    config = pairs_config({"en:ru": {"methodPlugin": "rot13"}, "en:ja": {"methodPlugin": "rot13"}})
    project = make_project(tmp_path, config,
                           {"locales/en/admin/users.json": {"n_one": "{{count}} user", "n_other": "{{count}} users"},
                            "locales/en/.hidden/x.json": {"a": "not read"}})
    assert run(project)[0] == 0
    assert list(project.json("locales/ru/admin/users.json")) == ["n_one", "n_few", "n_many", "n_other"]
    assert project.json("locales/ja/admin/users.json") == {"n_other": "jpn: {{count}} hfref"}
    lock = project.json("locales/.champollion-lock.json")
    assert list(lock["files"]) == ["ja/admin/users.json", "ru/admin/users.json"]
    source_hash, method = lock["files"]["ru/admin/users.json"]["n_few"].split(" ")
    assert len(source_hash) == 16 and len(method) == 16
    # Deleting the source file leaves its target files alone, and their lock entries while they are there (they say
    # what the values translate); deleting a target file too forgets its entries.
    (tmp_path / "locales" / "en" / "admin" / "users.json").unlink()
    project.write("locales/en/common.json", {"a": "A"})
    run(project)
    assert list(project.json("locales/.champollion-lock.json")["files"]) == [
        "ja/admin/users.json", "ja/common.json", "ru/admin/users.json", "ru/common.json"]
    (tmp_path / "locales" / "ru" / "admin" / "users.json").unlink()
    run(project)
    assert list(project.json("locales/.champollion-lock.json")["files"]) == [
        "ja/admin/users.json", "ja/common.json", "ru/common.json"]


def test_a_broken_locale_file_is_reported_and_left_alone(tmp_path: Path, run):
    project = make_project(tmp_path, pairs_config({"en:es": {"methodPlugin": "rot13"}}),
                           {"locales/en/a.json": '{"a": "One",}', "locales/en/b.json": {"b": "Two"},
                            "locales/es/b.json": "not json"})
    status, out, _ = run(project)
    assert status == 1
    assert "es/a.json  error: " in out and "invalid JSON" in out
    assert "es/b.json  error: " in out
    assert project.read("locales/es/b.json") == "not json"


def test_config_and_plugin_errors_stop_before_anything_runs(tmp_path: Path, run):
    project = make_project(tmp_path, pairs_config({"en:es": {"methodPlugin": "rot-13"}}),
                           {"locales/en.json": {"a": "A"}})
    status, _, err = run(project)
    assert status == 1
    assert err.startswith('mt-eval locales: pair "en:es": methodPlugin "rot-13" names no plugin in ')
    assert ('Available plugins:\n  - "Reverse (bridge reference method)" (method_id reverse) in '
            ".champollion/methods/reverse\n") in err
    assert "(method_id champollion-rot13) in .champollion/methods/rot13" in err
    assert not (tmp_path / "locales" / "es.json").exists()

    project.write("champollion.config.json", '{"version": 3, "inputLocale": "en", "pairs": {"en:es": '
                                             '{"methodPlugin": "rot13", "temperature": "warm"}}, "localDir": "x"}')
    status, _, err = run(project)
    assert status == 1
    assert '$.pairs["en:es"].temperature: expected a number, got the string "warm"' in err
    project.write("champollion.config.json", pairs_config({"en:es": {"methodPlugin": "rot13"}}, localDir="x"))
    status, _, err = run(project)
    assert status == 0
    assert 'warning: ' in err and '$.localDir: unknown field "localDir"' in err and 'did you mean "localesDir"?' in err


def test_a_raising_call_fails_only_its_key_and_a_plugin_that_cannot_start_stops_at_once(tmp_path: Path, run):
    project = make_project(tmp_path, pairs_config({"en:es": {"methodPlugin": "reverse", "batchSize": 8}}),
                           {"locales/en/a.json": {"one": "One", "bad": "!raise now", "two": "Two"}})
    status, out, _ = run(project)
    assert status == 1  # a key failed
    assert project.json("locales/es/a.json") == {"one": "spa:enO", "two": "spa:owT"}  # the batch was split
    assert "bad: the method failed: RuntimeError: asked to raise; left out of the file" in out
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "method.json").write_text('{"name": "Broken", "node_entry": "translate.mjs", "dependencies": []}')
    (broken / "translate.mjs").write_text("export const translate = ;\n")
    project.write("champollion.config.json", pairs_config({"en:es": {"methodPlugin": "./broken"}}))
    status, out, err = run(project, "--force")
    assert status == 1 and out == ""
    assert err.startswith(f"mt-eval locales: pair en:es: broken ({broken}) cannot start: guest broken failed to "
                          "start: cannot load the method: translate.mjs:1: SyntaxError: Unexpected token ';'")
    assert err.count("cannot start") == 1


def test_a_read_only_target_keeps_its_bytes_mode_and_lock_entries_even_in_a_dry_run(tmp_path: Path, run):
    """Before, a read-only target was replaced (keeping its mode 0444), and its new lock entries recorded."""
    project = make_project(tmp_path, pairs_config({"en:es": {"methodPlugin": "reverse"}}),
                           {"locales/en.json": {"a": "One"}})
    assert run(project)[0] == 0
    target, lock = project.root / "locales" / "es.json", project.json("locales/.champollion-lock.json")
    before = target.read_bytes()
    target.chmod(0o444)
    project.write("locales/en.json", {"a": "One", "b": "Two"})
    refused = (f"{target}: cannot write it: the file is read-only (mode 0444), so it is left as it is; make it "
               f'writable (chmod u+w {target}) to have it written, or remove "en:es" from the pairs of '
               f"{project.root / 'champollion.config.json'}")
    for dry_run in (("--dry-run",), ()):
        status, out, _ = run(project, "--json", *dry_run)
        locale = json.loads(out)["locales"][0]
        assert (status, locale["sent"], locale["files"][0]["error"]) == (1, 0, refused), dry_run
    assert target.read_bytes() == before and target.stat().st_mode & 0o777 == 0o444
    assert project.json("locales/.champollion-lock.json") == lock


def test_a_file_read_only_to_this_user_is_refused_one_on_a_read_only_file_system_left_to_the_write(tmp_path: Path,
                                                                                                    monkeypatch):
    from mt_eval.champollion import files

    target = tmp_path / "es.json"
    target.write_text("{}\n")
    target.chmod(0o644)
    assert files.read_only(target) is None and files.read_only(tmp_path) is None
    assert files.read_only(tmp_path / "missing.json") is None
    monkeypatch.setattr(files.os, "access", lambda path, mode: False)  # (as for another user: root may write it)
    assert str(files.read_only(target, "remove it")) == (
        f"{target}: cannot write it: the file is read-only to this user (mode 0644), so it is left as it is; make it "
        f"writable (chmod u+w {target}) to have it written, or remove it")
    monkeypatch.setattr(files, "_on_read_only_file_system", lambda path: True)
    assert files.read_only(target) is None  # (what the write says of a read-only file system is said instead)


@needs_node
def test_failed_keys_of_a_new_file_are_said_missing_from_it_and_tried_again_next_run_on_both_sides(tmp_path: Path):
    """Before: "1 problem: failed keys kept their previous values", of keys left out of a file that had none."""
    projects = twins(tmp_path, pairs_config({"en:es": {"methodPlugin": "rot13"}}),
                     {"locales/en/a.json": {"a": "One", "b": "Two #fail"}}, plugins=("rot13",))
    missing = "failed keys with no previous value are missing from their files (the next run tries them again)"
    runs = both(projects)
    assert runs["node"] == runs["python"]
    status, out, _ = runs["python"]
    assert status == 1 and out.endswith(f"\n1 problem: {missing}\n")
    assert "    failed b: asked to fail; left out of the file\n" in out
    assert projects["python"].json("locales/es/a.json") == {"a": "spa: Bar"}
    for project in projects.values():  # the failed key is sent again, though nothing changed
        project.log.unlink()
    runs = both(projects)
    assert runs["node"] == runs["python"]
    assert runs["python"][1].endswith(f"\n1 problem: {missing}\n")
    assert [call["sources"] for call in projects["python"].calls()] == [["Two #fail"]]
    assert projects["node"].calls() == projects["python"].calls()
    for project in projects.values():
        project.write("locales/en/a.json", {"a": "One #fail", "b": "Two #fail"})
    runs = both(projects)
    assert runs["node"] == runs["python"]
    assert runs["python"][1].endswith(f"\n2 problems: failed keys kept their previous values, and {missing}\n")


@needs_node
def test_vue_i18n_links_polyglot_arguments_and_markdown_link_targets_come_back_as_they_were(tmp_path: Path):
    source = {"signed": "Signed in as @:user.name (@.lower:roles.admin)", "hello": "Hello %{name}, you owe ${amount}",
              "docs": "Read the [user guide](/docs/user-guide) or ![logo](img/logo.png)"}
    projects = twins(tmp_path, pairs_config({"en:es": {"methodPlugin": "rot13"}}), {"locales/en/a.json": source},
                     plugins=("rot13",))
    runs = both(projects)
    assert runs["node"] == runs["python"]
    assert runs["python"][0] == 0, runs["python"]
    assert tree(projects["node"]) == tree(projects["python"])
    assert projects["python"].json("locales/es/a.json") == {
        "signed": "spa: Fvtarq va nf @:user.name (@.lower:roles.admin)",
        "hello": "spa: Uryyb %{name}, lbh bjr ${amount}",
        "docs": "spa: Ernq gur [hfre thvqr](/docs/user-guide) be ![ybtb](img/logo.png)"}


@needs_node
def test_a_pairs_timeout_s_is_its_methods_timeout_and_changing_it_sends_nothing_again(tmp_path: Path):
    """Before, every pair's method had the RunConfig's 120 s a string, whatever the pair set."""
    def run(timeout_s: float | None) -> str:
        pair = {"methodPlugin": "reverse"} | ({} if timeout_s is None else {"timeoutS": timeout_s})
        for project in projects.values():
            project.write("champollion.config.json", pairs_config({"en:es": pair}))
        runs = both(projects)
        assert runs["node"] == runs["python"]
        return f"{runs['python'][0]}\n{runs['python'][1]}"

    projects = twins(tmp_path, pairs_config({}), {"locales/en/a.json": {"slow": "!sleep 600 slow", "fast": "Fine"}})
    head = "es (en:es) via reverse (eng>spa)\n  es/a.json  "
    assert run(0.2) == (f"1\n{head}1 translated, 1 failed\n    failed slow: timed out after 0.2 s (0.2 s per entry); "
                        "left out of the file\n  sent 2 strings in 1 call\n1 problem: failed keys with no previous "
                        "value are missing from their files (the next run tries them again)\n")
    assert run(3) == f"0\n{head}1 translated, 1 up to date\n  sent 1 string in 1 call\n"  # the slow one, in time
    assert projects["node"].json("locales/es/a.json") == {"slow": "spa:wols 006 peels!", "fast": "spa:eniF"}
    for timeout_s in (0.2, None):  # a timeout changes no translation: nothing is sent again
        assert run(timeout_s) == f"0\n{head}2 up to date\n  sent 0 strings in 0 calls\n"


@needs_node
def test_a_file_gaining_its_first_plural_sends_its_strings_read_as_icu_again_and_losing_it_too(tmp_path: Path):
    """Before, "Ouvrir l'{file}", translated while the file had no plural, stayed once it had one (ICU shows it
    "Ouvrir l{file}"): the lock knew the source text, not how it was read. A value written by hand is kept."""
    strings = {"its": "It''s {name}", "open": "Open {file}", "bye": "Bye {name}"}
    plural = {"files": "{n, plural, one {# file} other {# files}}"}
    projects = twins(tmp_path, pairs_config({"en:fr": {"methodPlugin": "french"}}),
                     {"locales/en/app.json": strings, "locales/fr/app.json": {"bye": "Au revoir {name}"}},
                     plugins=("french",))

    def run(source: dict[str, str] | None, *argv: str) -> str:
        for project in projects.values():
            if source is not None:
                project.write("locales/en/app.json", source)
        runs = both(projects, *argv)
        assert runs["node"] == runs["python"] and runs["python"][0] == 0, runs
        return runs["python"][1]

    head = "fr (en:fr) via champollion-french (eng>fra)\n  fr/app.json  "
    assert run(None) == f"{head}2 translated, 1 adopted\n  sent 2 strings in 1 call\n"
    assert projects["python"].json("locales/fr/app.json")["open"] == "Ouvrir l'{file}"
    assert run(plural | strings, "--dry-run") == (
        f"{head}3 to translate, 1 up to date\n    + files (new)\n    ~ its (now read as ICU)\n"
        "    ~ open (now read as ICU)\n  would send 3 strings in 1 call\ndry run: nothing was sent or written\n")
    assert [file["due"] for file in json.loads(run(None, "--dry-run", "--json"))["locales"][0]["files"]] == [[
        {"key": "files", "reason": "new"}, {"key": "its", "reason": "now read as ICU"},
        {"key": "open", "reason": "now read as ICU"}]]
    assert run(None) == f"{head}3 translated, 1 up to date\n  sent 3 strings in 1 call\n"
    assert projects["python"].calls()[-1]["sources"] == ["⟦0⟧⟦1⟧ file⟦2⟧⟦3⟧ files⟦4⟧", "It's ⟦0⟧", "Open ⟦0⟧"]
    assert projects["python"].json("locales/fr/app.json") == {
        "files": "{n, plural, one {# fichier} other {# fichiers}}", "its": "C''est {name}",
        "open": "Ouvrir l''{file}", "bye": "Au revoir {name}"}
    assert run(None) == f"{head}4 up to date\n  sent 0 strings in 0 calls\n"
    assert run(strings, "--dry-run") == (
        f"{head}2 to translate, 1 up to date, 1 to remove\n    ~ its (no longer read as ICU)\n"
        "    ~ open (no longer read as ICU)\n    - files\n  would send 2 strings in 1 call\n"
        "dry run: nothing was sent or written\n")
    assert run(None) == f"{head}2 translated, 1 up to date, 1 removed\n  sent 2 strings in 1 call\n"
    assert projects["python"].json("locales/fr/app.json") == {
        "its": "C''est {name}", "open": "Ouvrir l'{file}", "bye": "Au revoir {name}"}
    assert tree(projects["node"]) == tree(projects["python"])


@needs_node
def test_a_target_file_without_a_source_file_is_named_even_when_the_lock_file_never_knew_it(tmp_path: Path):
    """Before: a target file whose source file is gone was named only while the lock file had entries of it, so one
    the lock never knew (written by hand, or its lock file deleted) was left alone without a word."""
    projects = twins(tmp_path, pairs_config({"en:es": {"methodPlugin": "rot13"}}),
                     {"locales/en/a.json": {"a": "Hello"}, "locales/es/b.json": {"b": "Adiós"},
                      "locales/es/old/c.json": {"c": "Viejo"}, "locales/es/.hidden.json": {}}, plugins=("rot13",))
    runs = both(projects)
    assert runs["node"] == runs["python"] and runs["python"][0] == 0
    for name in ("es/b.json", "es/old/c.json"):
        assert (f"  {name}  left alone: its source file is gone (delete it if it is no longer used; its lock "
                "entries go with it)\n") in runs["python"][1]
    reports = both(projects, "--json")
    assert reports["node"] == reports["python"]
    assert json.loads(reports["python"][1])["locales"][0]["orphaned"] == ["es/b.json", "es/old/c.json"]
    assert projects["python"].json("locales/es/b.json") == {"b": "Adiós"}
    assert tree(projects["node"]) == tree(projects["python"])
