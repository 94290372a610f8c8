"""What a method's code does inside ``translate()`` to the process — changing the working directory, importing a
module of its own by name — costs neither the run's files nor a message that says how to fix it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

MANIFEST = {"name": "M", "entry_point": "pipeline:Method", "supported_pairs": ["eng>spa"], "dependency_class": "S",
            "dependencies": []}

CHANGES_DIRECTORY_IN_TRANSLATE = """
import os


class Method:
    async def translate(self, entries, config):
        os.chdir(config.params["elsewhere"])
        return [{"id": e["id"], "predicted": e["source"].upper()} for e in entries]
"""


def _mt_eval(*words: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mt_eval.cli", *words], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("latency_sample", ["0", "1"])
def test_a_method_that_changes_the_working_directory_in_translate_does_not_move_the_run(
        make_plugin, tmp_path: Path, latency_sample: str):
    """The run failed halfway (`[Errno 2] No such file or directory: 'run/.run.json.N.tmp'`), or wrote its files
    relative to the directory the method changed to; the latency calls (sample 1) and the scored calls (sample 0)
    both change it first."""
    plugin = make_plugin(MANIFEST, {"pipeline.py": CHANGES_DIRECTORY_IN_TRANSLATE})
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    work.mkdir()
    elsewhere.mkdir()
    (work / "corpus.jsonl").write_text('{"id": "1", "source": "hi", "reference": "HI"}\n'
                                       '{"id": "2", "source": "yo", "reference": "YO"}\n')
    done = _mt_eval("run", "--method", os.path.relpath(plugin, work), "--corpus", "corpus.jsonl", "--pair", "eng>spa",
                    "--out", "run", "--resamples", "100", "--latency-sample", latency_sample,
                    "--param", f"elsewhere={elsewhere}", cwd=work)
    assert done.returncode in (0, 5), done.stderr
    card = json.loads((work / "run" / "card.json").read_text())
    assert [r["predicted"] for r in card["results"]] == ["HI", "YO"]
    assert (work / "run" / "predictions.txt").read_text() == "HI\nYO\n"
    assert list(elsewhere.iterdir()) == []
    assert "  run card     run/card.json" in done.stdout  # (still as typed)
    warning = (f"mt-eval: warning: the method's translate() changed the working directory to {elsewhere}; it is "
               "changed back (open the plugin's files by their path: its directory is given to __init__ as "
               "`directory`)")
    assert done.stderr.count(warning) == 1, done.stderr


LATE_SIBLING_IMPORT = """
import utils


class Method:
    async def translate(self, entries, config):
        import utils as again
        return [{"id": e["id"], "predicted": again.tag(e["source"])} for e in entries]
"""

RELATIVE_SIBLING_IMPORT = """
class Method:
    async def translate(self, entries, config):
        from . import utils
        return [{"id": e["id"], "predicted": utils.tag(e["source"])} for e in entries]
"""


def test_importing_a_sibling_module_by_name_inside_translate_says_which_file_and_the_fix(make_plugin,
                                                                                          tmp_path: Path):
    """It said only `ModuleNotFoundError: No module named 'utils'`, though utils.py is beside pipeline.py."""
    plugin = make_plugin(MANIFEST, {"pipeline.py": LATE_SIBLING_IMPORT,
                                    "utils.py": "def tag(s):\n    return s + '!'\n"})
    done = _mt_eval("translate", str(plugin), "hi", "--pair", "eng>spa", cwd=tmp_path)
    assert done.returncode == 1
    assert (f"[error] the method failed: ModuleNotFoundError: No module named 'utils' (pipeline.py:7): utils.py is in "
            f"the plugin's directory {plugin.resolve()}, whose modules can be imported by name only as the plugin is "
            "imported: import it at the top of the module, or write `from . import utils` here") in done.stdout


def test_the_relative_import_the_message_gives_works_inside_translate(make_plugin, tmp_path: Path):
    plugin = make_plugin(MANIFEST, {"pipeline.py": RELATIVE_SIBLING_IMPORT,
                                    "utils.py": "def tag(s):\n    return s + '!'\n"})
    done = _mt_eval("translate", str(plugin), "hi", "--pair", "eng>spa", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "hi!\n"), done.stderr


def test_a_missing_module_that_is_not_the_plugins_own_gets_no_such_advice(make_plugin, tmp_path: Path):
    plugin = make_plugin(MANIFEST, {"pipeline.py": LATE_SIBLING_IMPORT.replace("utils", "not_installed_anywhere")
                                    .replace("import not_installed_anywhere\n\n\n", ""),
                                    "utils.py": "def tag(s):\n    return s\n"})
    done = _mt_eval("translate", str(plugin), "hi", "--pair", "eng>spa", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout.startswith("[error] the method failed: ModuleNotFoundError: No module named "
                                  "'not_installed_anywhere'\n"), done.stdout


CHANGES_DIRECTORY_IN_DECIDE = """
import os


