"""What a source locale file's values become in the target, the same from ``mt-eval locales`` and the Node
``mt-eval-locales``: numbers copied as written."""

from __future__ import annotations

from pathlib import Path

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

