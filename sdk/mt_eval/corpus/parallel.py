"""Parallel text: two aligned files, one segment per line (how FLORES+, WMT and NTREX ship).

Line N of the source file and line N of the reference file are entry N, whose id is ``"N"``. Every line is
a segment — an empty line too (dropping it would shift every later pair) — and nothing is a comment. The
files must have the same number of lines. Without a reference file the corpus is reference-free. A source
line whose reference line is blank has no reference, as an empty TSV cell has none: refused with its line
(a reference file of blank lines only, too), never scored against an empty text.

The corpus's sha256 is the source file's; with a reference file it is the SHA-256 of the text
``<source sha256>\\n<reference sha256>\\n``, so it changes when either file does (each file's own sha256
is recorded too).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from mt_eval.corpus.files import FileText, display_name, read_file, refuse_stray_carriage_return, split_lines
from mt_eval.corpus.model import Corpus, CorpusError, CorpusFile, listing, plural


def read_parallel(source_path: Path, reference_path: Path | None = None, *, already_read: FileText | None = None
                  ) -> Corpus:
    """``already_read``: the source file's text, read before (a pipe can be read only once)."""
    if already_read is not None:
        refuse_stray_carriage_return(already_read)  # (as reading it with lines=True does)
    source = already_read or read_file(source_path, "source", lines=True, unnamed=_unnamed(source_path))
    sources = split_lines(source.text)
    files = [CorpusFile(role="source", path=source_path, sha256=source.sha256, lines=len(sources))]
    digest = source.sha256
    references: list[str] | None = None
    if reference_path is not None:
        reference = read_file(reference_path, "reference", lines=True, unnamed=_unnamed(reference_path))
        references = split_lines(reference.text)
        files.append(CorpusFile(role="reference", path=reference_path, sha256=reference.sha256,
                                lines=len(references)))
        if len(references) != len(sources):
            raise CorpusError.single(source_path, _mismatch(source_path, sources, reference_path, references),
                                     code="alignment", hint="the files must be aligned line by line: line N of "
                                                            "one translates line N of the other")
        digest = parallel_sha256(source.sha256, reference.sha256)
        _refuse_blank_references(reference_path, sources, references)
    if not any(line.strip() for line in sources):
        raise CorpusError.single(source_path, "has only empty lines", code="empty",
                                 hint="the source file needs one sentence per line")
    if references is None:
        entries = [{"id": str(n), "source": text} for n, text in enumerate(sources, start=1)]
    else:
        entries = [{"id": str(n), "source": text, "reference": ref}
                   for n, (text, ref) in enumerate(zip(sources, references, strict=True), start=1)]
    return Corpus(path=source_path, name=display_name(source_path), sha256=digest, entries=entries,
                  format="parallel", ids_from="line numbers", lines=list(range(1, len(entries) + 1)), files=files,
                  references=references is not None)


def _unnamed(path: Path) -> bool:
    """A file whose name cannot say it is compressed — a pipe or standard input (``--source-file -``,
    ``<(zcat dev.eng.gz)``), or a name without extension — so gzip is recognised by its first bytes, as a corpus
    read by its content is; a named file holding gzip (``dev.eng``) is refused, with ``.gz`` to add to its name."""
    return not Path(path.name).suffix or not path.is_file()


def parallel_sha256(source_sha256: str, reference_sha256: str) -> str:
    """The sha256 of parallel text with references, from each file's own (the module docstring)."""
    return hashlib.sha256(f"{source_sha256}\n{reference_sha256}\n".encode()).hexdigest()


def _refuse_blank_references(reference_path: Path, sources: list[str], references: list[str]) -> None:
    """A blank reference line beside a source line is no reference: the metrics would score that sentence's
    translation against an empty text. Lines blank in both files are empty segments, and stay."""
    if not any(line.strip() for line in references):
        raise CorpusError.single(reference_path, "has only empty lines: no source line has a reference",
                                 code="references", hint="give the file that holds the references, or leave out "
                                 "--reference-file to translate without scoring")
    lacking = [n for n, (text, ref) in enumerate(zip(sources, references, strict=True), start=1)
               if text.strip() and not ref.strip()]
    if lacking:
        lines = ("line " if len(lacking) == 1 else "lines ") + listing(lacking)
        raise CorpusError.single(reference_path, f"{plural(len(lacking), 'source line')} of {len(sources):,} "
                                 f"{'has' if len(lacking) == 1 else 'have'} an empty reference line ({lines}): "
                                 "either every entry has a reference or none has", code="references",
                                 hint="add the missing references (the files may be misaligned from there), or "
                                 "leave out --reference-file to translate without scoring")


def _mismatch(source_path: Path, sources: list[str], reference_path: Path, references: list[str]) -> str:
    text = f"has {len(sources):,} lines but {reference_path} has {len(references):,}"
    longer, extra = (references, "reference") if len(references) > len(sources) else (sources, "source")
    if longer and longer[-1] == "":
        text += f" (the {extra} file ends with an empty line)"
    return text
