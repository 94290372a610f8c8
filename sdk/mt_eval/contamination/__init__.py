"""The contamination check: a method's bundle must not contain the evaluation data.

`engine.check_bundle` compares every piece of text in a plugin directory with a corpus's sources and
references, `engine.check_corpora` compares two corpora, and both prove a "clean" verdict with a planted
control (`control`). `policy.require_clean` is what a headline gate or a publish step calls on a run
card's ``contamination`` record (`record`). This package imports nothing itself, so the run card can
import `record` without loading numpy.
"""
