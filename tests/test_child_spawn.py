"""Children started with Popen and watched through a pidfd (`mt_eval.child_spawn`), on asyncio's loop and on
uvloop's: the same callbacks as the loop's own subprocess transport, exit codes and signals as it reports them,
nothing left behind (no zombie, no open descriptor), and the loop's own transport where pidfds do not work."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from mt_eval import child_spawn
from mt_eval.child_process import ChildProcess
from process_support import marked_environment, processes_marked

pytestmark = pytest.mark.skipif(not child_spawn.usable(),
                                reason="pidfds are a Linux feature (5.3 and later)")


def run(loop_name: str, coroutine):
    if loop_name == "uvloop":
        uvloop = pytest.importorskip("uvloop")
        return uvloop.run(coroutine)
    return asyncio.run(coroutine)


class Recorder(ChildProcess):
    """A child that keeps what it wrote and the order of its callbacks."""

    def __init__(self, command, **kwargs) -> None:
        super().__init__(command, **kwargs)
        self.out = bytearray()
        self.events: list[str] = []

    def on_output(self, data: bytes) -> None:
        self.out += data

    def on_gone(self, status: str) -> None:
        self.events.append(f"gone: {status}")

    def process_exited(self) -> None:
        self.events.append("exited")
        super().process_exited()

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        self.events.append(f"pipe {fd} closed")
        super().pipe_connection_lost(fd, exc)


async def finished(child: Recorder) -> None:
    """Wait until the child has exited and its last output has been read."""
    await asyncio.wait_for(child._exited.wait(), 10)
    await asyncio.sleep(0.05)


async def echoed(command: list[str], text: bytes, *, by_popen: bool) -> Recorder:
    """``command`` (which copies its stdin) given ``text``, run to its end; ``by_popen``: which transport it has."""
    child = Recorder(command)
    await child.spawn()
    assert isinstance(child._transport, child_spawn.PopenTransport) == by_popen
    child.write(text)
    child.close_stdin()
    await finished(child)
    await child.aclose()
    return child


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


async def settled_fds() -> int:
    """The descriptors open once none has opened or closed for 0.1 s (a pipe's transport closes its descriptor
    a turn or more after its child is gone, later on a busy machine)."""
    count, unchanged = open_fds(), 0
    for _ in range(300):
        await asyncio.sleep(0.01)
        now = open_fds()
        unchanged, count = (unchanged + 1 if now == count else 0), now
        if unchanged >= 10:
            break
    return count


async def descriptors_after_a_first_child() -> int:
    """The descriptors open once a first child has come and gone (a loop opens one or two of its own then)."""
    warm = Recorder(["true"])
    await warm.spawn()
    await warm.aclose()
    return await settled_fds()


def gone(pid: int) -> bool:
    """No such process, not even a zombie waiting to be reaped."""
    return not Path(f"/proc/{pid}").exists()


@pytest.mark.parametrize("loop_name", ["asyncio", "uvloop"])
def test_a_child_is_started_with_popen_and_answers_through_the_loop(loop_name):
    child = run(loop_name, echoed(["cat"], b"hello\n", by_popen=True))
    assert bytes(child.out) == b"hello\n"
    assert child.exit_code == 0
    assert "exited" in child.events and "pipe 1 closed" in child.events
    assert gone(child.pid)


@pytest.mark.parametrize("loop_name", ["asyncio", "uvloop"])
def test_exit_codes_and_signals_are_reported_as_the_loops_own_transport_reports_them(loop_name):
    async def scenario():
        exited = Recorder(["sh", "-c", "echo oops >&2; exit 3"])
        await exited.spawn()
        await finished(exited)
        killed = Recorder(["sleep", "30"])
        await killed.spawn()
        killed._transport.kill()
        await finished(killed)
        return exited, killed

    exited, killed = run(loop_name, scenario())
    assert exited.exit_code == 3 and "gone: exited with code 3" in exited.events
    assert "oops" in exited.stderr_tail()
    assert killed.exit_code == -signal.SIGKILL and "gone: was killed by SIGKILL" in killed.events
    assert gone(exited.pid) and gone(killed.pid)


@pytest.mark.parametrize("loop_name", ["asyncio", "uvloop"])
def test_the_child_leads_its_own_process_group_in_the_given_directory_and_environment(loop_name, tmp_path):
    async def scenario():
        child = Recorder(["sh", "-c", 'echo "$(ps -o pgid= -p $$ | tr -d " ") $PWD $GREETING"'], cwd=tmp_path,
                         env={**os.environ, "GREETING": "hola"})
        await child.spawn()
        await finished(child)
        await child.aclose()
        return child

    child = run(loop_name, scenario())
    pgid, directory, greeting = bytes(child.out).decode().split()
    assert int(pgid) == child.pid and Path(directory) == tmp_path and greeting == "hola"


@pytest.mark.parametrize("loop_name", ["asyncio", "uvloop"])
def test_a_program_that_cannot_be_started_raises_and_leaves_nothing_open(loop_name, tmp_path):
    async def scenario():
        before = await descriptors_after_a_first_child()
        for command in (["/no/such/program"], [str(tmp_path)]):
            with pytest.raises(OSError):
                await Recorder(command).spawn()
        return before, await settled_fds()

    before, after = run(loop_name, scenario())
    assert after == before


@pytest.mark.parametrize("loop_name", ["asyncio", "uvloop"])
def test_closing_kills_a_running_child_and_reaps_it_and_no_descriptor_is_left_open(loop_name):
    async def scenario():
        before = await descriptors_after_a_first_child()
        pids = []
        for _ in range(20):
            child = Recorder(["sleep", "30"], grace_s=0.2)
            await child.spawn()
            pids.append(child.pid)
            await child.aclose()  # stdin closed, SIGTERM to the group, and so on
        closed = Recorder(["sleep", "30"])
        await closed.spawn()
        closed._transport.close()  # the transport alone: it kills what still runs, as the loop's own does
        for _ in range(200):
            if closed.exited:
                break
            await asyncio.sleep(0.01)
        pids.append(closed.pid)
        return before, await settled_fds(), pids, closed

    before, after, pids, closed = run(loop_name, scenario())
    assert after == before
    assert closed.exit_code == -signal.SIGKILL
    assert all(gone(pid) for pid in pids)


@pytest.mark.parametrize("loop_name", ["asyncio", "uvloop"])
def test_a_start_cancelled_at_any_point_raises_cancelled_and_leaves_nothing_behind(loop_name):
    """However far the pipes were wired when its caller was cancelled: no error in place of the cancellation, no
    child left running, no descriptor left open, and no callback from a child its caller gave up."""
    marker, env = marked_environment()

    async def scenario():
        before = await descriptors_after_a_first_child()
        outcomes, children = [], []
        for turns in range(8):
            child = Recorder(["sleep", "30"], env=env)
            children.append(child)
            starting = asyncio.ensure_future(child.spawn())
            for _ in range(turns):
                await asyncio.sleep(0)
            starting.cancel()
            try:
                await starting
                outcomes.append("started")
                await child.aclose()
            except asyncio.CancelledError:
                outcomes.append("cancelled")
        for _ in range(150):
            await asyncio.sleep(0.02)  # (a pipe's transport closes its descriptor a turn after it is closed)
            if not processes_marked(marker) and open_fds() <= before:
                break
        return before, open_fds(), outcomes, children

    before, after, outcomes, children = run(loop_name, scenario())
    assert set(outcomes) <= {"cancelled", "started"} and outcomes[0] == "cancelled"
    assert processes_marked(marker) == []
    assert after == before
    given_up = [child for child, outcome in zip(children, outcomes, strict=True) if outcome == "cancelled"]
    assert [child.events for child in given_up] == [[] for _ in given_up]


def test_without_pidfds_the_loops_own_transport_starts_the_child(monkeypatch):
    monkeypatch.setattr(child_spawn, "usable", lambda: False)

    child = asyncio.run(echoed(["sh", "-c", "cat; exit 5"], b"still works\n", by_popen=False))
    assert bytes(child.out) == b"still works\n" and child.exit_code == 5


@pytest.mark.parametrize("loop_name", ["asyncio", "uvloop"])
def test_output_that_arrives_while_the_child_is_being_wired_is_read(loop_name, monkeypatch):
    """A program that prints a banner at once: its first output could reach the protocol before the spawn
    returned, which raised AttributeError in the loop's reader (uvloop then closed stdout: the child died of
    SIGPIPE, a guest 'closed its stdout'). Made certain here by delivering output inside the spawn."""
    wire = child_spawn.spawn

    async def banner_first(loop, protocol, command, **options):
        transport = await wire(loop, protocol, command, **options)
        protocol.pipe_data_received(1, b"ready\n")
        return transport

    monkeypatch.setattr(child_spawn, "spawn", banner_first)

    async def main() -> Recorder:
        return await asyncio.wait_for(echoed(["cat"], b"text\n", by_popen=True), 20)  # (it had hung: stdout lost)

    assert bytes(run(loop_name, main()).out) == b"ready\ntext\n"
