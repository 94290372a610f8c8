"""What a source locale file's values become in the target, the same from ``mt-eval locales`` and the Node
``mt-eval-locales``: numbers copied as written, a dotted key that names two strings left out of the file (and
the lock) as the report says, and ICU plural and select messages sent with their syntax protected, and kept
only when the translation has the source's skeleton."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from champollion_project import both, needs_node, pairs_config, tree, twins

CONFIG = pairs_config({"en:es": {"methodPlugin": "reverse"}})


@needs_node
def test_numbers_are_copied_exactly_as_the_source_writes_them(tmp_path: Path):
    source = ('{"title": "Prices", "max": 12345678901234567890, "id": 9007199254740993, "offset": -0, '
              '"price": 1.50, "tiny": 1E-7, "huge": 1e400, "list": [-0.0, "Cheap", 2.50]}\n')
    projects = twins(tmp_path, CONFIG, {"locales/en.json": source})
    runs = both(projects)
    assert runs["node"] == runs["python"]
    assert runs["python"][0] == 0
    assert tree(projects["node"]) == tree(projects["python"])
    assert projects["python"].read("locales/es.json") == "\n".join([
        "{",
        '  "title": "spa:secirP",',
        '  "max": 12345678901234567890,',
        '  "id": 9007199254740993,',
        '  "offset": -0,',
        '  "price": 1.50,',
        '  "tiny": 1E-7,',
        '  "huge": 1e400,',
        '  "list": [',
        "    -0.0,",
        '    "spa:paehC",',
        "    2.50",
        "  ]",
        "}",
        ""])


@needs_node
def test_a_dotted_key_that_names_two_strings_leaves_both_out_of_the_file_and_the_lock(tmp_path: Path):
    projects = twins(tmp_path, CONFIG, {"locales/en.json": '{"a.b": "Dotted key", "a": {"b": "Nested key"}, '
                                                           '"c": "Cat"}'})
    # As an earlier version left it: the dotted key's translation written and recorded.
    for project in projects.values():
        project.write("locales/es.json", {"a.b": "Tono salpicado", "c": "spa:taC"})
    runs = both(projects, "--json")
    assert runs["node"] == runs["python"]
    status, out, _ = runs["python"]
    assert status == 1
    file = json.loads(out)["locales"][0]["files"][0]
    assert file["failed"] == [{"key": "a.b", "error": '"a.b" names 2 strings in this file (a key with dots and '
                                                      "nested keys), so neither is translated; rename one of them"}]
    assert tree(projects["node"]) == tree(projects["python"])
    assert projects["python"].json("locales/es.json") == {"c": "spa:taC"}
    assert list(projects["python"].json("locales/.champollion-lock.json")["files"]["es.json"]) == ["c"]

    runs = both(projects)
    assert runs["node"] == runs["python"]
    assert runs["python"][1].splitlines()[1:3] == [
        "  es.json  1 up to date, 1 failed",
        '    failed a.b: "a.b" names 2 strings in this file (a key with dots and nested keys), so neither is '
        "translated; rename one of them"]


@needs_node
def test_a_new_file_whose_every_key_fails_before_sending_is_not_created_nor_its_lock_entry(tmp_path: Path):
    """Before: a target file of only written-twice or colliding keys was created as {} in both tools, and the lock
    file with an empty entry for it, though nothing was translated."""
    projects = twins(tmp_path, CONFIG, {"locales/en/a.json": '{"title": "Recipes", "title": "Recipe Box"}',
                                        "locales/en/b.json": '{"a.b": "Dotted key", "a": {"b": "Nested key"}}'})
    runs = both(projects)
    assert runs["node"] == runs["python"]
    status, out, _ = runs["python"]
    assert status == 1 and "failed title: " in out and "failed a.b: " in out
    for project in projects.values():
        assert sorted(path.name for path in (project.root / "locales").iterdir()) == ["en"]


@needs_node
def test_an_icu_message_has_only_its_branches_translated_and_a_translation_that_breaks_it_fails(tmp_path: Path):
    source = {"items": "{count, plural, one {# item} other {# items}}",
              "who": "{gender, select, male {He} other {They}} left"}
    projects = twins(tmp_path, pairs_config({"en:es": {"methodPlugin": "rot13"}}), {"locales/en.json": source},
                     plugins=("rot13",))
    runs = both(projects)
    assert runs["node"] == runs["python"]
    assert runs["python"][0] == 0
    assert projects["python"].calls()[0]["sources"] == ["⟦0⟧⟦1⟧ item⟦2⟧⟦3⟧ items⟦4⟧", "⟦0⟧He⟦1⟧They⟦2⟧ left"]
    assert tree(projects["node"]) == tree(projects["python"])
    translated = {"items": "spa: {count, plural, one {# vgrz} other {# vgrzf}}",
                  "who": "spa: {gender, select, male {Ur} other {Gurl}} yrsg"}
    assert projects["python"].json("locales/es.json") == translated

    # "#swap" makes the method put the message's last piece of syntax first, and its first last.
    for project in projects.values():
        project.write("locales/en.json", {**source, "items": source["items"] + " #swap"})
    runs = both(projects)
    assert runs["node"] == runs["python"]
    status, out, _ = runs["python"]
    assert status == 1
    assert ('failed items: the translation "spa: ⟦4⟧⟦1⟧ vgrz⟦2⟧⟦3⟧ vgrzf⟦0⟧ #fjnc" breaks the ICU message '
            "{count, plural, one {…} other {…}}: a } closes nothing; kept the previous value") in out
    assert projects["python"].json("locales/es.json") == translated
    assert tree(projects["node"]) == tree(projects["python"])


@needs_node
def test_an_empty_translation_or_a_closing_tag_put_before_its_opening_tag_fails_its_key(tmp_path: Path):
    """Neither is written, nor locked as up to date: the next run sends them again (an empty value was written and
    locked, so a method that then worked never repaired it)."""
    source = {"save": "Save #empty", "terms": "Read the <b>terms</b> #swap", "here": "Click <0>here</0>",
              "moved": "<b>Bold</b> and <i>italic</i>"}
    projects = twins(tmp_path, pairs_config({"en:es": {"methodPlugin": "rot13"}}), {"locales/en.json": source},
                     plugins=("rot13",))
    for sent in (4, 2):  # the second run: the failed keys again, not the others
        runs = both(projects)
        assert runs["node"] == runs["python"]
        status, out, _ = runs["python"]
        assert status == 1
        assert '    failed save: the translation "" is empty; left out of the file' in out
        assert ('    failed terms: the translation "spa: Ernq gur ⟦1⟧grezf⟦0⟧ #fjnc" put the closing tag </b> '
                "before its opening tag <b>; left out of the file") in out
        assert f"sent {sent} strings in 1 call" in out
        assert projects["python"].json("locales/es.json") == {"here": "spa: Pyvpx <0>urer</0>",
                                                             "moved": "spa: <b>Obyq</b> naq <i>vgnyvp</i>"}
        assert tree(projects["node"]) == tree(projects["python"])


@needs_node
def test_printf_conversions_taken_in_order_that_the_translation_reorders_fail_their_key(tmp_path: Path):
    """printf gives "%s … %d" its arguments in the order written: swapped, each would get the other's (a crash, or
    the wrong name in the sentence). Numbered conversions and named arguments may move."""
    source = {"sent": "%s sent %d files #swap", "numbered": "%1$s sent %2$d files #swap",
              "named": "{user} sent {count} files #swap"}
    projects = twins(tmp_path, pairs_config({"en:es": {"methodPlugin": "rot13"}}), {"locales/en.json": source},
                     plugins=("rot13",))
    runs = both(projects)
    assert runs["node"] == runs["python"]
    status, out, _ = runs["python"]
    assert status == 1
    assert ('    failed sent: the translation "spa: ⟦1⟧ frag ⟦0⟧ svyrf #fjnc" reordered %s and %d, which take their '
            "arguments in the order they are written (numbered, %1$s and %2$d, they may move); left out of the "
            "file") in out
    assert projects["python"].json("locales/es.json") == {"numbered": "spa: %2$d frag %1$s svyrf #fjnc",
                                                         "named": "spa: {count} frag {user} svyrf #fjnc"}
    assert tree(projects["node"]) == tree(projects["python"])


@needs_node
def test_a_key_written_twice_in_one_object_of_the_source_fails_and_is_named(tmp_path: Path):
    """JSON readers keep the last value: "Recipes" was dropped without a word. The key (and every key under an
    object written twice) fails, named with its path; the other keys are translated."""
    source = ('{"title": "Recipes", "nav": {"home": "Home", "home": "Start", "back": "Back"}, "title": "Recipe Box", '
              '"menu": {"a": "A"}, "menu": {"b": "B"}, "list": [{"x": "One", "x": "Two"}], "ok": "Fine"}\n')
    projects = twins(tmp_path, CONFIG, {"locales/en.json": source})
    runs = both(projects)
    assert runs["node"] == runs["python"]
    status, out, _ = runs["python"]
    assert status == 1
    twice = "is written more than once in one object of the source file, so it is not translated; keep one of " \
            "them (JSON readers keep the last)"
    failed = [line.strip() for line in out.splitlines() if line.strip().startswith("failed ")]
    assert failed == [f'failed title: "title" {twice}', f'failed nav.home: "nav.home" {twice}',
                      f'failed menu.b: "menu" {twice}', f'failed list.0.x: "list.0.x" {twice}']
    assert projects["python"].json("locales/es.json") == {"nav": {"back": "spa:kcaB"}, "list": [{}], "ok": "spa:eniF"}
    assert tree(projects["node"]) == tree(projects["python"])


@needs_node
def test_both_layouts_of_the_source_locale_are_refused_rather_than_one_left_out(tmp_path: Path):
    """locales/en.json beside locales/en/: the directory was read and the file's keys never reached a target."""
    projects = twins(tmp_path, CONFIG, {"locales/en/common.json": {"a": "Hello"},
                                        "locales/en.json": {"title": "Recipe Box"}})
    runs = both(projects)
    assert runs["node"] == runs["python"]
    status, _, err = runs["python"]
    assert status == 1
    assert err == ("<prog>: both <project>/locales/en/ and <project>/locales/en.json hold source strings, and only one "
                   "layout is read: move the keys of en.json into a file in <project>/locales/en/, or remove one of "
                   "them\n")
    assert tree(projects["node"]) == tree(projects["python"])
    assert not (projects["python"].root / "locales" / "es").exists()


