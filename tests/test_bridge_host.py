"""The Python host against well-behaved and purpose-built misbehaving guests.

Every failure test checks the same promises: clear per-entry errors, completed results kept, no hang,
and no process left behind.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
import time
from pathlib import Path

import pytest

from mt_eval.bridge import messages as m
from mt_eval.bridge.connection import GuestConnection, HostOptions
from mt_eval.bridge.method import BridgeMethod

HERE = Path(__file__).parent
REVERSE = HERE / "fixtures" / "reverse"
MISBEHAVING = HERE / "guests" / "misbehaving.py"
CONFIG = {"source_lang": "eng", "target_lang": "spa"}
FAST = HostOptions(start_timeout_s=10, request_timeout_s=5, shutdown_grace_s=1, restart_budget=2)


def running(pid: int) -> bool:
    """Whether a process exists and is not a zombie waiting to be reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


def guest(mode: str, **options: object) -> BridgeMethod:
    settings = {**FAST.__dict__, **options}
    return BridgeMethod([sys.executable, str(MISBEHAVING), mode], options=HostOptions(**settings), label=mode)


def entries(*sources: str) -> list[dict[str, str]]:
    return [{"id": f"e{i}", "source": s} for i, s in enumerate(sources)]


def serve_reverse() -> BridgeMethod:
    return BridgeMethod([sys.executable, "-m", "mt_eval.cli", "serve", str(REVERSE)], options=FAST, label="reverse")


async def test_python_guest_translates_with_per_entry_errors_and_diverted_prints():
    method = serve_reverse()
    try:
        results = await method.translate(entries("abc", "!fail now", "!print me", "héllo 🙂"), CONFIG)
        assert [r["predicted"] for r in results] == ["spa:cba", None, "spa:em tnirp!", "spa:🙂 olléh"]
        assert results[1]["error"] == "asked to fail"
        assert all(r["latency_s"] >= 0 for r in results)
        assert method.method_card() == {"paradigm": "unknown"}  # the method's own card; hosts merge files
        pid = method._connection.pid
    finally:
        await method.aclose()
    assert not running(pid)


async def test_a_raising_method_fails_only_its_own_request():
    method = serve_reverse()
    try:
        first, second = await asyncio.gather(method.translate(entries("!raise"), CONFIG),
                                             method.translate(entries("ok"), CONFIG))
        assert first[0]["error"].startswith("the method failed: RuntimeError: asked to raise")
        assert second[0]["predicted"] == "spa:ko"
    finally:
        await method.aclose()


async def test_many_requests_in_flight_share_one_guest():
    method = serve_reverse()
    try:
        batches = await asyncio.gather(*(method.translate(entries(f"n{i}", f"m{i}"), CONFIG) for i in range(50)))
        assert [b[0]["predicted"] for b in batches] == ["spa:" + f"n{i}"[::-1] for i in range(50)]
        assert [b[1]["predicted"] for b in batches] == ["spa:" + f"m{i}"[::-1] for i in range(50)]
        assert method.restarts == 0
    finally:
        await method.aclose()


async def test_crash_mid_batch_keeps_completed_results_and_resends_the_lost_entries_alone():
    method = guest("crash-mid-batch")  # max_batch 2: four entries are two requests; the second crashes
    try:
        results = await method.translate(entries("aa", "bb", "cc", "dd"), CONFIG)
        # cc and dd are sent again, each alone, to a fresh guest: it answers cc, and crashes on dd (its second
        # request again), which therefore fails alone with the exit code and the stderr tail
        assert [r["predicted"] for r in results] == ["aa", "bb", "cc", None]
        assert "exited with code 3" in results[3]["error"]
        assert "fatal: the model ran out of memory" in results[3]["error"]
        again = await method.translate(entries("ee"), CONFIG)
        assert again[0]["predicted"] == "ee"
        assert method.restarts == 2
    finally:
        await method.aclose()


async def test_crash_loop_budget_is_reported():
    method = guest("crash-always", restart_budget=2)
    try:
        for _ in range(3):
            failed = await method.translate(entries("a"), CONFIG)
            assert "exited with code 4" in failed[0]["error"]
        exhausted = await method.translate(entries("a"), CONFIG)
        assert "the guest's crash-loop budget is exhausted (2 restarts within 60 s)" in exhausted[0]["error"]
        assert "fatal: cannot load weights" in exhausted[0]["error"]
        assert method.restarts == 2
    finally:
        await method.aclose()


