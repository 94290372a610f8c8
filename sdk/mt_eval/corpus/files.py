"""Getting a corpus file's text: its format from its name, its bytes and sha256, gzip, UTF-8, lines.

The sha256 is of the file as it is on disk (compressed, when it is ``.gz``). Text is UTF-8, or UTF-16 with
its byte-order mark (what spreadsheets save as "Unicode text"); a byte-order mark is dropped and CRLF line
ends become LF. A file holding NUL bytes (UTF-16 without its byte-order mark, or a binary file) is refused.
Lines are split on LF only: U+2028, U+0085 and form feeds inside a sentence stay inside it
(``str.splitlines`` would cut the sentence there and shift everything after it).
"""

from __future__ import annotations

import gzip
import hashlib
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

from mt_eval.corpus.model import CorpusError

FORMATS = {".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl", ".tsv": "tsv"}
SUPPORTED = "use .json, .jsonl or .tsv (optionally .gz), or parallel text with --source-file/--reference-file"
_LANGUAGE_SUFFIX = re.compile(r"[a-z]{2,3}(_[a-z]{4})?")  # dev.en, devtest.eng_latn (names are lowercased)
_DESCRIPTOR = re.compile(r"/dev/fd/\d+|/proc/(self|thread-self|\d+)/fd/\d+")  # (a pipe, by its descriptor)
# markup whose suffixes would otherwise pass for a language code (newstest2019-src.de.sgm, generaltest2022.xml)
_MARKUP_SUFFIXES = {".sgm", ".sgml", ".xml", ".tmx", ".xlf", ".xliff"}
MARKUP_HINT = ("extract the segments, one sentence per line (a WMT test set: sacrebleu -t wmt19 -l de-en --echo src "
               "> src.de, and --echo ref > ref.en), and give them with --source-file and --reference-file")
_PARALLEL_HINT = "give it with --source-file FILE (and the references with --reference-file FILE)"
# archives and compression other than gzip, whose suffixes would otherwise pass for a language code (dev.zip, dev.xz)
_PACKED = {".zip": "unzip", ".tar": "tar -xf", ".tgz": "tar -xzf", ".xz": "unxz", ".lz": "lzip -d",
           ".zst": "unzstd", ".rar": "unrar x", ".bz2": "bunzip2", ".7z": "7z x"}
