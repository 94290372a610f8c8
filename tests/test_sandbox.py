"""Layer 3, the sandbox, end to end with Python and Node methods: denied sockets, files and writes are
refused and recorded in the card; validating runs no plugin code on the host; a host that cannot isolate
refuses to run; the unshare fallback confines the same way."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from hashlib import sha256
from pathlib import Path

import pytest

from mt_eval.cli import main
from mt_eval.loader import read_plugin
from mt_eval.sandbox import find_tool, plugin_sandbox
from mt_eval.sandbox.policy import CONFINED
from mt_eval.validate import validate_plugin
from sandbox_support import actions, confining_with, needs_sandbox, probe_plugin, run_card, small_corpus

pytestmark = needs_sandbox
RUNTIMES = ["python", "node"]


class Listener:
    """A TCP listener on the host's loopback that counts the connections it accepts."""

    def __init__(self) -> None:
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]
        self.accepted = 0
        self.socket.settimeout(0.2)
        self.running = True
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        while self.running:
            try:
                connection, _ = self.socket.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted += 1
            connection.close()

    def close(self) -> None:
        self.running = False
        self.thread.join(2)
        self.socket.close()


@pytest.fixture
def listener():
    server = Listener()
    yield server
    server.close()


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_a_class_s_method_opening_a_socket_is_denied_and_the_card_records_it(tmp_path: Path, runtime: str,
                                                                             listener: Listener):
    plugin = probe_plugin(tmp_path, runtime)
    code, card = run_card(tmp_path, "--method", str(plugin), "--corpus", str(small_corpus(tmp_path)), "--sandbox",
                          *actions(f"connect:{listener.port}"))
    assert code == 4 and card is not None and card.status == "failed"  # every entry was refused
    assert listener.accepted == 0  # the host's loopback is not the sandbox's
    assert all(r.error and ("refused" in r.error.lower()) for r in card.results)
    assert card.sandbox is not None and card.sandbox.tool in ("bubblewrap", "unshare")
    assert card.sandbox.policy.network == "none"
    [network] = [a for a in card.sandbox.denied if a.kind == "network"]
    assert network.count >= 3 and network.example_id in {"s0", "s1", "s2"}
    assert card.eligibility is not None and not card.eligibility.eligible
    assert any("denied" in reason for reason in card.eligibility.reasons)
    assert card.method.runtime.startswith(f"{runtime} (sandboxed")


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_the_same_plugin_is_caught_by_the_static_scan_at_validate_time(tmp_path: Path, runtime: str):
    report = validate_plugin(probe_plugin(tmp_path, runtime), run_code=False)
    assert not report.passed()
    kinds = {(f.kind, f.covered_by) for f in report.static_scan.findings}  # type: ignore[union-attr]
    assert ("network", None) in kinds
    assert any(p.code == "undeclared" and "network" in p.message for p in report.errors)


