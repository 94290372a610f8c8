"""pipeline.py and translate.js behave identically: the same requests reach the API and the same
translations, usage and errors come back, for the sample corpus, awkward sentences and configurations that
fail. Needs ``node`` (>= 20) on PATH, besides the SDK and pytest; the API is the stand-in of conftest.py."""

from __future__ import annotations

from node_side import assert_same_translations, sample_and

from mt_eval.records import RunConfig

PROBES = ["", "Ünïcode 🙂 — text", "tab\tand\nnewline", "!fail"]


def test_pipeline_py_and_translate_js_give_the_same_results(api):
    api_url, requests = api
    for config in (RunConfig(source_lang="eng", target_lang="spa", params={"api_url": api_url}),
                   RunConfig(source_lang="eng", target_lang="spa", params={"api_url": api_url,
                                                                            "language_codes": {"eng": "en"}}),
                   RunConfig(source_lang="eng", target_lang="spa")):  # no api_url: the fix
        assert_same_translations(sample_and(PROBES), config, ("id", "predicted", "error", "usage"), requests)
