"""A script calling ``load_method(path).method`` sees no difference between a Python method run in process and one
run as a guest: what it hands ``translate`` or ``decide`` is refused in the same words, the method never sees an
entry's gold, and ``aclose()`` is there to await."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mt_eval import RunConfig, load_method

MANIFEST = {"name": "M", "entry_point": "pipeline:Method", "supported_pairs": ["eng>spa"], "dependency_class": "S",
            "dependencies": []}

SEES_WHAT_IT_IS_HANDED = """
class Method:
    seen = []

    async def translate(self, entries, config):
        Method.seen.append(entries)
        return [{"id": e["id"], "predicted": e.get("reference") or e["source"].upper()} for e in entries]
"""

CONFIG = RunConfig(source_lang="eng", target_lang="spa")


def _translate(method: Any, entries: Any) -> Any:
    return asyncio.run(method.translate(entries, CONFIG))


@pytest.mark.parametrize(("entries", "message"), [
    ({"id": "1", "source": "hi"}, "entries must be a list of entries, got an object"),
    ([{"source": "hi"}], "entries[0].id must be a non-empty string, got null"),
    ([{"id": 1, "source": "hi"}], "entries[0].id must be a non-empty string, got the number 1"),
    ([{"id": "1", "source": "hi"}, {"id": "1", "source": "yo"}], 'entries[1].id "1" appears twice in the request'),
    ([["1", "hi"]], "entries[0] must be an object, got an array"),
])
def test_entries_no_guest_takes_are_a_type_error_naming_them_before_the_method_sees_them(
        make_plugin, entries: Any, message: str):
    """The method got them: a ``KeyError: 'id'`` from its own code, or two results with the id "1" that no caller
    could tell apart; a Node or command guest's host refused the same entries with these words."""
    loaded = load_method(make_plugin(MANIFEST, {"pipeline.py": SEES_WHAT_IT_IS_HANDED}))
    with pytest.raises(TypeError) as raised:
        _translate(loaded.method, entries)
    assert str(raised.value) == message
    assert loaded.module is not None
    assert loaded.module.Method.seen == []


def test_a_method_run_in_process_is_not_handed_the_gold(make_plugin):
    """Corpus entries passed as they are read (with their ``reference``) reached the method, which could copy it."""
    loaded = load_method(make_plugin(MANIFEST, {"pipeline.py": SEES_WHAT_IT_IS_HANDED}))
    results = _translate(loaded.method, [{"id": "1", "source": "hi", "reference": "hola", "note": "kept"}])
    assert results == [{"id": "1", "predicted": "HI"}]
    assert loaded.module is not None
    assert loaded.module.Method.seen == [[{"id": "1", "source": "hi", "note": "kept"}]]


def test_a_method_without_aclose_can_be_closed_like_any_other(make_plugin):
    """``await loaded.method.aclose()`` was an AttributeError for a Python method that has nothing to release."""
    loaded = load_method(make_plugin(MANIFEST, {"pipeline.py": SEES_WHAT_IT_IS_HANDED}))
    asyncio.run(loaded.method.aclose())
    asyncio.run(loaded.method.aclose())
    assert _translate(loaded.method, [{"id": "1", "source": "hi"}]) == [{"id": "1", "predicted": "HI"}]


DECIDES = """
class Method:
    seen = []

    async def decide(self, rows, config):
        Method.seen.append(rows)
        return [{"id": row["id"]} for row in rows]
"""


def test_rows_no_guest_takes_are_a_type_error_naming_them_before_the_method_sees_them(make_plugin):
    """A decision method run in process was handed a dict for its rows (and failed on it in its own words)."""
    manifest = {**MANIFEST, "implements": ["decide"], "decide": {"question_types": ["noul"]}}
    loaded = load_method(make_plugin(manifest, {"pipeline.py": DECIDES}), needs="decide")
    with pytest.raises(TypeError) as raised:
        asyncio.run(loaded.method.decide({"id": "r1"}, CONFIG))  # type: ignore[attr-defined]
    assert str(raised.value) == "rows must be a list of rows, got an object"
    assert loaded.module is not None
    assert loaded.module.Method.seen == []


READS_ITS_CONFIG = """
class Method:
    async def translate(self, entries, config):
        return [{"id": e["id"], "predicted": f"{config.pair} {config.batch_size} {e['source']}"} for e in entries]
"""


BATCH_OF_0 = "invalid config: $.batch_size: must be >= 1, got 0"


@pytest.mark.parametrize(("config", "message"), [
    ({"target_lang": "spa"}, 'invalid config: $.source_lang: required field "source_lang" is missing'),
    ({"source_lang": "eng", "target_lang": "spa", "batch_size": 0}, BATCH_OF_0),
    (None, "invalid config: expected an object, got null"),
    ("eng>spa", 'invalid config: expected an object, got the string "eng>spa"'),
])
def test_a_config_no_guest_takes_is_a_type_error_naming_the_field(make_plugin, config: Any, message: str):
    """The method got it, and failed with ``AttributeError: 'dict' object has no attribute 'pair'`` (or went on with a
    batch size of 0); a guest refused the same config with these words."""
    loaded = load_method(make_plugin(MANIFEST, {"pipeline.py": READS_ITS_CONFIG}))
    with pytest.raises(TypeError) as raised:
        asyncio.run(loaded.method.translate([{"id": "1", "source": "hi"}], config))
    assert str(raised.value) == message


def test_a_config_given_as_a_dict_reaches_the_method_as_a_run_config(make_plugin):
    loaded = load_method(make_plugin(MANIFEST, {"pipeline.py": READS_ITS_CONFIG}))
    given = {"source_lang": "eng", "target_lang": "spa", "batch_size": 4.0}  # (4.0: as a Node guest reads it, 4)
    assert _translate_with(loaded.method, given) == [{"id": "1", "predicted": "eng>spa 4 hi"}]


def _translate_with(method: Any, config: Any) -> Any:
    return asyncio.run(method.translate([{"id": "1", "source": "hi"}], config))
