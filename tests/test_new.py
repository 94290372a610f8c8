"""``mt-eval new``: every runtime × dependency profile (with the method class varied across them) renders a
plugin that validates with the intended class, passes its own tests, translates through the loader (the
Node runtime through the bridge) and behaves identically in both runtimes."""

from __future__ import annotations

import ast
import hashlib
import json
import re
import shlex
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from mt_eval.bridge.method import BridgeMethod
from mt_eval.bridge.runtimes import node_command
from mt_eval.cli import main
from mt_eval.loader import load_method
from mt_eval.records import RunConfig
from new_plugins import (
    CLASSES,
    CORPUS,
    GLOSSARY_OUTPUT,
    INTENDED_CLASS,
    MATRIX,
    QUESTIONS,
    REFERENCES,
    REPO,
    TEMPLATE,
    combo_id,
    new,
)

# --- one generated plugin per combination, shared by the tests below --------------------------------------

@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str, str], Path]:
    """Each combination rendered once with ``mt-eval new --no-input``: its directory. (How fast: the figure of
    ``benchmarks/new_plugin.py``.)"""
    root = tmp_path_factory.mktemp("generated")
    plugins = {}
    for runtime, profile, method_class in MATRIX:
        directory = root / f"{runtime}-{profile}-{method_class}"
        status = new(str(directory), "--no-input", "--set", f"runtime={runtime}",
                     "--set", f"dependency_profile={profile}", "--set", f"method_class={method_class}")
        assert status == 0, f"mt-eval new failed for {runtime}/{profile}/{method_class}"
        plugins[(runtime, profile, method_class)] = directory
    return plugins


def plugin(generated: dict[tuple[str, str, str], Path], combo: tuple[str, str, str]) -> Path:
    return generated[combo]


class StandIn(BaseHTTPRequestHandler):
    """Loopback stand-in for both HTTP profiles: chat completions and a LibreTranslate-style /translate.

    Corpus sentences get their reference; other text is echoed with what the request asked for, so that
    the two runtimes' requests can be compared through their results; "!fail" gets an HTTP error.
    """

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path.endswith("/chat/completions"):
            source = body["messages"][-1]["content"]
            text = REFERENCES.get(source, f"[{body['model']}|{body['messages'][0]['content'][:60]}] {source}")
            usage = {"prompt_tokens": 9, "completion_tokens": 3}
            status, answer = (503, {"error": {"message": "overloaded"}}) if source == "!fail" else (
                200, {"choices": [{"message": {"content": text}}], "usage": usage})
        else:
            source = body["q"]
            text = REFERENCES.get(source, f"[{body['source']}>{body['target']}] {source}")
            status, answer = (400, {"error": "unsupported"}) if source == "!fail" else (200, {"translatedText": text})
        payload = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass



class LoopbackServer(ThreadingHTTPServer):
    """A threaded HTTP server whose listen queue takes a burst of concurrent requests without delay."""

    request_queue_size = 64

