"""What a run card holds of its results: every result (the default up to `EMBED_UP_TO`), or a reference to the
run's ``results.jsonl`` by SHA-256 (``mt-eval run --embed-results``).

A card that references its log stays small however many entries ran — a million results would make a card of
hundreds of megabytes, and building it most of a run's memory. Its content hash covers the reference, so a card
and its log verify together: `results_from_log` reads the log next to the card, checks its hash, and gives the
results the card would have listed, for ``verify``, ``compare``, ``gate`` and ``publish``: read from the log
when a pass needs them (`ResultsOnDisk`), so that checking a card of a million results holds no million objects.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, overload

import msgspec

from mt_eval.corpus.on_disk import read_lines
from mt_eval.harness.runcard import EMBED_UP_TO, CardResult, ResultsLogReference

if TYPE_CHECKING:
    import numpy as np

EMBED_CHOICES = ("auto", "always", "never")


def embeds_results(choice: str, results: int) -> bool:
    """Whether the card lists its results: ``always``, ``never``, or ``auto`` (up to `EMBED_UP_TO`)."""
    if choice not in EMBED_CHOICES:
        raise ValueError(f"--embed-results must be one of {', '.join(EMBED_CHOICES)}, not {choice!r}")
    return choice == "always" or (choice == "auto" and results <= EMBED_UP_TO)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while chunk := file.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def log_reference(log: Path, results: int) -> ResultsLogReference:
    """The reference a card holds to the run's log ``log`` (written next to the card)."""
    return ResultsLogReference(file=log.name, sha256=file_sha256(log), results=results)


class LogMismatch(ValueError):
    """The log a card references is missing, changed or unreadable; ``hint`` says what to do."""

    def __init__(self, message: str, hint: str, code: str) -> None:
        super().__init__(message)
        self.hint = hint
        self.code = code


_decode_results = msgspec.json.Decoder(CardResult).decode


def results_from_log(card_path: Path, reference: ResultsLogReference) -> ResultsOnDisk:
    """The results of a card that references its log, in the log next to ``card_path`` (`ResultsOnDisk`); raises
    `LogMismatch` when the log is missing or cannot be read, is not the one the card sealed, or does not hold its
    results. A card given by a symbolic link has its log next to the card the link points to, when there is none
    next to the link."""
    if Path(reference.file).name != reference.file:
        raise LogMismatch(f"the card references its results as {reference.file!r}, which is not a file next to it",
                          "use the card the run wrote", "tampered")
    log = card_path.parent / reference.file
    if not log.exists() and card_path.is_symlink():
        log = card_path.resolve().parent / reference.file
    if not log.is_file():
        state = ("is a directory" if log.is_dir() else "is not a regular file" if log.exists()
                 else "does not exist")
        raise LogMismatch(f"the card's results are in {reference.file} next to it, and {log} {state}",
                          "keep results.jsonl beside card.json (copy the run directory whole), or run again with "
                          "--embed-results always for a card that holds its results", "missing-log")
    try:
        offsets, lengths = _where_results_are(log, reference)
    except OSError as exc:
        raise LogMismatch(f"cannot read {log}: {exc.strerror or exc}", f"make it readable (chmod u+r {log}), or "
                          "copy the run directory whole again", "io") from exc
    if len(offsets) != reference.results:
        raise LogMismatch(f"{log} holds {len(offsets)} results, the card says {reference.results}",
                          "use the log the run wrote", "tampered")
    import numpy as np  # (imported here: a run that embeds its results never needs it)

    return ResultsOnDisk(log, np.frombuffer(offsets, np.int64), np.frombuffer(lengths, np.int64))


def _where_results_are(log: Path, reference: ResultsLogReference) -> tuple[array[int], array[int]]:
    """The offset and length of each result's line in ``log``, once its hash is the one the card sealed and every
    line is checked to be a result (`LogMismatch` otherwise)."""
    digest = file_sha256(log)
    if digest != reference.sha256:
        raise LogMismatch(f"{log} hashes to {digest[:16]}…, but the card sealed {reference.sha256[:16]}…: it is "
                          "not the log this card sealed: another run's, or changed after the run (a later --resume, "
                          "or an edit)", "verify the card the run wrote last, together with its own log", "tampered")
    offsets, lengths = array("q"), array("q")
    offset = 0
    with log.open("rb") as file:  # every line checked to be a result; only where each one is kept
        for number, line in enumerate(file, 1):
            if line.strip():
                try:
                    _decode_results(line)
                except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                    raise LogMismatch(f"{log}: line {number} is not a result ({exc})", "use the log the run wrote",
                                      "tampered") from exc
                offsets.append(offset)
                lengths.append(len(line))
            offset += len(line)
    return offsets, lengths


class ResultsOnDisk(Sequence[CardResult]):
    """The results in a card's log, in the log's order, read from it when a pass needs them: 16 bytes a result
    held (where its line is), where a million results decoded would take most of a gigabyte. Each pass decodes
    them again, a block at a time (`blocks`)."""

    def __init__(self, log: Path, offsets: np.ndarray, lengths: np.ndarray) -> None:
        self.path = log
        self._offsets = offsets
        self._lengths = lengths

    def __len__(self) -> int:
        return len(self._offsets)

    @overload
    def __getitem__(self, index: int) -> CardResult: ...

    @overload
    def __getitem__(self, index: slice) -> list[CardResult]: ...

    def __getitem__(self, index: int | slice) -> CardResult | list[CardResult]:
        if isinstance(index, slice):
            return [self[position] for position in range(len(self))[index]]
        position = range(len(self))[index]  # IndexError, and negative indices, as a list has them
        with self.path.open("rb") as file:
            file.seek(int(self._offsets[position]))
            return _decode_results(file.read(int(self._lengths[position])))

    def __iter__(self) -> Iterator[CardResult]:
        for block in self.blocks():
            yield from block

    def blocks(self, size: int = 4_096) -> Iterator[list[CardResult]]:
        """The results in order, ``size`` at a time."""
        for _start, lines in read_lines(self.path, self._offsets, self._lengths, size):
            yield list(map(_decode_results, lines))


def in_blocks(results: Sequence[CardResult]) -> Iterable[Sequence[CardResult]]:
    """A card's results as blocks for a pass over them: read a block at a time from its log, or all at once."""
    return results.blocks() if isinstance(results, ResultsOnDisk) else [results]
