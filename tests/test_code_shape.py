"""The shape of the code a newcomer reads (README, *Architecture*): no module over 400 lines, and the parsed
command line stays inside the CLI package — below it, the workflows take typed requests."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parent.parent
PACKAGE = ROOT / "sdk" / "mt_eval"
CLI = PACKAGE / "cli"
MAX_LINES = 400
# Written by `mt-eval schemas`, not by hand: only its TypeScript declarations, read like modules, are checked there.
NOT_HAND_WRITTEN = [ROOT / "bridge" / "node" / "lib" / "generated"]


def source_files() -> list[Path]:
    """Every hand-written Python and JavaScript file, and every TypeScript declaration file (generated ones too):
    the SDK, tests, benchmarks, examples, the template, Node."""
    places = [PACKAGE, ROOT / "tests", ROOT / "benchmarks", ROOT / "examples", ROOT / "templates",
              ROOT / "bridge" / "node"]
    found = [ROOT / "noxfile.py"]
    for place in places:
        for pattern in ("*.py", "*.js", "*.mjs"):
            found += [path for path in place.rglob(pattern)
                      if "node_modules" not in path.parts and not any(path.is_relative_to(skip)
                                                                      for skip in NOT_HAND_WRITTEN)]
        found += [path for path in place.rglob("*.d.ts") if "node_modules" not in path.parts]
    return sorted(found)


def python_outside_cli() -> list[Path]:
    return sorted(path for path in PACKAGE.rglob("*.py") if not path.is_relative_to(CLI))


def shown(path: Path) -> str:
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name


def too_long(paths: list[Path]) -> dict[str, int]:
    """Each file over `MAX_LINES`, with its length."""
    return {shown(path): lines
            for path in paths if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}


def namespace_uses(paths: list[Path]) -> list[str]:
    """Each line that reads an argparse namespace or imports argparse, as ``file:line: text``."""
    reads_args = re.compile(r"^\s*[^#\s].*getattr\(args\b|^\s*(import|from)\s+argparse\b")
    return [f"{shown(path)}:{number}: {line.strip()}" for path in paths
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if reads_args.search(line)]


def test_the_files_checked_include_the_sdk_the_tests_and_the_node_package():
    files = {path.relative_to(ROOT).as_posix() for path in source_files()}
    assert {"sdk/mt_eval/harness/session.py", "tests/test_code_shape.py", "bridge/node/lib/host.js",
            "noxfile.py"} <= files
    generated = {name for name in files if name.startswith("bridge/node/lib/generated/")}
    assert {"bridge/node/index.d.ts", "bridge/node/lib/types/host.d.ts"} <= files
    assert {"bridge/node/lib/generated/contract.d.ts", "bridge/node/lib/generated/run-card.d.ts"} <= generated
    assert all(name.endswith(".d.ts") for name in generated)


def test_no_module_is_longer_than_400_lines():
    long = too_long(source_files())
    assert not long, f"split these by concern (at most {MAX_LINES} lines each): {long}"


def test_no_argparse_namespace_below_the_cli_package():
    found = namespace_uses(python_outside_cli())
    assert not found, "build a typed request in mt_eval/cli/ instead:\n" + "\n".join(found)


def test_the_checks_find_a_long_module_and_a_namespace(tmp_path):
    long, short = tmp_path / "long.py", tmp_path / "short.py"
    long.write_text("x = 1\n" * (MAX_LINES + 1), encoding="utf-8")
    short.write_text("x = 1\n" * MAX_LINES, encoding="utf-8")
    assert too_long([long, short]) == {"long.py": MAX_LINES + 1}
    reads = tmp_path / "reads.py"
    read = "getattr(" + "args"  # spelled apart, so that `git grep` finds the words only in mt_eval/cli/
    lines = ["import argparse", f'# {read}, "said in a comment")', f'corpus = {read}, "corpus", None)',
             "value = getattr(arguments_file, 'x')", '"""No argparse namespace below."""']
    reads.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert namespace_uses([reads]) == ["reads.py:1: import argparse", f'reads.py:3: corpus = {read}, "corpus", None)']
