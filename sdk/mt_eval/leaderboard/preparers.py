"""Worker processes that prepare chunks of cards for the store while this process stores the chunks before.

Worker ``i`` of ``n`` prepares chunks ``i``, ``i + n``, ``i + 2n`` … and puts each on its own queue; `results`
takes them in chunk order, so the cards come back in the order given. Nothing but the queues joins the
processes: this process runs no helper thread (a thread here would have to share Python's lock with the
database driver, which takes and gives it back for every row it writes). Workers are forked where that is
safe (Linux, and before any thread of ours runs: nothing to copy half-way), else spawned. A worker that
dies is an error naming its exit code; leaving the ``with`` block ends every worker.
"""

from __future__ import annotations

import gc
import multiprocessing
import queue
import signal
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")
_POLL_S = 0.5


class WorkerFailed(RuntimeError):
    """A worker process failed: a bug, or it was killed."""


class Preparers(Generic[Item, Result]):
    """``prepare(chunk, state)`` for each chunk in worker processes; ``setup()`` makes each worker's
    ``state`` once (its caches)."""

    def __init__(self, chunks: Sequence[Sequence[Item]], prepare: Callable[[Sequence[Item], Any], Result],
                 setup: Callable[[], Any], workers: int) -> None:
        context: Any = multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")
        self._chunks = chunks
        self._queues = [context.Queue() for _ in range(workers)]
        self._processes = [context.Process(target=_work, args=(index, workers, chunks, prepare, setup, q),
                                           name=f"mt-eval-publish-{index}", daemon=True)
                           for index, q in enumerate(self._queues)]

    def __enter__(self) -> Preparers[Item, Result]:
        gc.freeze()  # a forked worker's collections then leave the pages it shares with us alone
        try:
            for process in self._processes:
                process.start()
        finally:
            gc.unfreeze()
        return self

    def __exit__(self, *exc: object) -> None:
        for process in self._processes:
            if process.is_alive():
                process.terminate()
        for process in self._processes:
            process.join(5)
        for q in self._queues:
            q.close()
            q.cancel_join_thread()

    def results(self) -> Iterator[Result]:
        """Each chunk's result, in chunk order."""
        workers = len(self._processes)
        for number in range(len(self._chunks)):
            index = number % workers
            while True:
                try:
                    kind, value = self._queues[index].get(timeout=_POLL_S)
                    break
                except queue.Empty:
                    process = self._processes[index]
                    if not process.is_alive():
                        raise WorkerFailed(f"a publishing worker ended unexpectedly (exit code {process.exitcode})") \
                            from None
            if kind == "failed":
                raise WorkerFailed(f"a publishing worker failed:\n{value}")
            yield value


def _work(index: int, workers: int, chunks: Sequence[Sequence[Any]], prepare: Callable[..., Any],
          setup: Callable[[], Any], results: Any) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it ends the workers
    try:
        state = setup()
        for number in range(index, len(chunks), workers):
            results.put(("done", prepare(chunks[number], state)))
    except BaseException:  # reported to the parent, which stops
        results.put(("failed", traceback.format_exc()))
    results.close()
    results.join_thread()
