"""What a method served by a bridge guest writes to its stderr is shown on the stderr of the command running it, as
an in-process method's ``print()`` is; the guest kits' own lines (a failed call's stack) are not, since the
entry's error already says it (`mt_eval.cli.guest_output`)."""

from __future__ import annotations

import io
import json
import logging
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mt_eval.cli.guest_output import GUEST_LOGGER, GuestOutput, shown

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "examples" / "data" / "eng-spa-demo.json"
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")

NODE_TALKS = """\
export async function translate(entries, config) {
  console.log(`log: ${entries.length} entries`);
  console.error('error: something to see');
  process.stdout.write('written to stdout\\n');
  return entries.map((e) => ({ id: e.id, predicted: e.source.toUpperCase() }));
}
"""
NODE_FLOODS = """\
export async function translate(entries, config) {
  for (let i = 0; i < 40; i++) console.error(`${'x'.repeat(65536)} line ${i}`);
  return entries.map((e) => ({ id: e.id, predicted: e.source.toUpperCase() }));
}
"""
NODE_THROWS = """\
export async function translate(entries, config) {
  throw new Error('boom');
}
"""
PYTHON_PRINTS = """\
import sys


class Talks:
    async def translate(self, entries, config):
        print(f"print: {len(entries)} entries")
        print("stderr: something to see", file=sys.stderr)
        return [{"id": e["id"], "predicted": e["source"].upper()} for e in entries]
"""


NODE_MANIFEST = {"name": "Talks", "node_entry": "translate.js", "supported_pairs": ["eng>spa"], "dependencies": []}
PYTHON_MANIFEST = {"name": "Talks", "entry_point": "pipeline:Talks", "supported_pairs": ["eng>spa"], "dependencies": []}


def run(tmp_path: Path, method: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mt_eval.cli", "run", "--method", str(method), "--corpus",
                           str(CORPUS), "--limit", "2", "--out", str(tmp_path / "run"), "--no-contamination-check",
                           "--latency-sample", "0", *extra], capture_output=True, text=True, timeout=120)


@needs_node
def test_a_node_methods_console_output_is_shown_on_stderr(tmp_path: Path, make_plugin):
    """Before: a Node method's console.log and console.error went to the guest's stderr, which the host logged
    at INFO, and nothing showed them."""
    done = run(tmp_path, make_plugin(NODE_MANIFEST, {"translate.js": NODE_TALKS}))
    assert done.returncode == 5, done.stderr  # complete (a selection of 2 entries has no canary: no headline)
    lines = done.stderr.splitlines()
    for said in ("log: 2 entries", "error: something to see", "written to stdout"):
        assert said in lines
    assert "something to see" not in done.stdout


@needs_node
def test_every_line_a_node_method_writes_is_shown_however_much_it_writes_before_the_guest_exits(tmp_path: Path,
                                                                                                 make_plugin):
    """Before: Node writes to a pipe without blocking, and the guest's exit dropped what was still queued: of 40 lines
    of 64 KiB written in the run's one call, the last ones (most of them) were never shown. (A long line is shown by
    its end.)"""
    done = run(tmp_path, make_plugin(NODE_MANIFEST, {"translate.js": NODE_FLOODS}))
    assert done.returncode == 5, done.stderr[-2000:]
    shown_ends = [line.rsplit(" line ", 1)[-1] for line in done.stderr.splitlines() if " line " in line]
    assert shown_ends == [str(i) for i in range(40)], shown_ends


@needs_node
def test_a_failing_node_methods_stack_is_not_shown_its_error_is(tmp_path: Path, make_plugin):
    done = run(tmp_path, make_plugin(NODE_MANIFEST, {"translate.js": NODE_THROWS}))
    assert done.returncode == 4, done.stderr
    assert "the method failed: Error: boom" in done.stderr
    assert "mt-eval-guest" not in done.stderr and "    at " not in done.stderr


NODE_FAILS_LATER = """\
export async function translate(entries, config) {
  setTimeout(() => { throw new Error('thrown in a timer'); }, 1);
  Promise.reject(new Error('left rejected'));
  await new Promise((resolve) => setTimeout(resolve, 20));
  return entries.map((e) => ({ id: e.id, predicted: e.source.toUpperCase() }));
}
"""


@needs_node
def test_what_a_node_method_throws_outside_its_calls_is_shown_as_a_python_methods_is(tmp_path: Path, make_plugin):
    """Before: the guest said it with its own name, so no command showed it, and no call's error carried it: a timer
    that threw or a promise left rejected went unseen, where asyncio's report of the same in a Python method shows."""
    done = run(tmp_path, make_plugin(NODE_MANIFEST, {"translate.js": NODE_FAILS_LATER}))
    assert done.returncode == 5, done.stderr
    lines = done.stderr.splitlines()
    assert "uncaught exception in the method: Error: thrown in a timer" in lines, done.stderr
    assert "unhandled rejection in the method: Error: left rejected" in lines
    assert any(line.strip().startswith("at ") and "translate.js:2:" in line for line in lines)


def test_an_isolated_python_methods_print_is_shown_as_in_process(tmp_path: Path, make_plugin):
    method = make_plugin(PYTHON_MANIFEST, {"pipeline.py": PYTHON_PRINTS})
    in_process = run(tmp_path, method)
    isolated = run(tmp_path, method, "--isolate", "--force")
    for done in (in_process, isolated):
        assert done.returncode == 5, done.stderr
        assert "print: 2 entries" in done.stderr.splitlines()
        assert "stderr: something to see" in done.stderr.splitlines()



WRITES_TO_THE_ORIGINAL_STDOUT = """\
import sys


class Talks:
    async def translate(self, entries, config):
        sys.__stdout__.write("original stdout: still there\\n")
        sys.__stdout__.flush()
        return [{"id": e["id"], "predicted": e["source"].upper()} for e in entries]
"""