# the same, known by their first bytes (a pipe, or a file whose name hides them): what it is, what unpacks it
_PACKED_BYTES = [(b"\x1f\x8b", "gzip-compressed", "zcat"), (b"\xfd7zXZ\x00", "xz-compressed", "xzcat"),
                 (b"BZh", "bzip2-compressed", "bzcat"), (b"\x28\xb5\x2f\xfd", "zstd-compressed", "zstdcat"),
                 (b"PK\x03\x04", "a zip archive (as .xlsx and .docx files are)", "unzip -p"),
                 (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive", "7z x -so")]


@dataclass
class FileText:
    path: Path
    text: str
    sha256: str


def corpus_format(path: Path) -> str | None:
    """``json``, ``jsonl`` or ``tsv`` from the file name; None when the name gives none and the content is to say
    (a name without extension, or a pipe or device: ``--corpus <(zcat dev.jsonl.gz)``); anything else is refused
    with what to do."""
    name = path.name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    suffix = Path(name).suffix
    if suffix in FORMATS:
        return FORMATS[suffix]
    if not path.exists():  # a mistyped path: its name is not the problem
        raise CorpusError.single(path, "cannot read corpus: No such file or directory", code="io",
                                 hint="check the path")
    if path.is_dir():  # a directory has no format to name: say what it is
        raise CorpusError.single(path, "is a directory, not a corpus file", code="io", hint="give the file itself")
    if not suffix or not path.is_file():
        return None
    if suffix == ".csv":
        hint = ("CSV quoting differs between programs, so CSV is not read: save it as TSV (TAB-separated, no "
                "quotes) or JSONL")
    elif suffix in _PACKED:
        hint = (f"a {suffix} archive or compressed file is not opened (only gzip is): extract the corpus file "
                f"(e.g. {_PACKED[suffix]} {path.name}) and give that")
    elif suffix in _MARKUP_SUFFIXES:
        hint = (f"a {suffix} file (a WMT SGML or XML test set, TMX, XLIFF) holds its segments inside markup, which "
                f"mt-eval does not read: {MARKUP_HINT}")
    elif suffix in (".txt", ".text") or _LANGUAGE_SUFFIX.fullmatch(suffix[1:]):
        hint = f"a {suffix} file is read as parallel text, one sentence per line: " + _PARALLEL_HINT
    else:
        hint = f"{suffix} is not a corpus format mt-eval reads"
    raise CorpusError.single(path, f"unsupported format: {SUPPORTED}", hint=hint, code="format")


def read_file(path: Path, what: str = "corpus", *, lines: bool = False, unnamed: bool = False) -> FileText:
    """The file's text (decompressed, BOM dropped, CRLF → LF) and the sha256 of its bytes. With ``lines`` (a file
    read line by line: TSV, parallel text), a CR alone inside a file whose lines end in LF is refused (see
    `refuse_stray_carriage_return`). A file whose name gives no format (``unnamed``, e.g. a pipe) is decompressed
    when its first bytes are gzip's, whatever its name."""
    try:
        raw = path.read_bytes()
    except IsADirectoryError:
        raise CorpusError.single(path, f"is a directory, not a {what} file", code="io",
                                 hint="give the file itself") from None
    except OSError as exc:
        raise CorpusError.single(path, f"cannot read {what}: {exc.strerror or exc}", code="io",
                                 hint="check the path") from exc
    digest = hashlib.sha256(raw).hexdigest()
    if not raw:
        raise CorpusError.single(path, "is empty (0 bytes)", code="empty",
                                 hint="a corpus needs at least one entry; give the file that holds them"
                                 if what == "corpus" else f"a {what} file has one sentence per line")
    data = raw
    if path.name.lower().endswith(".gz") or (unnamed and raw[:2] == b"\x1f\x8b"):
        try:
            data = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise CorpusError.single(path, f"is not a valid gzip file: {exc}", code="encoding",
                                     hint="re-download it, or remove the .gz suffix if it is not compressed") from exc
    if data[:4] in (b"\xff\xfe\0\0", b"\0\0\xfe\xff"):  # (before UTF-16's mark, which begins UTF-32LE's)
        raise CorpusError.single(path, "is UTF-32 text (its byte-order mark says so), which is not read",
                                 code="encoding",
                                 hint=f"convert it to UTF-8, e.g. {fed_to('iconv -f utf-32 -t utf-8', path)} > "
                                 f"{converted_name(path)}")
    encoding = "utf-16" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else "utf-8-sig"  # Excel's "Unicode text"
    if encoding != "utf-16" and b"\0" in data:
        raise _packed(path, data) or _nul_bytes(path, data)
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        if encoding == "utf-16":
            raise CorpusError.single(path, f"not valid UTF-16 at byte {exc.start}", code="encoding",
                                     hint="save it again as UTF-8") from exc
        line = data[: exc.start].count(b"\n") + 1
        packed = _packed(path, data)  # (compressed bytes need hold no NUL)
        if packed is not None:
            raise packed from None
        raise CorpusError.single(path, f"not valid UTF-8: byte 0x{data[exc.start]:02x} at line {line}",
                                 code="encoding", hint="convert it to UTF-8 (e.g. iconv -f latin1 -t utf-8)") from exc
    if "\r" in text:  # (a CRLF file's last line may end in CR alone, its LF missing)
        text = text.replace("\r\n", "\n").removesuffix("\r")
        if "\n" not in text:  # the old Mac line end, CR alone, in every line: the lines had been read as one
            text = text.replace("\r", "\n")
    file = FileText(path=path, text=text, sha256=digest)
    if lines:
        refuse_stray_carriage_return(file)
    return file


_DELETE_CR = "tr -d '\\r'"


def refuse_stray_carriage_return(file: FileText) -> None:
    """Refuse a CR alone inside text whose lines end in LF (left there by `read_file`), in a file read line by
    line: some tools end a line there and others do not, so what it splits is a guess."""
    if "\r" in file.text:
        line = file.text.count("\n", 0, file.text.index("\r")) + 1
        removal = f"{fed_to(_DELETE_CR, file.path)} > {converted_name(file.path, 'lf')}"
        raise CorpusError.single(file.path, f"line {line} holds a carriage return (CR) that does not end it, in a "
                                 "file whose lines end in LF: some tools end a line there and others do not",
                                 code="line-ends", hint=f"remove the stray CR (e.g. {removal}), or end that line "
                                 "with LF if the CR was meant as a line end")


def _packed(path: Path, data: bytes) -> CorpusError | None:
    """Compressed or archived bytes that no name announced (``dev.tsv`` holding gzip, ``<(cat dev.tsv.xz)``): said
    so, with the command that unpacks them, rather than blamed on stray NUL bytes."""
    for magic, what, unpack in _PACKED_BYTES:
        if data.startswith(magic):
            piped = _piped_into(path)
            unpacked = "corpus.txt" if piped else _unpacked_name(path.name)
            hint = f"give the text it holds, e.g. {piped + unpack if piped else f'{unpack} {path.name}'} > {unpacked}"
            if what.startswith("gzip") and not piped:
                hint = f"name it {path.name}.gz, or {hint}"
            return CorpusError.single(path, f"is {what} (its first bytes say so), not text", code="encoding",
                                      hint=hint)
    return None


def _unpacked_name(name: str) -> str:
    """A name for the text a packed file holds: ``dev.tsv.xz`` → ``dev.tsv``; ``dev.tsv`` → ``dev.text.tsv``."""
    stem, dot, suffix = name.rpartition(".")
    if dot and stem and f".{suffix.lower()}" in _PACKED:
        return stem
    return f"{stem}.text.{suffix}" if dot and stem else f"{name}.text"


def _nul_bytes(path: Path, data: bytes) -> CorpusError:
    """Text holds no NUL byte; UTF-16 without its byte-order mark does (one in every other byte, for the Latin
    script), and so does a binary file."""
    line = data[:data.index(b"\0")].count(b"\n") + 1
    head = data[:4096]
    odd, even = head[1::2].count(0), head[0::2].count(0)
    utf16 = max(odd, even) * 4 >= len(head)  # a quarter of the bytes or more, all on one side
    name = path.name.removesuffix(".gz")
    reading = _piped_into(path) or (f"zcat {path.name} | " if name != path.name else "")
    if not utf16:  # a stray NUL in UTF-8 text, or no text at all: converting from UTF-16 would garble it
        count, first = data.count(b"\0"), data.index(b"\0")
        command = f"{reading}tr -d '\\000'" + ("" if reading else f" < {name}")
        return CorpusError.single(path, f"holds {count} NUL byte{'s' if count > 1 else ''} (the first at line {line}, "
                                  f"byte {first}), which no text has: a binary file, or text with stray "
                                  "NUL bytes", code="encoding", hint="give the corpus file itself; if it is text, "
                                  f"remove them, e.g. {command} > {converted_name(path, 'clean')}")
    encoding, unit = ("utf-16be", "UTF-16") if even > odd else ("utf-16le", "UTF-16")
    quarters = [head[k::4].count(0) * 4 for k in range(4)]  # (UTF-32: three bytes of every four are NUL)
    if sum(share >= len(head) * 0.9 for share in quarters) == 3:
        encoding, unit = ("utf-32le" if quarters[0] < quarters[3] else "utf-32be"), "UTF-32"
    iconv = f"iconv -f {encoding} -t utf-8"
    command = f"{reading}{iconv}" if reading else f"{iconv} {name}"
    return CorpusError.single(path, f"holds NUL bytes (the first at line {line}), which no text has: it looks like "
                              f"{unit} without its byte-order mark", code="encoding",
                              hint=f"convert it to UTF-8, e.g. {command} > {converted_name(path)}")


def fed_to(command: str, path: Path) -> str:
    """``command`` reading the text of ``path``: ``zcat dev.tsv.gz | command`` for a compressed file (it would
    read the gzip bytes), else ``command < dev.tsv``."""
    piped = _piped_into(path)
    if piped:
        return piped + command
    return f"zcat {path.name} | {command}" if path.name.lower().endswith(".gz") else f"{command} < {path.name}"


def _piped_into(path: Path) -> str:
    """For a pipe, the start of a command that reads what it held (its descriptor is gone once read); else ""."""
    streamed = stream_name(path)
    return "" if streamed is None else f"(the command writing {streamed}) | "


def converted_name(path: Path, tag: str = "utf8") -> str:
    """A name for a converted copy of the file: ``dev.tsv`` → ``dev.utf8.tsv`` (``tag``; a .gz dropped); a pipe's
    is ``corpus.utf8``."""
    name = "corpus" if stream_name(path) is not None else path.name.removesuffix(".gz")
    stem, dot, suffix = name.rpartition(".")
    return f"{stem}.{tag}.{suffix}" if dot and stem else f"{name}.{tag}"


def split_lines(text: str) -> list[str]:
    """Lines split on LF only; a final LF ends the last line rather than starting an empty one."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


STANDARD_INPUT = "standard input"


def stream_name(path: Path) -> str | None:
    """What to call a corpus read from a pipe or standard input rather than a named file: ``standard input`` for
    /dev/stdin (or descriptor 0), the path as given for another descriptor — process substitution's /dev/fd/63,
    whose file name ``63`` says nothing; None for any other path. (A path of ``-`` is a file so named, given as
    ``./-``: the commands read a ``-`` operand as /dev/stdin before it becomes a path.)"""
    given = str(path)
    if given == "/dev/stdin" or (_DESCRIPTOR.fullmatch(given) and given.endswith("/0")):
        return STANDARD_INPUT
    return given if _DESCRIPTOR.fullmatch(given) else None


def file_label(path: Path) -> str:
    """The file as messages name it: its name, or for a pipe or standard input what `stream_name` says."""
    return stream_name(path) or path.name


def naming_part(path: Path, name: str, sha256: str) -> str:
    """The corpus's part of a name derived from it (a run's directory): its name, or for a pipe that only its
    descriptor names, ``piped-`` and the start of its sha256 (the same content, the same name: a resume finds it)."""
    return f"piped-{sha256[:12]}" if stream_name(path) is not None and name == display_name(path) else name


def display_name(path: Path) -> str:
    """The corpus name a file gives: its name without compression and format suffixes (a pipe's: `stream_name`)."""
    streamed = stream_name(path)
    if streamed is not None:
        return streamed
    name = path.name
    if name.lower().endswith(".gz"):
        name = name[:-3]
    stem = Path(name).stem
    return stem or name
