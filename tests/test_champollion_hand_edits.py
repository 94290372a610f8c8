"""A translation a person fixed in a target file is kept when the method changes, by both commands alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from champollion_project import SIDES, make_project, needs_node, pairs_config, run_locales

SOURCE = {"title": "Recipes", "nav": {"save": "Save", "cancel": "Cancel"}}

# A method that, while it translates, does what a person at an editor would: writes $EDIT_TEXT over the target file.
EDITING_METHOD = """import { writeFileSync } from 'node:fs';
export async function translate(entries, config) {
  writeFileSync(process.env.EDIT_FILE, process.env.EDIT_TEXT);
  return entries.map(({ id, source }) => ({ id, predicted: `${config.target_lang}: ${source.toUpperCase()}` }));
}
"""


@needs_node
@pytest.mark.parametrize(("first", "then"), [("python", "node"), ("node", "python")])
def test_a_value_edited_by_hand_survives_a_change_of_the_method(tmp_path: Path, first: str, then: str):
    """Before: editing the plugin's code sent every key again, the edited one too, and wrote over the fix."""
    project = make_project(tmp_path, pairs_config({"en:es": {"methodPlugin": "upper"}}),
                           {"locales/en/a.json": SOURCE}, plugins=("upper",))
    assert run_locales(first, project).returncode == 0
    assert project.json("locales/es/a.json")["title"] == "spa: RECIPES"
    project.write("locales/es/a.json", project.read("locales/es/a.json").replace("spa: RECIPES", "Recetas"))
    plugin = project.root / ".champollion/methods/upper/translate.js"
    plugin.write_text(plugin.read_text(encoding="utf-8") + "// a new version\n", encoding="utf-8")

    done = run_locales(then, project)
    assert done.returncode == 0, done.stderr
    assert "es/a.json  2 translated, 1 adopted\n" in done.stdout
    assert project.calls()[-1]["sources"] == ["Save", "Cancel"]
    assert project.json("locales/es/a.json") == {"title": "Recetas", "nav": {"save": "spa: SAVE",
                                                                             "cancel": "spa: CANCEL"}}
    lock = project.json("locales/.champollion-lock.json")
    assert lock["files"]["es/a.json"]["title"].endswith(" -")  # kept as a value that was there: not the method's
    assert list(lock["values"]["es/a.json"]) == ["nav.save", "nav.cancel"]

    before, calls = project.read("locales/.champollion-lock.json"), len(project.calls())
    for side in (first, then):  # both read what the other wrote: nothing is due, nothing is rewritten
        assert run_locales(side, project).returncode == 0
        assert len(project.calls()) == calls
        assert project.read("locales/.champollion-lock.json") == before

    project.write("locales/en/a.json", {**SOURCE, "title": "My recipes"})  # a fix of an old source: sent again
    assert run_locales(first, project).returncode == 0
    assert project.calls()[-1]["sources"] == ["My recipes"]
    assert project.json("locales/es/a.json")["title"] == "spa: MY RECIPES"


@needs_node
@pytest.mark.parametrize("side", ["python", "node"])
def test_a_lock_file_without_value_hashes_is_read_as_before_and_gains_them(tmp_path: Path, side: str):
    project = make_project(tmp_path, pairs_config({"en:es": {"methodPlugin": "upper"}}),
                           {"locales/en/a.json": SOURCE}, plugins=("upper",))
    assert run_locales(side, project).returncode == 0
    lock = project.json("locales/.champollion-lock.json")
    project.write("locales/.champollion-lock.json", json.dumps({"version": 1, "files": lock["files"]}))
    calls = len(project.calls())
    done = run_locales(side, project)
    assert done.returncode == 0 and "es/a.json  3 up to date\n" in done.stdout
    assert len(project.calls()) == calls  # nothing sent again
    assert project.json("locales/.champollion-lock.json") == lock


@needs_node
@pytest.mark.parametrize("side", SIDES)
def test_a_value_edited_while_the_method_translates_is_kept_and_a_broken_edit_left_alone(tmp_path: Path, side: str):
    """Before: the file was written from what it held when the run began, losing what a person saved meanwhile."""
    project = make_project(tmp_path, pairs_config({"en:es": {"methodPlugin": "editing"}}),
                           {"locales/en/a.json": SOURCE, "locales/es/a.json": {"title": "Recetas", "nav": {}},
                            ".champollion/methods/editing/translate.js": EDITING_METHOD,
                            ".champollion/methods/editing/method.json": {
                                "name": "Editing", "method_id": "editing", "class": "custom-plugin",
                                "node_entry": "translate.js", "dependency_class": "S", "dependencies": []}},
                           plugins=())
    target = project.root / "locales/es/a.json"
    edited = '{"title": "Mis recetas", "nav": {"save": "Guardar"}}'
    done = run_locales(side, project, env={"EDIT_FILE": str(target), "EDIT_TEXT": edited})
    assert done.returncode == 0, done.stderr
    assert "es/a.json  1 translated, 2 adopted\n" in done.stdout  # nav.save was sent, but a person filled it in
    assert project.json("locales/es/a.json") == {"title": "Mis recetas", "nav": {"save": "Guardar",
                                                                                 "cancel": "spa: CANCEL"}}
    lock = project.json("locales/.champollion-lock.json")
    methods = {key: entry.split(" ")[1] for key, entry in lock["files"]["es/a.json"].items()}
    assert methods["title"] == methods["nav.save"] == "-" and methods["nav.cancel"] != "-"
    assert list(lock["values"]["es/a.json"]) == ["nav.cancel"]

    project.write("locales/en/a.json", {**SOURCE, "more": "More"})
    done = run_locales(side, project, env={"EDIT_FILE": str(target), "EDIT_TEXT": '{"title": '})
    assert done.returncode == 1
    assert f"es/a.json  error: {target}: invalid JSON at line 1, column 11" in done.stdout
    assert target.read_text(encoding="utf-8") == '{"title": '  # left as the person saved it
