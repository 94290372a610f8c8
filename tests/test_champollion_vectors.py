"""The Python side passes the shared champollion vectors (bridge/vectors/champollion/), as the Node side does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mt_eval.champollion import jsonfmt, languages, locales, lockfile, placeholders
from mt_eval.champollion.config import decode_config
from mt_eval.champollion.plan import read_tree
from mt_eval.code_hash import code_sha256
from mt_eval.json_input import parse_json

VECTORS = Path(__file__).parent.parent / "bridge" / "vectors" / "champollion"


def cases(name: str, key: str) -> list[dict[str, Any]]:
    return json.loads((VECTORS / name).read_text(encoding="utf-8"))[key]  # type: ignore[no-any-return]


@pytest.mark.parametrize("case", cases("placeholders.json", "protect"), ids=lambda c: c["text"][:30])
def test_protect(case):
    protected = placeholders.protect(case["text"], icu=case.get("icuFile", False))
    assert protected.text == case["protected"]
    assert list(protected.placeholders) == case["placeholders"]
    assert placeholders.has_words(protected) is case["hasWords"]
    assert protected.icu == case.get("icu")
    assert protected.problem == case.get("problem")  # (a text that cannot be sent: its key fails)
    assert protected.apostrophes_doubled is case.get("apostrophesDoubled", False)
    assert placeholders.restore(protected.text, protected.placeholders, protected.icu,
                                protected.apostrophes_doubled) == case["text"]


@pytest.mark.parametrize("case", cases("placeholders.json", "restore"), ids=lambda c: c["translated"])
def test_restore(case):
    def run() -> str:
        return placeholders.restore(case["translated"], tuple(case["placeholders"]), case.get("icu"),
                                    case.get("apostrophesDoubled", False))
    if "error" in case:
        with pytest.raises(placeholders.PlaceholderError) as caught:
            run()
        assert str(caught.value) == case["error"]
    else:
        assert run() == case["restored"]


@pytest.mark.parametrize("case", cases("placeholders.json", "edges"), ids=lambda c: repr(c["source"]))
def test_keep_edges(case):
    assert placeholders.keep_edges(case["source"], case["translated"]) == case["kept"]


@pytest.mark.parametrize("case", cases("languages.json", "candidates"), ids=lambda c: c["locale"])
def test_language_candidates(case):
    assert languages.normalize_locale(case["locale"]) == case["normalized"]
    assert languages.language_candidates(case["locale"]) == case["candidates"]


@pytest.mark.parametrize("case", cases("languages.json", "pairs"), ids=lambda c: f"{c['source']}:{c['target']}")
def test_pair_languages(case):
    def run() -> tuple[str, str]:
        return languages.pair_languages(case["source"], case["target"], case["supportedPairs"],
                                        source_language=case.get("sourceLanguage"),
                                        target_language=case.get("targetLanguage"))
    if case.get("error"):
        with pytest.raises(languages.LanguageError):
            run()
    else:
        assert list(run()) == case["languages"]


@pytest.mark.parametrize("case", cases("languages.json", "plurals"), ids=lambda c: f"{c['locale']}-{c['kind']}")
def test_plural_categories(case):
    assert languages.plural_categories(case["locale"], case["kind"]) == case["categories"]


@pytest.mark.parametrize("case", cases("json.json", "cases"), ids=lambda c: c["input"][:30])
def test_json_format(case):
    assert jsonfmt.format_json(jsonfmt.parse_json_text(case["input"])) == case["output"]


@pytest.mark.parametrize("case", cases("json.json", "exactNumbers"), ids=lambda c: c["input"][:30])
def test_json_exact_numbers(case):
    value, problems = parse_json(case["input"].encode(), file="locale.json", exact_numbers=True)
    assert problems == []
    assert jsonfmt.format_json(value) == case["output"]


@pytest.mark.parametrize("case", cases("locales.json", "cases"), ids=lambda c: f"{c['locale']}:{c['source'][:30]}")
def test_layout_and_fill(case):
    shape = locales.layout(read_tree(Path("en.json"), case["source"].encode()), case["locale"])
    found = [[s.key, s.source] + ([s.collision] if s.collision else []) for s in locales.slots(shape)]
    assert found == case["slots"]
    assert jsonfmt.format_json(locales.fill(shape, case["values"])) == case["output"]


@pytest.mark.parametrize("case", cases("hashing.json", "texts"), ids=lambda c: repr(c["text"])[:20])
def test_hash_text(case):
    assert lockfile.hash_text(case["text"]) == case["hash"]


@pytest.mark.parametrize("case", cases("hashing.json", "lockSources"), ids=lambda c: repr(c["text"])[:30])
def test_the_source_a_lock_records_covers_how_the_text_is_read(case):
    read_as_icu = case["fileHoldsIcu"] and placeholders.read_as_icu_for_its_file(case["text"])
    assert read_as_icu is case["readAsIcu"]
    assert lockfile.hash_text(case["text"], read_as_icu=read_as_icu) == case["source"]


@pytest.mark.parametrize("case", cases("hashing.json", "fingerprints"), ids=lambda c: c["input"])
def test_method_fingerprint(case):
    args = (case["methodId"], case["codeSha256"], case["sourceLanguage"], case["targetLanguage"], case["model"],
            case["temperature"])
    assert lockfile.fingerprint_input(*args) == case["input"]
    assert lockfile.method_fingerprint(*args) == case["fingerprint"]


@pytest.mark.parametrize("case", cases("hashing.json", "codeHashes"), ids=lambda c: c["name"])
def test_code_hash(tmp_path: Path, case):
    root = tmp_path / "plugin"
    root.mkdir()
    for relative, text in case["files"].items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    for relative, target in case.get("links", {}).items():
        (root / relative).symlink_to(target)
    assert code_sha256(root) == case["sha256"]


@pytest.mark.parametrize("case", cases("config.json", "cases"), ids=lambda c: c["text"][:40])
def test_config_problems(case):
    value, problems = decode_config(case["text"].encode(), file="champollion.config.json")
    assert [[p.path, p.severity, p.code, p.message, p.hint] for p in problems] == case["problems"]
    valid = value is not None and not any(p.severity == "error" for p in problems)
    assert valid is case["valid"]
    assert (value.source_locale() if valid else None) == case["inputLocale"]


def test_the_language_table_maps_each_code_one_way_only():
    table = json.loads(languages.table_path().read_text(encoding="utf-8"))
    threes = list(table["iso639"].values())
    assert len(threes) == len(set(threes))
    assert all(len(k) == 2 and len(v) == 3 for k, v in table["iso639"].items())
    for categories in table["plurals"].values():
        for kind in categories:
            assert kind == [c for c in languages.PLURAL_ORDER if c in kind] and kind[-1] == "other"
