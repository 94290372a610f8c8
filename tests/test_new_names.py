"""``mt-eval new``: what a directory's name and a licence alias become in the plugin — an id only when one can
be made, and the SPDX id an alias is taken as — said plainly, never a silent default."""

from __future__ import annotations

import json

import pytest

from new_plugins import new


@pytest.mark.parametrize("name", ["日本語", "!!!"])
def test_a_directory_name_that_makes_no_id_is_refused_unless_the_id_is_given(tmp_path, monkeypatch, capsys, name):
    """`mt-eval new 日本語 --no-input` had silently made the template's id, my-translation-method."""
    monkeypatch.chdir(tmp_path)
    assert new(name, "--no-input") == 2
    assert (f'mt-eval new: no method id can be made from the name "{name}" (an id is lowercase letters a-z and '
            "digits in words joined by hyphens): give one with --set method_id=ID") in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
    assert new(name, "--no-input", "--set", "method_id=nihongo") == 0
    manifest = json.loads((tmp_path / name / "method.json").read_text(encoding="utf-8"))
    assert manifest["method_id"] == "nihongo"
    assert manifest["name"] == (name if name.isalnum() else "My Translation Method")


@pytest.mark.parametrize(("alias", "spdx"), [("GPL", "GPL-1.0-or-later"), ("mit", "MIT")])
def test_a_licence_alias_is_written_as_the_spdx_id_it_is_taken_as(tmp_path, capsys, alias: str, spdx: str):
    """`--set method_license=GPL` was accepted as GPL-1.0-or-later, but the card said "GPL"."""
    assert new(str(tmp_path / "p"), "--no-input", "--set", f"method_license={alias}") == 0
    assert f'mt-eval new: method_license "{alias}" is taken as {spdx}, its SPDX id' in capsys.readouterr().err
    assert json.loads((tmp_path / "p" / "method_card.json").read_text(encoding="utf-8"))["license"] == spdx
    answers = json.loads((tmp_path / "p" / ".mt-eval-answers.json").read_text(encoding="utf-8"))
    assert answers["answers"]["method_license"] == spdx
