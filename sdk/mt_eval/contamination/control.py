"""The planted control: proof that the check would have found the corpus in *this* bundle.

A seeded sample of corpus texts is perturbed (`perturb`) and planted (`carriers`) into a temporary copy of
the bundle — in its own Python and JavaScript files, new data files, prompts and archives — and the whole
check runs again on the copy. A planted text counts as found only when a hit names its entry and side at
the file and lines where it was planted. The recall on the planted texts decides whether a check without
hits may say "clean" (`CheckSettings.recall_floor`). The copy is deleted afterwards; the bundle is never
written to (files are hard-linked where possible, and a file that gets a text appended is replaced by a
new file first). A check holds a lock on its copy while it exists (`locks.RunDirectoryLock` on
``mt-eval-control-*/.lock``), so a copy left behind by a check that was killed (SIGKILL, a lost machine) is
one whose lock is free: the next check removes it (`remove_abandoned_copies`), and never a copy in use.

Corpora indexed in several parts (`parts`: more than `parts.PART_ENTRIES` entries) are sampled from, and
the copy checked against, one part: the last one indexed, still in memory (another when the last has too
few texts long enough to plant). The control then measures the recall of exactly what the check did for
that part's texts, at the cost of one part's index.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import stat
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np

from mt_eval.contamination.bundle_walk import not_read, walk_bundle
from mt_eval.contamination.carriers import (
    CARRIERS,
    ControlCopy,
    Placement,
    parses_as_javascript,
    parses_as_python,
)
from mt_eval.contamination.extract import JAVASCRIPT, PYTHON
from mt_eval.contamination.index import CorpusIndex
from mt_eval.contamination.perturb import perturb
from mt_eval.contamination.report import ControlResult, Hit, Planted
from mt_eval.locks import RunDirectoryLock

ScanBundle = Callable[[Path], list[Hit]]
_MAX_APPEND_CANDIDATES = 20
COPY_PREFIX = "mt-eval-control-"
SETTING_UP_S = 60.0  # a copy this young may not be locked yet


def sample_texts(index: CorpusIndex, count: int, rng: random.Random) -> list[tuple[int, str, str, str]]:
    """``(corpus, entry id, side, text)`` of ``count`` texts of the index's part the check is meant to find
    (those the index holds), drawn in the order of the corpus; only the drawn texts are read back."""
    eligible = np.sort(index.owner_texts)
    drawn = eligible[rng.sample(range(len(eligible)), min(count, len(eligible)))].tolist()
    return [(*index.part.owner(number), index.part.text(number)) for number in drawn]


def bundle_control(bundle: Path, index: CorpusIndex, scan: ScanBundle) -> ControlResult:
    """Plant a sample into a copy of ``bundle``, run ``scan`` on the copy, and measure the recall."""
    settings = index.settings
    rng, sample, nothing = _start(index)
    if nothing is not None:
        return nothing
    with locked_copy_directory() as scratch:
        root = scratch / (bundle.resolve().name or "bundle")
        _copy_bundle(bundle, root)
        copy = ControlCopy(root=root, rng=rng,
                           python_files=_appendable(root, PYTHON, parses_as_python, settings.max_code_bytes),
                           javascript_files=_appendable(root, JAVASCRIPT, parses_as_javascript,
                                                        settings.max_code_bytes))
        carriers = list(CARRIERS.items())
        rng.shuffle(carriers)
        planted: list[tuple[Planted, Placement]] = []
        for number, (corpus, entry_id, side, text) in enumerate(sample, start=1):
            carrier_name, carrier = carriers[(number - 1) % len(carriers)]
            perturbed, perturbations = perturb(text, rng, settings)
            placement = carrier(copy, perturbed, number)
            if placement.split:
                perturbations.append("split across lines")
            planted.append((Planted(corpus=index.corpora[corpus].name, entry_id=entry_id, side=side,  # type: ignore[arg-type]
                                    carrier=carrier_name, file=placement.file, line=placement.first_line,
                                    perturbations=perturbations), placement))
        hits = scan(root)
    return _recall(planted, hits, settings.seed, settings.recall_floor)


def corpus_control(index: CorpusIndex, scan_texts: Callable[[Sequence[tuple[str, str]]], list[Hit]]
                   ) -> ControlResult:
    """The control of a corpus-against-corpus check: perturbed texts of the corpus planted as extra entries
    of the other corpus (each split across lines half the time)."""
    settings = index.settings
    rng, sample, nothing = _start(index)
    if nothing is not None:
        return nothing
    planted, extra = [], []
    for number, (corpus, entry_id, side, text) in enumerate(sample, start=1):
        perturbed, perturbations = perturb(text, rng, settings)
        if rng.random() < 0.5 and " " in perturbed.strip():
            cut = perturbed.strip().index(" ")
            perturbed = perturbed.strip()[:cut] + "\n" + perturbed.strip()[cut + 1:]
            perturbations.append("split across lines")
        label = f"mt-eval-control-{number}"
        extra.append((label, perturbed))
        planted.append((Planted(corpus=index.corpora[corpus].name, entry_id=entry_id, side=side,  # type: ignore[arg-type]
                                carrier="corpus entry", file=label, line=0, perturbations=perturbations),
                        Placement(label, 0, 0, False)))
    hits = scan_texts(extra)
    return _recall(planted, hits, settings.seed, settings.recall_floor)


def _start(index: CorpusIndex) -> tuple[random.Random, list[tuple[int, str, str, str]], ControlResult | None]:
    """The seeded generator and sample, or the result saying there is nothing to plant."""
    settings = index.settings
    rng = random.Random(settings.seed)
    sample = sample_texts(index, settings.plant, rng)
    if sample:
        return rng, sample, None
    return rng, sample, ControlResult(seed=settings.seed, planted=[], found=0, recall=None,
                                      floor=settings.recall_floor, note="no corpus text is long enough to plant")


def _recall(planted: list[tuple[Planted, Placement]], hits: list[Hit], seed: int, floor: float) -> ControlResult:
    for record, placement in planted:
        record.found = any(_finds(hit, record, placement) for hit in hits)
    found = sum(record.found for record, _ in planted)
    return ControlResult(seed=seed, planted=[record for record, _ in planted], found=found,
                         recall=round(found / len(planted), 4), floor=floor)


def _finds(hit: Hit, record: Planted, placement: Placement) -> bool:
    if (hit.corpus, hit.entry_id, hit.side) != (record.corpus, record.entry_id, record.side):
        return False
    if hit.against_id is not None:
        return hit.against_id == placement.file
    return hit.file == placement.file and hit.line is not None and \
        placement.first_line <= hit.line <= placement.last_line


@contextlib.contextmanager
def locked_copy_directory() -> Iterator[Path]:
    """A new temporary directory for the copy, locked until it has been removed (abandoned ones removed first)."""
    remove_abandoned_copies()
    scratch = Path(tempfile.mkdtemp(prefix=COPY_PREFIX))
    lock = RunDirectoryLock(scratch, command="mt-eval contamination (planted control)")
    try:
        lock.acquire()
        yield scratch
    finally:
        _remove_copy(scratch)
        lock.release()


def remove_abandoned_copies() -> list[Path]:
    """Remove this user's control copies in the temporary directory whose lock nobody holds: their check was
    killed before it could remove them. A copy in use is locked; one without its lock file (a copy of an
    older version) or made in the last `SETTING_UP_S` (its check may not have locked it yet) is left alone.
    Returns the copies removed."""
    import fcntl

    removed, candidates = [], []
    with contextlib.suppress(OSError), os.scandir(tempfile.gettempdir()) as entries:
        candidates = [Path(entry.path) for entry in entries if entry.name.startswith(COPY_PREFIX)]
    for candidate in candidates:
        try:
            found = os.lstat(candidate)
            if (not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid()
                    or time.time() - found.st_mtime < SETTING_UP_S):
                continue
            fd = os.open(candidate / RunDirectoryLock.FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            _remove_copy(candidate)  # (locked meanwhile: another check looking now leaves it alone)
            removed.append(candidate)
        except BlockingIOError:
            pass
        finally:
            os.close(fd)
    return removed


def _remove_copy(scratch: Path) -> None:
    """Remove a control copy, directories made read-only by the copy included; whatever resists stays."""
    if os.path.isdir(scratch) and not os.path.islink(scratch):
        _owner_writable(scratch)
        shutil.rmtree(scratch, ignore_errors=True)


def _owner_writable(root: Path) -> None:
    """Let the owner write in every directory under ``root`` (symbolic links never followed)."""
    for directory, _subdirectories, _files in os.walk(root):
        with contextlib.suppress(OSError):
            os.chmod(directory, stat.S_IMODE(os.stat(directory).st_mode) | stat.S_IRWXU)


def _copy_bundle(bundle: Path, root: Path) -> None:
    """A copy of the bundle's files (hard links where the filesystem allows); what cannot be copied is
    left out (the check of the bundle itself already reports it)."""
    def link_or_copy(source: str, destination: str) -> None:
        if not os.path.isfile(source) or os.path.islink(source):
            return
        try:
            os.link(source, destination)
        except OSError:
            shutil.copy2(source, destination)

    with contextlib.suppress(shutil.Error):  # unreadable files: reported by the check of the bundle itself
        shutil.copytree(bundle, root, symlinks=True, copy_function=link_or_copy,
                        ignore=not_read)
    _owner_writable(root)  # (a read-only bundle's copy takes the planted files)


def _appendable(root: Path, suffixes: set[str], parses: Callable[[Path, int], bool], limit: int) -> list[Path]:
    """The copy's own source files (symbolic links never followed) that a literal can be appended to."""
    found = []
    for path, _relative in walk_bundle(root, []):
        if path.suffix.lower() in suffixes and parses(path, limit):
            found.append(path)
            if len(found) >= _MAX_APPEND_CANDIDATES:
                break
    return found
