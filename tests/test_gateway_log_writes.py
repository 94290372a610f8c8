"""An audit log that cannot be written (a full disk, here a file-size limit on the gateway's process): the
gateway forwards nothing unlogged, says so once, keeps the records it could not write for the next try, and, if
they never get written, ends with one line that says the log is incomplete — not a traceback per request."""

from __future__ import annotations

import json
import resource
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from test_decide_faults import limited_file_size

MODEL = "standin-2024-06-01"
ANSWER = json.dumps({"choices": [{"message": {"content": "Hola"}}],
                     "usage": {"prompt_tokens": 3, "completion_tokens": 1}}).encode()
LIMIT = 1500  # bytes: room for a few records (about 400 bytes each)


class _Answer(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    calls = 0

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        type(self).calls += 1
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(ANSWER)))
        self.end_headers()
        self.wfile.write(ANSWER)

    def log_message(self, *args: object) -> None: ...


@contextmanager
def a_gateway_with_little_room(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], str, type[_Answer]]]:
    handler = type("Answer", (_Answer,), {"calls": 0})
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"base_url": f"http://127.0.0.1:{upstream.server_address[1]}/v1",
                                  "models": [{"id": MODEL}]}))
    process = subprocess.Popen(
        [sys.executable, "-m", "mt_eval.cli", "gateway", "--policy", str(policy), "--listen", "127.0.0.1:0",
         "--log", str(tmp_path / "gateway.jsonl")], stderr=subprocess.PIPE, text=True,
        preexec_fn=limited_file_size(LIMIT, soft_only=True))
    try:
        assert process.stderr is not None
        serving = process.stderr.readline()
        yield process, serving.split("serving ")[1].split(" ")[0], handler
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        upstream.shutdown()
        upstream.server_close()


def ask(url: str, path: str = "/chat/completions") -> tuple[int, dict]:
    body = json.dumps({"model": MODEL, "messages": [{"role": "user", "content": "Hi"}]}).encode()
    request = urllib.request.Request(f"{url}{path}", body, {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def until_refused(url: str) -> list[tuple[int, dict]]:
    answers = [ask(url)]
    while answers[-1][0] == 200 and len(answers) < 30:
        answers.append(ask(url))
    return answers


@pytest.mark.skipif(sys.platform != "linux", reason="a file-size limit that fails writes, as a full disk does")
def test_a_log_that_cannot_be_written_stops_forwarding_and_ends_with_one_line(tmp_path: Path):
    """Before: each request was forwarded all the same, with a traceback on stderr and its record lost, and
    stopping ended in an ExceptionGroup traceback."""
    with a_gateway_with_little_room(tmp_path) as (process, url, upstream):
        answers = until_refused(url)
        assert [status for status, _ in answers[:-1]] == [200] * (len(answers) - 1) and len(answers) < 30
        status, refused = answers[-1]
        assert status == 503 and refused["error"]["code"] == "audit_log_unwritable"
        assert "audit log cannot be written (File too large)" in refused["error"]["message"]
        assert ask(url)[0] == 503 and upstream.calls == len(answers) - 1  # nothing more went upstream
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
    assert process.returncode == 1 and "Traceback" not in err
    assert err.count("cannot be written (File too large): model requests are refused 503") == 1
    log = tmp_path / "gateway.jsonl"
    lines = log.read_bytes().split(b"\n")
    assert lines.pop() == b"" and all(json.loads(line) for line in lines)  # whole lines only: it can be continued
    unwritten = len(answers) + 1 - len(lines)
    assert err.splitlines()[-1] == (
        f"mt-eval gateway: {log}: {unwritten} request record(s) could not be written to it (File too large): the "
        "log is incomplete. Make room for it (or give a log on another disk) before serving again; the requests "
        "that came while it could not be written were refused, not forwarded")


@pytest.mark.skipif(sys.platform != "linux", reason="a file-size limit that fails writes, as a full disk does")
def test_records_kept_while_the_log_could_not_be_written_are_written_once_it_can(tmp_path: Path):
    with a_gateway_with_little_room(tmp_path) as (process, url, upstream):
        answers = until_refused(url)
        resource.prlimit(process.pid, resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        assert ask(url, "/files")[0] == 404  # (a record to write: the kept ones go with it)
        assert ask(url)[0] == 200
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
    assert process.returncode == 0 and "Traceback" not in err
    assert "audit log" in err and "is written again: model requests are forwarded again" in err
    records = [json.loads(line) for line in (tmp_path / "gateway.jsonl").read_text().splitlines()]
    assert [r["seq"] for r in records] == list(range(1, len(answers) + 3))
    assert [r["status"] for r in records] == [200] * (len(answers) - 1) + [503, 404, 200]
    assert upstream.calls == len(answers)


async def test_a_run_whose_gateway_log_is_incomplete_still_cleans_up_its_sandbox_files(tmp_path: Path):
    """The gateway's stop raises when records were never written; the run's sandbox directory was then left behind
    and its denied-attempts log not written."""
    from mt_eval.gateway.audit import AuditLogError
    from mt_eval.harness.fairness import DENIED_LOG, FairRun

    class Incomplete:
        def stop(self) -> None:
            raise AuditLogError("gateway.jsonl: 2 request record(s) could not be written to it")

    shared = tmp_path / "gateway-socket-directory"
    shared.mkdir()
    fair = FairRun(source=None, out=tmp_path, sandbox=object(), _gateway=Incomplete(),  # type: ignore[arg-type]
                   _gateway_directory=shared)
    with pytest.raises(AuditLogError):
        async with fair.running("method"):
            pass
    assert not shared.exists() and (tmp_path / DENIED_LOG).exists()
