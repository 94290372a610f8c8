"""``python -m mt_eval.cli``: the ``mt-eval`` command (guest processes are started this way)."""

from mt_eval.cli import console_main

console_main()
