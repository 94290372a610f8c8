"""Every development task: `nox` runs tests, lint, typecheck, node and journeys; `nox -l` lists them all."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import nox

nox.options.sessions = ["tests", "lint", "typecheck", "node", "journeys"]
# A Python version the package claims but this machine lacks is skipped, and nox's summary says so;
# MT_EVAL_REQUIRE_PYTHONS=1 makes it an error instead (the README says how to get each version).
nox.options.error_on_missing_interpreters = bool(os.environ.get("MT_EVAL_REQUIRE_PYTHONS"))

ROOT = Path(__file__).parent
NODE_PACKAGE = ROOT / "bridge" / "node"
DIST = ROOT / "dist"
USER_VENV = ROOT / ".venv"  # the environment the README's first command creates; `mt-eval` is installed there
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
# Every Python version the package claims, from its classifiers (pyproject.toml is the one list).
PYTHONS = [c.rsplit(" :: ", 1)[1] for c in PROJECT["classifiers"]
           if c.startswith("Programming Language :: Python :: 3.")]
# The linters' versions are pinned, so a new release never fails a build that passed yesterday.
RUFF = "ruff==0.17.6"
MYPY = "mypy==2.4.1"
UV = "uv==0.13.9"
TYPESCRIPT = ("typescript@5.9.3", "@types/node@20.19.43")  # tsc, and the Node API index.d.ts refers to


@nox.session(python=PYTHONS)
def tests(session: nox.Session) -> None:
    """Run the Python test suite (pytest) on every Python version the package claims."""
    session.install("-e", ".[test]")
    session.run("pytest", *session.posargs)


@nox.session(python=PYTHONS[0])
def lowest(session: nox.Session) -> None:
    """Run the Python test suite against the lowest dependency versions pyproject.toml allows."""
    session.install(UV)
    session.run("uv", "pip", "install", "--python", session.virtualenv.location, "--resolution", "lowest-direct",
                "-e", ".[test]")
    session.run("python", "-m", "pip", "list", "--format", "freeze", silent=False)
    session.run("pytest", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """Lint Python code with ruff (pinned)."""
    session.install(RUFF)
    session.run("ruff", "check", "sdk", "tests", "benchmarks", "examples", "templates", "noxfile.py")


@nox.session
def typecheck(session: nox.Session) -> None:
    """Type-check the SDK with mypy and the Node package's declarations with tsc (both strict, pinned)."""
    session.install("-e", ".", MYPY)
    session.run("mypy")
    prefix = Path(session.create_tmp()).resolve() / "typescript"
    prefix.mkdir(exist_ok=True)
    session.run("npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--silent", *TYPESCRIPT,
                external=True)
    # index.d.ts, everything it imports (lib/types/, lib/generated/) and a consumer of them (test/types/consumer.ts)
    session.run(str(prefix / "node_modules" / ".bin" / "tsc"), "-p", str(NODE_PACKAGE / "test" / "types"),
                "--typeRoots", str(prefix / "node_modules" / "@types"), external=True)


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


def user_venv_bin(session: nox.Session) -> Path:
    """``.venv/bin`` with the SDK installed (editable), so ``.venv/bin/mt-eval`` works after the session."""
    python = USER_VENV / "bin" / "python"
    if not python.exists():
        session.run(sys.executable, "-m", "venv", str(USER_VENV), external=True)
    session.run(str(python), "-m", "pip", "install", "-q", "-e", str(ROOT), external=True)
    return USER_VENV / "bin"


@nox.session(venv_backend="none")
def demo(session: nox.Session) -> None:
    """Install mt-eval into .venv, validate the examples, evaluate two, publish them and write the leaderboard."""
    mt_eval = str(user_venv_bin(session) / "mt-eval")

    def run(*args: str) -> None:
        session.run(mt_eval, *args, external=True)

    examples = sorted(str(p.parent.relative_to(ROOT)) for p in (ROOT / "examples").glob("*/method.json"))
    why_not = sandbox_unavailable(USER_VENV / "bin" / "python")
    if why_not:
        session.log(f"the demo runs unconfined, so its rows are not eligible for a prize: {why_not}")
    confine = ["--no-sandbox"] if why_not else []  # validate confines by default
    sandbox = [] if why_not else ["--sandbox"]     # a run does not: sandboxed, its rows are eligible
    run("validate", *confine, *examples)
    run("translate", "examples/lexicon-eng-spa", "--file", "examples/lexicon-eng-spa/sample.txt")
    run("run", "--demo", "--out", "runs/demo", "--force", *sandbox)
    run("run", "--method", "examples/rules-eng-spa", "--corpus", "examples/data/eng-spa-demo.json",
        "--out", "runs/demo-rules", "--force", "--quiet", *sandbox)
    board = ROOT / "runs" / "leaderboard"  # a throwaway store for the demo, remade each time
    for stale in board.glob("demo.db*"):
        stale.unlink()
    board.mkdir(parents=True, exist_ok=True)
    store = "runs/leaderboard/demo.db"
    run("verify", "runs/demo/card.json")
    run("gate", "runs/demo/card.json", "runs/demo-rules/card.json")
    run("publish", "runs/demo/card.json", "runs/demo-rules/card.json", "--db", store, "--no-input")
    run("leaderboard", "--db", store)
    run("leaderboard", "--db", store, "--out", "runs/leaderboard/site", "--title", "mt-eval demo leaderboard")
    print(DEMO_NEXT.format(site=(board / "site" / "index.html").as_uri(), store=store), flush=True)