@needs_node
def test_an_empty_folder_of_the_source_locale_is_no_layout_of_its_own(tmp_path: Path):
    """An empty locales/en/ beside locales/en.json had been called a second layout holding source strings; an empty
    locales/en/ alone had sent 0 strings and exited 0, where a missing one is refused."""
    projects = twins(tmp_path, CONFIG, {"locales/en.json": {"title": "Recipe Box"}, "locales/en/notes.txt": "x"})
    runs = both(projects)
    assert runs["node"] == runs["python"]
    assert runs["python"][0] == 0
    assert projects["python"].json("locales/es.json") == {"title": "spa:xoB epiceR"}
    for project in projects.values():
        (project.root / "locales" / "en.json").unlink()
        (project.root / "locales" / "es.json").unlink()
    runs = both(projects)
    assert runs["node"] == runs["python"]
    assert runs["python"][0] == 1
    assert runs["python"][2] == ("<prog>: no source locale files: <project>/locales/en/ holds no .json file (hidden "
                                 "names are skipped): put the en strings in <project>/locales/en/*.json, or in "
                                 "<project>/locales/en.json\n")


@needs_node
def test_a_target_file_that_is_a_symbolic_link_is_written_through(tmp_path: Path):
    """A shared file linked into a locale (locales/es/common.json → ../../shared/es.json): the file it points to
    gets the translation and the link stays (the link was replaced by a file, and the shared file left stale)."""
    projects = twins(tmp_path, CONFIG, {"locales/en/common.json": {"a": "Hello"}, "shared/es.json": {"old": "x"}})
    for project in projects.values():
        (project.root / "locales" / "es").mkdir(parents=True)
        (project.root / "locales" / "es" / "common.json").symlink_to(Path("..", "..", "shared", "es.json"))
    runs = both(projects)
    assert runs["node"] == runs["python"]
    assert runs["python"][0] == 0
    for project in projects.values():
        link = project.root / "locales" / "es" / "common.json"
        assert link.is_symlink() and project.json("shared/es.json") == {"a": "spa:olleH"}


