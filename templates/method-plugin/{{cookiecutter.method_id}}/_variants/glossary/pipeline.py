"""A glossary method: longest-match phrase lookup; words the glossary does not know are kept.

Where the glossary comes from is what method.json declares for the dependency with id "glossary":

* ``"access": "bundled"``: glossary.tsv in this directory;
* ``"access": "mirrored"``: the file at ``config.params["artifact_path"]`` (absolute, or relative to the
  current directory), else the sample copy glossary.tsv here; its sha256 must equal the dependency's
  ``"pin"`` (``"sha256:<hex>"``), so a run never uses an artifact other than the one declared.

translate.js beside this file behaves identically.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

GLOSSARY_ID = "glossary"
GLOSSARY_FILE = "glossary.tsv"
READ_ERRORS = {errno.ENOENT: "no such file", errno.EISDIR: "it is a directory", errno.EACCES: "permission denied"}
WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")  # letters and digits, with inner apostrophes


class GlossaryError(Exception):
    """The glossary cannot be used; every entry of the request fails with this message."""


def parse_glossary(text: str, label: str) -> dict[str, str]:
    """``source<TAB>target`` lines → {lowercased source words joined by one space: target}."""
    glossary: dict[str, str] = {}
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.removesuffix("\r")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        source, tab, target = line.partition("\t")
        key = " ".join(source.lower().split())
        if not tab or not key or not target.strip():
            shown = json.dumps(line, ensure_ascii=False)
            raise GlossaryError(f'{label}:{number}: expected "source<TAB>target", got {shown}')
        glossary[key] = target.strip()
    return glossary


def with_capital(target: str, source_word: str) -> str:
    """``target`` with a capital first letter when ``source_word`` starts with one."""
    first = source_word[:1]
    if first != first.lower() and target:
        return target[:1].upper() + target[1:]
    return target


class Glossary:
    """A parsed glossary and the longest-match lookup over it."""

    def __init__(self, entries: dict[str, str]) -> None:
        self.entries = entries
        self.longest = max((len(key.split(" ")) for key in entries), default=1)

    def translate(self, text: str) -> tuple[str, int]:
        """The text with every known phrase replaced (longest first), and how many were replaced."""
        words = [(m.start(), m.end()) for m in WORD.finditer(text)]
        out: list[str] = []
        cursor = index = used = 0
        while index < len(words):
            found = self._match(text, words, index)
            if found is None:
                index += 1
                continue
            span, target = found
            start, end = words[index][0], words[index + span - 1][1]
            out.append(text[cursor:start])
            out.append(with_capital(target, text[start:words[index][1]]))
            cursor, index, used = end, index + span, used + 1
        out.append(text[cursor:])
        return "".join(out), used

    def _match(self, text: str, words: list[tuple[int, int]], index: int) -> tuple[int, str] | None:
        for span in range(min(self.longest, len(words) - index), 0, -1):
            chosen = words[index:index + span]
            gaps = (text[a[1]:b[0]] for a, b in pairwise(chosen))
            if any(gap.strip() for gap in gaps):  # a phrase never spans punctuation
                continue
            key = " ".join(text[start:end].lower() for start, end in chosen)
            if key in self.entries:
                return span, self.entries[key]
        return None


def declined(entry: dict[str, Any], reason: str) -> dict[str, Any]:
    """An abstention: the entry is not this method's to translate (what a run's negative controls expect)."""
    return {"id": entry["id"], "abstained": True, "abstain_reason": reason}


class GlossaryMethod:
    """The method: loads the declared glossary once per path, then translates entry by entry."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(os.path.abspath(directory))
        manifest = json.loads((self.directory / "method.json").read_text(encoding="utf-8-sig"))  # (an editor's BOM too)
        found = [d for d in manifest.get("dependencies") or [] if d.get("id") == GLOSSARY_ID]
        if not found:
            raise GlossaryError(f'method.json lists no dependency with id "{GLOSSARY_ID}"')
        self.dependency: dict[str, Any] = found[0]
        self.pairs = [p for p in manifest.get("supported_pairs") or [] if isinstance(p, str)]
        self.loaded: dict[str, Glossary] = {}

    def glossary_path(self, params: dict[str, Any]) -> str:
        given = params.get("artifact_path")
        if self.dependency.get("access") != "mirrored" or given is None or given == "":
            return str(self.directory / GLOSSARY_FILE)
        if not isinstance(given, str):
            shown = json.dumps(given, ensure_ascii=False)
            raise GlossaryError(f'config.params["artifact_path"] must be a file path, got {shown}')
        return os.path.abspath(given)

    def glossary(self, params: dict[str, Any]) -> Glossary:
        path = self.glossary_path(params)
        if path in self.loaded:
            return self.loaded[path]
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            reason = READ_ERRORS.get(exc.errno or 0, errno.errorcode.get(exc.errno or 0, str(exc)))
            raise GlossaryError(f"cannot read the glossary {path}: {reason}") from exc
        pin = self.dependency.get("pin")
        if pin is not None:
            digest = "sha256:" + hashlib.sha256(data).hexdigest()
            if digest != pin:
                raise GlossaryError(f'{path} has {digest}, but method.json pins "{pin}": use the pinned copy, '
                                    "or review the new version and update the pin")
        try:
            text = data.decode("utf-8-sig")  # a leading byte-order mark is dropped, as in translate.js
        except UnicodeDecodeError as exc:
            raise GlossaryError(f"{path} is not UTF-8 text") from exc
        glossary = Glossary(parse_glossary(text, os.path.basename(path)))
        self.loaded[path] = glossary
        return glossary

    async def translate(self, entries: list[dict[str, Any]], config: Any) -> list[dict[str, Any]]:
        pair = f"{config.source_lang}>{config.target_lang}"
        if self.pairs and pair not in self.pairs:  # never guess another language: decline (a negative control)
            reason = f"the glossary translates {', '.join(self.pairs)}, not {pair}"
            return [declined(entry, reason) for entry in entries]
        try:
            glossary = self.glossary(config.params)
        except GlossaryError as exc:
            return [{"id": entry["id"], "predicted": None, "error": str(exc)} for entry in entries]
        results = []
        for entry in entries:
            if WORD.search(entry["source"]) is None:  # empty, or no letter or digit: nothing to translate
                results.append(declined(entry, "no word to translate"))
                continue
            started = time.perf_counter()
            predicted, used = glossary.translate(entry["source"])
            results.append({"id": entry["id"], "predicted": predicted, "latency_s": time.perf_counter() - started,
                            "metadata": {"glossary_matches": used}})
        return results