async def test_hung_request_times_out_and_the_guest_is_replaced():
    method = guest("hang", request_timeout_s=0.5)
    try:
        started = time.monotonic()
        results = await method.translate(entries("please hang"), CONFIG)
        assert time.monotonic() - started < 3
        assert results[0]["error"] == "translate request got no answer or progress within 0.5 s"
        pid = method._connection.pid
        assert (await method.translate(entries("fine"), CONFIG))[0]["predicted"] == "enif"
        assert not running(pid)
    finally:
        await method.aclose()


async def test_progress_resets_the_timeout_but_not_the_hard_cap(caplog):
    method = guest("progress", request_timeout_s=0.35, hard_timeout_s=1.5)
    try:
        assert (await method.translate(entries("8"), CONFIG))[0]["predicted"] == "8"  # 0.8 s, progress each 0.1 s
        # progress naming no request, by an id that is a list, say, is ignored (it had raised in the read callback)
        assert method.restarts == 0 and not [r for r in caplog.records if r.levelname == "ERROR"]
        capped = await method.translate(entries("25"), CONFIG)  # 2.5 s of progress: over the hard cap
        assert "hit the hard cap of 1.5 s" in capped[0]["error"]
        # a request whose own timeout (the config's per entry) is longer than the cap gets its timeout
        allowed = await method.translate(entries("25"), {**CONFIG, "timeout_s": 3.0})
        assert allowed[0].get("predicted") == "52", allowed  # (reversed)
    finally:
        await method.aclose()


async def test_junk_on_stdout_is_skipped_and_counted():
    method = guest("junk")
    try:
        results = await method.translate(entries("abc", "def"), CONFIG)
        assert [r["predicted"] for r in results] == ["cba", "fed"]
        assert method._connection.junk_lines == 4  # (one of them a "debug: ... {"id": N}" line, not an answer to N)
    finally:
        await method.aclose()


async def test_an_answer_nested_too_deep_to_read_fails_its_entry_and_the_guest_serves_on(caplog):
    method = guest("deep")
    try:
        results = await method.translate(entries("deep", "fine"), CONFIG)
        assert results[0]["error"] is not None and "not valid JSON" in results[0]["error"]
        assert results[1]["predicted"] == "enif"
        assert method.restarts == 0 and not [r for r in caplog.records if r.levelname == "ERROR"]
    finally:
        await method.aclose()


async def test_a_line_over_the_limit_fails_only_its_request():
    method = guest("oversized", max_line_bytes=4096)
    try:
        results = await method.translate(entries("small", "big one", "tiny", "fine"), CONFIG)
        assert [r["predicted"] for r in results] == ["llams", None, "ynit", "enif"]  # the request was split
        assert results[1]["error"].startswith("guest sent a line of ")
        assert " bytes, over this host's 4096-byte line limit (its max_line_bytes option; the protocol allows " \
               "16777216 bytes: raise max_line_bytes to take longer lines)" in results[1]["error"]
    finally:
        await method.aclose()


async def test_invalid_utf8_fails_only_its_request():
    method = guest("invalid-utf8")
    try:
        bad = await method.translate(entries("bad"), CONFIG)
        assert bad[0]["error"] == "the method returned an unusable result: not valid UTF-8 (byte 0xff)"
        assert "UTF-8" in bad[0]["error"]
        assert (await method.translate(entries("good"), CONFIG))[0]["predicted"] == "doog"
    finally:
        await method.aclose()


async def test_wrong_duplicate_and_missing_ids_become_entry_errors():
    method = guest("wrong-ids")
    try:
        results = await method.translate(entries("one", "two", "three", "four"), CONFIG)
        from mt_eval.results import STRAYS

        assert results[0]["error"] == "the method returned no result for this entry" + STRAYS
        assert results[1]["error"] == "the method returned 2 results for this entry"
        assert results[2]["error"] == "the method returned no result for this entry" + STRAYS
        assert results[3]["predicted"] == "ruof"
    finally:
        await method.aclose()


async def test_guest_ignoring_sigterm_is_killed():
    connection = GuestConnection([sys.executable, str(MISBEHAVING), "ignore-sigterm"],
                                 options=HostOptions(shutdown_grace_s=0.3))
    await connection.start(CONFIG)
    pid = connection.pid
    started = time.monotonic()
    await connection.aclose()
    assert time.monotonic() - started < 3
    assert connection.exit_code == -9
    assert not running(pid)