def sandbox_unavailable(python: Path) -> str:
    """Why this host cannot confine a method (bubblewrap missing or not allowed), or "" when it can."""
    probe = "from mt_eval.sandbox.isolation import find_tool\nfind_tool()"
    done = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, check=False)
    if done.returncode == 0:
        return ""
    lines = done.stderr.strip().splitlines()
    return lines[-1].split(": ", 1)[-1] if lines else f"exit status {done.returncode}"


DEMO_NEXT = """
What the demo wrote:
  run cards      runs/demo/card.json, runs/demo-rules/card.json (scores, covariates, every entry's result)
  predictions    runs/demo/predictions.txt (one line per corpus entry), results in runs/demo/results.jsonl
  leaderboard    {site}
                 (live: .venv/bin/mt-eval leaderboard serve --db {store})

mt-eval is installed in .venv: run it as .venv/bin/mt-eval, or `. .venv/bin/activate` and then mt-eval.
Next, your own method and corpus:
  .venv/bin/mt-eval new my-method                                  # a method plugin: answer its questions
  .venv/bin/mt-eval run --method my-method --corpus my-method/sample/corpus.jsonl   # 5 entries: no headline, exit 5
  .venv/bin/mt-eval run --method my-method --corpus dev.tsv --pair 'eng>spa'   # your corpus (TSV: source<TAB>reference)
Each run writes runs/METHOD__CORPUS/: card.json, predictions.txt, results.jsonl (--out DIR to choose).
The README's "The first hour" walks through a new method, a wrapped translator program and an app."""


@nox.session
def build(session: nox.Session) -> None:
    """Build the SDK wheel and the Node package tarball into dist/ (installable without any registry)."""
    for stale in [*DIST.glob("mt_eval_sdk-*.whl"), *DIST.glob("mt-eval-bridge-*.tgz")]:
        stale.unlink()
    DIST.mkdir(exist_ok=True)
    session.run("python", "-m", "pip", "wheel", "-q", "--no-deps", "--wheel-dir", str(DIST), str(ROOT))
    session.run("npm", "pack", "--silent", "--pack-destination", str(DIST), str(NODE_PACKAGE), external=True)
    wheel = next(DIST.glob("mt_eval_sdk-*.whl")).relative_to(ROOT)
    tarball = next(DIST.glob("mt-eval-bridge-*.tgz")).relative_to(ROOT)
    print(f"""
{wheel}   the SDK and the mt-eval command:  pip install {ROOT / wheel}
{tarball}   the Node package (mt-eval-bridge, mt-eval-locales), in an app:  npm install {ROOT / tarball}""",
          flush=True)


@nox.session
def journeys(session: nox.Session) -> None:
    """Follow the README's first hour from a fresh copy: the first command, a new method, a wrapped program, an app."""
    session.install("pytest")
    session.run("pytest", "-c", str(ROOT / "tests" / "journeys" / "pytest.ini"), str(ROOT / "tests" / "journeys"),
                *session.posargs)


UPSTREAM_HARNESS = "mt-eval-harness==0.4.0"  # the upstream harness the `upstream` benchmark times beside ours
MCP_PACKAGES = ("mcp",)  # the MCP Python SDK; its Node SDK comes from npm (MCP_NPM)
MCP_NPM = ("@modelcontextprotocol/sdk", "zod")


@nox.session
def benchmarks(session: nox.Session) -> None:
    """Run every benchmark and print one table of each figure against its target (`-- --peers`: MCP, upstream)."""
    session.install("-e", ".", "aiohttp>=3.9")  # aiohttp: the gateway benchmark's client and upstream
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
