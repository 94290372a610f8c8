"""Gate policies for tests whose subject is not the gate: tiny corpora without canaries or negative controls."""

from pathlib import Path

LENIENT_POLICY = Path(__file__).parent / "fixtures" / "policies" / "lenient.json"
LENIENT = ["--policy", str(LENIENT_POLICY)]  # mt-eval run options: the headline is not withheld
