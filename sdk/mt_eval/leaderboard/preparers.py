"""Worker processes that prepare chunks of cards for the store while this process stores the chunks before.

Worker ``i`` of ``n`` prepares chunks ``i``, ``i + n``, ``i + 2n`` … and sends each down its own pipe; `results`
takes them in chunk order, so the cards come back in the order given. Nothing but the pipes joins the
processes: this process runs no helper thread (a thread here would have to share Python's lock with the
database driver, which takes and gives it back for every row it writes). Each pipe's writing end is held by
its worker alone, so a worker that dies, even half-way through sending, ends its pipe: that is an error
naming its exit code, never a wait. Workers are forked where that is safe (Linux, and before any thread of
ours runs: nothing to copy half-way), else spawned. Leaving the ``with`` block ends every worker.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import queue
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")
_POLL_S = 0.5
PIPE_BYTES = 1 << 20  # Linux's default ceiling for an unprivileged process


class WorkerFailed(RuntimeError):
    """A worker process failed: a bug, or it was killed."""


class Preparers(Generic[Item, Result]):
    """``prepare(chunk, state)`` for each chunk in worker processes; ``setup()`` makes each worker's
    ``state`` once (its caches)."""

    def __init__(self, chunks: Sequence[Sequence[Item]], prepare: Callable[[Sequence[Item], Any], Result],
                 setup: Callable[[], Any], workers: int) -> None:
        context: Any = multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")
        self._chunks = chunks
        pipes = [context.Pipe(duplex=False) for _ in range(workers)]
        for _, writer in pipes:
            _widen(writer)
        self._readers = [reader for reader, _ in pipes]
        self._writers = [writer for _, writer in pipes]
        self._processes = [context.Process(target=_work, args=(index, workers, chunks, prepare, setup, self._writers,
                                                                self._readers),
                                           name=f"mt-eval-publish-{index}", daemon=True)
                           for index in range(workers)]

    def __enter__(self) -> Preparers[Item, Result]:
        gc.freeze()  # a forked worker's collections then leave the pages it shares with us alone
        # Ctrl-C held back while the workers are forked: one never meets it before it ignores it (`_work`), and
        # this process is interrupted once they are there to be ended
        masks = hasattr(signal, "pthread_sigmask")  # (not on Windows)
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}) if masks else set()
        try:
            for process in self._processes:
                process.start()
        finally:
            if masks:
                signal.pthread_sigmask(signal.SIG_SETMASK, held)
            gc.unfreeze()
            for writer in self._writers:  # each worker holds its own: a dead worker's pipe ends
                writer.close()
        return self

    def __exit__(self, *exc: object) -> None:
        for process in self._processes:
            if process.is_alive():
                process.terminate()
        for process in self._processes:
            process.join(5)
            if process.is_alive():  # stuck where SIGTERM cannot end it
                process.kill()
                process.join()
        for reader in self._readers:
            reader.close()

    def results(self) -> Iterator[Result]:
        """Each chunk's result, in chunk order."""
        workers = len(self._processes)
        for number in range(len(self._chunks)):
            index = number % workers
            reader, process = self._readers[index], self._processes[index]
            try:
                while not reader.poll(_POLL_S):
                    if not process.is_alive() and not reader.poll(0):
                        raise EOFError
                kind, value = reader.recv()
            except (EOFError, OSError):
                process.join(5)
                raise WorkerFailed(f"a publishing worker ended unexpectedly (exit code {process.exitcode})") from None
            if kind == "failed":
                raise WorkerFailed(f"a publishing worker failed:\n{value}")
            yield value


def _end_with_parent() -> None:
    """Linux: this worker gets SIGKILL when the process that forked it dies (``kill -9``, the OOM killer), rather
    than being left preparing cards, and holding the store open, for nobody."""
    if sys.platform != "linux":
        return
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # (no prctl: the closed pipes still end a worker once it sends)
        return
    parent = multiprocessing.parent_process()
    if parent is not None and os.getppid() != parent.pid:  # the parent died before the request took effect
        os._exit(1)


def _work(index: int, workers: int, chunks: Sequence[Sequence[Any]], prepare: Callable[..., Any],
          setup: Callable[[], Any], writers: Sequence[Any], readers: Sequence[Any]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it ends the workers
    if hasattr(signal, "pthread_sigmask"):  # (held back while it was forked: `__enter__`)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    _end_with_parent()
    for other, writer in enumerate(writers):
        if other != index:
            writer.close()
    for reader in readers:  # (the parent's alone: held here too, a pipe would outlive a parent killed outright)
        reader.close()
    outbox: queue.SimpleQueue[Any] = queue.SimpleQueue()  # sent by a thread: the next chunk is prepared meanwhile
    sender = threading.Thread(target=_send, args=(outbox, writers[index]), daemon=True)
    sender.start()
    try:
        state = setup()
        for number in range(index, len(chunks), workers):
            outbox.put(("done", prepare(chunks[number], state)))
    except BaseException:  # reported to the parent, which stops
        outbox.put(("failed", traceback.format_exc()))
    outbox.put(None)
    sender.join()


def _send(outbox: queue.SimpleQueue[Any], pipe: Any) -> None:
    while (message := outbox.get()) is not None:
        pipe.send(message)
    pipe.close()


def _widen(pipe: Any) -> None:
    """A larger pipe buffer where Linux allows it: a chunk's records then cross in a few reads, not hundreds."""
    try:
        import fcntl

        fcntl.fcntl(pipe.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_BYTES)
    except (ImportError, OSError):
        pass
