"""pipeline.py and translate.js behave identically: the sample corpus, and sentences that catch where two
implementations drift apart (capitals, punctuation, accents, emoji, line breaks, empty text), go through both,
and every prediction must be the same. Needs ``node`` (>= 20) on PATH, besides the SDK and pytest."""

from __future__ import annotations

from node_side import assert_same_translations, sample_and

from mt_eval.records import RunConfig

PROBES = ["The house and the city, please!", "THE CAT drinks WATER", "The... house?", "", "Ünïcode cat 🙂 — a dog",
          "i read every day; the water", "don't stop", "tab\tthe\ncat", "  the  house  ",
          "\ufffd\u0007 \ufffd"]


def test_pipeline_py_and_translate_js_give_the_same_translations():
    assert_same_translations(sample_and(PROBES), RunConfig(source_lang="eng", target_lang="spa"),
                             ("id", "predicted", "error"))
