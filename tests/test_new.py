"""``mt-eval new``: every runtime × dependency profile (with the method class varied across them) renders a
plugin that validates with the intended class, passes its own tests, translates through the loader (the
Node runtime through the bridge) and behaves identically in both runtimes; refused answers write nothing."""

from __future__ import annotations

import ast
import hashlib
import io
import itertools
import json
import re
import shutil
import subprocess
import sys
import threading
import time
import zipfile
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
from mt_eval.scaffold import template_directory

REPO = Path(__file__).parent.parent
TEMPLATE = REPO / "templates" / "method-plugin"
QUESTIONS = json.loads((TEMPLATE / "cookiecutter.json").read_text(encoding="utf-8"))
RUNTIMES = QUESTIONS["runtime"]
PROFILES = QUESTIONS["dependency_profile"]
CLASSES = QUESTIONS["method_class"]
INTENDED_CLASS = {"self-contained": "S", "open-artifact": "O", "llm-gateway": "A1", "external-api": "A2"}
# Every runtime × every profile; the six method classes take turns, so each appears twice.
MATRIX = [(runtime, profile, CLASSES[i % len(CLASSES)])
          for i, (runtime, profile) in enumerate(itertools.product(RUNTIMES, PROFILES))]
CORPUS = [json.loads(line) for line in (TEMPLATE / "{{cookiecutter.method_id}}" / "sample" / "corpus.jsonl")
          .read_text(encoding="utf-8").splitlines() if line.strip()]
REFERENCES = {entry["source"]: entry["reference"] for entry in CORPUS}
GLOSSARY_OUTPUT = ["Buenas noches, mi amigo!", "El gato bebe agua.", "Gracias por el libro."]


def combo_id(combo: tuple[str, str, str]) -> str:
    return "-".join(combo)


def new(*args: str) -> int:
    return main(["new", *args])


# --- one generated plugin per combination, shared by the tests below --------------------------------------

@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str, str], tuple[Path, float]]:
    """Each combination rendered once with ``mt-eval new --no-input``: its directory and generation time."""
    root = tmp_path_factory.mktemp("generated")
    plugins = {}
    for runtime, profile, method_class in MATRIX:
        directory = root / f"{runtime}-{profile}-{method_class}"
        started = time.perf_counter()
        status = new(str(directory), "--no-input", "--set", f"runtime={runtime}",
                     "--set", f"dependency_profile={profile}", "--set", f"method_class={method_class}")
        elapsed = time.perf_counter() - started
        assert status == 0, f"mt-eval new failed for {runtime}/{profile}/{method_class}"
        plugins[(runtime, profile, method_class)] = (directory, elapsed)
    return plugins


def plugin(generated: dict[tuple[str, str, str], tuple[Path, float]], combo: tuple[str, str, str]) -> Path:
    return generated[combo][0]


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

def test_every_combination_generates_in_under_a_second(generated):
    times = {combo_id(combo): round(elapsed, 3) for combo, (_, elapsed) in generated.items()}
    assert max(times.values()) < 1.0, times


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
        if file.is_file():
            text = file.read_text(encoding="utf-8")
            assert str(REPO) not in text and "templates/method-plugin" not in text and "_variants" not in text, file
    for plugin_dir in {p for p, _ in generated.values()}:
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
         "c = types.SimpleNamespace(params={}); print(json.dumps([r['predicted'] for r in "
         "asyncio.run(m.translate(json.loads(sys.argv[1]), c))]))", entries],
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


# --- the command line -------------------------------------------------------------------------------------

def test_a_bad_id_is_refused_by_the_pre_gen_hook_with_the_fix(tmp_path, capfd):
    target = tmp_path / "not" / "yet" / "there"
    assert new(str(target), "--no-input", "--set", "method_id=My_Method") == 2
    err = capfd.readouterr().err
    assert 'error: method_id: "My_Method" is not kebab-case' in err and 'e.g. "my-method"' in err
    assert "nothing was written" in err
    assert list(tmp_path.iterdir()) == []  # no plugin, no staging directory


def test_the_pre_gen_hook_reports_every_problem_at_once(tmp_path, capfd):
    assert new(str(tmp_path / "p"), "--no-input", "--set", "method_name= ", "--set", "open_source=true",
               "--set", "open_source_url=example.org") == 2
    err = capfd.readouterr().err
    assert "error: method_name: empty" in err
    assert 'error: open_source_url: "example.org" is not a web address' in err


