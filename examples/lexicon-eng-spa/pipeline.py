"""A glossary method: longest-match phrase lookup in a bundled English→Spanish glossary.

It is a baseline, not a translator: words that are not in the glossary are kept as they are.
Capitalisation of the first letter and all punctuation survive the lookup. It abstains (``abstained: true``
with the reason) on a pair other than English→Spanish and on a source without a word.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

TOKEN = re.compile(r"\w+(?:'\w+)?|\W+", re.UNICODE)


def read_glossary(path: Path) -> dict[tuple[str, ...], str]:
    glossary: dict[tuple[str, ...], str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        source, sep, target = line.partition("\t")
        if not sep or not source.strip() or not target.strip():
            raise ValueError(f"{path}:{number}: expected 'source<TAB>target', got {line!r}")
        glossary[tuple(source.lower().split())] = target.strip()
    return glossary


class LexiconMethod:
    def __init__(self, directory: Path) -> None:
        self.glossary = read_glossary(Path(directory) / "glossary.tsv")
        self.longest = max((len(k) for k in self.glossary), default=1)

    def translate_text(self, text: str) -> str:
        tokens = TOKEN.findall(text)
        words = [i for i, t in enumerate(tokens) if t[0].isalnum() or t[0] == "_"]
        out = list(tokens)
        i = 0
        while i < len(words):
            for span in range(min(self.longest, len(words) - i), 0, -1):
                chosen = words[i:i + span]
                if any(tokens[a + 1].strip() for a in chosen[:-1]):  # a phrase never spans punctuation
                    continue
                key = tuple(tokens[w].lower() for w in chosen)
                if key in self.glossary:
                    target = self.glossary[key]
                    first = tokens[chosen[0]]
                    if first[:1].isupper():
                        target = target[:1].upper() + target[1:]
                    out[chosen[0]] = target
                    for w in chosen[1:]:  # drop the rest of the phrase and the spaces inside it
                        out[w] = ""
                        out[w - 1] = ""
                    i += span
                    break
            else:
                i += 1
        return "".join(out)

    async def translate(self, entries: list[dict[str, Any]], config: Any) -> list[dict[str, Any]]:
        pair = f"{_setting(config, 'source_lang') or 'eng'}>{_setting(config, 'target_lang') or 'spa'}"
        results = []
        for entry in entries:
            started = time.perf_counter()
            if pair != "eng>spa":  # the glossary is English→Spanish: any other pair is declined, not guessed
                results.append({"id": entry["id"], "abstained": True,
                                "abstain_reason": f"unsupported pair {pair}: the glossary is eng>spa"})
                continue
            if not any(token[0].isalnum() for token in TOKEN.findall(entry["source"])):
                results.append({"id": entry["id"], "abstained": True,
                                "abstain_reason": "no word in the source (empty, or only symbols and control "
                                                  "characters): nothing to look up"})
                continue
            predicted = self.translate_text(entry["source"])
            results.append({"id": entry["id"], "predicted": predicted,
                            "latency_s": time.perf_counter() - started})
        return results


def _setting(config: Any, name: str) -> Any:
    return config.get(name) if isinstance(config, dict) else getattr(config, name, None)
