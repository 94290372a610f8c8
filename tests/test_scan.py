"""Layer 2, the static scan: Python by ast, JavaScript by tree-sitter; each finding names file:line, what
and the declared dependency covering it; an uncovered one is an error in `mt-eval validate` (and --json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mt_eval.cli import main
from mt_eval.manifest import Dependency
from mt_eval.scan import scan_plugin
from mt_eval.validate import validate_plugin

GATEWAY = {"id": "llm", "kind": "model", "license": "proprietary", "access": "gateway", "source": "config.base_url",
           "substitutable": True, "redistributable": False, "transferable": False}
SOFTWARE = {"id": "apertium", "kind": "software", "license": "GPL-2.0-or-later", "access": "mirrored",
            "source": "deb:apertium", "pin": "3.8.3", "redistributable": True, "transferable": True}
MIRRORED = {"id": "weights", "kind": "model", "license": "Apache-2.0", "access": "mirrored", "source": "weights.bin",
            "pin": "sha256:" + "ab" * 32, "redistributable": True, "transferable": True}

PYTHON_CASES = [
    ("import socket", "network", "imports socket"),
    ("import urllib.request as r", "network", "imports urllib.request"),
    ("from requests import get", "network", "imports get from requests"),
    ("import httpx", "network", "imports httpx"),
    ("import aiohttp", "network", "imports aiohttp"),
    ("import asyncio\nasyncio.open_connection('x', 1)", "network", "asyncio.open_connection"),
    ("import urllib.request\nurllib.request.urlretrieve('http://x/y', 'y')", "download", "urlretrieve"),
    ("from huggingface_hub import hf_hub_download", "download", "huggingface_hub"),
    ("from transformers import AutoModel\nAutoModel.from_pretrained('Helsinki-NLP/opus-mt-en-es')", "download",
     "from_pretrained('Helsinki-NLP/opus-mt-en-es')"),
    ("import nltk\nnltk.download('punkt')", "download", "nltk.download"),
    ("import subprocess as sp\nsp.run(['ls'])", "subprocess", "imports subprocess"),
    ("import os\nos.system('ls')", "subprocess", "os.system"),
    ("from os import execv\nexecv('/bin/ls', [])", "subprocess", "os.execv"),
    ("import asyncio\nasyncio.create_subprocess_exec('ls')", "subprocess", "create_subprocess_exec"),
    ("from mt_eval.adapters import ProcessTranslator", "subprocess", "ProcessTranslator"),
    ("eval(text)", "dynamic-code", "calls eval()"),
    ("exec('x = 1')", "dynamic-code", "calls exec()"),
    ("import importlib\nimportlib.import_module(name)", "dynamic-code", "a module named at run time"),
    ("__import__(name)", "dynamic-code", "a module named at run time"),
    ("__import__('so' + 'cket')", "dynamic-code", "a module named at run time"),
    ("import importlib\nimportlib.import_module(f'sub{kind}')", "dynamic-code", "a module named at run time"),
    ("import importlib\nimportlib.import_module('socket')", "network", "import_module('socket')"),
    ("import runpy", "dynamic-code", "imports runpy"),
    ("open('/etc/passwd')", "file-access", "open('/etc/passwd')"),
    ("DATA = '/srv/data.tsv'\nopen(DATA)", "file-access", "/srv/data.tsv"),
    ("from pathlib import Path\nPath('~/.netrc').read_text()", "file-access", "home directory"),
    ("from pathlib import Path\nPath.home()", "file-access", "Path.home"),
    ("import os\nos.listdir('../other-plugin')", "file-access", "climbs out"),
    ("from pathlib import Path\nPath(__file__).parent / '..' / 'x'", "file-access", "climbs out"),
    ("import os\nos.path.join(os.path.dirname(__file__), '..', 'x')", "file-access", "climbs out"),
    ("import shutil\nshutil.copy('/etc/hosts', 'x')", "file-access", "/etc/hosts"),
    # the private /tmp and the process's own /proc/self are whole names, not prefixes of a path that leaves them
    ("open('/tmp/../etc/passwd')", "file-access", "/tmp/../etc/passwd"),
    ("open('/tmpfoo/x')", "file-access", "/tmpfoo/x"),
    ("open('/proc/self/root/etc/hostname')", "file-access", "/proc/self/root/etc/hostname"),
    ("PATH: str = '/etc/passwd'\nopen(PATH)", "file-access", "/etc/passwd"),  # an annotated constant
    # the same reached in disguise: through builtins or a getattr of a literal name, a path put together
    ("import builtins\nbuiltins.open('/etc/passwd')", "file-access", "open('/etc/passwd')"),
    ("import builtins\nbuiltins.exec(code)", "dynamic-code", "calls exec()"),
    ("import builtins\nbuiltins.__import__('socket')", "network", "__import__('socket')"),
    ("import os\ngetattr(os, 'system')('ls')", "subprocess", "os.system"),
    ("open('/etc/' + name)", "file-access", "open('/etc/')"),
    ("import os\nopen('/proc/%s/cmdline' % os.getppid())", "file-access", "/proc/%s/cmdline"),
    ("open('/proc/{}/environ'.format(pid))", "file-access", "/proc/{}/environ"),
    ("open(b'/etc/passwd')", "file-access", "/etc/passwd"),
    ("import os\nos.readlink('/proc/1/cwd')", "file-access", "/proc/1/cwd"),
    # a name put together at run time, which the scan cannot follow, is dynamic code in itself
    ("getattr(__builtins__, '__imp' + 'ort__')('so' + 'cket')", "dynamic-code", "getattr(__builtins__, …)"),
    ("__builtins__['__imp' + 'ort__']('socket')", "dynamic-code", "a builtin by a name built at run time"),
    ("import builtins\nbuiltins.__dict__[name]", "dynamic-code", "a builtin by a name built at run time"),
    ("import os\ngetattr(os, 'sys' + 'tem')('ls')", "dynamic-code", "getattr(os, …) of a name built"),
    ("__builtins__['__import__']('socket')", "network", "__import__('socket')"),
    ("NAME = 'system'\nimport os\ngetattr(os, NAME)('ls')", "subprocess", "os.system"),
]
PYTHON_CLEAN = [
    "import re, json, time\nfrom pathlib import Path\nPath(__file__).parent / 'glossary.tsv'",
    "open('relative.tsv')\nimport tempfile\ntempfile.mkdtemp()\nopen('/tmp/x', 'w')\nopen('/proc/self/status')",
    "import importlib.resources\nimport os\nos.environ.get('X')",
    "from . import helpers\nfrom .helpers import x",
    "open('data/' + name)\nopen('/tmp/%s.txt' % name)\nopen('{}.tsv'.format(name))\ngetattr(self, 'model')()",
    "getattr(self, name)()\ngetattr(config, key, None)\nsettings[name]",
    "import numpy as np\nimport torch\ngetattr(np, dtype_name)\ngetattr(torch, dtype_name)",
]
JS_CASES = [
    ("import http from 'node:http';", "network", "imports 'node:http'"),
    ("const net = require('net');", "network", "requires 'net'"),
    ("export { get } from 'https';", "network", "imports 'https'"),
    ("await fetch('https://api.example.com/v1');", "network", "fetch() (https://api.example.com/v1)"),
    ("globalThis.fetch(url);", "network", "calls fetch()"),
    ("new WebSocket(url);", "network", "WebSocket"),
    ("const { spawn } = require('child_process');", "subprocess", "child_process"),
    ("import { execFile } from 'node:child_process';", "subprocess", "child_process"),
    ("eval(code);", "dynamic-code", "calls eval()"),
    ("new Function('a', body);", "dynamic-code", "new Function()"),
    ("const m = require(name);", "dynamic-code", "require() of a module named at run time"),
    ("const m = await import(`./${name}.js`);", "dynamic-code", "import() of a module named at run time"),
    ("import vm from 'node:vm';", "dynamic-code", "vm"),
    ("import { readFileSync } from 'node:fs';\nreadFileSync('/etc/passwd');", "file-access", "/etc/passwd"),
    ("const fs = require('fs');\nfs.writeFileSync('../x.json', '{}');", "file-access", "climbs out"),
    ("import fs from 'fs/promises';\nawait fs.readFile('~/.npmrc');", "file-access", "home directory"),
    ("import os from 'node:os';\nos.homedir();", "file-access", "os.homedir"),
    # the same reached in disguise: a require that createRequire made, a subscript, Node's internals, a path put
    # together
    ("import { createRequire } from 'node:module';\nconst load = createRequire(import.meta.url);\nload('net');",
     "network", "requires 'net'"),
    ("import module from 'node:module';\nmodule.createRequire(import.meta.url)('child_process');", "subprocess",
     "requires 'child_process'"),
    ("import { createRequire } from 'module';\nconst load = createRequire(import.meta.url);\nload(name);",
     "dynamic-code", "require() of a module named at run time"),
    ("globalThis['fetch']('https://x.example');", "network", "calls fetch() (https://x.example)"),
    ("process.binding('tcp_wrap');", "dynamic-code", "process.binding()"),
    ("process.dlopen(module, '/opt/x.node');", "dynamic-code", "process.dlopen()"),
    ("import fs from 'node:fs';\nfs.readFileSync('/etc/' + name);", "file-access", "fs.readFileSync('/etc/')"),
    ("import fs from 'node:fs';\nfs.readFileSync(`/proc/${process.ppid}/cmdline`);", "file-access",
     "fs.readFileSync('/proc/')"),
    ("const g = globalThis['fe' + 'tch'];\nawait g(url);", "dynamic-code", "globalThis[…] by a name built"),
    ("global[name](url);", "dynamic-code", "global[…] by a name built at run time"),
]
JS_CLEAN = [
    "import { readFileSync } from 'node:fs';\nreadFileSync(new URL('./termbase.tsv', import.meta.url));",
    "const path = require('path');\nconst lib = require(path.join(__dirname, 'lib', 'x.js'));",
    "const lib = await import(new URL('./lib.js', import.meta.url));",
    "import { helper } from './helper.js';\nexport async function translate(e) { return e; }",
    "import { createRequire } from 'node:module';\nconst require = createRequire(import.meta.url);\n"
    "const lexicon = require('./lexicon.json');\nimport fs from 'node:fs';\nfs.readFileSync(`data/${name}.tsv`);\n"
    "fs.writeFileSync('/tmp/' + name, 'x');",
    "const table = {};\nexport function pick(name) { return table[name] ?? config[name]; }",
    "function Model() { const self = this; return (name) => self[name]; }",
]


def plugin(make_plugin, files: dict[str, str], dependencies: list[dict] | None = None) -> Path:
    manifest = {"name": "Scanned", "entry_point": "pipeline:EchoMethod", "dependency_class": "S",
                "dependencies": dependencies if dependencies is not None else []}
    return make_plugin(manifest, files)


@pytest.mark.parametrize(("code", "kind", "what"), PYTHON_CASES, ids=[c[0] for c in PYTHON_CASES])
def test_python_findings(make_plugin, code: str, kind: str, what: str):
    directory = plugin(make_plugin, {"helpers.py": "\n\n" + code + "\n"})
    report = scan_plugin(directory, [])
    found = [f for f in report.findings if f.file == "helpers.py"]
    assert any(f.kind == kind and what in f.what and f.line >= 3 for f in found), found
    assert report.errors == len(report.findings) > 0


@pytest.mark.parametrize("code", PYTHON_CLEAN)
def test_python_code_that_stays_inside_has_no_findings(make_plugin, code: str):
    assert scan_plugin(plugin(make_plugin, {"helpers.py": code}), []).findings == []


@pytest.mark.parametrize(("code", "kind", "what"), JS_CASES, ids=[c[0] for c in JS_CASES])
def test_javascript_findings(make_plugin, code: str, kind: str, what: str):
    directory = plugin(make_plugin, {"translate.mjs": "// scanned\n" + code + "\n"})
    found = [f for f in scan_plugin(directory, []).findings if f.file == "translate.mjs"]
    assert any(f.kind == kind and what in f.what and f.line >= 2 for f in found), found


@pytest.mark.parametrize("code", JS_CLEAN)
def test_javascript_code_that_stays_inside_has_no_findings(make_plugin, code: str):
    assert scan_plugin(plugin(make_plugin, {"translate.js": code}), []).findings == []


def test_declared_dependencies_cover_their_findings_by_kind_and_by_name(make_plugin):
    files = {"net.py": "import httpx\n", "run.py": "import subprocess\nsubprocess.run(['apertium'])\n",
             "dl.py": "from huggingface_hub import snapshot_download\n", "vendor/lib/x.py": "eval('1')\n",
             "bad.py": "exec('1')\n"}
    vendored = {"id": "lib", "kind": "software", "license": "MIT", "access": "bundled", "source": "vendor/lib",
                "redistributable": True, "transferable": True}
    other_software = {**SOFTWARE, "id": "lttoolbox"}
    deps = [Dependency(**d) for d in (GATEWAY, other_software, SOFTWARE, MIRRORED, vendored)]
    report = scan_plugin(plugin(make_plugin, files), deps)
    by_file = {f.file: f for f in report.findings}
    assert by_file["net.py"].covered_by == "llm"
    assert by_file["run.py"].covered_by == "lttoolbox"  # the first software dependency: no name is mentioned
    assert by_file["dl.py"].covered_by == "weights"
    assert by_file["vendor/lib/x.py"].covered_by == "lib"
    assert by_file["bad.py"].covered_by is None
    assert report.errors == 1


def test_tests_are_not_scanned_unless_the_code_imports_them(make_plugin):
    files = {"tests/test_x.py": "import socket\n", "test/net.test.js": "fetch('x');\n",
             "test_helpers.py": "import socket\n"}
    report = scan_plugin(plugin(make_plugin, files), [])
    assert report.findings == []
    files["pipeline.py"] = "import test_helpers\n" + files.get("pipeline.py", "class EchoMethod: pass\n")
    report = scan_plugin(plugin(make_plugin, files), [])
    assert [f.file for f in report.findings] == ["test_helpers.py"]


@pytest.mark.parametrize(("files", "scanned"), [
    ({"net_test.py": "import socket\n", "pipeline.py": "import os, net_test\n"}, "net_test.py"),
    ({"test_helper.py": "import socket\n", "pipeline.py": "from . import test_helper\n"}, "test_helper.py"),
    ({"tests/helper.py": "import socket\n", "pipeline.py": "from tests import helper\n"}, "tests/helper.py"),
    ({"net.test.js": "fetch('x');\n", "translate.js": "import { reach } from './net.test.js';\n"}, "net.test.js"),
    ({"lib/net.spec.mjs": "fetch('x');\n", "translate.js": "const n = require('./lib/net.spec.mjs');\n"},
     "lib/net.spec.mjs"),
], ids=["import-list", "from-dot-import", "from-tests-import", "js-test-file", "js-require"])
def test_a_test_file_the_code_imports_is_scanned_however_it_is_imported(make_plugin, files: dict[str, str],
                                                                          scanned: str):
    files = {**files, "pipeline.py": files.get("pipeline.py", "") + "class EchoMethod: pass\n"}
    assert [f.file for f in scan_plugin(plugin(make_plugin, files), []).findings] == [scanned]


def test_compiled_python_without_its_source_is_an_error(make_plugin):
    """Python imports ``helper.pyc`` beside the code as ``helper``; what it does cannot be scanned."""
    import py_compile

    directory = plugin(make_plugin, {"helper_src.py": "import socket\n"})
    py_compile.compile(str(directory / "helper_src.py"), cfile=str(directory / "helper.pyc"))
    (directory / "helper_src.py").unlink()
    report = scan_plugin(directory, [])
    assert report.errors == 1 and report.unscannable == [
        "helper.pyc:1: compiled Python without its source (Python imports it as a module; the scan cannot read "
        "what it does)"]


def test_code_the_scan_cannot_parse_is_an_error(make_plugin):
    report = scan_plugin(plugin(make_plugin, {"broken.py": "def (:\n", "broken.js": "function ( {\n"}), [])
    assert report.errors == 2
    assert any(u.startswith("broken.py:1:") for u in report.unscannable)
    assert any(u.startswith("broken.js:") for u in report.unscannable)


DEEP = 100_000
NESTED_TOO_DEEPLY = {
    "parentheses.py": "x = " + "(" * DEEP + "1" + ")" * DEEP + "\n",  # (the parser's own limit: a syntax error)
    "lists.py": "x = " + "[" * DEEP + "]" * DEEP + "\n",
    "signs.py": "x = " + "-" * DEEP + "1\n",  # (the parser runs out of stack: MemoryError)
    "sums.py": "x = " + "+".join(["1"] * DEEP) + "\n",  # (RecursionError building the tree)
    "attributes.py": "x = a" + ".b" * 1500 + "()\n",  # (parsed, but deeper than the scan's own walk goes)
    "attributes.js": "x = a" + ".b" * DEEP + "();\n",
}


def test_code_nested_too_deeply_to_parse_is_reported_unscannable_not_a_crash(make_plugin, capsys):
    directory = plugin(make_plugin, NESTED_TOO_DEEPLY)
    report = scan_plugin(directory, [])
    assert report.errors == len(NESTED_TOO_DEEPLY) and report.files_scanned == len(NESTED_TOO_DEEPLY) + 1
    assert sorted(entry.partition(":")[0] for entry in report.unscannable) == sorted(NESTED_TOO_DEEPLY)
    assert main(["validate", "--no-import", str(directory)]) == 1
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    for name in ("signs.py", "sums.py", "attributes.py", "attributes.js"):
        assert f"error: {directory / name}:1: code nested too deeply for the scan to parse" in out
    assert "fix: split what is nested too deeply into steps: code the scan cannot read is not accepted" in out
    assert "fix: fix the syntax: code the scan cannot read" in out  # (parentheses.py: the parser's own limit)


def test_code_that_is_not_utf8_is_named_at_its_line_with_the_fix_to_save_it_as_utf8(make_plugin, capsys):
    """Before: at line 1, with a byte offset, and told to fix the syntax."""
    directory = plugin(make_plugin, {})
    (directory / "latin1.py").write_bytes(b"x = 1\n# caf\xe9\n")
    report = scan_plugin(directory, [])
    assert report.unscannable == ["latin1.py:2: cannot be read as UTF-8 text: byte 0xe9 is not UTF-8 (invalid "
                                  "continuation byte)"]
    assert main(["validate", "--no-import", str(directory)]) == 1
    out = capsys.readouterr().out
    assert "fix: save it as UTF-8 (your editor's encoding setting; iconv -f latin1 -t utf-8 converts one)" in out


def test_a_code_file_linked_from_outside_is_a_finding(make_plugin, tmp_path: Path):
    outside = tmp_path / "outside.py"
    outside.write_text("x = 1\n")
    directory = plugin(make_plugin, {})
    (directory / "linked.py").symlink_to(outside)
    [finding] = scan_plugin(directory, []).findings
    assert finding.file == "linked.py" and finding.kind == "file-access" and str(outside) in finding.what


def test_a_data_file_or_folder_linked_from_outside_is_a_finding_and_a_link_inside_is_not(make_plugin, tmp_path: Path):
    corpus = tmp_path / "corpus.json"
    corpus.write_text("[]")
    directory = plugin(make_plugin, {"data/lexicon.tsv": "a\tb\n"})
    (directory / "corpus.json").symlink_to(corpus)
    (directory / "root").symlink_to("/")
    (directory / "lexicon.tsv").symlink_to("data/lexicon.tsv")
    (directory / "loop.tsv").symlink_to("loop.tsv")
    found = {(f.file, f.kind, f.what) for f in scan_plugin(directory, []).findings}
    assert found == {("corpus.json", "file-access", f"is a link to {corpus.resolve()}, outside the plugin directory"),
                     ("root", "file-access", "is a link to /, outside the plugin directory")}


def test_validate_reports_uncovered_findings_as_errors_with_file_and_line(make_plugin, capsys):
    socket_method = "import socket\n\nclass EchoMethod:\n    async def translate(self, entries, config):\n" \
                    "        socket.create_connection(('example.com', 80))\n        return []\n"
    directory = plugin(make_plugin, {"pipeline.py": socket_method})
    report = validate_plugin(directory)
    [problem] = [p for p in report.errors if p.code == "undeclared"]
    assert problem.file == f"{directory / 'pipeline.py'}:1"
    assert "imports socket (network access)" in problem.message and "no declared dependency" in problem.message
    assert main(["validate", "--json", str(directory)]) == 1
    document = json.loads(capsys.readouterr().out)
    scan = document["plugins"][0]["static_scan"]
    assert scan["errors"] == 1
    assert scan["findings"] == [{"file": "pipeline.py", "line": 1, "kind": "network",
                                 "what": "imports socket (network access)", "covered_by": None}]
    assert main(["validate", "--no-scan", str(directory)]) == 0
    capsys.readouterr()
    covered = plugin(make_plugin, {"pipeline.py": socket_method}, [GATEWAY])
    manifest = json.loads((covered / "method.json").read_text())
    manifest["dependency_class"] = "A1"
    (covered / "method.json").write_text(json.dumps(manifest))
    assert main(["validate", str(covered)]) == 0
    assert "pipeline.py:1 imports socket (network access) (network, declared: llm)" in capsys.readouterr().out


def test_an_undeclared_dependency_list_covers_nothing(make_plugin):
    directory = make_plugin({"name": "Seed", "entry_point": "pipeline:EchoMethod"}, {"x.py": "import socket\n"})
    report = validate_plugin(directory)
    assert any('declares no "dependencies" list' in p.message for p in report.errors)


def test_every_example_and_every_generated_variant_scans_clean():
    repo = Path(__file__).parent.parent
    for manifest in sorted((repo / "examples").glob("*/method.json")):
        report = validate_plugin(manifest.parent, run_code=False)
        assert report.static_scan is not None and report.static_scan.errors == 0, manifest


def test_validate_shows_a_plugins_control_and_invisible_characters_escaped(make_plugin, capsys):
    """Before, a dependency's id and an unknown field's name were printed raw: ESC acted on the terminal and
    U+202E turned the rest of the line around. --json writes them as JSON's escapes."""
    odd = "llm\x1b[2J\u202egpj.exe"
    code = {"pipeline.py": "import socket\nclass EchoMethod: pass\n"}
    covered = plugin(make_plugin, code, [{**GATEWAY, "id": odd}])
    unknown = make_plugin({"name": "Odd", "entry_point": "pipeline:EchoMethod", "dependency_class": "S",
                           "dependencies": [], odd: 1})
    assert main(["validate", "--no-import", str(covered), str(unknown)]) == 1
    out = capsys.readouterr().out
    assert "declared: llm\\x1b[2J\\u202egpj.exe)" in out
    assert 'unknown field "llm\\x1b[2J\\u202egpj.exe"' in out
    assert "\x1b" not in out and "\u202e" not in out
    assert main(["validate", "--no-import", "--json", str(unknown)]) == 1
    out = capsys.readouterr().out
    [problem] = json.loads(out)["plugins"][0]["problems"]  # (read back as written)
    assert "\u202e" not in out and problem["path"] == f"$[{json.dumps(odd, ensure_ascii=False)}]"
