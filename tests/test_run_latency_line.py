"""The run summary's latency line when the first latency call did not count."""

from __future__ import annotations

import pytest

from mt_eval.harness.latency import Measured, latency_facts, latency_line


@pytest.mark.parametrize("why", ["the result is an error", "not one result", "the method abstained",
                                 "timed out after 3 s"])
def test_a_first_call_that_did_not_count_is_said_in_plain_words(why: str):
    """Before: "latency: not measured (the first call the result is an error)"."""
    measured = Measured(sample_ids=["e1"], first_call_s=0.1, first_call_error=why)
    assert latency_line(latency_facts(measured, 0.0, [])) == f"latency: not measured (the first call: {why})"