@needs_node
def test_a_target_that_is_a_link_to_the_source_is_refused_its_strings_neither_adopted_nor_overwritten(tmp_path: Path):
    """locales/es/common.json → ../en/common.json (a locale started as a copy of the source), or locales/fr → en:
    before, their English values were adopted as translations, and --force (or a new key) wrote the translations
    over the source file."""
    config = pairs_config({"en:es": {"methodPlugin": "reverse"}, "en:fr": {"methodPlugin": "reverse"}})
    projects = twins(tmp_path, config, {"locales/en/common.json": {"a": "Hello"}})
    for project in projects.values():
        (project.root / "locales" / "es").mkdir()
        (project.root / "locales" / "es" / "common.json").symlink_to(Path("..", "en", "common.json"))
        (project.root / "locales" / "fr").symlink_to("en")
    for argv in ((), ("--force",)):
        runs = both(projects, *argv)
        assert runs["node"] == runs["python"]
        status, out, _ = runs["python"]
        assert status == 1
        assert ("  es/common.json  error: <project>/locales/es/common.json: cannot write it: it is the source file "
                "<project>/locales/en/common.json (<project>/locales/es/common.json is a symbolic link to "
                "../en/common.json), so its translations would be written over the en strings; remove "
                "<project>/locales/es/common.json: the next run writes the translations in its place\n") in out
        assert ("  fr/common.json  error: <project>/locales/fr/common.json: cannot write it: it is the source file "
                "<project>/locales/en/common.json (<project>/locales/fr is a symbolic link to en), so") in out
        for project in projects.values():
            assert project.json("locales/en/common.json") == {"a": "Hello"}
            assert not (project.root / "locales" / ".champollion-lock.json").exists()


