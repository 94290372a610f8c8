"""``mt-eval bridge check -- COMMAND…``: run the conformance transcripts against a guest program."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

from mt_eval.bridge.conformance import load_vectors, run_vector, vectors_directory


def run_check(command: Sequence[str], *, vectors: str | None, cwd: str | None) -> int:
    directory = Path(vectors) if vectors else vectors_directory()
    loaded = load_vectors(directory)
    if not loaded:
        print(f"no transcripts (*.json) in {directory}", file=sys.stderr)
        return 2
    print(f"checking `{' '.join(command)}` against {len(loaded)} transcripts from {directory}")
    failed = skipped = 0
    for number, vector in enumerate(loaded, start=1):
        outcome = asyncio.run(run_vector(vector, command, cwd=cwd))
        if outcome.not_started:
            where = f" (in {cwd})" if cwd else ""
            print(f"mt-eval bridge check: {outcome.failure}{where}: give the guest's command after --, as you would "
                  "run it, e.g. mt-eval bridge check -- node my-guest.js", file=sys.stderr)
            return 1
        if outcome.skipped:
            skipped += 1
            print(f"  skip  {outcome.name}: {outcome.skipped}")
            continue
        if outcome.passed:
            print(f"  ok    {outcome.name}")
            continue
        failed += 1
        print(f"  FAIL  {outcome.name}: {outcome.description}\n        {outcome.failure}")
        if outcome.stderr_tail:
            print("        guest stderr: " + outcome.stderr_tail.replace("\n", "\n                      "))
        if outcome.initialize_unanswered:
            rest = len(loaded) - number
            print(f"conformance: stopped: the guest does not answer initialize, so the other {rest} transcripts "
                  "were not run (each would wait as long). Fix: answer initialize as soon as the method is "
                  "loaded (bridge/PROTOCOL.md, \"Lifecycle\"); check what the guest writes to stderr")
            return 1
    skips = f", {skipped} not applicable" if skipped else ""
    print(f"conformance: {len(loaded) - failed - skipped} passed, {failed} failed{skips}")
    return 1 if failed else 0
