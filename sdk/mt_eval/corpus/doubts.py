"""No silent misread: shapes that suggest the corpus was read other than it was meant to be.

Each doubt says what was detected and how to say otherwise. A doubt that would make the evaluation
meaningless refuses the corpus unless ``--accept-doubt CODE`` accepts it (it is then kept as a warning and
recorded in the run card); the others are warnings. Checks look at a sample of entries, so they cost the
same for any corpus size.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from mt_eval.corpus.families import scored_entries
from mt_eval.corpus.files import MARKUP_HINT
from mt_eval.corpus.gold_names import gold_name_doubts
from mt_eval.corpus.model import Corpus, CorpusError, plural
from mt_eval.corpus.names import misspelling_of
from mt_eval.corpus.on_disk import EntriesOnDisk
from mt_eval.corpus.scripts import dominant_script, expected_scripts, script_shares
from mt_eval.corpus.tsv import SPACED_COLUMNS
from mt_eval.problems import Problem

DOUBTS = {
    "first-column-ids": "a TSV without a header whose first column holds ids, not sentences",
    "ids-look-like-sentences": "an id column holding sentences",
    "spaces-not-tabs": "a TSV without TABs whose lines seem to separate columns with spaces",
    "tabs-in-parallel-text": "parallel text whose lines hold TAB-separated columns",
    "same-source-everywhere": "every entry has the same source text",
    "codes-not-sentences": "the sources are a few language codes (en, es), not sentences",
    "reference-equals-source": "every reference is identical to its source",
    "script-mismatch": "sources or references not in the script of the pair's language",
    "pair-mismatch": "--pair names other languages than the pair the corpus declares",
    "misspelled-field": "an entry field or column named like a field mt-eval reads, but not quite (refrence)",
    "header-like-first-line": "a .tsv whose first line looks like a header, yet would be read as an entry",
    "json-in-tsv": "a .tsv file holding JSON or JSONL",
    "json-in-parallel-text": "a parallel-text file holding JSON or JSONL, not lines of text",
    "csv-in-tsv": "a .tsv file holding CSV",
    "markup-not-text": "a .tsv or parallel-text file holding markup (WMT SGML or XML, TMX, XLIFF), not lines of text",
    "decomposed-references": "references not in Unicode NFC (accents as separate combining marks): a warning",
}
SAMPLE = 500
_ID_LIKE = re.compile(r"[A-Za-z0-9_.:/#@+-]{1,64}")
_HAS_DIGIT = re.compile(r"\d")
_CODE = re.compile(r"[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*")  # a language code: en, eng, pt-BR, zh_Hant
# the first line of a WMT SGML or XML test set, a TMX or XLIFF file, or any XML document: no sentence begins so
_MARKUP = re.compile(r"\s*<(\?xml|!doctype|srcset|refset|tstset|mteval|dataset|tmx|xliff)[\s>/]", re.IGNORECASE)
_MARKUP_KINDS = {"srcset": "a WMT SGML test set", "refset": "a WMT SGML test set", "tstset": "a WMT SGML test set",
                 "mteval": "a WMT SGML test set", "dataset": "a WMT XML test set", "tmx": "a TMX translation memory",
                 "xliff": "an XLIFF file"}
_decode_json = msgspec.json.Decoder().decode
_SENTENCE_LIKE = re.compile(r"\S\s+\S|[.!?。！？]$|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]{4}")


@dataclass(frozen=True)
class Doubt:
    code: str
    message: str
    hint: str
    refuse: bool = True


def find_doubts(corpus: Corpus, pair: str | None = None) -> list[Doubt]:
    """Everything doubtful about how ``corpus`` was read (``pair``, ``SRC>TGT``, enables the script check)."""
    doubts = [*_column_doubts(corpus), *_field_doubts(corpus), *_gold_name_doubts(corpus), *_content_doubts(corpus)]
    mismatch = pair_doubt(corpus, pair)
    if mismatch is not None:
        doubts.append(mismatch)
    if pair and ">" in pair:
        source_lang, _, target_lang = pair.partition(">")
        doubts.extend(_script_doubts(corpus, source_lang, target_lang))
    return doubts


def pair_doubt(corpus: Corpus, pair: str | None) -> Doubt | None:
    """A ``pair`` (from ``--pair``) in other languages than the one the corpus declares: a refusing doubt."""
    from mt_eval.pairs import same_languages

    if not pair or not corpus.pair or same_languages(pair, corpus.pair):
        return None
    return Doubt("pair-mismatch", f"the corpus declares the pair '{corpus.pair}', but --pair says '{pair}'",
                 f"leave out --pair to use '{corpus.pair}', or correct --pair")


def refuse_pair_mismatch(corpus: Corpus, pair: str, accepted: list[str]) -> None:
    """Raise CorpusError at once when ``pair`` contradicts the corpus's pair and the doubt is not accepted
    (accepted, it is recorded when the corpus's doubts are settled)."""
    doubt = pair_doubt(corpus, pair)
    if doubt is not None and doubt.code not in accepted:
        settle_doubts(corpus, [doubt], accepted)


def settle_doubts(corpus: Corpus, doubts: list[Doubt], accepted: list[str]) -> None:
    """Raise CorpusError for refusing doubts not accepted; keep the rest as ``corpus.warnings``."""
    refuse_doubts(corpus.path, doubts, accepted)
    for doubt in doubts:
        if doubt.refuse:
            corpus.accepted_doubts.append(doubt.code)
            corpus.warnings.append(f"{doubt.message} (accepted with --accept-doubt {doubt.code})")
        else:
            corpus.warnings.append(f"{doubt.message}; {doubt.hint}")


def refuse_doubts(path: Path, doubts: list[Doubt], accepted: list[str]) -> None:
    """Raise CorpusError for the refusing doubts not accepted (`settle_doubts` records the others)."""
    refused = [d for d in doubts if d.refuse and d.code not in accepted]
    if refused:
        problems = [Problem(file=str(path), path="$", code="doubt", message=d.message,
                            hint=f"{d.hint}; if the file is really meant this way, add --accept-doubt {d.code}")
                    for d in refused]
        raise CorpusError(problems, summary=f"corpus {path} is refused: it may be misread")


def sample(entries: Sequence[dict[str, Any]], size: int = SAMPLE) -> Sequence[dict[str, Any]]:
    """At most ``size`` entries spread evenly over the corpus."""
    if len(entries) <= size:
        return entries
    step = len(entries) / size
    positions = [int(i * step) for i in range(size)]
    if isinstance(entries, EntriesOnDisk):
        return list(entries.take(positions))
    return [entries[position] for position in positions]


def markup_doubt(number: int, line: str, file: str | None = None) -> Doubt | None:
    """Line ``number`` (of ``file``, when the corpus has two), the first that is not blank, when it opens a markup
    document (WMT SGML or XML, TMX, XLIFF): read line by line, each tag would be a source text."""
    found = _MARKUP.match(line)
    if found is None:
        return None
    kind = _MARKUP_KINDS.get(found.group(1).lower(), "an SGML or XML document")
    where = f"line {number} of {file}" if file else f"line {number}"
    return Doubt("markup-not-text", f"{where} opens {kind} ({line.strip()[:50]}): its segments are inside markup, "
                                    "which mt-eval does not read, so each line would be one source text, tags and all",
                 MARKUP_HINT)


def _markup_doubts(corpus: Corpus) -> list[Doubt]:
    """Parallel text whose source or reference file is markup (`markup_doubt`), judged by its first line that is
    not blank."""
    from mt_eval.corpus.files import file_label

    doubts = []
    for file in corpus.files:
        first = next((e for e in corpus.entries[:200] if e.get(file.role, "").strip()), None)
        doubt = None if first is None else markup_doubt(int(first["id"]), first[file.role], file_label(file.path))
        if doubt is not None:
            doubts.append(doubt)
    return doubts


def json_kind(line: str) -> str | None:
    """``jsonl`` when ``line`` is an entry object (a line of JSON lines), ``json`` when it is a JSON list of entries
    or an object holding ``entries`` (the upstream shape), or opens one written over many lines (``[`` or ``{``
    alone); else None. No sentence is written so."""
    stripped = line.strip()
    if stripped in ("[", "{"):
        return "json"
    if stripped[:1] not in ("[", "{"):
        return None
    try:
        value = _decode_json(stripped)
    except msgspec.DecodeError:
        return None
    if isinstance(value, dict):
        return "json" if "entries" in value else "jsonl"
    return "json" if isinstance(value, list) and value and isinstance(value[0], dict) else None


def _json_doubts(corpus: Corpus) -> list[Doubt]:
    """Parallel text whose source or reference file is JSON or JSON lines (`json_kind`), judged by its first line
    that is not blank: read line by line, each line would be one sentence, braces and all."""
    from mt_eval.corpus.files import file_label, stream_name

    doubts = []
    for file in corpus.files:
        first = next((e for e in corpus.entries[:200] if e.get(file.role, "").strip()), None)
        kind = None if first is None else json_kind(first[file.role])
        if first is None or kind is None:
            continue
        what = "is an entry object, as in JSON lines" if kind == "jsonl" else "opens a JSON document"
        suffix, packed = ".jsonl" if kind == "jsonl" else ".json", file.path.suffix.lower() == ".gz"
        plain = file.path.stem if packed else file.path.name
        name = file.path.name if plain.lower().endswith(suffix) else Path(plain).stem + suffix + ".gz" * packed
        renamed = "" if name == file.path.name else " (renamed)"
        doubts.append(Doubt(
            "json-in-parallel-text",
            f"line {first['id']} of {file_label(file.path)} {what}, not a sentence: as parallel text, each line "
            f"would be one {file.role} text, braces and all",
            "give the pipe with --corpus instead (it is read by its content: JSON)" if stream_name(file.path)
            else f"give it as a corpus with --corpus {name}{renamed}"))
    return doubts


def _column_doubts(corpus: Corpus) -> list[Doubt]:
    if corpus.format == "parallel" and (misread := _markup_doubts(corpus) or _json_doubts(corpus)):
        return misread
    if corpus.format == "parallel":
        tabbed = [e["source"] for e in corpus.entries[:200] if "\t" in e["source"]]
        if tabbed and len(tabbed) * 2 >= min(len(corpus.entries), 200):
            from mt_eval.corpus.files import file_label, stream_name

            named, label = stream_name(corpus.path) is None, file_label(corpus.path)
            return [Doubt("tabs-in-parallel-text",
                          f"the lines of {label} hold TAB-separated columns (e.g. {tabbed[0][:60]!r}): "
                          "as parallel text, each whole line would be one source",
                          f"give a TSV corpus with --corpus {corpus.path.name} (name it .tsv)" if named else
                          "give the pipe with --corpus instead of --source-file (it is read by its content: "
                          "TSV)")]
    if corpus.format != "tsv" or corpus.columns is None:
        return []
    head = corpus.entries[:200]
    width = len(corpus.columns)
    doubts = []
    if corpus.columns_from == "convention" and width >= 2:
        firsts = [e["source"] for e in head]
        seconds = [e["reference"] for e in head if "reference" in e]
        if all(_id_like(v) for v in firsts) and sum(_id_like(v) for v in seconds) * 2 < max(len(seconds), 1):
            roles = ["id", "source", "reference", *(f"column{i + 1}" for i in range(3, width))][:width]
            doubts.append(Doubt(
                "first-column-ids",
                f"column 1 looks like ids ({_examples(firsts)}), yet a TSV without a header is read as "
                "source<TAB>reference, so they would be translated as sentences",
                f"add the header line {'<TAB>'.join(roles)} or give --columns {','.join(roles)}"))
    if corpus.ids_from == "field":
        ids = [e["id"] for e in head]
        if sum(bool(_SENTENCE_LIKE.search(v)) for v in ids) * 2 > len(ids):
            column = next(c.index + 1 for c in corpus.columns if c.key == "id")
            source_first = "source,reference" if width == 2 else "source,reference,..."
            doubts.append(Doubt(
                "ids-look-like-sentences",
                f"the id column (column {column}, from {corpus.columns_from}) holds sentences "
                f"({_examples(ids)}), so the text to translate is probably elsewhere",
                f"if the file is source<TAB>reference, drop the id from the header or give --columns "
                f"{source_first}"))
    if corpus.columns_from == "convention" and width == 1:
        sources = [e["source"] for e in head]
        spaced = [v for v in sources if SPACED_COLUMNS.search(v)]
        if spaced and len(spaced) * 2 >= len(sources):
            doubts.append(Doubt(
                "spaces-not-tabs",
                f"the file has no TAB, and {plural(len(spaced), 'line')} of the first {len(sources)} separate "
                f"words with runs of spaces (e.g. {spaced[0][:60]!r}): columns separated by spaces would be read "
                "as one source text",
                "separate the columns with one TAB character, e.g. sed -E 's/ {2,}/\\t/' FILE"))
    return doubts


def _field_doubts(corpus: Corpus) -> list[Doubt]:
    """Fields (or columns) one slip away from a field mt-eval reads: ``refrence`` would be handed to the method,
    the gold with it, and the corpus read as translation only; ``familly`` would make a canary a scored entry."""
    found = [(name, meant, corpus.field_place(name)) for name in sorted(corpus.field_names)
             if (meant := misspelling_of(name)) is not None]
    if not found:
        return []
    tsv = corpus.columns is not None
    names = " and ".join(f'"{name}" ({place if tsv else "first at " + place})' for name, _, place in found)
    one = len(found) == 1
    kind = ("column" if tsv else "field") + ("" if one else "s")
    return [Doubt("misspelled-field",
                  f"{kind} {names} {'is not a name' if one else 'are not names'} mt-eval reads, so the method would "
                  f"be handed {'it' if one else 'them'} as {'an extra field' if one else 'extra fields'}",
                  "did you mean " + " and ".join(f'"{meant}"' for _, meant, _ in found) +
                  f"? rename {'it' if one else 'them'}")]


def _gold_name_doubts(corpus: Corpus) -> list[Doubt]:
    """Fields a slip away from the gold fields the corpus declares (`mt_eval.corpus.gold_names`)."""
    return [Doubt("misspelled-field", d.message, d.hint, d.refuse) for d in gold_name_doubts(corpus)]


def _content_doubts(corpus: Corpus) -> list[Doubt]:
    entries = scored_entries(corpus.entries)  # canaries and negative controls are written on purpose
    doubts = []
    if len(entries) >= 3:
        first = entries[0]["source"]
        if all(e["source"] == first for e in entries):
            column = " in column 1" if corpus.format == "tsv" and corpus.columns_from == "convention" else ""
            doubts.append(Doubt(
                "same-source-everywhere",
                f"every one of the {len(entries):,} entries has the source {first[:40]!r}{column}: that is not "
                "the text to translate",
                "name the columns with a header or --columns (Tatoeba's four columns: --columns "
                "src_lang,tgt_lang,source,reference)" if corpus.format == "tsv" else
                "check which field holds the source"))
        codes = _few_codes([e["source"] for e in sample(entries)])
        if codes:
            column = " (column 1)" if corpus.format == "tsv" and corpus.columns_from == "convention" else ""
            doubts.append(Doubt(
                "codes-not-sentences",
                f"the sources{column} are only {', '.join(repr(c) for c in codes)}: language codes, not the text to "
                "translate",
                "name the columns with a header or --columns (Tatoeba's four columns: --columns "
                "src_lang,tgt_lang,source,reference)" if corpus.format == "tsv" else
                "check which field holds the source"))
    if corpus.references:
        filled = same = 0
        for entry in entries:
            if entry["source"] or entry["reference"]:
                filled += 1
                same += entry["source"] == entry["reference"]
        if same == filled and same >= 2:
            doubts.append(Doubt(
                "reference-equals-source",
                f"every reference is identical to its source ({same:,} of {filled:,}): the reference column "
                "seems to repeat the source, and any score would be meaningless",
                "check which column or field holds the reference"))
        elif same >= 2 and same * 5 >= filled:
            doubts.append(Doubt(
                "reference-equals-source",
                f"{same:,} of {filled:,} references ({same / filled:.0%}) are identical to their source",
                "scores will count these as perfect copies", refuse=False))
        references = next((f.path for f in corpus.files if f.role == "reference"), corpus.path)  # (parallel text)
        doubts.extend(_decomposed_references(entries, references))
    return doubts


def _script_doubts(corpus: Corpus, source_lang: str, target_lang: str) -> list[Doubt]:
    chosen = sample(scored_entries(corpus.entries))
    found: dict[str, tuple[str, str, set[str]]] = {}
    sides = [("source", source_lang)] + ([("reference", target_lang)] if corpus.references else [])
    for role, language in sides:
        wanted = expected_scripts(language)
        if not wanted:
            continue
        letters, shares = script_shares("\n".join(e[role] for e in chosen))
        dominant = dominant_script(shares)
        if letters >= 20 and dominant and sum(shares.get(s, 0.0) for s in wanted) < 0.5 and shares[dominant] >= 0.5:
            found[role] = (dominant, language, wanted)
    if not found:
        return []
    swapped = ("source" in found and "reference" in found
               and found["source"][0] in expected_scripts(target_lang)
               and found["reference"][0] in expected_scripts(source_lang))
    described = "; ".join(f"the {role}s are in {script} script, but {language} is written in "
                          f"{' or '.join(sorted(wanted))}" for role, (script, language, wanted) in found.items())
    if swapped:
        described += ": the source and reference look swapped"
        hint = "swap the columns (e.g. --columns reference,source) or the files"
    else:
        hint = (f"check the pair '{source_lang}>{target_lang}' (give the right one with --pair) and which column "
                "holds which language")
    return [Doubt("script-mismatch", described, hint)]


def _few_codes(sources: list[str]) -> list[str]:
    """The distinct values of ``sources`` when they are a few language codes, each used again and again (``en``,
    ``es``, ``pt-BR``); else []. One value everywhere is `same-source-everywhere`'s."""
    distinct = sorted(set(sources))
    if not 2 <= len(distinct) <= max(2, len(sources) // 10) or not all(_CODE.fullmatch(v) for v in distinct):
        return []
    return distinct


def _id_like(value: str) -> bool:
    return bool(_ID_LIKE.fullmatch(value)) and bool(_HAS_DIGIT.search(value))


def _examples(values: list[str]) -> str:
    return ", ".join(repr(v[:30] + ("…" if len(v) > 30 else "")) for v in values[:3])


def _decomposed_references(entries: Sequence[dict[str, Any]], path: Path) -> list[Doubt]:
    """References not in NFC (é written e + U+0301, as some macOS tools save text): the metrics compare characters,
    so a translation in the usual composed form scores lower against them than the same text does. A warning."""
    import unicodedata
    from itertools import islice

    sample = [e["reference"] for e in islice(entries, SAMPLE) if isinstance(e.get("reference"), str)]
    decomposed = sum(1 for text in sample if not text.isascii() and not unicodedata.is_normalized("NFC", text))
    if not decomposed:
        return []
    from mt_eval.corpus.files import converted_name, fed_to

    verb = "is" if decomposed == 1 else "are"
    return [Doubt("decomposed-references",
                  f"{decomposed:,} of the {'first ' if len(sample) == SAMPLE else ''}{len(sample):,} references {verb} "
                  "not in Unicode NFC (accents written as separate combining marks): a translation in the usual "
                  "composed form scores lower against them than the same text should",
                  "convert the corpus to NFC, e.g. " + fed_to("python3 -c \"import sys, unicodedata; sys.stdout.write("
                                                              "unicodedata.normalize('NFC', sys.stdin.read()))\"", path)
                  + f" > {converted_name(path, 'nfc')}",
                  refuse=False)]
