"""Scoring a large corpus in worker processes (from `PARALLEL_FROM` segments: `parallel`), in two rounds that
share each metric's statistics.

Round one: a worker per metric (forked, ``workers`` at a time) reads the segments and writes the metric's
per-segment statistics into an array of memory shared with this process. Round two: workers forked afresh
compute each metric's score and interval from its shared array. A worker ends with its metric, so what reading
the texts took never stays for resampling, and the statistics exist once however many processes read them. A
count too large for the shared array's 2 bytes has its metric's statistics extracted again here, as float32.
Only a job's number is sent to a worker: it finds the job (never texts) in this module's globals, as forked.
A worker ignores Ctrl-C (SIGINT, which a terminal sends to every process of the command): this process is
interrupted, and ends its workers without a word from them.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from mt_eval.harness.metric_statistics import (
    CountsTooLarge,
    MetricScore,
    SegmentSource,
    scored,
    statistics_of,
    statistics_width,
)
from mt_eval.process_memory import return_freed_memory

if TYPE_CHECKING:
    from multiprocessing.pool import Pool

PARALLEL_FROM = 500  # segments from which each metric is scored in its own process

# A scoring job from statistics: (name, metric, statistics, resamples, seed, bootstrap, translated), as `scored`
# takes.
Scoring = tuple[str, Any, Any, int, tuple[int, int], Any, int | None]

_sources: list[tuple[Any, SegmentSource]] = []  # what a forked worker finds
_statistics: list[Any] = []
_scoring: list[Scoring] = []


def parallel(jobs: int, count: int) -> int:
    """How many worker processes take ``jobs`` over ``count`` segments: 0 (all of it in this process) below
    `PARALLEL_FROM` segments, for a single job, or where processes cannot be forked."""
    workers = min(jobs, os.cpu_count() or 1)
    return workers if count >= PARALLEL_FROM and workers > 1 and hasattr(os, "fork") else 0


def score_in_processes(jobs: list[tuple[Any, ...]], count: int, workers: int) -> list[MetricScore]:
    """The `MetricScore` of each job (``name, metric, segments, count, resamples, seed, bootstrap, translated``)."""
    statistics = statistics_in_processes([(job[1], job[2]) for job in jobs], count, workers)
    return _scored_in_processes([(name, metric, stats, resamples, seed, bootstrap, translated) for stats, (
        name, metric, _segments, _count, resamples, seed, bootstrap, translated) in zip(statistics, jobs, strict=True)],
        workers)


def score_statistics(jobs: list[Scoring], count: int) -> list[MetricScore]:
    """The `MetricScore` of each job, its statistics already extracted (over ``count`` segments): in worker
    processes when `parallel` says so, else here."""
    workers = parallel(len(jobs), count)
    return _scored_in_processes(jobs, workers) if workers else [scored(*job) for job in jobs]


def statistics_in_processes(sources: list[tuple[Any, SegmentSource]], count: int, workers: int) -> list[Any]:
    """The statistics of each ``(metric, segments)`` over ``count`` segments, extracted by forked workers
    (``workers`` at a time) into arrays of memory shared with this process (round one)."""
    global _sources, _statistics
    _sources = sources
    _statistics = shared = [_shared_array(count, metric) for metric, _ in sources]  # what a forked worker finds
    gc.collect()
    return_freed_memory()  # what this process freed is not counted again in every worker
    gc.freeze()  # a worker's garbage collector then leaves this process's objects (and their pages) alone
    try:
        with _worker_pool(workers) as pool:
            fitted = pool.map(_extract, range(len(sources)), chunksize=1)
    finally:
        gc.unfreeze()
        _sources, _statistics = [], []
    for number, fits in enumerate(fitted):
        if not fits:
            metric, segments = sources[number]
            shared[number] = statistics_of(metric, segments(), count)
    return shared


def extract_statistics(sources: list[tuple[Any, SegmentSource]], count: int) -> list[Any]:
    """The statistics of each ``(metric, segments)`` over ``count`` segments: in worker processes when
    `parallel` says so, else here."""
    workers = parallel(len(sources), count)
    if workers:
        return statistics_in_processes(sources, count, workers)
    return [statistics_of(metric, segments(), count) for metric, segments in sources]


def _scored_in_processes(jobs: list[Scoring], workers: int) -> list[MetricScore]:
    """Round two: each job's score and interval, by workers forked afresh."""
    global _scoring
    _scoring = jobs
    gc.freeze()  # (as in `statistics_in_processes`)
    try:
        with _worker_pool(workers) as pool:
            return pool.map(_score, range(len(jobs)), chunksize=1)
    finally:
        gc.unfreeze()
        _scoring = []


@contextlib.contextmanager
def _worker_pool(workers: int) -> Iterator[Pool]:
    """A pool of ``workers`` forked processes, each ending after one job, that ignore Ctrl-C; ended on leaving.
    SIGINT is held back while the pool starts, so its threads (which fork the workers that follow) hold it back
    too and a worker never meets it before it ignores it; one that came meanwhile interrupts this process once the
    pool is there to be ended."""
    import multiprocessing

    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        pool = multiprocessing.get_context("fork").Pool(workers, initializer=_ignore_ctrl_c, maxtasksperchild=1)
    except BaseException:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
        raise
    with pool:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
        yield pool


def _ignore_ctrl_c() -> None:
    """A worker's first step: Ctrl-C is its parent's to handle (it ends the pool), and a worker would print a
    traceback of what it was doing."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _shared_array(count: int, metric: Any) -> Any:
    import mmap

    import numpy as np

    width, dtype = statistics_width(metric)
    size = count * width * np.dtype(dtype).itemsize
    memory = mmap.mmap(-1, max(size, 1))  # anonymous and shared: what a worker writes, this process reads
    return np.frombuffer(memory, dtype, count=count * width).reshape(count, width)


def _extract(number: int) -> bool:
    """Round one: source ``number``'s statistics into its shared array; False when a count does not fit."""
    metric, segments = _sources[number]
    try:
        statistics_of(metric, segments(), len(_statistics[number]), out=_statistics[number])
    except CountsTooLarge:
        return False
    return True


def _score(number: int) -> MetricScore:
    """Round two: job ``number``'s score and interval from its statistics."""
    return scored(*_scoring[number])