def test_an_answer_the_sdk_rejects_leaves_nothing_behind(tmp_path, capsys):
    assert new(str(tmp_path / "p"), "--no-input", "--set", "method_license=Apache 2") == 1
    err = capsys.readouterr().err
    assert "does not validate" in err and f"{tmp_path / 'p'}/method_card.json $.license" in err
    assert list(tmp_path.iterdir()) == []


def test_an_existing_directory_is_refused_unless_forced(tmp_path, capsys):
    target = tmp_path / "taken"
    target.mkdir()
    (target / "notes.txt").write_text("mine", encoding="utf-8")
    assert new(str(target), "--no-input") == 2
    assert f"mt-eval new: {target} already exists: choose a new directory, or add --force" in capsys.readouterr().err
    assert sorted(p.name for p in target.iterdir()) == ["notes.txt"]
    assert new(str(target), "--no-input", "--force") == 0
    assert (target / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert (target / "method.json").is_file()
    file = tmp_path / "a-file"
    file.write_text("x", encoding="utf-8")
    assert new(str(file), "--no-input", "--force") == 2
    assert "is not a directory" in capsys.readouterr().err


def test_an_empty_existing_directory_is_used_and_missing_parents_are_made(tmp_path):
    (tmp_path / "empty").mkdir()
    assert new(str(tmp_path / "empty"), "--no-input") == 0
    assert json.loads((tmp_path / "empty" / "method.json").read_text(encoding="utf-8"))["method_id"] == "empty"
    assert new(str(tmp_path / "plugins" / "deep" / "glossary_v2"), "--no-input") == 0
    manifest = json.loads((tmp_path / "plugins" / "deep" / "glossary_v2" / "method.json").read_text(encoding="utf-8"))
    assert (manifest["name"], manifest["method_id"]) == ("Glossary V2", "glossary-v2")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty", "plugins"]  # no staging directory left


@pytest.mark.parametrize(("setting", "message"), [
    ("colour=blue", '--set colour=blue: no question "colour"; the questions are method_kind, method_name, method_id'),
    ("runtime=rust", "--set runtime=rust: runtime is one of python, node, both; not \"rust\""),
    ("open_source=maybe", '--set open_source=maybe: open_source is true or false, not "maybe"'),
    ("runtime", '--set "runtime": write KEY=VALUE, e.g. --set runtime=node'),
    ("__family=chat", '--set __family=chat: no question "__family"'),
    ("description={{ nope }}", "Unable to render variable 'description': 'nope' is undefined"),
])
def test_bad_set_options_are_explained(tmp_path, capsys, setting, message):
    assert new(str(tmp_path / "p"), "--no-input", "--set", setting) == 2
    assert f"mt-eval new: {message}" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_bad_answers_files_are_explained(tmp_path, capsys):
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    assert new(str(tmp_path / "p"), "--no-input", "--answers", str(broken)) == 2
    assert f"--answers {broken}: cannot read it as JSON" in capsys.readouterr().err
    unknown = tmp_path / "unknown.json"
    unknown.write_text(json.dumps({"answers": {"runtime": "node", "flavour": "x"}}), encoding="utf-8")
    assert new(str(tmp_path / "p"), "--no-input", "--answers", str(unknown)) == 2
    assert f'--answers {unknown}: no question "flavour"' in capsys.readouterr().err


def test_without_a_directory_the_plugin_is_named_by_its_id(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert new("--no-input", "--set", "method_name=Quick Check", "--set", "runtime=node") == 0
    out = capsys.readouterr().out
    assert (tmp_path / "quick-check" / "translate.js").is_file()
    assert not (tmp_path / "quick-check" / "pipeline.py").exists()
    assert "cd quick-check" in out and "node --test" in out and " validate ." in out
    assert "pytest" not in out
    assert new("--no-input", "--set", "method_name=Quick Check") == 2  # now it exists
    assert "already exists" in capsys.readouterr().err


def test_interactive_prompts_ask_every_question(tmp_path, monkeypatch, capsys):
    # kind (default: translation), name, id (default), runtime 2=node, profile 4=external-api, class 5=api,
    # description, author, licence, open_source, url
    answers = "\nRemote API\n\n2\n4\n5\nCalls a service.\n\nMIT\nn\n\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO(answers))
    assert new(str(tmp_path / "remote")) == 0
    manifest = json.loads((tmp_path / "remote" / "method.json").read_text(encoding="utf-8"))
    assert (manifest["name"], manifest["method_id"], manifest["class"]) == ("Remote API", "remote", "api")
    assert (manifest["node_entry"], manifest["dependency_class"], manifest["description"]) == (
        "translate.js", "A2", "Calls a service.")
    assert "entry_point" not in manifest and "author" not in manifest
    assert "config.params[\"api_url\"]" in capsys.readouterr().out


def test_help_lists_every_question_and_choice(capsys):
    with pytest.raises(SystemExit):
        main(["new", "--help"])
    text = capsys.readouterr().out
    for key, value in QUESTIONS.items():
        if not key.startswith("_"):
            assert key in text
            for choice in value if isinstance(value, list) else []:
                assert choice in text


def test_the_command_line_does_not_import_cookiecutter_until_new_runs():
    code = ("import sys, mt_eval.cli as c; c.build_parser(); "
            "print(sorted({'cookiecutter', 'jinja2'} & set(sys.modules)))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert run.stdout.strip() == "[]"


def test_the_wheel_ships_the_template_and_the_packaged_copy_is_used(tmp_path):
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "--no-build-isolation",
                            "-q", "-w", str(tmp_path / "dist")], capture_output=True, text=True, timeout=180)
    assert built.returncode == 0, built.stderr
    wheel = next((tmp_path / "dist").glob("*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        archive.extractall(tmp_path / "site")
    shipped = {n.removeprefix("mt_eval/templates/") for n in names if n.startswith("mt_eval/templates/")}
    in_tree = {str(p.relative_to(TEMPLATE.parent)) for p in TEMPLATE.rglob("*") if p.is_file()}
    assert in_tree <= shipped
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tmp_path / "site")], check=True, timeout=120)
    code = ("import sys; from mt_eval import scaffold, cli; print(scaffold.template_directory()); "
            "sys.exit(cli.main(['new', sys.argv[1], '--no-input']))")
    run = subprocess.run([sys.executable, "-c", code, str(tmp_path / "made")], capture_output=True, text=True,
                         timeout=60, env={"PYTHONPATH": str(tmp_path / "site"), "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0] == str(tmp_path / "site" / "mt_eval" / "templates" / "method-plugin")
    assert (tmp_path / "made" / "method.json").is_file()
    assert not list((tmp_path / "made").rglob("__pycache__"))  # compiled template files are not copied


def test_the_template_also_works_with_plain_cookiecutter(tmp_path):
    argv = [sys.executable, "-m", "cookiecutter", "--no-input", str(TEMPLATE), "-o", str(tmp_path / "out"),
            "runtime=node", "dependency_profile=open-artifact", "method_id=plain"]
    run = subprocess.run(argv, capture_output=True, text=True, timeout=60,
                         env={"HOME": str(tmp_path), "TMPDIR": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr
    assert main(["validate", "--strict", str(tmp_path / "out" / "plain")]) == 0
    assert sorted(p.name for p in (tmp_path / "out" / "plain").iterdir()) == [
        ".gitignore", ".mt-eval-answers.json", "README.md", "glossary.tsv", "method.json", "method_card.json",
        "package.json", "sample", "tests", "translate.js"]


def test_the_source_tree_template_is_used_in_a_checkout():
    assert template_directory() == TEMPLATE.resolve()


def test_the_tests_talk_to_loopback_only():
    for file in [Path(__file__), *TEMPLATE.rglob("*test*")]:
        if file.is_file():
            addresses = set(re.findall(r"\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b", file.read_text(encoding="utf-8")))
            assert addresses <= {"127.0.0.1"}, file


# --- a decision method ------------------------------------------------------------------------------------

DECISION_RUNTIMES = ["python", "node", "both"]


@pytest.fixture(scope="module")
def judges(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("judges")
    made = {}
    for runtime in DECISION_RUNTIMES:
        directory = root / f"judge-{runtime}"
        assert new(str(directory), "--no-input", "--set", "method_kind=decision", "--set", f"runtime={runtime}") == 0
        made[runtime] = directory
    return made


def judge_rows(directory: Path) -> list[dict[str, Any]]:
    lines = (directory / "sample" / "decisions.jsonl").read_text(encoding="utf-8").splitlines()
    return [{k: v for k, v in json.loads(line).items() if k != "gold"} for line in lines if line.strip()]


@pytest.mark.parametrize("runtime", DECISION_RUNTIMES)
def test_a_decision_method_validates_and_passes_its_own_tests(judges, runtime, capsys):
    directory = judges[runtime]
    capsys.readouterr()
    assert main(["validate", "--strict", "--json", str(directory)]) == 0
    report = json.loads(capsys.readouterr().out)["plugins"][0]
    assert (report["derived_class"], report["problems"]) == ("S", [])
    manifest = json.loads((directory / "method.json").read_text(encoding="utf-8"))
    assert manifest["implements"] == ["decide"] and manifest["dependencies"] == []
    assert manifest.get("node_entry") == ("decide.js" if runtime != "python" else None)
    assert not (directory / "sample" / "corpus.jsonl").exists() and not (directory / "glossary.tsv").exists()
    if runtime != "node":
        run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=directory,
                             capture_output=True, text=True, timeout=120)
        passed = "6 passed" if runtime == "both" else "5 passed"  # both: and the parity test
        assert run.returncode == 0 and passed in run.stdout, run.stdout + run.stderr
    if runtime != "python":
        run = subprocess.run(["node", "--test"], cwd=directory, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0 and "# pass 5" in run.stdout, run.stdout + run.stderr


@pytest.mark.parametrize("runtime", DECISION_RUNTIMES)
def test_a_decision_method_runs_decide_on_its_sample(judges, runtime, tmp_path, capsys):
    directory = judges[runtime]
    assert main(["decide", "run", "--method", str(directory), "--corpus", str(directory / "sample" / "decisions.jsonl"),
                 "--out", str(tmp_path / "run"), "--quiet", "--resamples", "50"]) == 0
    card = json.loads((tmp_path / "run" / "card.json").read_text(encoding="utf-8"))
    assert card["errors"] == 0 and card["failures"] == [] and card["metrics"]["groups"]["overall"]["questions"] == 10


async def test_decide_py_and_decide_js_behave_identically(judges):
    from mt_eval.decisions.records import DecisionConfig

    directory = judges["both"]
    questions = judge_rows(directory)[0]["questions"]
    rows = [*judge_rows(directory),
            {"id": "x1", "state": {"source": "one two", "candidate": "uno"}, "questions": questions},
            {"id": "x2", "state": {"source": "Ünïcode!", "candidate": "ÜNÏCODE", "reference": "ünïcode"},
             "questions": questions},
            {"id": "x3", "state": {}, "questions": questions}]
    python = await load_method(directory).method.decide(rows, DecisionConfig())
    node = BridgeMethod(node_command(directory), label="node")
    try:
        from_node = await node.decide(rows, DecisionConfig())
    finally:
        await node.aclose()
    strip = [[{k: v for k, v in r.items() if k != "latency_s"} for r in results] for results in (python, from_node)]
    assert strip[0] == strip[1]


def test_a_decision_method_is_generated_self_contained_only(tmp_path, capfd):
    assert new(str(tmp_path / "j"), "--no-input", "--set", "method_kind=decision",
               "--set", "dependency_profile=external-api") == 2
    assert "a decision method is generated self-contained" in capfd.readouterr().err
    assert not (tmp_path / "j").exists()


# --- the first hour: next steps as printed, the parity test, answers checked, changed files kept ---------------

def test_the_printed_next_steps_work_as_printed(tmp_path):
    script = Path(sys.executable).parent / "mt-eval"
    if not script.is_file():
        pytest.skip("mt-eval is not installed beside this Python")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "TMPDIR": str(tmp_path)}  # no mt-eval on PATH
    made = subprocess.run([str(script), "new", "first", "--no-input", "--set", "runtime=both"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, env=env)
    assert made.returncode == 0, made.stderr
    steps = made.stdout.split("Next:\n", 1)[1].splitlines()
    assert steps[0] == "  cd first" and f"  {script} validate ." in steps
    assert any(line.startswith(f"  {Path(sys.executable).parent}/python") and " -m pytest tests" in line
               for line in steps)
    assert steps[-1].endswith("# scores and a run card, in ../runs/; exit 5: too few entries for a headline")
    done = subprocess.run(["bash", "-e", "-c", "\n".join(steps)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600, env=env)
    assert done.returncode == 5, done.stdout + done.stderr  # every step but the last exits 0 (bash -e)
    assert "headline withheld: the gate failed" in done.stdout and "5 scored entries" in done.stdout
    assert "6 passed" in done.stdout and "# fail 0" in done.stdout  # pytest (with the parity test), node --test
    assert "Buenos días, mi amigo!" in done.stdout and "chrF++" in done.stdout
    assert (tmp_path / "runs" / "first__corpus" / "card.json").is_file() and not (tmp_path / "first" / "runs").exists()


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
    for (runtime, profile, _), (directory, _) in generated.items():
        assert (directory / "tests" / "test_parity.py").exists() == (runtime == "both"), (runtime, profile)
        assert (directory / "tests" / "node_side.py").exists() == (runtime == "both")
        for test_file in (directory / "tests").glob("test_*.py"):
            assert "pip install mt-eval-sdk" not in test_file.read_text(encoding="utf-8")
        readme = (directory / "README.md").read_text(encoding="utf-8")
        if runtime != "node":
            assert "nox -s build" in readme and "mt_eval_sdk-*.whl" in readme and "python -m pytest tests" in readme


def test_each_interactive_answer_is_checked_as_it_is_given(tmp_path, monkeypatch, capsys):
    # kind, name, a bad id then a good one, runtime, profile, class, description, author, licence,
    # open_source=yes, a bad address then a good one
    answers = "\nRemote API\nRemote_API\nremote-api\n2\n4\n5\nCalls a service.\n\nMIT\ny\nexample.org\nhttps://e.org/x\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO(answers))
    assert new(str(tmp_path / "remote")) == 0
    err = capsys.readouterr().err
    assert ('error: method_id: "Remote_API" is not kebab-case: use lowercase letters and digits in words joined by '
            'hyphens, e.g. "remote-api"; answer again') in err
    assert 'error: open_source_url: "example.org" is not a web address: give an https:// URL; answer again' in err
    manifest = json.loads((tmp_path / "remote" / "method.json").read_text(encoding="utf-8"))
    assert (manifest["name"], manifest["method_id"], manifest["class"]) == ("Remote API", "remote-api", "api")
    card = json.loads((tmp_path / "remote" / "method_card.json").read_text(encoding="utf-8"))
    assert card["open_source_url"] == "https://e.org/x"


def test_force_never_replaces_a_changed_file_silently(tmp_path, monkeypatch, capsys):
    target = tmp_path / "mine"
    assert new(str(target), "--no-input") == 0
    recorded = json.loads((target / ".mt-eval-answers.json").read_text(encoding="utf-8"))["files"]
    assert recorded["pipeline.py"] == hashlib.sha256((target / "pipeline.py").read_bytes()).hexdigest()
    (target / "pipeline.py").write_text((target / "pipeline.py").read_text(encoding="utf-8") + "# my change\n",
                                        encoding="utf-8")
    regenerate = [str(target), "--answers", str(target / ".mt-eval-answers.json"), "--force"]
    capsys.readouterr()
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n" * 11 + "n\n"))  # every default, then: do not replace
    assert new(*regenerate) == 1
    err = capsys.readouterr().err
    assert "1 file(s) in" in err and "pipeline.py  (yours is kept as pipeline.py.orig)" in err
    assert "nothing was written" in err
    assert (target / "pipeline.py").read_text(encoding="utf-8").endswith("# my change\n")
    assert not (target / "pipeline.py.orig").exists()
    assert new(*regenerate, "--no-input") == 0  # without questions: replaced, and yours kept
    assert "pipeline.py  (yours is kept as pipeline.py.orig)" in capsys.readouterr().err
    assert (target / "pipeline.py.orig").read_text(encoding="utf-8").endswith("# my change\n")
    assert not (target / "pipeline.py").read_text(encoding="utf-8").endswith("# my change\n")
    assert new(*regenerate, "--no-input") == 0  # unchanged since: replaced without a word
    assert "yours is kept" not in capsys.readouterr().err
