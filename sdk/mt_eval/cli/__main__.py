"""``python -m mt_eval.cli``: the ``mt-eval`` command (guest processes are started this way)."""

import sys

from mt_eval.cli import main

sys.exit(main())
