"""A champollion project's files, read and written alike by ``mt-eval locales`` and the Node ``mt-eval-locales``:
JSON errors in the shared reader's words, files that cannot be written, modes kept, the locales directory and
the plugin directories named as they are."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from champollion_project import both, make_project, needs_node, pairs_config, run_locales, tree, twins


@needs_node
def test_json_errors_of_locale_lock_and_method_files_read_alike_with_line_column_and_fix(tmp_path: Path):
    projects = twins(tmp_path, pairs_config({"en:es": {"methodPlugin": "reverse"}}),
                     {"locales/en/a.json": '{"a": "One",}', "locales/en/b.json": {"b": "Two"},
                      "locales/es/b.json": '{"b": "x" "c"}'})
    for project in projects.values():
        (project.root / "locales" / "en" / "c.json").write_bytes(b'{"c": "\xff"}')
    runs = both(projects, "--json")
    assert runs["node"] == runs["python"]
    status, out, _ = runs["python"]
    assert status == 1
    errors = [f["error"] for f in json.loads(out)["locales"][0]["files"]]
    # What is wrong, then the reader's fix (whose words are the reader's to choose).
    assert [error.split("; ")[0] for error in errors] == [
        "<project>/locales/en/a.json: invalid JSON at line 1, column 13: Expecting property name enclosed in double "
        "quotes",
        "<project>/locales/es/b.json: invalid JSON at line 1, column 11: Expecting ',' delimiter",
        "<project>/locales/en/c.json: not valid UTF-8: byte 0xff at line 1 (offset 7)"]
    assert all(len(error.split("; ")) == 2 for error in errors)

    for project in projects.values():
        project.write("locales/.champollion-lock.json", '{"version": 1, "files": {,}}')
    runs = both(projects)
    assert runs["node"] == runs["python"]
    status, out, err = runs["python"]
    assert (status, out) == (1, "")
    assert err.startswith("<prog>: <project>/locales/.champollion-lock.json: cannot read the lock file: invalid JSON "
                          "at line 1, column 26: Expecting property name enclosed in double quotes; ")
    assert err.endswith(", or delete it to re-check every key\n")

    for project in projects.values():
        (project.root / "locales" / ".champollion-lock.json").unlink()
        project.write(".champollion/methods/broken/method.json", "{'name': 'Broken'}")
        project.write("champollion.config.json", pairs_config({"en:es": {"methodPlugin": "revers"}}))
    runs = both(projects)
    assert runs["node"] == runs["python"]
    assert ("  - .champollion/methods/broken (unusable: method.json cannot be read: invalid JSON at line 1, column 2: "
            "Expecting property name enclosed in double quotes)\n") in runs["python"][2]


@needs_node
def test_a_dangling_symlink_or_a_directory_without_method_json_in_methods_is_named_as_such(tmp_path: Path):
    projects = twins(tmp_path, pairs_config({"en:es": {"methodPlugin": "apertium-eng-spa"}}),
                     {"locales/en.json": {"a": "One"}})
    for project in projects.values():
        methods = project.root / ".champollion" / "methods"
        (methods / "apertium-eng-spa").symlink_to("../../../apertium-eng-spa")  # as in a copy of the example
        (methods / "empty").mkdir()
    runs = both(projects)
    assert runs["node"] == runs["python"]
    status, _, err = runs["python"]
    assert status == 1
    assert err == (
        '<prog>: pair "en:es": methodPlugin "apertium-eng-spa" names .champollion/methods/apertium-eng-spa, which '
        "cannot be used: "
        f"a symlink to ../../../apertium-eng-spa ({tmp_path}/apertium-eng-spa), which does not exist. Fix: make it the "
        "plugin's directory (or a symlink to it), or set methodPlugin to the plugin's path. Plugins in "
        "<project>/.champollion/methods:\n"
        f"  - .champollion/methods/apertium-eng-spa (unusable: a symlink to ../../../apertium-eng-spa "
        f"({tmp_path}/apertium-eng-spa), which does not exist)\n"
        "  - .champollion/methods/empty (unusable: a directory without method.json)\n"
        '  - "Reverse (bridge reference method)" (method_id reverse) in .champollion/methods/reverse\n')
    by_path = pairs_config({"en:es": {"methodPlugin": "./.champollion/methods/empty"}})
    for project in projects.values():
        project.write("champollion.config.json", by_path)
    runs = both(projects)
    assert runs["node"] == runs["python"]
    assert runs["python"][2] == ('<prog>: pair "en:es": methodPlugin "./.champollion/methods/empty": '
                                 "<project>/.champollion/methods/empty: a directory without method.json\n")


@needs_node
def test_a_plugin_whose_method_json_is_broken_is_told_to_correct_it_not_to_be_made_a_plugin_directory(tmp_path: Path):
    projects = twins(tmp_path, pairs_config({"en:es": {"methodPlugin": "broken"}}), {"locales/en.json": {"a": "One"}})
    for project in projects.values():
        project.write(".champollion/methods/broken/method.json", '{"name": "x",')
    runs = both(projects)
    assert runs["node"] == runs["python"]
    assert runs["python"][0] == 1
    assert runs["python"][2].startswith(
        '<prog>: pair "en:es": methodPlugin "broken" names .champollion/methods/broken, which cannot be used: '
        "method.json cannot be read: ")
    assert (". Fix: correct its method.json (mt-eval validate <project>/.champollion/methods/broken says what is "
            "wrong). Plugins in <project>/.champollion/methods:\n") in runs["python"][2]


@needs_node
def test_a_locales_dir_that_is_not_a_directory_is_named_with_the_config_field_and_the_fix(tmp_path: Path):
    projects = twins(tmp_path, pairs_config({"en:es": {"methodPlugin": "reverse"}}, localesDir="nope"),
                     {"locales/en.json": {"a": "One"}})
    for argv in ((), ("--dry-run",)):
        runs = both(projects, *argv)
        assert runs["node"] == runs["python"]
        assert runs["python"] == (1, "", '<prog>: localesDir <project>/nope does not exist: set "localesDir" in '
                                         "<project>/champollion.config.json to the directory that holds the locale "
                                         "files (en/*.json or en.json), relative to the config\n")
    for project in projects.values():
        project.write("nope", "a file\n")
    runs = both(projects)
    assert runs["node"] == runs["python"]
    assert runs["python"][2].startswith("<prog>: localesDir <project>/nope is not a directory: set ")


@needs_node
def test_a_rewritten_target_file_and_lock_file_keep_their_mode(tmp_path: Path):
    projects = twins(tmp_path, pairs_config({"en:es": {"methodPlugin": "reverse"}}), {"locales/en.json": {"a": "One"}})
    for side, project in projects.items():
        assert run_locales(side, project).returncode == 0
        for name in ("es.json", ".champollion-lock.json"):
            (project.root / "locales" / name).chmod(0o600)
        project.write("locales/en.json", {"a": "One", "b": "Two"})
        assert run_locales(side, project).returncode == 0
        assert project.json("locales/es.json") == {"a": "spa:enO", "b": "spa:owT"}
        modes = {name: (project.root / "locales" / name).stat().st_mode & 0o777
                 for name in ("es.json", ".champollion-lock.json")}
        assert modes == {"es.json": 0o600, ".champollion-lock.json": 0o600}, side
        assert not list((project.root / "locales").glob(".*.tmp"))


@needs_node
def test_a_target_that_cannot_be_written_is_that_files_error_found_before_anything_is_sent(tmp_path: Path):
    config = pairs_config({"en:es": {"methodPlugin": "reverse"}, "en:fr": {"methodPlugin": "reverse"}})
    projects = twins(tmp_path, config,
                     {"locales/en/common.json": {"a": "One"}, "locales/en/other.json": {"b": "Two"},
                      "locales/es/common.json/keep": "a directory where the file goes\n",
                      "locales/fr": "a file where the directory goes\n"})
    runs = both(projects, "--json")
    assert runs["node"] == runs["python"]
    status, out, _ = runs["python"]
    assert status == 1
    report = json.loads(out)
    assert [(r["locale"], r["sent"]) for r in report["locales"]] == [("es", 1), ("fr", 0)]  # nothing sent for them
    assert {f["file"]: f["error"] for r in report["locales"] for f in r["files"]} == {
        "es/common.json": "<project>/locales/es/common.json: cannot write it: a directory is in its place; move or "
                          "remove that directory",
        "es/other.json": None,
        "fr/common.json": "<project>/locales/fr/common.json: cannot create its directory: <project>/locales/fr is not "
                          "a directory; move or remove <project>/locales/fr",
        "fr/other.json": "<project>/locales/fr/other.json: cannot create its directory: <project>/locales/fr is not "
                         "a directory; move or remove <project>/locales/fr"}
    assert tree(projects["node"]) == tree(projects["python"])
    assert projects["python"].json("locales/es/other.json") == {"b": "spa:owT"}
    assert list(projects["python"].json("locales/.champollion-lock.json")["files"]) == ["es/other.json"]
    runs = both(projects)
    assert runs["node"] == runs["python"]
    assert runs["python"][1].startswith("es (en:es) via reverse (eng>spa)\n  es/common.json  error: <project>/locales/"
                                        "es/common.json: cannot write it: a directory is in its place; move or remove "
                                        "that directory\n  es/other.json  1 up to date\n")
    assert runs["python"][1].endswith("\n3 problems: files with an error were left as they were\n")  # (no key failed)


def test_a_write_that_fails_is_that_files_error_its_temporary_file_removed_the_others_written(tmp_path: Path,
                                                                                               monkeypatch, capsys):
    from mt_eval.champollion import files
    from mt_eval.cli import main

    project = make_project(tmp_path, pairs_config({"en:es": {"methodPlugin": "reverse"}}),
                           {"locales/en/common.json": {"a": "One"}, "locales/en/other.json": {"b": "Two"}})
    replace = os.replace

    def refuse_common(source: str | Path, target: str | Path) -> None:
        if Path(target).name == "common.json":
            raise PermissionError(13, "Permission denied")
        replace(source, target)

    monkeypatch.setattr(files.os, "replace", refuse_common)
    status = main(["locales", "--config", str(project.root), "--quiet"])
    out = capsys.readouterr().out
    assert status == 1
    assert (f"  es/common.json  error: {project.root}/locales/es/common.json: cannot write it: Permission denied; "
            "make its directory writable\n") in out
    assert project.json("locales/es/other.json") == {"b": "spa:owT"}
    assert sorted(p.name for p in (project.root / "locales" / "es").iterdir()) == ["other.json"]  # no temporary file
    assert list(project.json("locales/.champollion-lock.json")["files"]) == ["es/other.json"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes in a read-only directory")
@needs_node
def test_a_read_only_target_directory_is_found_before_anything_is_sent(tmp_path: Path):
    projects = twins(tmp_path, pairs_config({"en:es": {"methodPlugin": "reverse"}}),
                     {"locales/en/common.json": {"a": "One"}, "locales/es/common.json": {}})
    for project in projects.values():
        (project.root / "locales" / "es").chmod(0o555)
    try:
        runs = both(projects, "--json")
    finally:
        for project in projects.values():
            (project.root / "locales" / "es").chmod(0o755)
    assert runs["node"] == runs["python"]
    report = json.loads(runs["python"][1])
    assert report["locales"][0]["sent"] == 0
    assert report["locales"][0]["files"][0]["error"] == (
        "<project>/locales/es/common.json: cannot write it: <project>/locales/es is not writable; make it writable "
        "(chmod u+wx <project>/locales/es)")


@needs_node
def test_a_source_link_that_leads_nowhere_stops_the_run_naming_it_rather_than_dropping_its_strings(tmp_path: Path):
    """Before, Python left the file out without a word (and dropped its targets' lock entries, so they were paid
    for again), and Node stopped with a raw ``ELOOP: too many symbolic links encountered, stat …``."""
    projects = twins(tmp_path, pairs_config({"en:es": {"methodPlugin": "reverse"}}),
                     {"locales/en/a.json": {"a": "One"}, "locales/en/sub/b.json": {"b": "Two"}})
    runs = both(projects)
    assert runs["node"] == runs["python"] and runs["python"][0] == 0
    for project in projects.values():
        (project.root / "locales" / "en" / "sub" / "loop.json").symlink_to("loop.json")
    runs = both(projects, "--json")
    assert runs["node"] == runs["python"]
    status, out, _ = runs["python"]
    assert status == 1
    assert json.loads(out)["error"] == {"kind": "project", "message": (
        "<project>/locales/en/sub/loop.json: a symlink to loop.json, which cannot be followed: Too many levels of "
        "symbolic links; fix the link, or remove it")}
    for project in projects.values():
        (project.root / "locales" / "en" / "sub" / "loop.json").unlink()
        (project.root / "locales" / "en" / "gone.json").symlink_to("../shared/gone.json")
        (project.root / "locales" / "en" / "folder.json").symlink_to("sub")  # a link to a folder is not a file
    runs = both(projects)
    assert runs["node"] == runs["python"]
    assert runs["python"][1:] == ("", "<prog>: <project>/locales/en/gone.json: a symlink to ../shared/gone.json, "
                                      "which does not exist; fix the link, or remove it\n")
    assert all(len(project.json("locales/.champollion-lock.json")["files"]) == 2 for project in projects.values())
    for project in projects.values():
        (project.root / "locales" / "en" / "gone.json").unlink()
    runs = both(projects, "--json")
    assert runs["node"] == runs["python"] and runs["python"][0] == 0
    assert [f["file"] for f in json.loads(runs["python"][1])["locales"][0]["files"]] == ["es/a.json", "es/sub/b.json"]


@needs_node
@pytest.mark.parametrize("name", [b"caf\xe9.json", b"d\xe9p/b.json"])
def test_a_source_file_or_folder_whose_name_is_not_utf8_stops_the_run_naming_it(tmp_path: Path, name: bytes):
    """Before, Python translated it into a target and lock entry named with a lone surrogate (U+DCE9), and Node
    stopped with a raw ``ENOENT: no such file or directory, lstat '…'``."""
    projects = twins(tmp_path, pairs_config({"en:es": {"methodPlugin": "reverse"}}),
                     {"locales/en/a.json": {"a": "One"}})
    for project in projects.values():
        path = os.fsencode(project.root / "locales" / "en") + b"/" + name
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as file:
            file.write('{"b": "Two"}')
    runs = both(projects)
    assert runs["node"] == runs["python"]
    shown = name.split(b"/")[0].decode("utf-8", "replace")
    assert runs["python"] == (1, "", f"<prog>: <project>/locales/en/{shown}: its name is not valid UTF-8; rename it "
                                     "in UTF-8 (its target files and lock entries are named after it)\n")
    assert not any((project.root / "locales" / "es").exists() for project in projects.values())


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads an unreadable directory")
@needs_node
def test_a_source_folder_that_cannot_be_read_stops_the_run_naming_it(tmp_path: Path):
    projects = twins(tmp_path, pairs_config({"en:es": {"methodPlugin": "reverse"}}),
                     {"locales/en/a.json": {"a": "One"}, "locales/en/sub/b.json": {"b": "Two"}})
    for project in projects.values():
        (project.root / "locales" / "en" / "sub").chmod(0)
    try:
        runs = both(projects)
    finally:
        for project in projects.values():
            (project.root / "locales" / "en" / "sub").chmod(0o755)
    assert runs["node"] == runs["python"]
    assert runs["python"] == (1, "", "<prog>: <project>/locales/en/sub: cannot read this folder of source strings: "
                                     "Permission denied; make it readable, or move it out of the locales directory\n")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads an unreadable file")
@needs_node
def test_an_unreadable_config_says_so_and_how_to_make_it_readable(tmp_path: Path):
    """Before, Node gave the raw ``EACCES: permission denied, open …``, and both told the user to give its path."""
    projects = twins(tmp_path, pairs_config({"en:es": {"methodPlugin": "reverse"}}),
                     {"locales/en/a.json": {"a": "One"}})
    for project in projects.values():
        (project.root / "champollion.config.json").chmod(0)
    try:
        runs = both(projects)
    finally:
        for project in projects.values():
            (project.root / "champollion.config.json").chmod(0o644)
    assert runs["node"] == runs["python"]
    assert runs["python"][0] == 1
    assert ("error: <project>/champollion.config.json: cannot read file: Permission denied\n    fix: make it readable "
            "(chmod u+r <project>/champollion.config.json)\n") in runs["python"][2]


@needs_node
def test_a_locale_file_nested_too_deep_is_that_files_error_at_the_same_depth_on_both_sides(tmp_path: Path):
    """Before, Node stopped the whole run with "Maximum call stack size exceeded" (Python: that file's error), and
    how deep Python could read depended on how deep its stack already was."""
    def nested(depth: int) -> str:
        return '{"a": ' * depth + '"Deep [ { \\" text"' + "}" * depth

    projects = twins(tmp_path, pairs_config({"en:es": {"methodPlugin": "reverse"}}),
                     {"locales/en/a.json": {"a": "One"}, "locales/en/limit.json": nested(500),
                      "locales/en/over.json": nested(501), "locales/en/far.json": nested(3000)})
    runs = both(projects, "--json")
    assert runs["node"] == runs["python"]
    status, out, _ = runs["python"]
    assert status == 1
    files = {f["file"]: f for f in json.loads(out)["locales"][0]["files"]}
    assert files["es/a.json"]["translated"] == ["a"] and files["es/limit.json"]["translated"] == ["a" + ".a" * 499]
    hint = "nothing this file holds nests over 500 levels deep; regenerate it, or check what wrote it"
    assert files["es/over.json"]["error"] == (f"<project>/locales/en/over.json: arrays and objects nested 501 levels "
                                              f"deep: too deep to read; {hint}")
    assert files["es/far.json"]["error"].startswith("<project>/locales/en/far.json: arrays and objects nested 3,000 ")


@needs_node
def test_a_lock_file_of_another_version_is_refused_alike_true_is_not_version_1(tmp_path: Path):
    """Before, Python took ``"version": true`` for version 1 (``True == 1``); Node refused it."""
    projects = twins(tmp_path, pairs_config({"en:es": {"methodPlugin": "reverse"}}),
                     {"locales/en/a.json": {"a": "One"}})
    for version in ("true", "2", '"1"', "1.5", "null"):
        for project in projects.values():
            project.write("locales/.champollion-lock.json", f'{{"version": {version}, "files": {{}}}}\n')
        runs = both(projects)
        assert runs["node"] == runs["python"], version
        assert runs["python"] == (1, "", "<prog>: <project>/locales/.champollion-lock.json: not a version 1 lock file; "
                                         "delete it to re-check every key\n"), version
    for project in projects.values():
        project.write("locales/.champollion-lock.json", '{"version": 1.0, "files": {}}\n')
    runs = both(projects)
    assert runs["node"] == runs["python"] and runs["python"][0] == 0  # 1.0 is the number 1 in JSON


@needs_node
def test_a_target_file_made_read_only_is_refused_left_as_it_is_and_named_with_the_fix_on_both_sides(tmp_path: Path):
    """Before, Python replaced a read-only target (keeping its mode 0444), as Node did."""
    config = pairs_config({"en:es": {"methodPlugin": "reverse"}, "en:fr": {"methodPlugin": "reverse"}})
    projects = twins(tmp_path, config, {"locales/en/common.json": {"a": "One", "b": "Two"},
                                        "locales/en/other.json": {"c": "Three"},
                                        "locales/es/common.json": '{"a": "Uno"}\n'})

    def chmod(mode: int) -> None:
        for project in projects.values():
            (project.root / "locales" / "es" / "common.json").chmod(mode)

    chmod(0o444)
    refused = ("<project>/locales/es/common.json: cannot write it: the file is read-only (mode 0444), so it is left as "
               "it is; make it writable (chmod u+w <project>/locales/es/common.json) to have it written, or remove "
               '"en:es" from the pairs of <project>/champollion.config.json')
    runs = both(projects, "--json")
    assert runs["node"] == runs["python"]
    status, out, _ = runs["python"]
    assert status == 1
    report = json.loads(out)
    assert [(r["locale"], r["sent"]) for r in report["locales"]] == [("es", 1), ("fr", 3)]
    assert {f["file"]: f["error"] for r in report["locales"] for f in r["files"]} == {
        "es/common.json": refused, "es/other.json": None, "fr/common.json": None, "fr/other.json": None}
    assert tree(projects["node"]) == tree(projects["python"])
    python = projects["python"]
    assert python.read("locales/es/common.json") == '{"a": "Uno"}\n'
    assert (python.root / "locales" / "es" / "common.json").stat().st_mode & 0o777 == 0o444
    assert python.json("locales/fr/common.json") == {"a": "fra:enO", "b": "fra:owT"}
    assert sorted(python.json("locales/.champollion-lock.json")["files"]) == ["es/other.json", "fr/common.json",
                                                                               "fr/other.json"]
    # Up to date, a read-only file is no error; one that only a removed key would change is refused as well.
    chmod(0o644)
    assert [status for status, _, _ in both(projects).values()] == [0, 0]
    written = python.read("locales/es/common.json")
    chmod(0o444)
    runs = both(projects)
    assert runs["node"] == runs["python"] and runs["python"][0] == 0
    for project in projects.values():
        project.write("locales/en/common.json", {"a": "One"})
    runs = both(projects)
    assert runs["node"] == runs["python"]
    assert runs["python"][0] == 1 and f"  es/common.json  error: {refused}\n" in runs["python"][1]
    assert python.read("locales/es/common.json") == written
