"""The lock file, ``<localesDir>/.champollion-lock.json``: what produced each target string.

For every target file (named relative to the locales directory) and key, the lock records the hash of
the source text the value was translated from and the fingerprint of the method (its id, its code and its
settings that shape a translation: not ``batchSize`` or ``timeoutS``) that translated it, as
``"SOURCE METHOD"`` (``-`` for the method of a value that was already there when the key was first seen:
it is kept, and translated again only when its source changes). A key is sent again when its source hash
or the method fingerprint differs, or when its value is missing from the target file. ``values`` records the hash
of each value the method wrote, so that one a person edited since is told apart: it is kept as a value that was
already there (``-``), and not replaced when the method changes. (It is a section of its own, which a reader that
does not know it leaves aside, rather than a third part of the entry, which would make such a reader send every
key again.)::

    {"version": 1, "files": {"es/common.json": {"greeting": "185f8db32271fe25 4177342101375941"}},
     "values": {"es/common.json": {"greeting": "8c2ab2e4ac1e4f3a"}}}

Hashes are the first 16 hex digits of SHA-256 over UTF-8; `bridge/vectors/champollion/hashing.json` pins
them, and the fingerprint's input, for both sides. SOURCE covers how the text is read, too: a text read as ICU
only because its file holds ICU messages (``Open {name}`` beside a ``plural``:
`placeholders.read_as_icu_for_its_file`) is sent and written otherwise than as plain text, so its SOURCE is the
hash of the byte 0xFF followed by the text in UTF-8 (``read_as_icu``), a byte no UTF-8 text holds: it never
equals a plain text's hash. Such a key is sent again when its file gains its first ICU message, or loses its last
(``now read as ICU``, ``no longer read as ICU``; a value adopted is kept). Every other text's SOURCE is the hash
of the text.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mt_eval.champollion.files import FileProblem, read_json
from mt_eval.champollion.jsonfmt import format_json, js_number, js_string, utf16_key
from mt_eval.js_text import same_json

LOCK_FILE = ".champollion-lock.json"
LOCK_VERSION = 1
_SURROGATE = re.compile("[\ud800-\udfff]")
READ_AS_ICU = b"\xff"  # before a text read as ICU only because of its file: never in UTF-8, so no text's hash input


def hash_text(text: str, *, read_as_icu: bool = False) -> str:
    """First 16 hex digits of the SHA-256 of ``text`` in UTF-8 (a lone surrogate counts as U+FFFD); with
    ``read_as_icu``, of `READ_AS_ICU` followed by it."""
    data = _SURROGATE.sub("\ufffd", text).encode("utf-8")
    return hashlib.sha256(READ_AS_ICU + data if read_as_icu else data).hexdigest()[:16]


def fingerprint_input(method_id: str, code_sha256: str, source_lang: str, target_lang: str, model: str | None,
                      temperature: float | None) -> str:
    """What identifies the method — its id and its code (`mt_eval.code_hash`) — and the settings that shape its
    output (not the batch size): a compact JSON array ``[method_id, code_sha256, "src>tgt", model, temperature
    as text]``. Editing the plugin's code changes it, so what the method translated is sent again."""
    parts = [method_id, code_sha256, f"{source_lang}>{target_lang}", model,
             None if temperature is None else js_number(temperature)]
    return "[" + ",".join("null" if p is None else js_string(p) for p in parts) + "]"


def method_fingerprint(method_id: str, code_sha256: str, source_lang: str, target_lang: str, model: str | None,
                       temperature: float | None) -> str:
    return hash_text(fingerprint_input(method_id, code_sha256, source_lang, target_lang, model, temperature))


@dataclass(frozen=True)
class LockEntry:
    source: str
    method: str | None
    value: str | None = None  # the hash of the value the method wrote (None: not recorded, or method is None)

    def edited(self, value: str) -> bool:
        """Whether ``value`` is not the one the method wrote: a person edited it since."""
        return self.method is not None and self.value is not None and self.value != hash_text(value)

    def with_value(self, value: str) -> LockEntry:
        """This entry recording the hash of ``value``, the value written, when the method wrote it (`edited`)."""
        return self if self.method is None else LockEntry(self.source, self.method, hash_text(value))


@dataclass
class Lock:
    """Target file → key → entry, in the lock file's order."""

    files: dict[str, dict[str, LockEntry]] = field(default_factory=dict)

    def to_json(self) -> str:
        ordered = sorted(self.files.items(), key=lambda item: utf16_key(item[0]))
        files = {name: {key: f"{e.source} {e.method or '-'}" for key, e in entries.items()}
                 for name, entries in ordered}
        values = {name: hashes for name, entries in ordered
                  if (hashes := {key: e.value for key, e in entries.items() if e.method and e.value})}
        return format_json({"version": LOCK_VERSION, "files": files, **({"values": values} if values else {})})


class LockError(ValueError):
    """The lock file cannot be read; the message names it and says how to recover."""


def read_lock(path: Path) -> Lock:
    """The lock file, or an empty lock when there is none."""
    if not path.is_file():
        return Lock()
    try:
        data = read_json(path)
    except FileProblem as exc:
        fix = f"{exc.fix}, or delete" if exc.fix else "delete"
        raise LockError(f"{path}: cannot read the lock file: {exc.what}; {fix} it to re-check every key") from exc
    if (not isinstance(data, dict) or not same_json(data.get("version"), LOCK_VERSION)  # ("version": true is not 1)
            or not isinstance(data.get("files"), dict)):
        raise LockError(f"{path}: not a version {LOCK_VERSION} lock file; delete it to re-check every key")
    lock = Lock()
    for name, entries in data["files"].items():
        if not isinstance(entries, dict):
            raise LockError(f"{path}: files[{js_string(name)}] is not an object; delete the lock file to re-check "
                            "every key")
        hashes = data.get("values", {}).get(name) if isinstance(data.get("values"), dict) else None
        lock.files[name] = {key: entry for key, raw in entries.items()
                            if (entry := _entry(raw, hashes.get(key) if isinstance(hashes, dict) else None))}
    return lock


def _entry(raw: Any, value: Any) -> LockEntry | None:
    parts = raw.split(" ") if isinstance(raw, str) else []
    if len(parts) != 2 or not parts[0] or not parts[1]:
        return None  # an entry it cannot read only means the key is checked again
    method = None if parts[1] == "-" else parts[1]
    # (a value hash it cannot read only means an edit of that value is not told apart)
    return LockEntry(parts[0], method, value if method and isinstance(value, str) and value else None)