def test_the_sandbox_has_no_route_out(tmp_path: Path):
    source, _ = read_plugin(probe_plugin(tmp_path, "python"))
    assert source is not None
    argv = plugin_sandbox(source, network="none").wrap(["/bin/sh", "-c", "cat /proc/net/route /proc/net/dev"])
    shown = subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout
    routes = [line for line in shown.splitlines() if line.strip() and not line.startswith(("Iface", "Inter", " face"))]
    assert [line.split(":")[0].strip() for line in routes] == ["lo"]  # no route at all, one interface: loopback


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_reading_etc_and_writing_outside_tmp_are_denied_and_recorded(tmp_path: Path, runtime: str):
    plugin = probe_plugin(tmp_path, runtime)
    corpus = small_corpus(tmp_path, 1)
    outcomes = {}
    for name, action in [("read", "read:/etc/passwd"), ("plugin", f"write:{plugin}/inside.txt"),
                         ("locked", "write:/var/tmp/mt-eval-sandbox-test.txt"), ("tmp", f"write:{tmp_path}/x.txt"),
                         ("host-file", "write:/etc/passwd"),  # (before: "Is a directory", and nothing recorded)
                         ("missing", "read:/no-such-file-here")]:  # not there, not refused (before: "network")
        code, card = run_card(tmp_path, "--method", str(plugin), "--corpus", str(corpus), "--sandbox",
                              *actions("tmp", action), out=name)
        assert code == (0 if name == "tmp" else 4) and card is not None and card.sandbox is not None
        outcomes[name] = card
    assert outcomes["read"].results[0].metadata["notes"] == ["s0"]  # its private /tmp works
    assert "denied" in (outcomes["read"].results[0].error or "").lower()
    assert not (plugin / "inside.txt").exists() and not Path("/var/tmp/mt-eval-sandbox-test.txt").exists()
    assert outcomes["tmp"].results[0].error is None and not (tmp_path / "x.txt").exists()  # private: not the host's
    denied = {name: [(a.kind, a.detail) for a in card.sandbox.denied] for name, card in outcomes.items()}
    assert denied == {"read": [("file-access", "/etc/passwd")], "plugin": [("file-write", f"{plugin}/inside.txt")],
                      "locked": [("file-access", "/var/tmp/mt-eval-sandbox-test.txt")], "tmp": [],
                      "host-file": [("file-write", "/etc/passwd")], "missing": []}


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_a_plugin_whose_import_writes_a_file_is_validated_without_the_file_appearing(tmp_path: Path, runtime: str):
    def writing_at_import(marker: Path, name: str) -> Path:
        plugin = probe_plugin(tmp_path, runtime, name=name)
        if runtime == "python":
            code = (plugin / "pipeline.py").read_text()
            (plugin / "pipeline.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n" + code)
        else:
            code = (plugin / "translate.js").read_text()
            write = f"writeFileSync({json.dumps(str(marker))}, 'x');\n"
            (plugin / "translate.js").write_text(code.replace("import net from 'node:net';\n",
                                                              "import net from 'node:net';\n" + write))
        return plugin

    in_tmp = tmp_path / f"import-wrote-{runtime}.txt"  # /tmp inside the sandbox is its own
    report = validate_plugin(writing_at_import(in_tmp, "tmp-writer"), scan=False, sandbox=True)
    assert report.import_sandbox is not None and report.passed() and not in_tmp.exists()
    plugin = writing_at_import(Path("/nonexistent"), "plugin-writer")
    in_plugin = plugin / "wrote-at-import.txt"
    for name in ("pipeline.py", "translate.js"):
        if (plugin / name).exists():
            (plugin / name).write_text((plugin / name).read_text().replace("/nonexistent", str(in_plugin)))
    report = validate_plugin(plugin, scan=False, sandbox=True)
    [problem] = [p for p in report.errors if p.code == "entry-point"]
    assert "read-only file system" in problem.message.lower() and not in_plugin.exists()
    assert problem.hint.endswith(f"{CONFINED})" if runtime == "node" else f"; {CONFINED}")  # (not only `python FILE`)
    assert main(["validate", "--no-scan", str(plugin)]) == 1 and not in_plugin.exists()


def test_validate_in_the_sandbox_reports_the_same_import_problems_as_on_the_host(make_plugin):
    broken = make_plugin(files={"pipeline.py": "import missing_module_xyz\n"})
    inside = validate_plugin(broken, sandbox=True)
    host = validate_plugin(broken)
    assert [p.message for p in inside.errors] == [p.message for p in host.errors]
    assert "No module named 'missing_module_xyz'" in inside.errors[0].message
    syntax = make_plugin(files={"pipeline.py": "def broken(:\n"})  # (the code's own fault: no word of the sandbox)
    assert [(p.message, p.hint) for p in validate_plugin(syntax, sandbox=True, scan=False).errors] == \
        [(p.message, p.hint) for p in validate_plugin(syntax, scan=False).errors]


@needs_sandbox
@pytest.mark.parametrize("broken", ["method.json", "method_card.json"])
def test_a_node_plugin_with_invalid_files_gets_the_same_problems_in_the_sandbox_as_without(tmp_path: Path,
                                                                                           broken: str):
    """Each named by its file, and no second error blaming translate.js for a guest that refused to start."""
    plugin = probe_plugin(tmp_path, "node", dependency_class="A1")  # (its dependencies make it S)
    if broken == "method_card.json":
        manifest = json.loads((plugin / "method.json").read_text())
        (plugin / "method.json").write_text(json.dumps({**manifest, "dependency_class": "S"}))
        (plugin / "method_card.json").write_text(json.dumps({"paradigm": "magic"}))
    inside, host = validate_plugin(plugin, sandbox=True, scan=False), validate_plugin(plugin, scan=False)
    assert [(p.file, p.message) for p in inside.errors] == [(p.file, p.message) for p in host.errors]
    assert [Path(p.file).name for p in inside.errors] == [broken]


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_an_entry_that_throws_at_load_is_said_once_and_not_called_imported(tmp_path: Path, runtime: str, capsys):
    plugin = probe_plugin(tmp_path, runtime, name="throws-at-load")
    entry = plugin / ("pipeline.py" if runtime == "python" else "translate.js")
    entry.write_text("raise RuntimeError('no model file')\n" if runtime == "python" else
                     "throw new Error('no model file');\n")
    assert main(["validate", "--no-scan", str(plugin)]) == 1
    out = capsys.readouterr().out
    assert "entry point loaded in the sandbox, and failed (below)" in out and "entry point imported" not in out
    [error] = [line for line in out.splitlines() if line.strip().startswith("error:")]
    assert error.count("no model file") == 1, out  # not again as the guest's stderr
    fixes = [line.strip() for line in out.splitlines() if line.strip().startswith("fix:")]
    if runtime == "node":  # the guest's own fix is the problem's fix, said once
        assert "fix: translate.js threw while it was being loaded; fix the code that runs at load time (in the " \
               "sandbox a plugin's code reads" in out
        assert sum("threw while it was being loaded" in line for line in out.splitlines()) == 1, out
        assert not any("guest's own words are above" in fix for fix in fixes), out


