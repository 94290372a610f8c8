"""Interactive ``mt-eval new``: a choice is taken by its name as well as its number, an id whose directory
(``./METHOD_ID``, without DIR) cannot be used is asked again at once, so no answer given before it is lost, and
Ctrl-C at a question is said on a line of its own; what it says when the plugin is made here."""

from __future__ import annotations

import io
import json
import sys

from mt_eval.cli import main
from new_plugins import new


def test_a_choice_is_taken_by_its_name_as_well_as_its_number(tmp_path, monkeypatch, capsys):
    """``--help`` lists the choices by name, yet typing one ("node") got only "Please select one of the available
    options" and the question again."""
    # kind by name, name, id (default), runtime: not a choice, then by name (any case), profile by number,
    # class by name, description, author, licence, open_source, url
    answers = "translation\nRemote API\n\nnod\nNode\n4\napi\n\n\nMIT\nn\n\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO(answers))
    assert new(str(tmp_path / "remote")) == 0
    said = capsys.readouterr()
    assert "answer with a number (1-3) or a name: python, node, both" in said.out + said.err
    manifest = json.loads((tmp_path / "remote" / "method.json").read_text(encoding="utf-8"))
    assert (manifest["node_entry"], manifest["dependency_class"], manifest["class"]) == ("translate.js", "A2", "api")
    assert "entry_point" not in manifest


def test_an_id_whose_directory_exists_is_asked_again_keeping_the_other_answers(tmp_path, monkeypatch, capsys):
    """Without DIR the plugin is made in ./METHOD_ID: an id naming a directory already there was refused only
    after the last question, discarding every answer."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "mine.txt").write_text("mine\n", encoding="utf-8")
    # kind, name, id: the default "taken" is refused, then another; runtime 2=node, the rest by default
    answers = "\nTaken\n\ntaken-two\n2\n" + "\n" * 7
    monkeypatch.setattr(sys, "stdin", io.StringIO(answers))
    assert new() == 0
    err = capsys.readouterr().err
    assert ("error: method_id: taken already exists: choose a new directory, or add --force to write into it "
            "(without DIR the plugin is made in ./METHOD_ID); answer again") in err
    assert (tmp_path / "taken-two" / "translate.js").is_file()
    manifest = json.loads((tmp_path / "taken-two" / "method.json").read_text(encoding="utf-8"))
    assert (manifest["name"], manifest["method_id"]) == ("Taken", "taken-two")
    assert [p.name for p in (tmp_path / "taken").iterdir()] == ["mine.txt"]


class CtrlCAtTheSecondQuestion(io.StringIO):
    """Standard input whose second line is Ctrl-C typed at the question (the terminal leaves "^C" on its line)."""

    def __init__(self) -> None:
        super().__init__("1\n")
        self.lines = 0

    def readline(self, *args: object) -> str:
        self.lines += 1
        if self.lines == 2:
            raise KeyboardInterrupt
        return super().readline()


def test_ctrl_c_at_a_question_is_said_on_a_line_of_its_own_and_writes_nothing(tmp_path, monkeypatch, capsys):
    """Before: "^Cinterrupted", on the question's line."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", CtrlCAtTheSecondQuestion())
    assert main(["new", "stopped"]) == 130
    assert capsys.readouterr().err == "\nmt-eval new: interrupted\n"
    assert list(tmp_path.iterdir()) == []


def test_a_plugin_made_in_the_current_directory_is_said_so_without_cd(tmp_path, monkeypatch, capsys):
    """Before: "Created .: …" and "cd ." as the first command to run next."""
    (tmp_path / "here-method").mkdir()
    monkeypatch.chdir(tmp_path / "here-method")
    assert main(["new", ".", "--no-input"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Created it in this directory: Here Method (here-method, class pipeline")
    assert "  cd " not in out and "validate ." in out
