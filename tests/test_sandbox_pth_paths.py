"""What a sandboxed method is shown of the directories an installed ``.pth`` file names (an editable install):
the packages and modules that can be imported from there, never the rest. Before, the whole directory was shown:
a ``.pth`` naming a project root showed the method its other corpora and earlier runs (their cards hold the
canaries' references), one naming ``/`` or a home directory showed all of it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mt_eval.sandbox import view
from sandbox_support import actions, needs_sandbox, probe_plugin, run_card, small_corpus


def project_installed_from(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *lines: str) -> Path:
    """A project kept beside a ``site-packages`` whose ``.pth`` lists ``lines`` (``{project}``: the project's
    root); the site directory is on the import path, inside the interpreter's base prefix."""
    project = tmp_path / "project"
    (project / "mylib").mkdir(parents=True)
    (project / "mylib" / "__init__.py").write_text("VALUE = 1\n")
    (project / "helper.py").write_text("HELP = 2\n")
    (project / "mylib-0.1.dist-info").mkdir()
    (project / "runs" / "earlier").mkdir(parents=True)
    (project / "runs" / "earlier" / "card.json").write_text(json.dumps({"card_version": 1, "canary": "SECRET"}))
    (project / "data").mkdir()
    (project / "data" / "other-corpus.json").write_text("{}")
    (project / "notes").mkdir()  # a directory without __init__.py: no regular package
    base = tmp_path / "base"
    site = base / "lib" / "site-packages"
    site.mkdir(parents=True)
    (site / "_editable_project.pth").write_text("\n".join(line.format(project=project) for line in lines) + "\n")
    monkeypatch.setattr(sys, "base_prefix", str(base))
    monkeypatch.setattr(sys, "path", [*sys.path, str(site)])
    return project


def shows(runtime: list[str], path: Path) -> bool:
    return any(str(path) == shown or str(path).startswith(shown.rstrip("/") + "/") for shown in runtime)


def test_a_pth_naming_a_project_root_shows_its_packages_and_modules_only(tmp_path, monkeypatch):
    project = project_installed_from(tmp_path, monkeypatch, "# a comment", "import os", "{project}")
    runtime = view.python_runtime()
    assert shows(runtime, project / "mylib" / "__init__.py") and shows(runtime, project / "helper.py")
    assert shows(runtime, project / "mylib-0.1.dist-info")
    for hidden in ("runs/earlier/card.json", "data/other-corpus.json", "notes"):
        assert not shows(runtime, project / hidden), hidden
    assert str(project) not in runtime


def test_a_relative_pth_line_is_read_from_its_site_directory(tmp_path, monkeypatch):
    project = project_installed_from(tmp_path, monkeypatch, "../../../project")
    runtime = view.python_runtime()
    assert shows(runtime, project / "mylib") and not shows(runtime, project / "runs")


@pytest.mark.parametrize("named", ["/", "home"])
def test_a_pth_naming_the_root_or_a_home_directory_shows_none_of_it(tmp_path, monkeypatch, named):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("key")
    directory = "/" if named == "/" else str(home)
    project_installed_from(tmp_path, monkeypatch, directory)
    runtime = view.python_runtime()
    assert directory not in runtime
    assert not shows(runtime, Path("/etc/passwd")) and not shows(runtime, home / ".ssh")


def test_an_editable_finder_shows_the_packages_it_maps(tmp_path, monkeypatch):
    project = project_installed_from(tmp_path, monkeypatch)
    site = Path(sys.path[-1])
    (site / "__editable___mylib_0_1_finder.py").write_text(
        f"import sys\nMAPPING: dict[str, str] = {{'mylib': {str(project / 'mylib')!r}}}\nNAMESPACES = {{}}\n")
    runtime = view.python_runtime()
    assert shows(runtime, project / "mylib") and not shows(runtime, project / "runs")


@needs_sandbox
def test_a_sandboxed_method_reads_the_installed_package_but_not_the_project_around_it(tmp_path, monkeypatch):
    project = project_installed_from(tmp_path, monkeypatch, "{project}")
    plugin = probe_plugin(tmp_path, "python")
    corpus = small_corpus(tmp_path, 1)
    _, card = run_card(tmp_path, "--method", str(plugin), "--corpus", str(corpus), "--sandbox",
                       *actions(f"read:{project / 'mylib' / '__init__.py'}"), out="package")
    assert card is not None and card.results[0].predicted == "VALUE = 1\n", card and card.results[0].error
    _, card = run_card(tmp_path, "--method", str(plugin), "--corpus", str(corpus), "--sandbox",
                       *actions(f"read:{project / 'runs' / 'earlier' / 'card.json'}"), out="card")
    assert card is not None and card.results[0].predicted is None
    assert card.results[0].error is not None and "Error" in card.results[0].error
