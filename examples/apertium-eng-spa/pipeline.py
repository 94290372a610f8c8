"""Apertium English↔Spanish: Debian's ``apertium`` with the ``apertium-eng-spa`` language data.

Each direction runs as one long-lived null-flush pipeline (`apertium_mode`), driven record by record by
the SDK's `ProcessTranslator`; texts are deformatted and reformatted as ``apertium`` does it
(`txt_format`). A prediction is exactly what ``apertium -u eng-spa`` (or ``spa-eng``) prints for that text
alone, newlines and all.

Parameters (``config.params``), all optional:

- ``apertium_datadir``: Apertium's data directory (default ``$APERTIUM_DATADIR``, else /usr/share/apertium);
- ``mark_unknown``: true marks unknown words with ``*``, as ``apertium`` without ``-u`` (default false);
- ``check_pins``: false skips comparing the installed Debian packages with the pins in method.json;
- ``processes``: copies of the pipeline per direction (default 1).
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from apertium_mode import ModeError, mode_stages
from txt_format import deformat, reformat

from mt_eval.adapters import NULL_FLUSH, ProcessOptions, ProcessTranslator

log = logging.getLogger("apertium-eng-spa")
DEFAULT_DATADIR = "/usr/share/apertium"
MODES = {("eng", "spa"): "eng-spa", ("spa", "eng"): "spa-eng"}


def upstream_version(debian_version: str) -> str:
    """ "1:3.8.3-1+b2" → "3.8.3": without the epoch and the Debian revision."""
    version = debian_version.split(":", 1)[-1]
    return version.rsplit("-", 1)[0] if "-" in version else version


def pin_problems(pins: dict[str, str]) -> list[str] | None:
    """Installed Debian packages that differ from their pins (None when dpkg-query is not available)."""
    dpkg_query = shutil.which("dpkg-query")
    if dpkg_query is None or not pins:
        return None
    done = subprocess.run([dpkg_query, "-W", "-f", "${Package} ${Version}\n", *pins], capture_output=True,
                          text=True, timeout=30, check=False)
    installed = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
    problems = []
    for package, pin in pins.items():
        version = installed.get(package, "")
        if not version:
            problems.append(f"{package} is not installed (method.json pins {pin}): apt-get install {package}")
        elif pin not in (version, upstream_version(version)):
            problems.append(f"{package} {version} is installed but method.json pins {pin}: install the pinned "
                            "version, or review the new one and update the pin")
    return problems


def _nothing_to_translate(source: str) -> bool:
    """Empty, or symbols and control characters without a letter or digit. Whitespace alone is translated
    (Apertium passes it through), as is any text with a word in it."""
    return source == "" or (not source.isspace() and not any(c.isalnum() for c in source))


class ApertiumMethod:
    """eng>spa and spa>eng with Apertium (see the module docstring)."""

    def __init__(self, manifest: Any, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.pins = {d.id: d.pin for d in manifest.dependencies or () if d.access == "mirrored" and d.pin}
        self.translators: dict[tuple[str, str, bool, int], ProcessTranslator] = {}
        self._pin_problem: str | None = None
        self._pins_checked = False

    def _check_pins(self) -> str | None:
        if not self._pins_checked:
            self._pins_checked = True
            problems = pin_problems(self.pins)
            if problems is None:
                log.warning("dpkg-query is not available: cannot check the Apertium packages against their pins")
            elif problems:
                self._pin_problem = "; ".join(problems)
        return self._pin_problem

    def translator(self, mode: str, params: dict[str, Any], timeout_s: float) -> ProcessTranslator:
        datadir = str(params.get("apertium_datadir") or os.environ.get("APERTIUM_DATADIR") or DEFAULT_DATADIR)
        key = (mode, datadir, bool(params.get("mark_unknown", False)), int(params.get("processes", 1)))
        if key not in self.translators:
            stages = mode_stages(mode, datadir, mark_unknown=key[2])
            self.translators[key] = ProcessTranslator(
                stages=stages, framing=NULL_FLUSH, processes=key[3], env={**os.environ, "LC_ALL": "C.UTF-8"},
                options=ProcessOptions(timeout_s=timeout_s))
        return self.translators[key]

    async def translate(self, entries: list[dict[str, Any]], config: Any) -> list[dict[str, Any]]:
        started = time.perf_counter()
        params = dict(config.params or {})
        mode = MODES.get((config.source_lang, config.target_lang))
        if mode is None:  # a pair Apertium has no mode for here is declined, not attempted
            reason = (f"unsupported pair {config.source_lang}>{config.target_lang}: this method translates eng>spa "
                      "and spa>eng")
            return [{"id": e["id"], "abstained": True, "abstain_reason": reason} for e in entries]
        wordless = [e for e in entries if _nothing_to_translate(str(e["source"]))]
        if wordless:  # nothing for the analyser to analyse: declined, the others translated
            declined = {e["id"]: {"id": e["id"], "abstained": True, "abstain_reason": "the source is empty, or has "
                                  "no letter or digit: nothing to translate"} for e in wordless}
            rest = [e for e in entries if e["id"] not in declined]
            by_id = {r["id"]: r for r in (await self.translate(rest, config) if rest else [])}
            return [declined.get(e["id"]) or by_id[e["id"]] for e in entries]
        try:
            if params.get("check_pins", True) and (problem := self._check_pins()):
                raise ModeError(problem)
            translator = self.translator(mode, params, config.timeout_s)
        except (ModeError, ValueError, TypeError) as exc:
            elapsed = (time.perf_counter() - started) / max(1, len(entries))
            return [{"id": e["id"], "predicted": None, "error": str(exc), "latency_s": elapsed} for e in entries]
        outcomes = await translator.translate_texts([deformat(str(entry["source"])) for entry in entries])
        results = []
        for entry, outcome in zip(entries, outcomes, strict=True):
            if outcome.text is None:
                results.append({"id": entry["id"], "predicted": None, "error": outcome.error,
                                "latency_s": outcome.latency_s})
            else:
                results.append({"id": entry["id"], "predicted": reformat(outcome.text),
                                "latency_s": outcome.latency_s})
        return results

    async def aclose(self) -> None:
        translators, self.translators = list(self.translators.values()), {}
        for translator in translators:
            await translator.aclose()
