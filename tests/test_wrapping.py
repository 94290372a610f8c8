"""Wrapping a translator program, as a user does it: the run's --timeout is the adapter's per-record timeout, a
program that buffers its output is named as such with the fixes, a plain program declared as ``command`` is
refused as "not a bridge guest" within seconds, and the plugin directory a method gets is absolute."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gate_policies import LENIENT
from mt_eval.adapters import LINES, ProcessOptions, ProcessTranslator, record_process
from mt_eval.records import RunConfig

REPO = Path(__file__).parent.parent
PROGRAM = REPO / "tests" / "programs" / "record_translator.py"
BUFFERING = "import sys\nfor line in sys.stdin:\n    print(line.rstrip('\\n').upper())\n"  # no flush: a pipe buffers
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # a program as it runs on a user's machine
ENTRIES = [{"id": str(i), "source": text} for i, text in enumerate(["one", "!hang", "three"])]


def mt_eval(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mt_eval.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=ENV)


def corpus(tmp_path: Path, sources: list[str]) -> Path:
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps({"id": f"e{i}", "source": s, "reference": s.upper()}) + "\n"
                            for i, s in enumerate(sources)), encoding="utf-8")
    return path


def wrapper_plugin(tmp_path: Path, argv: str, *, name: str = "wrapper", adapter: str = "framing=LINES") -> Path:
    """A plugin whose pipeline.py wraps the program ``argv`` (Python source of a list, with ``directory``), with the
    adapter's other arguments ``adapter`` (Python source)."""
    plugin = tmp_path / name
    plugin.mkdir()
    (plugin / "method.json").write_text(json.dumps({
        "name": "Wrapped", "method_id": name, "entry_point": "pipeline:Wrapped", "supported_pairs": ["eng>spa"],
        "dependency_class": "S", "dependencies": [{
            "id": "program", "kind": "software", "license": "CC0-1.0", "access": "bundled", "source": "program.py",
            "redistributable": True, "transferable": True}]}), encoding="utf-8")
    (plugin / "pipeline.py").write_text(
        "import sys\nfrom mt_eval.adapters import LINES, NULL_FLUSH, ProcessTranslator\n\n\n"
        "class Wrapped:\n"
        "    def __init__(self, directory):\n"
        "        assert directory.is_absolute(), directory\n"
        f"        self.translator = ProcessTranslator({argv}, {adapter})\n\n"
        "    async def translate(self, entries, config):\n"
        "        return await self.translator.translate(entries, config)\n\n"
        "    async def aclose(self):\n"
        "        await self.translator.aclose()\n", encoding="utf-8")
    return plugin


# ---- one timeout: the run's -----------------------------------------------------------------------


async def test_the_per_record_timeout_is_the_runs_timeout():
    translator = ProcessTranslator([sys.executable, str(PROGRAM)], framing=LINES,
                                   options=ProcessOptions(shutdown_grace_s=0.3))
    started = time.perf_counter()
    try:
        results = await translator.translate([dict(e) for e in ENTRIES], RunConfig(source_lang="eng",
                                                                                    target_lang="spa", timeout_s=1))
    finally:
        await translator.aclose()
    assert time.perf_counter() - started < 10  # not the 30 s the adapter had of its own
    assert [r.get("predicted") for r in results] == ["T:ONE", None, "T:THREE"]
    assert "gave no answer within 1 s" in results[1]["error"]


async def test_an_explicit_per_record_timeout_wins_and_texts_without_a_config_use_it():
    translator = ProcessTranslator([sys.executable, str(PROGRAM)], framing=LINES,
                                   options=ProcessOptions(timeout_s=0.5, shutdown_grace_s=0.3))
    try:
        results = await translator.translate([dict(e) for e in ENTRIES[:2]], RunConfig(source_lang="eng",
                                                                                        target_lang="spa"))
        texts = await translator.translate_texts(["!hang"])
    finally:
        await translator.aclose()
    assert "within 0.5 s" in results[1]["error"] and "within 0.5 s" in texts[0].error
    assert record_process.DEFAULT_TIMEOUT_S == 30.0 and ProcessOptions().timeout_s is None


def test_mt_eval_run_timeout_fails_a_stuck_record_with_the_programs_own_words(tmp_path):
    plugin = wrapper_plugin(tmp_path, f"[sys.executable, {str(PROGRAM)!r}]")
    started = time.perf_counter()
    done = mt_eval("run", "--method", str(plugin), "--corpus", str(corpus(tmp_path, ["one", "!hang", "three"])),
                   "--timeout", "2", "--out", str(tmp_path / "run"), "--no-contamination-check")
    assert done.returncode == 3, done.stderr  # partial: one entry failed
    assert time.perf_counter() - started < 30
    assert "1 of 3 entries failed" in done.stderr and "gave no answer within 2 s  (e.g. e1)" in done.stderr
    card = json.loads((tmp_path / "run" / "card.json").read_text(encoding="utf-8"))
    assert [r.get("predicted") for r in card["results"]] == ["T:ONE", None, "T:THREE"]