def test_an_isolated_python_method_may_write_to_sys_dunder_stdout_unbuffered_too(tmp_path: Path, make_plugin,
                                                                                  monkeypatch: pytest.MonkeyPatch):
    """Before: under PYTHONUNBUFFERED (set in many containers) the guest had closed sys.__stdout__, so each of the
    method's calls failed with `ValueError: I/O operation on closed file.`, where in process it wrote to stderr."""
    monkeypatch.setenv("PYTHONUNBUFFERED", "1")
    method = make_plugin(PYTHON_MANIFEST, {"pipeline.py": WRITES_TO_THE_ORIGINAL_STDOUT})
    for done in (run(tmp_path, method), run(tmp_path, method, "--isolate", "--force")):
        assert done.returncode == 5, done.stderr
        assert "original stdout: still there" in done.stderr.splitlines()
        assert "still there" not in done.stdout

@needs_node
def test_every_line_the_node_guest_kit_writes_of_its_own_starts_with_its_name(make_plugin):
    """A host tells the kit's lines from the method's by that name: a stack's lines carry it too."""
    guest = ROOT / "bridge" / "node" / "bin" / "mt-eval-guest.js"
    requests = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocol_versions": ["mt-eval-bridge/1"], "config": {"source_lang": "eng",
                                                                                  "target_lang": "spa"}}},
                {"jsonrpc": "2.0", "id": 2, "method": "translate", "params": {"entries": [{"id": "1", "source": "a"}]}}]
    done = subprocess.run(["node", str(guest), str(make_plugin(NODE_MANIFEST, {"translate.js": NODE_THROWS}))],
                          input="".join(json.dumps(r) + "\n" for r in requests), capture_output=True, text=True,
                          timeout=60)
    lines = done.stderr.splitlines()
    assert any("translate failed: Error: boom" in line for line in lines), done.stderr
    assert len(lines) > 1 and all(line.startswith("mt-eval-guest: ") for line in lines), done.stderr


def record(message: str, level: int = logging.INFO, line: str | None = None) -> logging.LogRecord:
    made = logging.LogRecord(GUEST_LOGGER, level, __file__, 1, message, None, None)
    if line is not None:
        made.child_stderr_line = line
    return made


def test_the_handler_shows_the_methods_lines_and_a_guests_warnings_only(monkeypatch: pytest.MonkeyPatch):
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)  # (looked up as each line arrives: a progress bar may have taken it)
    handler = GuestOutput()
    handler.handle(record("guest 1: hello", line="hello\r"))
    handler.handle(record("guest 1: mt-eval-guest: translate failed", line="mt-eval-guest: translate failed"))
    handler.handle(record("guest 1: mt-eval serve: stopping", line="mt-eval serve: stopping"))
    handler.handle(record("guest 1: a progress note"))  # a log notification below WARNING
    handler.handle(record("guest 1: running out of memory", logging.WARNING))
    assert err.getvalue() == "hello\nguest 1: running out of memory\n"


def test_the_handler_is_quiet_when_stderr_is_gone(monkeypatch: pytest.MonkeyPatch):
    class Gone(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stderr", Gone())
    GuestOutput().handle(record("guest 1: hello", line="hello"))  # (no exception, no logging error report)


def test_shown_enables_the_guest_logger_and_puts_it_back():
    logger = logging.getLogger(GUEST_LOGGER)
    before = (logger.level, list(logger.handlers))
    with shown():
        assert logger.isEnabledFor(logging.INFO)
        assert any(isinstance(h, GuestOutput) for h in logger.handlers)
    assert (logger.level, list(logger.handlers)) == before


def test_the_guest_logger_has_one_name_and_naming_it_loads_none_of_the_host_or_the_sandbox():
    """The host logs on it, the commands show it, the sandbox reads its refusals in it: one name, from a package that
    imports nothing (importing `mt_eval.sandbox.denials` for it once added 14 ms to each command's start)."""
    script = ("import sys, mt_eval.bridge, mt_eval.cli.guest_output as shown; "
              "assert shown.GUEST_LOGGER is mt_eval.bridge.GUEST_LOGGER == 'mt_eval.bridge.guest'; "
              "print(sorted(m for m in sys.modules if m.startswith(('mt_eval.bridge.', 'mt_eval.sandbox'))))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "[]\n"), done.stderr
    from mt_eval.bridge import GUEST_LOGGER as home
    from mt_eval.bridge.connection import GuestConnection
    from mt_eval.sandbox.denials import GUEST_LOGGER as read

    assert GUEST_LOGGER is read is home
    assert GuestConnection(["true"])._stderr.logger is logging.getLogger(home)


CARD_CONTRADICTS_MANIFEST = """\
class Talks:
    async def translate(self, entries, config):
        return [{"id": e["id"], "predicted": e["source"].upper()} for e in entries]

    def method_card(self):
        return {"class": "api"}
"""


def test_an_isolated_python_plugin_that_cannot_load_is_said_once(tmp_path: Path, make_plugin):
    """Before: the guest's load failure (`mt-eval serve: cannot load …`, then its `error:` and `fix:` lines) was
    shown twice — its second and third lines as if the method had printed them, before the command's own message,
    then all of it in the guest's stderr tail that message quotes."""
    method = make_plugin(PYTHON_MANIFEST, {"pipeline.py": CARD_CONTRADICTS_MANIFEST})
    done = run(tmp_path, method, "--isolate")
    assert done.returncode == 1, done.stderr
    assert done.stderr.count('$.class: says "api"') == 1, done.stderr
    assert "guest stderr (last lines)" in done.stderr
