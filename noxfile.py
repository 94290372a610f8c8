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
    session.run("mt-eval", "gate", "runs/demo/card.json", "runs/demo-rules/card.json")
    session.run("mt-eval", "publish", "runs/demo/card.json", "runs/demo-rules/card.json", "--db", store, "--no-input")
    session.run("mt-eval", "leaderboard", "--db", store)
    session.run("mt-eval", "leaderboard", "--db", store, "--out", str(board / "site"), "--title",
                "mt-eval demo leaderboard")
    session.log(f"leaderboard: open {(board / 'site' / 'index.html').as_uri()}, or serve it live with "
                f"`mt-eval leaderboard serve --db {store}`")


UPSTREAM_HARNESS = "mt-eval-harness==0.4.0"  # the upstream harness the `upstream` benchmark times beside ours
MCP_PACKAGES = ("mcp",)  # the MCP Python SDK; its Node SDK comes from npm (MCP_NPM)
MCP_NPM = ("@modelcontextprotocol/sdk", "zod")


@nox.session
def benchmarks(session: nox.Session) -> None:
    """Run every benchmark and print one table of each figure against its target (`-- --peers`: MCP, upstream)."""
    session.install("-e", ".")
    peers = "--peers" in session.posargs
    posargs = [arg for arg in session.posargs if arg != "--peers"]
    figures = Path(session.create_tmp()) / "figures.jsonl"
    figures.unlink(missing_ok=True)
    env = {"MT_EVAL_BENCHMARK_REPORT": str(figures)}
    session.run("python", "benchmarks/startup.py", env=env)
    session.run("python", "benchmarks/bridge.py", *posargs, env=env)
    session.run("python", "benchmarks/harness.py", *posargs, env=env)
    session.run("python", "benchmarks/memory.py", *posargs, env=env)
    session.run("python", "benchmarks/corpus.py", env=env)
    session.run("python", "benchmarks/new_plugin.py", env=env)
    session.run("python", "benchmarks/adapter.py", env=env)
    session.run("python", "benchmarks/contamination.py", env=env)
    session.run("python", "benchmarks/leaderboard.py", env=env)
    session.run("python", "benchmarks/sandbox.py", *posargs, env=env)
    session.run("python", "benchmarks/decisions.py", env=env)
    if peers:
        _mcp_peer(session, env)
        _upstream_harness(session, env)
    session.run("python", "benchmarks/report.py", str(figures))


@nox.session
def mcp(session: nox.Session) -> None:
    """Benchmark the bridge's public path beside the MCP SDKs (Python mcp ⇄ Node @modelcontextprotocol/sdk)."""
    session.install("-e", ".")
    _mcp_peer(session, {})


@nox.session
def upstream(session: nox.Session) -> None:
    """Time the upstream harness (from the package index) beside mt-eval run; scores and intervals must agree."""
    session.install("-e", ".")
    _upstream_harness(session, {})


def _mcp_peer(session: nox.Session, env: dict[str, str]) -> None:
    session.install(*MCP_PACKAGES)
    prefix = Path(session.create_tmp()).resolve() / "mcp-node"
    prefix.mkdir(exist_ok=True)
    session.run("npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--silent", *MCP_NPM,
                external=True)
    session.run("python", "benchmarks/mcp_peer.py", "--mcp-prefix", str(prefix), env=env)


def _upstream_harness(session: nox.Session, env: dict[str, str]) -> None:
    """The upstream harness in a virtual environment of its own: its command is also called mt-eval."""
    venv = Path(session.create_tmp()).resolve() / "upstream-harness"
    if not (venv / "bin" / "mt-eval").exists():
        session.run("python", "-m", "venv", str(venv))
        session.run(str(venv / "bin" / "python"), "-m", "pip", "install", "-q", UPSTREAM_HARNESS, external=True)
    session.run("python", "benchmarks/upstream.py", "--upstream", str(venv / "bin" / "mt-eval"), env=env)
