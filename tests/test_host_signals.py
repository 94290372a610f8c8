"""SIGTERM and SIGHUP stop ``mt-eval run`` as Ctrl-C does (`mt_eval.cli.termination`), while its guest — Node, or
Python under ``--isolate`` — is stuck in a call that blocks: the guest's process group is ended, the finished entries
are kept, one line says so, and the exit status is 128 + the signal's number."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gate_policies import LENIENT
from process_support import marked_environment, processes_marked

REVERSE = Path(__file__).parent / "fixtures" / "reverse"
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


def node_only(tmp_path: Path) -> Path:
    """The reverse fixture's translate.js as a Node plugin (no Python entry point: it runs in a Node guest)."""
    plugin = tmp_path / "reverse-node"
    plugin.mkdir()
    shutil.copy(REVERSE / "translate.js", plugin / "translate.js")
    manifest = json.loads((REVERSE / "method.json").read_text())
    del manifest["entry_point"]
    (plugin / "method.json").write_text(json.dumps(manifest))
    return plugin


def stopped_run(tmp_path: Path, method: list[str], sig: signal.Signals) -> tuple[subprocess.CompletedProcess[str],
                                                                                 list[str], str]:
    """``mt-eval run`` on one entry that translates and one that blocks for 100 s, sent ``sig`` once the first is
    saved and the second is in the guest: how it ended, what it left running, and the results log."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"e{i}", "source": source, "reference": "x"}) + "\n"
                              for i, source in enumerate(["one", "!block 100"])))
    out = tmp_path / "run"
    marker, env = marked_environment()
    command = [sys.executable, "-m", "mt_eval.cli", "run", *method, "--corpus", str(corpus), "--pair", "eng>spa",
               "--out", str(out), "--quiet", "--batch-size", "1", "--concurrency", "1", "--retries", "0",
               "--latency-sample", "0", *LENIENT]
    # as started from a terminal: SIGHUP at its default (a test runner may have been started ignoring it)
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                               preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_DFL))
    log = out / "results.jsonl"
    try:
        deadline = time.monotonic() + 60
        while not (log.exists() and log.read_text()) and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        time.sleep(1)  # the second entry reaches the guest, which blocks on it
        process.send_signal(sig)
        out_text, err_text = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    for _ in range(50):
        if not processes_marked(marker):
            break
        time.sleep(0.1)
    left = processes_marked(marker)
    done = subprocess.CompletedProcess(command, process.returncode, out_text, err_text)
    return done, left, log.read_text() if log.exists() else ""


@needs_node
@pytest.mark.parametrize(("runtime", "sig"), [("node", signal.SIGTERM), ("python", signal.SIGTERM),
                                              ("node", signal.SIGHUP)])
def test_a_signal_ends_the_guest_keeps_what_was_finished_and_exits_128_plus_its_number(tmp_path: Path, runtime: str,
                                                                                       sig: signal.Signals):
    method = ["--method", str(node_only(tmp_path))] if runtime == "node" else ["--method", str(REVERSE), "--isolate"]
    done, left, log = stopped_run(tmp_path, method, sig)
    assert done.returncode == 128 + sig, done.stderr
    assert done.stderr.splitlines()[-1] == (f"mt-eval run: interrupted by {sig.name}; finished entries are saved. "
                                            "Continue with the same command and --resume.")
    assert left == []
    assert [json.loads(line)["id"] for line in log.splitlines()] == ["e0"]


def test_a_worker_forked_while_sigterm_stops_the_command_is_ended_by_sigterm_at_once():
    """A worker terminated the moment it is forked (as `Pool.terminate` does to a pool's replacement worker) ends
    with SIGTERM: the command's handler never runs in it, so it neither lives on (its pool would wait for it for
    ever) nor prints a KeyboardInterrupt."""
    import multiprocessing

    from mt_eval.cli.termination import as_interrupt

    fork = multiprocessing.get_context("fork")
    with as_interrupt():
        endings = []
        for _ in range(100):
            worker = fork.Process(target=time.sleep, args=(30,))
            worker.start()
            worker.terminate()
            worker.join(timeout=5)
            endings.append(worker.exitcode)
            if worker.exitcode != -signal.SIGTERM:
                worker.kill()
                worker.join()
                break
        assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL  # the command's own handler stayed
    assert endings == [-signal.SIGTERM] * 100
    assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == set()  # nothing left held back here