@needs_node
def test_a_method_that_raises_fails_its_keys_in_the_same_words_in_process_and_as_a_guest(tmp_path: Path):
    """rot13 is Python only (in-process for ``mt-eval locales``, a Python guest for Node), upper JavaScript only
    (in-process for Node, a Node guest for Python): each side words the failure the same."""
    source = {"ok": "Fine", "bad": "Broken #raise"}
    projects = twins(tmp_path, pairs_config({"en:es": {"methodPlugin": "rot13"}, "en:fr": {"methodPlugin": "upper"}}),
                     {"locales/en.json": source}, plugins=("rot13", "upper"))
    runs = both(projects)
    assert runs["node"] == runs["python"]
    status, out, _ = runs["python"]
    assert status == 1
    assert "    failed bad: the method failed: ValueError: asked to raise; left out of the file" in out  # es
    assert "    failed bad: the method failed: TypeError: asked to raise; left out of the file" in out  # fr
    assert projects["python"].json("locales/es.json") == {"ok": "spa: Svar"}
    assert projects["python"].json("locales/fr.json") == {"ok": "fra: FINE"}
    assert tree(projects["node"]) == tree(projects["python"])


@needs_node
@pytest.mark.parametrize("runs_as", ["in process", "python entry only", "node entry only"])
def test_results_for_entries_not_sent_are_dropped_and_said_alike_by_both_commands(tmp_path: Path, runs_as: str):
    """Said as each command's warnings, in process or through a guest, each naming the pair it concerns. Before,
    Python said it bare, Node in process as "mt-eval-bridge: …" (to its own stderr, not the command's); then
    neither named the pair, and with several the user could not tell which one's method did it."""
    config = pairs_config({"en:es": {"methodPlugin": "reverse"}, "en:fr": {"methodPlugin": "reverse"}})
    projects = twins(tmp_path, config, {"locales/en.json": {"a": "!stray one", "b": "Fine"}})
    for project in projects.values():  # (a plugin with one entry runs as a guest under the other command)
        plugin = project.root / ".champollion" / "methods" / "reverse"
        manifest = json.loads((plugin / "method.json").read_text(encoding="utf-8"))
        for field, file in (("node_entry", "translate.js"), ("entry_point", "pipeline.py")):
            if runs_as == f"{'python' if field == 'node_entry' else 'node'} entry only":
                del manifest[field]
                (plugin / file).unlink()
        (plugin / "method.json").write_text(json.dumps(manifest), encoding="utf-8")
    runs = both(projects)
    assert runs["node"] == runs["python"]
    assert runs["python"][0] == 0
    said = ("<prog>: warning: pair {}: the method returned results that match no entry it was sent (ids \"1-stray\"); "
            "they were dropped (a result is {{\"id\": entry[\"id\"], \"predicted\": TEXT}}, one per entry)")
    assert sorted(runs["python"][2].splitlines()) == [said.format("en:es"), said.format("en:fr")]
    assert tree(projects["node"]) == tree(projects["python"])


