"""A method's os._exit(), which ends a process at once, fails its call or its loading as sys.exit() does
(`mt_eval.process_exit`), in the process that imported it only; and its own ``raise KeyboardInterrupt`` fails its
call as any exception does (only Ctrl-C stops the run)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from test_run_integrity import SOURCES, expected, run

OS_EXIT_METHOD = """\
import os


class EchoMethod:
    async def translate(self, entries, config):
        if any(entry["source"] == "!exit" for entry in entries):
            os._exit(0)
        return [{"id": entry["id"], "predicted": entry["source"]} for entry in entries]
"""


def test_os_exit_inside_translate_fails_its_entry_not_the_run_with_status_0(tmp_path: Path, make_plugin):
    """os._exit() ends a process at once: it ended the run with status 0, no card and nothing said."""
    plugin = make_plugin(files={"pipeline.py": OS_EXIT_METHOD})
    sources = [*SOURCES[:4], "!exit", *SOURCES[4:]]
    code, card, err = run(tmp_path, plugin, sources, "--retries", "0")
    assert code == 3 and card is not None, err
    assert card.results[4].error == ("the method called os._exit(0) (pipeline.py:7): a method must not end the "
                                     "process; raise an exception instead")
    assert [r.predicted for r in card.results] == [*SOURCES[:4], None, *SOURCES[4:]]
    assert "Traceback" not in err


def test_os_exit_while_loading_is_one_line_naming_the_file(tmp_path: Path, make_plugin):
    plugin = make_plugin(files={"pipeline.py": "import os\nos._exit(0)\n"})
    code, card, err = run(tmp_path, plugin, SOURCES)
    assert code == 1 and card is None
    assert "importing \"pipeline\" called os._exit(0) (pipeline.py:2)" in err
    assert "fix: a plugin must not end the process: remove the os._exit() call, or raise an exception" in err
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "validate", "--no-sandbox", str(plugin)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "called os._exit(0) (pipeline.py:2)" in done.stdout + done.stderr


def test_a_forked_child_of_the_run_still_exits_with_os_exit(tmp_path: Path, make_plugin):
    """Only the process that imported the plugin is guarded: a child it forks (a method's own worker) ends."""
    plugin = make_plugin(files={"pipeline.py": """\
        import os


        class EchoMethod:
            async def translate(self, entries, config):
                pid = os.fork()
                if pid == 0:
                    os._exit(7)
                _, status = os.waitpid(pid, 0)
                return [{"id": e["id"], "predicted": f"{os.waitstatus_to_exitcode(status)}"} for e in entries]
        """})
    code, card, err = run(tmp_path, plugin, SOURCES[:3])
    assert code == 0 and card is not None, err
    assert [r.predicted for r in card.results] == ["7", "7", "7"]


def test_os_exit_in_a_python_guest_fails_the_call_and_the_guest_serves_on(tmp_path: Path, make_plugin):
    """--isolate: the method runs in `mt-eval serve`, which answers the call with the same failure and goes on
    (before, the guest ended and was replaced, the entries of its call sent again one at a time)."""
    plugin = make_plugin(files={"pipeline.py": OS_EXIT_METHOD})
    sources = [*SOURCES[:4], "!exit", *SOURCES[4:]]
    code, card, err = run(tmp_path, plugin, sources, "--retries", "0", "--isolate")
    assert code == 3 and card is not None, err
    assert card.results[4].error == ("the method called os._exit(0) (pipeline.py:7): a method must not end the "
                                     "process; raise an exception instead")
    assert [r.predicted for r in card.results] == [*SOURCES[:4], None, *SOURCES[4:]]
    assert "exited" not in err and "restart" not in err


KEYBOARD_INTERRUPT = """
def _interrupt():  # (named as the SDK's own signal handler is: the name alone does not make it one)
    raise KeyboardInterrupt  # its own, not the user's Ctrl-C


class EchoMethod:
    async def translate(self, entries, config):
        if any(e["source"] == "three" for e in entries):
            _interrupt()
        return [{"id": e["id"], "predicted": "spa:" + e["source"][::-1]} for e in entries]
"""


@pytest.mark.parametrize("isolate", [False, True], ids=["in-process", "isolated"])
def test_a_keyboard_interrupt_the_method_raises_fails_its_call_not_the_run(tmp_path: Path, make_plugin, isolate):
    """It had been taken for Ctrl-C: the run stopped as interrupted (and --resume stopped again), or, isolated,
    the guest died on it until its crash-loop budget was spent."""
    plugin = make_plugin(files={"pipeline.py": KEYBOARD_INTERRUPT})
    code, card, err = run(tmp_path, plugin, SOURCES[:4], "--batch-size", "1", *(["--isolate"] if isolate else []))
    assert code == 3 and card is not None, err  # partial: the one entry failed
    assert "interrupted" not in err
    assert [r.error for r in card.results] == [None, None, "the method failed: KeyboardInterrupt: ", None]
    assert [r.predicted for r in card.results] == expected(SOURCES[:4], 2)


OWN_BASE_EXCEPTIONS = """\
import asyncio


class Odd(BaseException):
    pass


class EchoMethod:
    async def translate(self, entries, config):
        if any(e["source"] == "two" for e in entries):
            raise asyncio.CancelledError()  # (as when a task it awaited was cancelled by something else)
        if any(e["source"] == "three" for e in entries):
            raise Odd("strange")
        return [{"id": e["id"], "predicted": "spa:" + e["source"][::-1]} for e in entries]
"""


@pytest.mark.parametrize("isolate", [False, True], ids=["in-process", "isolated"])
def test_a_cancelled_error_or_a_base_exception_the_method_raises_fails_its_call(tmp_path: Path, make_plugin, isolate):
    """Before: in the process, its CancelledError was taken for the run's own cancellation, and the entries of the
    call were left without a result, the card calling itself complete with 0 errors; a BaseException of its own
    ended the run with a traceback. Isolated, the guest answered "cancelled", or died on it until its crash-loop
    budget was spent."""
    plugin = make_plugin(files={"pipeline.py": OWN_BASE_EXCEPTIONS})
    code, card, err = run(tmp_path, plugin, SOURCES[:4], "--batch-size", "1", *(["--isolate"] if isolate else []))
    assert code == 3 and card is not None, err  # partial: two entries failed
    assert "Traceback" not in err and "interrupted" not in err
    assert [r.error for r in card.results] == [
        None, "the method raised CancelledError, though nothing cancelled its call (a task or future it awaited was "
              "cancelled): catch it there, or raise another exception", "the method failed: Odd: strange", None]
    assert card.errors == 2 and card.status == "partial"


ODD_RAISES = """\
class UnprintableError(Exception):
    def __str__(self):
        raise RuntimeError("no words")


class EchoMethod:
    async def translate(self, entries, config):
        if any(e["source"] == "two" for e in entries):
            raise GeneratorExit
        if any(e["source"] == "three" for e in entries):
            raise UnprintableError
        if any(e["source"] == "four" for e in entries):
            raise KeyboardInterrupt
        return [{"id": e["id"], "predicted": "spa:" + e["source"][::-1]} for e in entries]
"""


@pytest.mark.parametrize("isolate", [False, True], ids=["in-process", "isolated"])
def test_a_generator_exit_an_unprintable_exception_or_an_interrupt_fails_its_call_in_latency_calls_too(
        tmp_path: Path, make_plugin, isolate):
    """Before: in the process, a GeneratorExit or an exception whose str() raises ended the run with a traceback,
    and a KeyboardInterrupt in a latency call stopped it as interrupted; isolated, the first two ended the guest
    with status 0, again and again, each entry waiting for its restart."""
    plugin = make_plugin(files={"pipeline.py": ODD_RAISES})
    code, card, err = run(tmp_path, plugin, SOURCES[:5], "--batch-size", "1", "--latency-sample", "5",
                          *(["--isolate"] if isolate else []))
    assert code == 3 and card is not None, err
    assert "Traceback" not in err and "interrupted" not in err and "restart" not in err
    assert [r.error for r in card.results] == [
        None, "the method failed: GeneratorExit: ", "the method failed: UnprintableError: <its str() raised "
        "RuntimeError>", "the method failed: KeyboardInterrupt: ", None]
    assert card.results[4].predicted == "spa:evif"


CLOSES_STDOUT = """\
import sys


class EchoMethod:
    async def translate(self, entries, config):
        sys.stdout.close()
        if any(e["source"] == "three" for e in entries):
            raise ValueError("boom")
        return [{"id": e["id"], "predicted": "spa:" + e["source"][::-1]} for e in entries]
"""


def test_a_method_that_closes_sys_stdout_leaves_the_runs_stderr_open(tmp_path: Path, make_plugin):
    """sys.stdout is stderr while a method runs: closing it closed the command's stderr, so the run's summary was
    lost ("lost sys.stderr") and it exited 1 rather than 3."""
    plugin = make_plugin(files={"pipeline.py": CLOSES_STDOUT})
    code, card, err = run(tmp_path, plugin, SOURCES[:4], "--batch-size", "1")
    assert code == 3 and card is not None, err
    assert "1 × the method failed: ValueError: boom  (e.g. " in err
    assert "status: partial: 1 of 4 entries failed" in err and "lost sys.stderr" not in err