# ---- a program that buffers its output -----------------------------------------------------------


async def test_a_buffering_program_is_named_with_the_fixes(tmp_path):
    script = tmp_path / "buffering.py"
    script.write_text(BUFFERING, encoding="utf-8")
    translator = ProcessTranslator([sys.executable, str(script)], framing=LINES, env=ENV,
                                   options=ProcessOptions(shutdown_grace_s=0.3))
    try:
        results = await translator.translate([{"id": "1", "source": "hello"}],
                                             RunConfig(source_lang="eng", target_lang="spa", timeout_s=1.5))
    finally:
        await translator.aclose()
    error = results[0]["error"]  # named by its script, with the fixes that work for Python (stdbuf does not)
    assert error.startswith("buffering.py gave no answer within 1.5 s and wrote nothing at all, and waits for more "
                            "input: it buffers its output")
    python = Path(sys.executable).name
    for fix in (f"{python} -u", "PYTHONUNBUFFERED=1", "flush=True", "persistent=False",
                "Wrapping a translator program"):
        assert fix in error
    assert "stdbuf" not in error


async def test_a_program_that_still_buffers_under_stdbuf_is_named_and_not_sent_to_stdbuf_again(tmp_path):
    """Before: "Fix: stdbuf -oL stdbuf …", naming the wrapper as the program."""
    script = tmp_path / "my-mt"
    script.write_text(f"#!{sys.executable}\n{BUFFERING}", encoding="utf-8")
    script.chmod(0o755)
    translator = ProcessTranslator(["stdbuf", "-oL", str(script), "--model", "m.bin"], framing=LINES, env=ENV,
                                   options=ProcessOptions(timeout_s=1.5, shutdown_grace_s=0.3))
    try:
        [outcome] = await translator.translate_texts(["hello"])
    finally:
        await translator.aclose()
    assert outcome.error.startswith("my-mt gave no answer within 1.5 s and wrote nothing at all")
    assert ("Fix: my-mt sets its own buffering, which stdbuf does not change: its own unbuffered flag (--unbuffered, "
            "--flush), or persistent=False") in outcome.error