async def test_grandchildren_are_ended_with_the_guest():
    connection = GuestConnection([sys.executable, str(MISBEHAVING), "grandchild"],
                                 options=HostOptions(shutdown_grace_s=0.5))
    await connection.start(CONFIG)
    for _ in range(100):
        found = re.search(r"grandchild pid (\d+)", connection.stderr_tail())
        if found:
            break
        await asyncio.sleep(0.02)
    assert found, connection.stderr_tail()
    grandchild = int(found.group(1))
    assert running(grandchild)
    await connection.aclose()
    assert not running(connection.pid)
    assert not running(grandchild)


async def test_stderr_flood_does_not_block_and_keeps_a_bounded_tail():
    method = guest("stderr-flood")
    try:
        results = await method.translate(entries("abc"), CONFIG)
        assert results[0]["predicted"] == "cba"
        tail = method._connection.stderr_tail()
        assert len(tail) < 50_000
        assert tail.splitlines()[-1] == "y" * 1023
    finally:
        await method.aclose()


async def test_guest_that_never_answers_initialize():
    connection = GuestConnection([sys.executable, str(MISBEHAVING), "no-initialize"],
                                 options=HostOptions(start_timeout_s=0.5, shutdown_grace_s=0.3))
    started = time.monotonic()
    with pytest.raises(m.BridgeError, match=r"did not answer initialize within 0\.5 s"):
        await connection.start(CONFIG)
    assert time.monotonic() - started < 3
    assert not running(connection.pid)


async def test_entries_get_the_start_failure_when_the_guest_cannot_start():
    method = BridgeMethod(["/nonexistent/guest-program"], options=FAST)
    results = await method.translate(entries("a", "b"), CONFIG)
    assert [r["error"] for r in results] == ["cannot start guest '/nonexistent/guest-program': No such file or "
                                             "directory"] * 2


async def test_version_mismatch_is_readable(tmp_path: Path):
    script = tmp_path / "old_guest.py"
    script.write_text(
        "import json, sys\nfor line in sys.stdin:\n    m = json.loads(line)\n"
        "    print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'error': {'code': -32005, 'message': 'no',"
        " 'data': {'supported': ['mt-eval-bridge/0']}}}), flush=True)\n")
    with pytest.raises(m.BridgeError, match=r"guest old_guest.py speaks mt-eval-bridge/0; this host speaks "
                                            r"mt-eval-bridge/1: upgrade the older side"):
        await GuestConnection([sys.executable, str(script)], label="old_guest.py").start(CONFIG)


