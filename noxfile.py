"""Every development task: `nox` runs tests, lint, typecheck and node; `nox -l` lists them all."""

from __future__ import annotations

import shutil
from pathlib import Path

import nox

nox.options.sessions = ["tests", "lint", "typecheck", "node"]
nox.options.error_on_missing_interpreters = True

ROOT = Path(__file__).parent
NODE_PACKAGE = ROOT / "bridge" / "node"


@nox.session
def tests(session: nox.Session) -> None:
    """Run the Python test suite (pytest)."""
    session.install("-e", ".[test]")
    session.run("pytest", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """Lint Python code with ruff."""
    session.install("ruff")
    session.run("ruff", "check", "sdk", "tests", "benchmarks", "examples", "templates", "noxfile.py")


@nox.session
def typecheck(session: nox.Session) -> None:
    """Type-check the SDK with mypy (strict)."""
    session.install("-e", ".", "mypy")
    session.run("mypy")


@nox.session
def node(session: nox.Session) -> None:
    """Run the Node package's and the examples' tests with node --test (against the Python guest too)."""
    tests = sorted(str(p) for p in (NODE_PACKAGE / "test").glob("*.test.js"))
    tests += sorted(str(p) for p in (ROOT / "examples").glob("*/test/*.test.js"))  # the examples' Node methods
    if not tests:
        session.error("no Node tests found under bridge/node/test")
    session.install("-e", ".")
    mt_eval = Path(session.bin) / "mt-eval"
    session.run("node", "--version", external=True)
    session.run("node", "--test", *tests, external=True, env={"MT_EVAL": str(mt_eval)})


@nox.session
def schemas(session: nox.Session) -> None:
    """Regenerate bridge/schemas/*.schema.json from the msgspec types."""
    session.install("-e", ".")
    session.run("mt-eval", "schemas", "bridge/schemas")


@nox.session
def demo(session: nox.Session) -> None:
    """Validate the examples, evaluate two on the bundled corpus, publish the runs and write the leaderboard site."""
    session.install("-e", ".")
    examples = sorted(str(p.parent.relative_to(ROOT)) for p in (ROOT / "examples").glob("*/method.json"))
    confine = [] if shutil.which("bwrap") else ["--no-sandbox"]
    if confine:
        session.log("bubblewrap (bwrap) is not installed: the bundled examples are imported on this host")
    session.run("mt-eval", "validate", *confine, *examples)
    session.run("mt-eval", "translate", "examples/lexicon-eng-spa", "--file", "examples/lexicon-eng-spa/sample.txt")
    session.run("mt-eval", "run", "--demo", "--out", "runs/demo", "--force")
    session.run("mt-eval", "run", "--method", "examples/rules-eng-spa", "--corpus", "examples/data/eng-spa-demo.json",
                "--out", "runs/demo-rules", "--force", "--quiet")
    board = ROOT / "runs" / "leaderboard"  # a throwaway store for the demo, remade each time
    for stale in board.glob("demo.db*"):
        stale.unlink()
    board.mkdir(parents=True, exist_ok=True)
    store = str(board / "demo.db")
    session.run("mt-eval", "verify", "runs/demo/card.json")
    session.run("mt-eval", "publish", "runs/demo/card.json", "runs/demo-rules/card.json", "--db", store, "--no-input")
    session.run("mt-eval", "leaderboard", "--db", store)
    session.run("mt-eval", "leaderboard", "--db", store, "--out", str(board / "site"), "--title",
                "mt-eval demo leaderboard")
    session.log(f"leaderboard: open {(board / 'site' / 'index.html').as_uri()}, or serve it live with "
                f"`mt-eval leaderboard serve --db {store}`")


@nox.session
def benchmarks(session: nox.Session) -> None:
    """Run the benchmarks under benchmarks/ and print their ratios."""
    session.install("-e", ".", "aiohttp>=3.9")  # aiohttp: the gateway benchmark's client and upstream
    session.run("python", "benchmarks/startup.py")
    session.run("python", "benchmarks/bridge.py", *session.posargs)
    session.run("python", "benchmarks/harness.py", *session.posargs)
    session.run("python", "benchmarks/corpus.py")
    session.run("python", "benchmarks/new_plugin.py")
    session.run("python", "benchmarks/adapter.py")
    session.run("python", "benchmarks/contamination.py")
    session.run("python", "benchmarks/leaderboard.py")
    session.run("python", "benchmarks/sandbox.py", *session.posargs)
    session.run("python", "benchmarks/decisions.py")
