"""The check as part of ``mt-eval run`` and ``mt-eval validate --corpus``.

``mt-eval run`` checks the evaluated bundle against the run's corpus by default, before translating: on
a plugin of a few megabytes it takes well under a second, and a card without a check cannot pass the
"verified-clean" policy. ``--no-contamination-check`` skips it (for bundles of model weights, say); the
card then records "not-run" and why. The result is kept in the run directory (``contamination.json``)
so that ``--resume`` reuses it: a resume requires the same code and corpus anyway (a check that could not run,
or failed, is run again).
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any, TextIO

import msgspec

from mt_eval.contamination.record import ContaminationRecord, not_run, record_of
from mt_eval.control_chars import escaped_for_terminal
from mt_eval.problems import Problem
from mt_eval.process_memory import return_freed_memory

RESULT_FILE = "contamination.json"


class _Saved(msgspec.Struct, kw_only=True):
    code_sha256: str
    corpus_sha256: str
    record: ContaminationRecord


def check_for_run(method_dir: Path, corpus: Any, run_dir: Path, *, code_sha256: str, enabled: bool, reuse: bool,
                  quiet: bool, stream: TextIO | None = None) -> ContaminationRecord:
    """The record for the run card: the check of the bundle against the run's ``corpus`` (a
    `mt_eval.corpus.Corpus`, all of it, as the run read it), or not-run. With ``reuse`` (a resumed run),
    the result saved in the run directory for the same code and corpus, also when this session skips the check
    (``enabled`` false): a resume does not erase what an earlier session found."""
    corpus_sha256 = corpus.sha256
    stream = stream or sys.stderr
    saved_path = run_dir / RESULT_FILE
    try:
        saved = msgspec.json.decode(saved_path.read_bytes(), type=_Saved) if reuse else None
        # (a check that could not run or failed is tried again: what stopped it may be fixed since)
        if saved is not None and (saved.code_sha256, saved.corpus_sha256) == (code_sha256, corpus_sha256) and \
                saved.record.status != "not-run":
            return saved.record
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        pass
    if not enabled:
        return not_run("skipped with --no-contamination-check")
    from mt_eval.contamination.corpora import CorpusUnreadable, texts_of
    from mt_eval.contamination.engine import CheckError, check_bundle
    from mt_eval.contamination.render import progress_printer

    try:
        record = record_of(check_bundle(method_dir, [texts_of(corpus)], progress=None if quiet else progress_printer(
            "contamination check: ")))
    except KeyboardInterrupt as exc:  # (else the run's own message: "finished entries are saved", of none)
        from mt_eval.errors import InterruptedBefore

        raise InterruptedBefore(
            "\nmt-eval run: interrupted during the contamination check, before translating (nothing was translated "
            "now; entries a run before this one finished are kept); continue with the same command and --resume "
            "(the check starts again), or add --no-contamination-check to skip it (the card then records it as "
            "not run)") from exc
    except (CheckError, CorpusUnreadable) as exc:
        record = not_run(f"the check could not run: {exc}")
    except Exception as exc:  # a failure of the check must not cost the evaluation; the card says what happened
        record = not_run(f"the check failed: {type(exc).__name__}: {exc}")
    return_freed_memory()  # the index's buffers: the run that follows (and its forked scorers) need not carry them
    run_dir.mkdir(parents=True, exist_ok=True)
    saved_path.write_bytes(msgspec.json.encode(_Saved(code_sha256=code_sha256, corpus_sha256=corpus_sha256,
                                                      record=record)))
    if not quiet:
        stream.write(summary_line(record, method_dir, corpus.path, reading_options(corpus)) + "\n")
    return record


def reading_options(corpus: Any) -> list[str]:
    """The options that read ``corpus`` as the run read it (parallel text's files, --columns, --accept-doubt), for a
    command line the user can run again."""
    if corpus.format == "parallel":
        files = {f.role: str(f.path) for f in corpus.files}
        words = ["--source-file", files.get("source", str(corpus.path))]
        words += ["--reference-file", files["reference"]] if "reference" in files else []
    else:
        words = ["--corpus", str(corpus.path)]
        if corpus.columns_from == "--columns" and corpus.columns:
            words += ["--columns", ",".join(c.key for c in corpus.columns)]
    return words + [word for code in corpus.accepted_doubts for word in ("--accept-doubt", code)]


def summary_line(record: ContaminationRecord, method_dir: Path | None = None, corpus_path: Path | None = None,
                 corpus_options: list[str] | None = None) -> str:
    """``contamination check: clean (planted control 20 of 20, recall 1.00 ≥ floor 0.90, seed 12345)``; for a
    contaminated bundle, the command listing every hit (its corpus read as the run read it: ``corpus_options``),
    and why when the corpus file lies inside the plugin."""
    if record.status == "clean":
        found = sum(p.found for p in record.planted)
        return (f"contamination check: clean (planted control {found} of {len(record.planted)}, recall "
                f"{record.recall:.2f} ≥ floor {record.recall_floor:.2f}, seed {record.seed})")
    if record.status == "contaminated":
        first = record.hits[0]
        listing = "mt-eval contamination --method DIR --corpus FILE"
        if method_dir is not None and corpus_path is not None:
            listing = shlex.join(["mt-eval", "contamination", "--method", str(method_dir),
                                  *(corpus_options or ["--corpus", str(corpus_path)])])
        line = escaped_for_terminal(  # (a line break in a file's name is written \\n)
            f"contamination check: CONTAMINATED, {record.hits_total} hit{'s' if record.hits_total != 1 else ''} "
            f"(first: {first.where} {first.entry_id} {first.side}, {first.kind}; {listing} lists them all)",
            one_line=True)
        if method_dir is not None and corpus_path is not None and corpus_path.resolve().is_relative_to(
                method_dir.resolve()):
            line += (f"\n  the corpus {corpus_path} is inside the method's directory, so the method's bundle holds "
                     "its texts: fine for a first try, but evaluate on a corpus kept outside the plugin")
        return line
    return escaped_for_terminal(f"contamination check: {record.status}: {'; '.join(record.reasons)}", one_line=True)


def validation_problems(record: ContaminationRecord, plugin: str) -> list[Problem]:
    """``mt-eval validate --corpus``: contaminated is an error, unverified or not run a warning."""
    if record.status == "clean":
        return []
    if record.status == "contaminated":
        shown = "; ".join(f"{h.where} has {h.corpus} {h.entry_id} ({h.side}, {h.kind})" for h in record.hits[:5])
        more = f" and {record.hits_total - 5} more" if record.hits_total > 5 else ""
        return [Problem(file=plugin, path="$", code="contamination",
                        message=f"the bundle contains evaluation data: {shown}{more}",
                        hint="remove the corpus's texts from the plugin (glossaries, prompts, examples, tests); "
                             "mt-eval contamination --method DIR --corpus FILE lists every hit")]
    return [Problem(file=plugin, path="$", code="contamination", severity="warning",
                    message=f"contamination check {record.status}: {'; '.join(record.reasons)}",
                    hint="mt-eval contamination --method DIR --corpus FILE shows what could not be checked")]
