"""``mt-eval new`` of a Node plugin on a machine without node: the next commands say what ``node --test`` needs."""

from __future__ import annotations

from new_plugins import new


def test_without_node_on_path_the_node_test_line_says_what_it_needs(tmp_path, monkeypatch, capsys):
    """Before: `node --test` among the next commands, with no word that there is no node to run it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("shutil.which", lambda name, *args, **kwargs: None if name == "node" else "/usr/bin/" + name)
    assert new("--no-input", "--set", "method_name=No Node", "--set", "runtime=node") == 0
    assert "  node --test     # needs Node.js 20+ on PATH, none is here (apt-get install nodejs npm)\n" in \
        capsys.readouterr().out + "\n"
