"""pipeline.py and translate.js behave identically: the same requests reach the endpoint and the same
translations, usage and errors come back, for the sample corpus, awkward sentences and configurations that
fail. Needs ``node`` (>= 20) on PATH, besides the SDK and pytest; the endpoint is the stand-in of conftest.py."""

from __future__ import annotations

from node_side import assert_same_translations, sample_and

from mt_eval.records import RunConfig

PROBES = ["", "Ünïcode 🙂 — text", "tab\tand\nnewline", "!fail"]


def test_pipeline_py_and_translate_js_give_the_same_results(endpoint):
    base_url, requests = endpoint
    for config in (RunConfig(source_lang="eng", target_lang="spa", base_url=base_url, model="stand-in", seed=7),
                   RunConfig(source_lang="eng", target_lang="spa", model="stand-in"),  # no base_url: the fix
                   RunConfig(source_lang="eng", target_lang="spa", base_url=base_url)):  # no model
        assert_same_translations(sample_and(PROBES), config, ("id", "predicted", "error", "usage"), requests)