async def test_cancelling_a_caller_tells_the_guest_and_keeps_the_guest_usable():
    method = serve_reverse()
    try:
        task = asyncio.create_task(method.translate(entries("!sleep 5000"), CONFIG))
        await asyncio.sleep(0.5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert (await method.translate(entries("xy"), CONFIG))[0]["predicted"] == "spa:yx"
    finally:
        await method.aclose()


def test_no_guest_outlives_the_test_session():
    mine = [p for p in os.listdir("/proc") if p.isdigit() and running(int(p))]
    leftovers = []
    for pid in mine:
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        mine = str(HERE) in cmdline  # other checkouts on the machine may be running their own tests
        if mine and ("misbehaving.py" in cmdline or ("mt_eval.cli serve" in cmdline and "fixtures" in cmdline)):
            leftovers.append(cmdline)
    assert leftovers == []


async def test_an_error_without_an_id_fails_the_one_request_in_flight_at_once():
    method = guest("null-id")
    try:
        started = time.monotonic()
        results = await method.translate(entries("unreadable"), CONFIG)
        assert results[0]["error"] == "not valid JSON: unreadable"
        assert time.monotonic() - started < FAST.request_timeout_s / 2  # not left to the deadline
        assert (await method.translate(entries("ok"), CONFIG))[0]["predicted"] == "ko"
    finally:
        await method.aclose()


async def test_an_error_without_an_id_is_logged_when_it_cannot_be_told_which_request_it_meant(caplog):
    method = guest("null-id")
    await method.start(CONFIG)
    try:
        hung = asyncio.create_task(method.translate(entries("hang"), CONFIG))
        await asyncio.sleep(0.1)
        unreadable = asyncio.create_task(method.translate(entries("unreadable"), CONFIG))
        for _ in range(100):
            if "without a request id" in caplog.text:
                break
            await asyncio.sleep(0.02)
        assert ("null-id: the guest answered error -32700 without a request id; which of the 2 requests in flight it "
                "meant cannot be told (they wait for their deadlines): not valid JSON: unreadable") in caplog.text
        assert not hung.done() and not unreadable.done()
        hung.cancel()
        unreadable.cancel()
    finally:
        await method.aclose()


async def test_a_program_that_sends_the_request_back_is_not_a_guest():
    started = time.monotonic()
    with pytest.raises(m.BridgeError, match=r"^cat is not a bridge guest: it sent the initialize request back "
                                            r"instead of answering it, as a text filter does"):
        await GuestConnection(["cat"], label="cat", options=FAST).start(CONFIG)
    assert time.monotonic() - started < 1  # at once, not when it is found reading for more input


async def test_a_node_entry_without_node_says_how_to_get_it(monkeypatch):
    from mt_eval.loader import load_method
    from mt_eval.method_start import StartFailed, start_method

    monkeypatch.delenv("MT_EVAL_NODE", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    loaded = load_method(HERE.parent / "examples" / "termbase-eng-spa", needs="translate")
    with pytest.raises(StartFailed) as failed:
        await start_method(loaded, CONFIG)
    assert str(failed.value) == ("termbase-eng-spa cannot start: cannot start guest 'node': Node.js is not installed, "
                                 "or not on PATH (No such file or directory); install Node.js 20 or later, or set "
                                 "MT_EVAL_NODE to the path of its node")
    monkeypatch.setenv("MT_EVAL_NODE", "/nonexistent/node")
    loaded = load_method(HERE.parent / "examples" / "termbase-eng-spa", needs="translate")
    results = await loaded.method.translate(entries("hello"), CONFIG)
    assert results[0]["error"] == ("cannot start guest '/nonexistent/node' (the node MT_EVAL_NODE names): No such "
                                   "file or directory; set MT_EVAL_NODE to the path of Node.js 20 or later, or unset "
                                   "it to use node on PATH")


async def test_a_command_that_cannot_be_run_is_said_to_be_so_not_to_be_made_to_answer(tmp_path: Path):
    from mt_eval.loader import load_method
    from mt_eval.method_start import StartFailed, start_method

    (tmp_path / "method.json").write_text('{"name": "Cmd", "method_id": "cmd", "class": "custom-plugin", "command": '
                                          '["./missing-program"], "dependency_class": "S", "dependencies": []}')
    with pytest.raises(StartFailed) as failed:
        await start_method(load_method(tmp_path, needs="translate"), CONFIG)
    assert str(failed.value) == ("cmd cannot start: cannot start guest './missing-program': No such file or directory"
                                 f"\n  fix: make \"command\" in method.json start a program that exists and may be run "
                                 f"(a path in {tmp_path}, or a program on PATH)")


def test_a_node_method_that_throws_at_load_fails_with_the_guests_fix_once(tmp_path: Path, capsys):
    """The guest says how to fix a module that throws as it loads: `mt-eval run` gives that fix (not a second, generic
    one), and `mt-eval translate` says it once, in the same words, not once per sentence (exit status 1)."""
    from mt_eval.cli import main

    plugin = tmp_path / "throws"
    plugin.mkdir()
    (plugin / "method.json").write_text('{"name": "Throws", "node_entry": "translate.js", "dependencies": [], '
                                        '"supported_pairs": ["eng>spa"]}')
    (plugin / "translate.js").write_text("export async function translate(entries) { return []; }\n"
                                         "throw new Error('no model file');\n")
    assert main(["run", "--demo", "--method", str(plugin), "--out", str(tmp_path / "run")]) == 1
    err = capsys.readouterr().err
    said = ("throws cannot start: guest throws failed to start: cannot load the method: translate.js:2: Error: no "
            "model file\n  fix: translate.js threw while it was being loaded; fix the code that runs at load time\n")
    assert f"mt-eval run: {said}" in err
    assert err.count("fix:") == 1, err
    assert main(["translate", str(plugin), "Hello.", "Goodbye."]) == 1
    out, err = capsys.readouterr()
    assert (out, err) == ("", f"mt-eval translate: {said}")