@needs_node
def test_a_key_written_twice_in_a_target_file_is_said_and_its_last_value_kept(tmp_path: Path):
    """The first value had been dropped from the file without a word (the source's duplicates fail their keys)."""
    projects = twins(tmp_path, CONFIG, {"locales/en.json": {"a": "Hi", "b": "Bye"},
                                        "locales/es.json": '{"a": "Hola", "a": "Hola2"}\n'})
    said = ('    "a" is written more than once in one object of this file: its last value is kept (JSON readers keep '
            "the last), and the others are dropped when the file is written")
    runs = both(projects, "--dry-run", "--json")
    assert runs["node"] == runs["python"]
    assert json.loads(runs["python"][1])["locales"][0]["files"][0]["repeated"] == ["a"]
    for argv in (("--dry-run",), ()):
        runs = both(projects, *argv)
        assert runs["node"] == runs["python"]
        assert said in runs["python"][1].splitlines()
    assert projects["python"].json("locales/es.json") == {"a": "Hola2", "b": "spa:eyB"}
    assert said not in both(projects)["python"][1]  # (written once: the file holds it once)
    assert tree(projects["node"]) == tree(projects["python"])



@needs_node
def test_icu_messages_nested_too_deep_fail_their_key_alone_in_both_tools(tmp_path: Path):
    """Before: Python's reader ran out of stack (a traceback, nothing written, not even the other keys); Node's
    translated 500 levels but failed the whole run at 3,000 ("Maximum call stack size exceeded")."""
    deep = "".join(f"{{g{i}, select, a {{x " for i in range(3000)) + "core" + "} other {y}}" * 3000
    projects = twins(tmp_path, pairs_config({"en:es": {"methodPlugin": "rot13"}}),
                     {"locales/en.json": {"deep": deep, "ok": "Hello"}}, plugins=("rot13",))
    runs = both(projects)
    assert runs["node"] == runs["python"]
    status, out, _ = runs["python"]
    assert status == 1 and "Traceback" not in out
    assert ("failed deep: ICU messages nested over 50 levels deep: it cannot be translated with its placeholders "
            "kept; split it; left out of the file") in out
    assert projects["python"].json("locales/es.json") == {"ok": "spa: Uryyb"}
    assert tree(projects["node"]) == tree(projects["python"])


