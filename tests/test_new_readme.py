"""``mt-eval new``: the generated README's first commands agree with the next steps `mt-eval new` prints, and the
README holds none of the texts of the sample corpus or the demo corpus: a run's contamination check never counts it."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from new_plugins import CORPUS, REPO, new


def test_the_readmes_translate_example_is_the_one_printed_and_in_no_corpus(tmp_path, capsys):
    """The README translated "Good night, my friend!", the sample's first source, so a run of the sample named the
    README first among the bundle's files holding evaluation data; `mt-eval new` printed another, a demo source."""
    directory = tmp_path / "p"
    assert new(str(directory), "--no-input", "--set", "runtime=both") == 0
    printed = re.search(r' translate \. "([^"]+)"', capsys.readouterr().out)
    written = re.search(r'^mt-eval translate \. "([^"]+)"', (directory / "README.md").read_text(encoding="utf-8"),
                        re.M)
    assert printed is not None and written is not None
    assert written.group(1) == printed.group(1)
    demo = json.loads((REPO / "examples" / "data" / "eng-spa-demo.json").read_text(encoding="utf-8"))
    assert written.group(1) not in {entry["source"] for entry in [*CORPUS, *demo["entries"]]}
    checked = subprocess.run([sys.executable, "-m", "mt_eval.cli", "contamination", "--method", ".", "--corpus",
                              "sample/corpus.jsonl"], cwd=directory, capture_output=True, text=True, timeout=120)
    assert "CONTAMINATED" in checked.stdout, checked.stdout + checked.stderr  # (the sample is in the bundle)
    assert "README.md:" not in checked.stdout