class Method:
    async def decide(self, rows, config):
        os.chdir(config.params["elsewhere"])
        return [{"id": row["id"], "answers": {name: {"probabilities": {"true": 0.5, "false": 0.5}}
                 for name in row["questions"]}} for row in rows]
"""


def test_a_method_that_changes_the_working_directory_in_decide_does_not_move_the_run(make_plugin, tmp_path: Path):
    """`mt-eval decide run --out run` wrote its card relative to the directory the method changed to, or failed."""
    plugin = make_plugin({"name": "M", "entry_point": "pipeline:Method", "implements": ["decide"],
                          "dependency_class": "S", "dependencies": []}, {"pipeline.py": CHANGES_DIRECTORY_IN_DECIDE})
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    work.mkdir()
    elsewhere.mkdir()
    question = {"type": "noul", "instructions": "Is it adequate?"}
    (work / "rows.jsonl").write_text("".join(json.dumps({"id": f"r{i}", "state": {}, "questions": {"ok": question},
                                                         "gold": {"ok": "true"}}) + "\n" for i in range(4)))
    done = _mt_eval("decide", "run", "--method", os.path.relpath(plugin, work), "--corpus", "rows.jsonl", "--out",
                    "run", "--resamples", "0", "--batch-size", "1", "--param", f"elsewhere={elsewhere}", cwd=work)
    assert done.returncode == 0, done.stderr
    assert len(json.loads((work / "run" / "card.json").read_text())["results"]) == 4
    assert list(elsewhere.iterdir()) == []
    assert done.stderr.count("warning: the method's decide() changed the working directory") == 1, done.stderr


CHANGES_DIRECTORY_IN_CONSTRUCTOR = """
import os


class Method:
    def __init__(self):
        os.chdir(os.environ["ELSEWHERE"])

    async def translate(self, entries, config):
        return [{"id": e["id"], "predicted": e["source"].upper()} for e in entries]
"""


def test_a_method_whose_constructor_changes_the_working_directory_does_not_move_the_run(make_plugin,
                                                                                         tmp_path: Path):
    """The run was written, without a word, under the directory the constructor changed to, and `run card
    run/card.json` named a file that was not there."""
    plugin = make_plugin(MANIFEST, {"pipeline.py": CHANGES_DIRECTORY_IN_CONSTRUCTOR})
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    work.mkdir()
    elsewhere.mkdir()
    (work / "corpus.jsonl").write_text('{"id": "1", "source": "hi", "reference": "HI"}\n')
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "run", "--method", os.path.relpath(plugin, work),
                           "--corpus", "corpus.jsonl", "--pair", "eng>spa", "--out", "run", "--resamples", "100"],
                          cwd=work, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "ELSEWHERE": str(elsewhere)})
    assert done.returncode in (0, 5), done.stderr
    assert (work / "run" / "card.json").is_file()
    assert list(elsewhere.iterdir()) == []
    assert (f"mt-eval: warning: the method's __init__() changed the working directory to {elsewhere}; it is changed "
            "back") in done.stderr
