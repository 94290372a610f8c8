"""``mt-eval new`` where something is already there: a DIR that is a symbolic link leading nowhere, and (with
``--force``) a plugin generated before. Each is refused in one line saying what to do, and loses nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from new_plugins import new


@pytest.mark.parametrize("below", [False, True], ids=["dir", "parent"])
def test_a_symbolic_link_that_leads_nowhere_is_refused_naming_where_it_points(tmp_path, monkeypatch, capsys, below):
    """``exists()`` is false for a dangling link, yet nothing can be made in its place: it was a traceback."""
    monkeypatch.chdir(tmp_path)
    Path("dangling").symlink_to(tmp_path / "gone" / "plugin")
    Path("loop").symlink_to("loop")
    suffix = "/plugin" if below else ""
    assert new(f"dangling{suffix}", "--no-input") == 2
    assert capsys.readouterr().err == (f"mt-eval new: dangling is a symbolic link to {tmp_path}/gone/plugin, which "
                                       "does not exist: remove the link, or create the directory it points to\n")
    assert new(f"loop{suffix}", "--no-input", "--force") == 2
    assert capsys.readouterr().err == ("mt-eval new: loop is a symbolic link to loop, a loop of links: remove the "
                                       "link, or point it at a directory\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dangling", "loop"]  # nothing made, the links as they were
    assert os.readlink("dangling") == str(tmp_path / "gone" / "plugin") and not (tmp_path / "gone").exists()