async def test_a_silent_program_is_warned_about_long_before_its_timeout(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(record_process, "QUIET_WARNING_S", 0.5)
    script = tmp_path / "buffering.py"
    script.write_text(BUFFERING, encoding="utf-8")
    translator = ProcessTranslator([sys.executable, str(script)], framing=LINES, env=ENV,
                                   options=ProcessOptions(timeout_s=3, shutdown_grace_s=0.3))
    with caplog.at_level(logging.WARNING, logger="mt_eval.adapters"):
        try:
            await translator.translate_texts(["hello"])
        finally:
            await translator.aclose()
    warned = [r.getMessage() for r in caplog.records if "has read its input and written nothing" in r.getMessage()]
    assert warned == ["buffering.py has read its input and written nothing for 0.5 s, and waits for more input: it "
                      f"buffers its output (as programs writing to a pipe do). Fix: {Path(sys.executable).name} -u …, "
                      "PYTHONUNBUFFERED=1 in its environment, print(..., flush=True), or persistent=False; README: "
                      '"Wrapping a translator program"']


async def test_records_after_one_failed_for_buffering_fail_at_once_with_the_same_words(tmp_path):
    """Before: each record in flight was sent again to a fresh program and waited out a timeout of its own (120 s
    by default: hours for a large run), and later records did too."""
    script = tmp_path / "buffering.py"
    script.write_text(BUFFERING, encoding="utf-8")
    translator = ProcessTranslator([sys.executable, str(script)], framing=LINES, env=ENV,
                                   options=ProcessOptions(timeout_s=1, shutdown_grace_s=0.3))
    started = time.perf_counter()
    try:
        results = await translator.translate_texts(["one", "two", "three", "four"])
        results += await translator.translate_texts(["five"])
    finally:
        await translator.aclose()
    assert time.perf_counter() - started < 1.9  # one timeout, not one a record
    errors = {outcome.error for outcome in results}
    assert len(errors) == 1 and errors.pop().startswith("buffering.py gave no answer within 1 s and wrote nothing")
    assert translator.runners[0].restarts == 0


def test_mt_eval_run_with_a_buffering_program_fails_its_entries_in_one_timeout(tmp_path):
    script = tmp_path / "buffering.py"
    script.write_text(BUFFERING, encoding="utf-8")
    plugin = wrapper_plugin(tmp_path, f"[sys.executable, {str(script)!r}]")
    sources = [f"line {n}" for n in range(8)]
    done = mt_eval("run", "--method", str(plugin), "--corpus", str(corpus(tmp_path, sources)), "--timeout", "1",
                   "--out", str(tmp_path / "run"), "--no-contamination-check")
    assert done.returncode == 4, done.stderr  # failed: no entry translated
    assert "8 of 8 entries failed (1 distinct error):\n  8 × buffering.py gave no answer within 1 s and wrote " \
           "nothing at all, and waits for more input: it buffers its output" in done.stderr
    assert "restarting" not in done.stderr


def test_mt_eval_run_with_a_program_that_cannot_start_tries_it_once(tmp_path):
    """Before: "restarting word-mt (restart 1)" … "(restart 5)", then "word-mt keeps failing: 5 restarts within
    60 s; last failure: cannot start word-mt …" for the other entries."""
    plugin = wrapper_plugin(tmp_path, "[str(directory / 'bin' / 'word-mt')]")
    sources = [f"line {n}" for n in range(8)]
    done = mt_eval("run", "--method", str(plugin), "--corpus", str(corpus(tmp_path, sources)),
                   "--out", str(tmp_path / "run"), "--no-contamination-check")
    assert done.returncode == 4, done.stderr
    assert (f"8 of 8 entries failed (1 distinct error):\n  8 × cannot start word-mt ({plugin / 'bin' / 'word-mt'}): "
            "no such file") in done.stderr
    assert "restarting" not in done.stderr


def test_the_same_program_flushing_each_line_works(tmp_path):
    script = tmp_path / "program.py"
    script.write_text(BUFFERING.replace(".upper())", ".upper(), flush=True)"), encoding="utf-8")
    plugin = wrapper_plugin(tmp_path, f"[sys.executable, {str(script)!r}]")
    done = mt_eval("run", "--method", str(plugin), "--corpus", str(corpus(tmp_path, ["one", "two"])),
                   "--out", str(tmp_path / "run"), "--no-contamination-check", "--quiet", *LENIENT)
    assert done.returncode == 0, done.stderr
    assert "chrF++ 100.00" in done.stdout


# ---- a plain program is not a bridge guest ---------------------------------------------------------


@pytest.mark.parametrize("flags", [["-u"], []], ids=["answers each line", "buffers its output"])
def test_a_plain_program_declared_as_command_is_refused_in_seconds(tmp_path, flags):
    plugin = tmp_path / "plain"
    plugin.mkdir()
    (plugin / "upper.py").write_text(BUFFERING, encoding="utf-8")
    (plugin / "method.json").write_text(json.dumps({
        "name": "Plain", "method_id": "plain", "command": [sys.executable, *flags, "upper.py"],
        "supported_pairs": ["eng>spa"], "dependency_class": "S", "dependencies": []}), encoding="utf-8")
    started = time.perf_counter()
    done = mt_eval("run", "--method", str(plugin), "--corpus", str(corpus(tmp_path, ["one"])),
                   "--out", str(tmp_path / "run"), "--no-contamination-check")
    assert time.perf_counter() - started < 15  # the start timeout is 30 s
    assert done.returncode == 1
    assert "plain is not a bridge guest" in done.stderr
    seen = "answered the initialize request with a line of text" if flags else "waits for more input"
    assert seen in done.stderr
    assert "ProcessTranslator" in done.stderr and "Wrapping a translator program" in done.stderr
    validated = mt_eval("validate", "--no-sandbox", str(plugin))
    assert validated.returncode == 1 and "is not a bridge guest" in validated.stdout + validated.stderr


def test_a_plain_program_that_keeps_the_requests_id_in_its_line_is_refused_as_one(tmp_path):
    """A filter that appends to each line keeps the request's id readable, so its line names the initialize
    request: it is still a text filter, not a guest answering with a line that is not JSON."""
    plugin = tmp_path / "suffix"
    plugin.mkdir()
    (plugin / "suffix.py").write_text("import sys\nfor line in sys.stdin:\n    print(line.rstrip('\\n') + ' (done)', "
                                      "flush=True)\n", encoding="utf-8")
    (plugin / "method.json").write_text(json.dumps({
        "name": "Suffix", "method_id": "suffix", "command": [sys.executable, "suffix.py"],
        "supported_pairs": ["eng>spa"], "dependency_class": "S", "dependencies": []}), encoding="utf-8")
    done = mt_eval("translate", str(plugin), "one")
    assert done.returncode != 0
    said = done.stdout + done.stderr
    assert "suffix is not a bridge guest: it answered the initialize request with a line of text ('{\"jsonrpc\"" in said
    assert "not valid JSON" not in said


# ---- the plugin directory is absolute ----------------------------------------------------------------


def test_a_run_from_inside_the_plugin_finds_its_bundled_program(tmp_path):
    plugin = wrapper_plugin(tmp_path, "[sys.executable, str(directory / 'program.py')]")
    (plugin / "program.py").write_text(BUFFERING.replace(".upper())", ".upper(), flush=True)"), encoding="utf-8")
    data = corpus(tmp_path, ["one", "two"])
    done = mt_eval("run", "--method", ".", "--corpus", str(data), "--no-contamination-check", *LENIENT, cwd=plugin)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "runs" / "wrapper__corpus" / "card.json").is_file()
    assert not (plugin / "runs").exists()