@needs_node
def test_a_source_file_removed_then_added_again_with_other_texts_is_translated_not_adopted(tmp_path: Path):
    """Before: the lock entries of es/b.json were forgotten when en/b.json was removed, while es/b.json stayed; when
    en/b.json came back with another text, the old translation was "adopted" as if written by hand — the
    translation of "Bye" standing for "Delete the account", and nothing sent."""
    projects = twins(tmp_path, pairs_config({"en:es": {"methodPlugin": "rot13"}}),
                     {"locales/en/a.json": {"a": "Hello"}, "locales/en/b.json": {"b": "Bye"}}, plugins=("rot13",))
    assert both(projects)["python"][0] == 0
    for project in projects.values():
        (project.root / "locales" / "en" / "b.json").unlink()
    runs = both(projects)
    assert runs["node"] == runs["python"] and runs["python"][0] == 0
    assert ("  es/b.json  left alone: its source file is gone (delete it if it is no longer used; its lock entries go "
            "with it)\n") in runs["python"][1]
    reports = both(projects, "--json")
    assert reports["node"] == reports["python"]
    assert json.loads(reports["python"][1])["locales"][0]["orphaned"] == ["es/b.json"]
    for project in projects.values():
        project.write("locales/en/b.json", {"b": "Delete the account"})
    runs = both(projects)
    assert runs["node"] == runs["python"] and runs["python"][0] == 0
    assert "es/b.json  1 translated" in runs["python"][1] and "adopted" not in runs["python"][1]
    assert projects["python"].json("locales/es/b.json") == {"b": "spa: Qryrgr gur nppbhag"}
    assert tree(projects["node"]) == tree(projects["python"])


@needs_node
def test_an_apostrophe_an_icu_message_escapes_is_sent_as_itself_and_written_escaped_again(tmp_path: Path):
    """Before: the method was sent "It''s" (ICU's escape) and translated two apostrophes; now it reads "It's", and
    the target file escapes its apostrophes as the source does."""
    message = "{n, plural, one {It''s # file} other {It''s # files}}"
    projects = twins(tmp_path, pairs_config({"en:es": {"methodPlugin": "rot13"}}),
                     {"locales/en.json": {"a": message, "b": "{n, plural, one {don't} other {{name}'s}}"}},
                     plugins=("rot13",))
    runs = both(projects)
    assert runs["node"] == runs["python"] and runs["python"][0] == 0
    for project in projects.values():
        assert project.calls()[0]["sources"] == ["⟦0⟧It's ⟦1⟧ file⟦2⟧It's ⟦3⟧ files⟦4⟧", "⟦0⟧don't⟦1⟧⟦2⟧'s⟦3⟧"]
    assert projects["python"].json("locales/es.json") == {
        "a": "spa: {n, plural, one {Vg''f # svyr} other {Vg''f # svyrf}}",
        "b": "spa: {n, plural, one {qba'g} other {{name}'f}}"}
    assert tree(projects["node"]) == tree(projects["python"])


@needs_node
def test_the_strings_of_a_file_with_icu_messages_are_read_as_icu_even_with_simple_arguments_only(tmp_path: Path):
    """Before: beside a plural, "It''s {name}" was sent "It''s ⟦0⟧" (ICU's escape), and the French "Ouvrir l'⟦0⟧"
    was written "Ouvrir l'{file}", which ICU shows "Ouvrir l{file}" ('{ starts quoted text). The same strings in a
    file without ICU messages are sent, and written, as before."""
    strings = {"its": "It''s {name}", "open": "Open {file}"}
    projects = twins(tmp_path, pairs_config({"en:fr": {"methodPlugin": "french"}}),
                     {"locales/en/app.json": {"files": "{n, plural, one {# file} other {# files}}", **strings},
                      "locales/en/legacy.json": strings}, plugins=("french",))
    runs = both(projects)
    assert runs["node"] == runs["python"] and runs["python"][0] == 0
    for project in projects.values():
        assert project.calls()[0]["sources"] == [
            "⟦0⟧⟦1⟧ file⟦2⟧⟦3⟧ files⟦4⟧", "It's ⟦0⟧", "Open ⟦0⟧", "It''s ⟦0⟧", "Open ⟦0⟧"]
    assert projects["python"].json("locales/fr/app.json") == {
        "files": "{n, plural, one {# fichier} other {# fichiers}}", "its": "C''est {name}", "open": "Ouvrir l''{file}"}
    assert projects["python"].json("locales/fr/legacy.json") == {"its": "C''est {name}", "open": "Ouvrir l'{file}"}
    assert tree(projects["node"]) == tree(projects["python"])