@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The stand-in server's base address, on 127.0.0.1 only."""
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    for variable in ("MT_EVAL_LLM_API_KEY", "MT_EVAL_TRANSLATION_API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    server = LoopbackServer(("127.0.0.1", 0), StandIn)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def working_config(profile: str, base: str) -> RunConfig:
    if profile == "llm-gateway":
        return RunConfig(source_lang="eng", target_lang="spa", base_url=base + "/v1", model="stand-in")
    if profile == "external-api":
        return RunConfig(source_lang="eng", target_lang="spa", params={"api_url": base + "/translate"})
    return RunConfig(source_lang="eng", target_lang="spa")


def comparable(results: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(r["id"], r.get("predicted"), r.get("error")) for r in results]


# --- the matrix -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("combo", MATRIX, ids=combo_id)
def test_mt_eval_validate_passes_with_the_intended_class(generated, combo, capsys):
    runtime, profile, method_class = combo
    capsys.readouterr()
    assert main(["validate", "--strict", "--json", str(plugin(generated, combo))]) == 0
    report = json.loads(capsys.readouterr().out)["plugins"][0]
    assert (report["derived_class"], report["declared_class"]) == (INTENDED_CLASS[profile],) * 2
    assert report["class"] == method_class
    assert report["runtime"] == ("node" if runtime == "node" else "python")
    assert report["problems"] == []


@pytest.mark.parametrize("combo", [c for c in MATRIX if c[0] != "node"], ids=combo_id)
def test_the_plugins_own_python_tests_pass(generated, combo):
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
                         cwd=plugin(generated, combo), capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert re.search(r"\b([4-9]|\d\d) passed\b", run.stdout), run.stdout


@pytest.mark.parametrize("combo", [c for c in MATRIX if c[0] != "python"], ids=combo_id)
def test_the_plugins_own_node_tests_pass(generated, combo):
    run = subprocess.run(["node", "--test"], cwd=plugin(generated, combo), capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    passed = re.search(r"^# pass (\d+)$", run.stdout, re.M)
    assert passed and int(passed.group(1)) >= 4 and "# fail 0" in run.stdout, run.stdout


@pytest.mark.parametrize("combo", MATRIX, ids=combo_id)
async def test_three_entries_translate_through_the_loader(generated, combo, stand_in):
    runtime, profile, _ = combo
    loaded = load_method(plugin(generated, combo))
    assert isinstance(loaded.method, BridgeMethod) == (runtime == "node")
    try:
        results = await loaded.method.translate([dict(e) for e in CORPUS[:3]], working_config(profile, stand_in))
    finally:
        if isinstance(loaded.method, BridgeMethod):
            await loaded.method.aclose()
    expected = GLOSSARY_OUTPUT if profile in ("self-contained", "open-artifact") else [
        e["reference"] for e in CORPUS[:3]]
    assert comparable(results) == [(e["id"], text, None) for e, text in zip(CORPUS[:3], expected, strict=True)]


# --- both runtimes behave identically ---------------------------------------------------------------------

TRICKY = ["The house and the city, please!", "THE CAT drinks WATER", "The... house?", "", "Ünïcode cat 🙂 — a dog",
          "i read every day; the water", "don't stop", "!fail", "tab\tthe\ncat"]


def parity_cases(profile: str, base: str, scratch: Path, directory: Path) -> list[tuple[RunConfig, list[str]]]:
    """Configurations and sources on which pipeline.py and translate.js must agree, failures included."""
    sources = [e["source"] for e in CORPUS] + TRICKY
    config = working_config(profile, base)
    cases = [(config, sources)]
    if profile == "open-artifact":
        changed = scratch / "changed.tsv"
        changed.write_bytes((directory / "glossary.tsv").read_bytes() + b"cat\tgatito\n")
        mirror = scratch / "mirror.tsv"
        shutil.copyfile(directory / "glossary.tsv", mirror)
        cases += [(RunConfig(source_lang="eng", target_lang="spa", params={"artifact_path": str(p)}), sources[:3])
                  for p in (changed, mirror, scratch / "absent.tsv", scratch)]
    elif profile == "llm-gateway":
        cases += [(RunConfig(source_lang="fra", target_lang="deu", base_url=base + "/v1/", model="m2",
                             temperature=0.2, seed=3), ["Bonjour", "!fail"]),
                  (RunConfig(source_lang="eng", target_lang="spa", model="m"), ["a"]),
                  (RunConfig(source_lang="eng", target_lang="spa", base_url=base + "/v1"), ["a"]),
                  (RunConfig(source_lang="eng", target_lang="spa", base_url="ftp://x", model="m"), ["a"])]
    elif profile == "external-api":
        cases += [(RunConfig(source_lang="eng", target_lang="spa", params={
                      "api_url": base + "/translate", "language_codes": {"eng": "en", "spa": "es"}}), ["Hi", "!fail"]),
                  (RunConfig(source_lang="eng", target_lang="spa"), ["a"]),
                  (RunConfig(source_lang="eng", target_lang="spa", params={"api_url": 5}), ["a"]),
                  (RunConfig(source_lang="eng", target_lang="spa",
                             params={"api_url": base + "/translate", "language_codes": ["en"]}), ["a"])]
    return cases


@pytest.mark.parametrize("combo", [c for c in MATRIX if c[0] == "both"], ids=combo_id)
async def test_pipeline_py_and_translate_js_behave_identically(generated, combo, stand_in, tmp_path):
    directory = plugin(generated, combo)
    python = load_method(directory).method
    node = BridgeMethod(node_command(directory), label="node")
    try:
        for config, sources in parity_cases(combo[1], stand_in, tmp_path, directory):
            entries = [{"id": f"e{i}", "source": s} for i, s in enumerate(sources)]
            from_python = comparable(await python.translate([dict(e) for e in entries], config))
            from_node = comparable(await node.translate([dict(e) for e in entries], config))
            assert from_python == from_node, config
    finally:
        await node.aclose()


# --- a generated plugin stands on its own -----------------------------------------------------------------

def test_a_copied_plugin_needs_nothing_from_this_repository(generated, tmp_path):
    source = plugin(generated, ("both", "self-contained", CLASSES[8 % len(CLASSES)]))
    copy = shutil.copytree(source, tmp_path / "elsewhere" / "copied")
    for file in copy.rglob("*"):
        if file.is_file() and "__pycache__" not in file.parts:  # bytecode an import left is not the plugin's text
            text = file.read_text(encoding="utf-8")
            assert str(REPO) not in text and "templates/method-plugin" not in text and "_variants" not in text, file
    for plugin_dir in set(generated.values()):
        for script in plugin_dir.rglob("*.js"):
            code = script.read_text(encoding="utf-8")
            specifiers = re.findall(r"^import .*?from '([^']+)';$", code, re.M | re.S)
            assert all(s.startswith(("node:", "./", "../")) for s in specifiers), script
            assert "require(" not in code and "import(" not in code, script
        own_modules = {p.stem for p in plugin_dir.glob("*.py")}  # pipeline.py and the modules beside it
        for source in plugin_dir.glob("*.py"):
            tree = ast.parse(source.read_text(encoding="utf-8"))
            modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | {
                a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
            allowed = set(sys.stdlib_module_names) | {"__future__"} | own_modules
            assert {m.split(".")[0] for m in modules if m} <= allowed, source
    entries = json.dumps(CORPUS[:3])
    node = subprocess.run(
        ["node", "--input-type=module", "-e", "const m = await import('./translate.js'); process.stdout.write("
         "JSON.stringify((await m.translate(JSON.parse(process.argv[1]), {source_lang: 'eng', target_lang: 'spa', "
         "params: {}})).map((r) => r.predicted)));", entries],
        cwd=copy, capture_output=True, text=True, timeout=60, env={"PATH": "/usr/local/bin:/usr/bin:/bin"})
    assert node.returncode == 0, node.stderr
    assert json.loads(node.stdout) == GLOSSARY_OUTPUT
    python = subprocess.run(  # -S: no site-packages at all, only the standard library
        [sys.executable, "-S", "-c", "import asyncio, json, sys, types, pipeline; m = pipeline.GlossaryMethod('.');"
         "c = types.SimpleNamespace(source_lang='eng', target_lang='spa', params={}); "
         "print(json.dumps([r['predicted'] for r in asyncio.run(m.translate(json.loads(sys.argv[1]), c))]))", entries],
        cwd=copy, capture_output=True, text=True, timeout=60)
    assert python.returncode == 0, python.stderr
    assert json.loads(python.stdout) == GLOSSARY_OUTPUT


def test_the_answers_are_recorded_and_regenerate_the_same_plugin(tmp_path, capsys):
    first = tmp_path / "first"
    assert new(str(first), "--no-input", "--set", "runtime=both", "--set", "dependency_profile=llm-gateway",
               "--set", "method_class=coached-llm", "--set", "method_name=Método Ñandú", "--set", "author=Ana",
               "--set", "open_source=yes", "--set", "open_source_url=https://example.org/code") == 0
    recorded = json.loads((first / ".mt-eval-answers.json").read_text(encoding="utf-8"))
    assert recorded["answers"]["open_source"] is True
    assert recorded["answers"]["method_name"] == "Método Ñandú"
    assert not any(key.startswith("_") for key in recorded["answers"])
    second = tmp_path / "elsewhere" / "second"
    assert new(str(second), "--answers", str(first / ".mt-eval-answers.json"), "--no-input") == 0
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    assert all((first / f).read_bytes() == (second / f).read_bytes() for f in files)
    manifest = json.loads((first / "method.json").read_text(encoding="utf-8"))
    assert (manifest["name"], manifest["method_id"], manifest["author"]) == ("Método Ñandú", "first", "Ana")
    card = json.loads((first / "method_card.json").read_text(encoding="utf-8"))
    assert card["open_source"] is True and card["prompt_published"] is True and card["paradigm"] == "llm"
    assert "Guidelines:" in (first / "prompt.txt").read_text(encoding="utf-8")  # coached-llm


def test_the_pinned_checksum_is_the_sample_glossarys():
    glossary = TEMPLATE / "{{cookiecutter.method_id}}" / "_variants" / "glossary" / "glossary.tsv"
    assert QUESTIONS["__glossary_sha256"] == hashlib.sha256(glossary.read_bytes()).hexdigest()


def test_the_hook_checks_answers_with_the_sdks_rules():
    hook = (TEMPLATE / "hooks" / "pre_gen_project.py").read_text(encoding="utf-8")
    assert "from mt_eval.scaffold_answers import answer_problems" in hook
    assert "KEBAB" not in hook and "re.match" not in hook  # no second copy of a rule


def test_the_parity_test_fails_when_translate_js_drifts(generated, tmp_path):
    directory = tmp_path / "drifted"
    shutil.copytree(plugin(generated, ("both", "self-contained", CLASSES[8 % len(CLASSES)])), directory)
    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_parity.py"],
                              cwd=directory, capture_output=True, text=True, timeout=120)
    assert run().returncode == 0
    code = (directory / "translate.js").read_text(encoding="utf-8")
    assert "return head.toUpperCase() + rest.join('');" in code
    (directory / "translate.js").write_text(code.replace("return head.toUpperCase() + rest.join('');",
                                                         "return head + rest.join('');"), encoding="utf-8")
    failed = run()
    assert failed.returncode == 1
    assert "pipeline.py and translate.js disagree:" in failed.stdout
    assert 'pipeline.py {"id": "s1", "predicted": "Buenas noches, mi amigo!", "error": null}' in failed.stdout
    assert 'translate.js {"id": "s1", "predicted": "buenas noches, mi amigo!", "error": null}' in failed.stdout


def test_a_both_plugin_of_every_profile_has_a_parity_test_and_the_others_none(generated):
    for (runtime, profile, _), directory in generated.items():
        assert (directory / "tests" / "test_parity.py").exists() == (runtime == "both"), (runtime, profile)
        assert (directory / "tests" / "node_side.py").exists() == (runtime == "both")
        for test_file in (directory / "tests").glob("test_*.py"):
            assert "pip install mt-eval-sdk" not in test_file.read_text(encoding="utf-8")
        readme = (directory / "README.md").read_text(encoding="utf-8")
        if runtime != "node":
            assert "nox -s build" in readme and "mt_eval_sdk-*.whl" in readme and "python -m pytest tests" in readme


@pytest.mark.parametrize("combo", [c for c in MATRIX if c[0] != "python"], ids=combo_id)
def test_the_readmes_first_run_works_as_written(generated, combo, stand_in):
    """The README's `mt-eval run` line, run as it is written (an endpoint's address where it asks for one): the
    five sample entries are translated and scored, and the run exits 5 (no headline from five), as it says."""
    directory = plugin(generated, combo)
    readme = (directory / "README.md").read_text(encoding="utf-8")
    line = next(line for line in readme.splitlines() if line.startswith("mt-eval run "))
    line = line.split("   #")[0].replace("http://127.0.0.1:8000/v1", f"{stand_in}/v1")
    line = line.replace("https://translate.example.org/translate", f"{stand_in}/translate")
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", *shlex.split(line)[1:]], cwd=directory,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 5, done.stdout + done.stderr
    assert "a headline needs at least 30" in done.stdout
    card = re.search(r"run card +(\S+)", done.stdout)
    assert card is not None, done.stdout
    predictions = (directory / card.group(1)).with_name("predictions.txt").read_text(encoding="utf-8").splitlines()
    assert len(predictions) == len(CORPUS) and all(predictions)  # every entry translated, none failed


def test_the_readmes_regenerate_line_works_in_a_directory_named_otherwise(generated, tmp_path):
    """The README's regenerate line, run in the plugin's directory as it says, writes the plugin there, whatever
    the directory is called (not into a new directory named after the method id)."""
    directory = tmp_path / "renamed"
    shutil.copytree(plugin(generated, MATRIX[0]), directory)
    readme = (directory / "README.md").read_text(encoding="utf-8")
    line = next(line for line in readme.splitlines() if line.startswith("mt-eval new "))
    before = {p.relative_to(directory): p.read_bytes() for p in directory.rglob("*") if p.is_file()}
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", *shlex.split(line)[1:]], cwd=directory,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["renamed"]
    assert {p.relative_to(directory): p.read_bytes() for p in directory.rglob("*") if p.is_file()} == before


def test_a_proprietary_plugin_says_unlicensed_to_npm_and_validates(tmp_path, capsys):
    """npm's word for a package no one may use is UNLICENSED; "proprietary" in package.json is no licence it knows."""
    directory = tmp_path / "closed"
    assert new(str(directory), "--no-input", "--set", "runtime=both", "--set", "method_license=proprietary") == 0
    assert json.loads((directory / "package.json").read_text(encoding="utf-8"))["license"] == "UNLICENSED"
    assert json.loads((directory / "method_card.json").read_text(encoding="utf-8"))["license"] == "proprietary"
    capsys.readouterr()
    assert main(["validate", str(directory)]) == 0, capsys.readouterr().out


def test_an_author_with_a_vertical_bar_stays_in_its_cell_of_the_readme_table(tmp_path):
    directory = tmp_path / "barred"
    assert new(str(directory), "--no-input", "--set", "author=Ana | Bo Lab") == 0
    rows = [line for line in (directory / "README.md").read_text(encoding="utf-8").splitlines()
            if line.startswith("| author ")]
    assert rows == ["| author | Ana \\| Bo Lab |"]


def test_the_readmes_test_environment_leaves_the_contamination_check_clean(tmp_path):
    """The virtual environment the README's "Tests" makes lands outside the plugin: inside, every run's
    contamination check would read its thousands of files and call the bundle unverified (its links)."""
    directory = tmp_path / "checked"
    assert new(str(directory), "--no-input") == 0
    block = re.search(r"## Tests\n.*?```sh\n(.*?)```", (directory / "README.md").read_text(encoding="utf-8"), re.S)
    assert block is not None
    venv = shlex.split(block.group(1).splitlines()[0])
    assert venv[:3] == ["python3", "-m", "venv"]
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv[3]], cwd=directory, check=True, timeout=60)
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "contamination", "--method", ".", "--corpus",
                           str(REPO / "examples" / "data" / "eng-spa-demo.json"), "--quiet"],
                          cwd=directory, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:]
    assert "CLEAN" in done.stdout


@pytest.mark.parametrize("runtime", ["python", "node"])
def test_a_glossary_plugin_declines_the_demo_corpus_negative_controls_and_earns_its_headline(tmp_path, runtime):
    """Run on the bundled demo corpus, the generated method abstains on its negative controls (an empty source, a
    garbled one, a pair it does not support) instead of translating them, so the gate gives it a headline."""
    directory = tmp_path / "glossary"
    assert new(str(directory), "--no-input", "--set", f"runtime={runtime}") == 0
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "run", "--method", str(directory), "--corpus",
                           str(REPO / "examples" / "data" / "eng-spa-demo.json"), "--out", str(tmp_path / "run"),
                           "--latency-sample", "0"], capture_output=True, text=True, timeout=180)
    assert "negative controls 0/3 (0.0%) violated" in done.stdout, done.stdout + done.stderr[-2000:]
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    assert "headline: chrF++" in done.stdout