def test_a_slow_import_in_the_sandbox_is_held_to_the_start_timeout(make_plugin):
    """Importing a Python entry in the sandbox is bounded by --start-timeout: an import slower than that is an
    entry-point error that says where it was and how to allow more, and the same import passes with a longer one."""
    slow = make_plugin()
    code = (slow / "pipeline.py").read_text()
    (slow / "pipeline.py").write_text("import time\ntime.sleep(3)\n" + code)
    report = validate_plugin(slow, scan=False, sandbox=True, timeout_s=0.25, start_timeout_s=1)
    [problem] = [p for p in report.errors if p.code == "entry-point"]
    assert problem.message == ("importing pipeline.py did not finish within 1 s: it was still running pipeline.py:2 "
                               "(time.sleep(3))")
    assert "give validate a longer --start-timeout" in (problem.hint or "")
    report = validate_plugin(slow, scan=False, sandbox=True, timeout_s=0.25, start_timeout_s=6)
    assert report.passed(), report.errors



def test_a_host_that_cannot_isolate_refuses_to_run_and_runs_nothing(tmp_path: Path, monkeypatch, capsys):
    (tmp_path / "empty-bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))  # neither bwrap nor unshare can be found
    find_tool.cache_clear()
    try:
        marker = tmp_path / "ran.txt"
        plugin = probe_plugin(tmp_path, "python")
        code, _ = run_card(tmp_path, "--method", str(plugin), "--corpus", str(small_corpus(tmp_path)), "--sandbox",
                           *actions(f"write:{marker}"))
        err = capsys.readouterr().err
        assert code == 1 and not marker.exists() and not (tmp_path / "run" / "results.jsonl").exists()
        assert "cannot isolate" in err and "bwrap (bubblewrap) is not installed, or not on PATH" in err
        assert "apt-get install bubblewrap" in err and "never falls back to running unconfined" in err
        report = validate_plugin(plugin, sandbox=True)
        assert any(p.code == "sandbox" and "--no-sandbox" in (p.hint or "") for p in report.errors)
        monkeypatch.setenv("MT_EVAL_SANDBOX_TOOL", "none")
        find_tool.cache_clear()
        assert main(["validate", "--no-scan", str(plugin)]) == 1
        assert "MT_EVAL_SANDBOX_TOOL=none" in capsys.readouterr().out
    finally:
        find_tool.cache_clear()


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_the_unshare_fallback_confines_the_same_way(tmp_path: Path, runtime: str, monkeypatch, listener: Listener):
    with confining_with("unshare", monkeypatch):
        plugin = probe_plugin(tmp_path, runtime)
        code, card = run_card(tmp_path, "--method", str(plugin), "--corpus", str(small_corpus(tmp_path, 1)),
                              "--sandbox", *actions("tmp", "read:/etc/shadow"))
        assert code == 4 and card is not None and card.sandbox is not None  # its one entry was denied
        assert card.sandbox.tool == "unshare"
        assert [(a.kind, a.detail) for a in card.sandbox.denied] == [("file-access", "/etc/shadow")]
        code, card = run_card(tmp_path, "--method", str(plugin), "--corpus", str(small_corpus(tmp_path, 1)),
                              "--sandbox", *actions("write:/etc/passwd"), out="write")
        assert card is not None and card.sandbox is not None
        assert [(a.kind, a.detail) for a in card.sandbox.denied] == [("file-write", "/etc/passwd")]
        code, card = run_card(tmp_path, "--method", str(plugin), "--corpus", str(small_corpus(tmp_path, 1)),
                              "--sandbox", *actions(f"connect:{listener.port}"), out="net")
        assert card is not None and card.sandbox is not None and listener.accepted == 0
        assert [a.kind for a in card.sandbox.denied] == ["network"]


def test_an_official_run_refuses_a_plugin_the_scan_rejects(tmp_path: Path, capsys):
    plugin = probe_plugin(tmp_path, "python")
    code, _ = run_card(tmp_path, "--method", str(plugin), "--corpus", str(small_corpus(tmp_path)), "--official")
    err = capsys.readouterr().err
    assert code == 1 and "needs a clean static scan" in err and "pipeline.py:8" in err
    assert not (tmp_path / "run" / "results.jsonl").exists()


@pytest.mark.parametrize(("manifest", "fix"), [
    ({"dependencies": []}, 'give method.json "dependency_class": "S" (what its dependencies make it)'),
    ({}, 'give method.json its "dependencies" and "dependency_class"')])
def test_an_official_run_refuses_a_method_whose_class_is_not_declared(tmp_path: Path, capsys, manifest, fix):
    plugin = tmp_path / "quiet"
    plugin.mkdir()
    (plugin / "pipeline.py").write_text("class M:\n    async def translate(self, entries, config):\n"
                                        "        return [{'id': e['id'], 'predicted': e['source']} for e in entries]\n")
    (plugin / "method.json").write_text(json.dumps({"name": "Quiet", "entry_point": "pipeline:M", **manifest}))
    code, _ = run_card(tmp_path, "--method", str(plugin), "--corpus", str(small_corpus(tmp_path)), "--official")
    assert code == 1
    assert capsys.readouterr().err == f"mt-eval run: an official run needs a declared dependency class: {fix}\n"
    assert not (tmp_path / "run").exists()


def test_a_clean_class_s_method_is_eligible_and_a_resume_must_keep_the_sandbox(tmp_path: Path, capsys):
    demo = Path(__file__).parent.parent / "examples" / "lexicon-eng-spa"
    corpus = small_corpus(tmp_path)
    code, card = run_card(tmp_path, "--method", str(demo), "--corpus", str(corpus), "--pair", "eng>spa", "--official")
    assert code == 0 and card is not None and card.eligibility is not None
    assert card.eligibility.eligible and card.eligibility.official and card.sandbox is not None
    assert card.sandbox.denied == [] and card.static_scan is not None and card.static_scan.errors == 0
    code, _ = run_card(tmp_path, "--method", str(demo), "--corpus", str(corpus), "--pair", "eng>spa", "--resume")
    assert code == 1 and "the sandbox, --official or the gateway policy" in capsys.readouterr().err


def test_a_card_that_says_eligible_against_its_own_facts_does_not_verify(tmp_path: Path, capsys):
    """Resealed edits (the content hash then matches): eligibility is checked against the card's own sandbox, scan
    and results, so a card cannot be made eligible by editing the verdict alone, and publishing refuses it."""
    from mt_eval.harness.verify import verify_card
    from rigor_support import edit_card

    demo = Path(__file__).parent.parent / "examples" / "lexicon-eng-spa"
    code, card = run_card(tmp_path, "--method", str(demo), "--corpus", str(small_corpus(tmp_path)), "--pair",
                          "eng>spa", "--sandbox")
    assert code == 0 and card is not None and card.eligibility is not None and card.eligibility.eligible
    path = tmp_path / "run" / "card.json"
    assert not verify_card(path).errors
    denial = {"kind": "network", "detail": "example.org:443", "source": "stderr", "count": 2}
    edits = {
        "no sandbox": (lambda d: d.update(sandbox=None), "it records no sandbox ($.sandbox is null)"),
        "denied": (lambda d: d["sandbox"]["denied"].append(denial), "its sandbox denied 2 attempts"),
        "class X": (lambda d: [m.update(dependency_class="X") for m in (d["method"], d["method"]["card"])],
                    "its dependency class is X"),
        "no scan": (lambda d: d.update(static_scan=None), "it records no clean static scan ($.static_scan)"),
    }
    for name, (change, says) in edits.items():
        result = verify_card(edit_card(path, change, name=f"{name}.json"))
        assert [(p.path, p.message) for p in result.errors] == [
            ("$.eligibility.eligible", f"the card says eligible, but {says}")], name
    assert main(["publish", str(tmp_path / "run" / "no sandbox.json"), "--db", str(tmp_path / "board.db")]) != 0
    shown = capsys.readouterr()
    assert "the card says eligible, but it records no sandbox" in shown.out + shown.err


def test_an_unsandboxed_run_says_why_it_is_not_eligible(tmp_path: Path):
    demo = Path(__file__).parent.parent / "examples" / "lexicon-eng-spa"
    code, card = run_card(tmp_path, "--method", str(demo), "--corpus", str(small_corpus(tmp_path)))
    assert code == 0 and card is not None and card.sandbox is None and card.eligibility is not None
    assert not card.eligibility.eligible
    assert card.eligibility.reasons == ["the method did not run in the sandbox (run with --sandbox, or --official)"]


@pytest.mark.parametrize(("dependency", "declared", "flag", "network"), [
    ({"id": "api", "kind": "service", "license": "proprietary", "access": "external-api", "source": "https://api.example",
      "substitutable": False, "redistributable": False, "transferable": False}, "A2", ["external dependency"], "host"),
    ({"id": "weights", "kind": "model", "license": "none", "access": "bundled", "source": "weights.bin",
      "redistributable": False, "transferable": False}, "X", [], "none"),
])
def test_a2_is_flagged_and_x_is_never_eligible(tmp_path: Path, dependency, declared, flag, network):
    plugin = probe_plugin(tmp_path, "python", dependency_class=declared, dependencies=[dependency])
    code, card = run_card(tmp_path, "--method", str(plugin), "--corpus", str(small_corpus(tmp_path)), "--sandbox",
                          *actions("tmp"))
    assert code == 0 and card is not None and card.eligibility is not None and card.sandbox is not None
    assert not card.eligibility.eligible and card.eligibility.flags == flag
    assert card.sandbox.policy.network == network
    assert any(f"class {declared}" in reason for reason in card.eligibility.reasons)


def test_the_guest_in_the_sandbox_sees_no_host_environment(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-leak")
    source, _ = read_plugin(probe_plugin(tmp_path, "python"))
    assert source is not None
    argv = plugin_sandbox(source, network="none").wrap([sys.executable, "-I", "-c",
                                                        "import os, json; print(json.dumps(dict(os.environ)))"])
    environment = json.loads(subprocess.run(argv, capture_output=True, text=True, timeout=30, env=os.environ).stdout)
    assert "OPENAI_API_KEY" not in environment and environment["HOME"] == "/tmp"


@needs_sandbox
def test_sandbox_ro_exposes_an_artifact_read_only_and_the_card_records_it(tmp_path: Path, capsys):
    """A pinned copy of a mirrored dependency outside the plugin that no --sandbox-ro shows is warned of: the method's
    read of it fails with "No such file or directory", which says nothing of why. One the sandbox shows every method
    (under /usr) is not."""
    artifact = tmp_path / "mirror" / "lexicon.txt"
    artifact.parent.mkdir()
    artifact.write_text("hello=hola\n")
    mirrored = {"id": "lexicon", "kind": "data", "license": "MIT", "access": "mirrored", "source": str(artifact),
                "redistributable": True, "transferable": True, "pin": "sha256:" + sha256(b"hello=hola\n").hexdigest()}
    system = {**mirrored, "id": "env", "source": "/usr/bin/env",
              "pin": "sha256:" + sha256(Path("/usr/bin/env").read_bytes()).hexdigest()}
    plugin = probe_plugin(tmp_path, "python", dependency_class="O", dependencies=[mirrored, system])
    corpus = small_corpus(tmp_path, 1)
    run_card(tmp_path, "--method", str(plugin), "--corpus", str(corpus), "--sandbox", *actions(f"read:{artifact}"),
             out="hidden")
    said = capsys.readouterr().err
    assert (f"mt-eval run: warning: the mirrored dependency 'lexicon' is at {artifact}, outside the plugin, where the "
            f"sandbox does not show it: give --sandbox-ro {artifact} to let the method read it") in said
    code, card = run_card(tmp_path, "--method", str(plugin), "--corpus", str(corpus), "--sandbox", "--sandbox-ro",
                          str(artifact.parent), *actions(f"read:{artifact}"))
    assert code == 0 and card is not None and card.sandbox is not None
    assert card.results[0].predicted == "hello=hola\n" and "warning" not in capsys.readouterr().err
    assert str(artifact.parent) in card.sandbox.policy.extra_read_only


@pytest.mark.parametrize("exposed", ["directory", "file"])
def test_sandbox_ro_may_not_expose_the_corpus(tmp_path: Path, capsys, exposed: str):
    """Its references would be there for the method to read, in a run that says it is confined."""
    plugin = probe_plugin(tmp_path, "python")
    corpus = small_corpus(tmp_path, 1)
    shown = tmp_path if exposed == "directory" else corpus
    code, card = run_card(tmp_path, "--method", str(plugin), "--corpus", str(corpus), "--sandbox", "--sandbox-ro",
                          str(shown), *actions(f"read:{corpus}"))
    assert code == 1 and card is None
    assert (f"--sandbox-ro {shown} holds the corpus ({corpus}): the method would read the references it is scored "
            "on") in capsys.readouterr().err
