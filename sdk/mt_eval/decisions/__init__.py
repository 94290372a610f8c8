"""Typed decisions: methods that answer ``noul``, ``choice`` and ``score`` questions with a probability for
every option, their corpora and scoring, blinded grading of translation runs, and served decision engines.

A decision method implements ``async decide(rows, config)`` (see `mt_eval.decisions.records`); it is a
plugin directory like any translation method, declared by ``"implements": ["decide"]`` in method.json.
"""
