"""Start-up time of `mt-eval --help` against `python -c pass`, measured in the same run.

Target: ≤ 3× (the CLI imports its machinery lazily). Prints medians over interleaved runs and the ratio;
`--check` exits 1 when the target is missed.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from report import at_most, ratio_figure, record

TARGET_RATIO = 3.0


def wall_time(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=30, help="runs of each command (default 30)")
    parser.add_argument("--check", action="store_true", help="exit 1 if the ratio misses the target")
    args = parser.parse_args()

    script = shutil.which("mt-eval") or shutil.which("mt-eval", path=str(Path(sys.executable).parent))
    cli = [script, "--help"] if script else [sys.executable, "-m", "mt_eval.cli", "--help"]
    baseline = [sys.executable, "-c", "pass"]
    for argv in (cli, baseline):  # warm the file cache
        wall_time(argv)
    cli_times, base_times = [], []
    for _ in range(args.runs):
        cli_times.append(wall_time(cli))
        base_times.append(wall_time(baseline))
    cli_median, base_median = statistics.median(cli_times), statistics.median(base_times)
    ratio = cli_median / base_median
    print(f"python -c pass : {base_median * 1000:7.1f} ms (median of {args.runs})")
    print(f"mt-eval --help : {cli_median * 1000:7.1f} ms (median of {args.runs}; {' '.join(cli)})")
    verdict = "met" if ratio <= TARGET_RATIO else "MISSED"
    print(f"ratio          : {ratio:7.2f}x  (target <= {TARGET_RATIO:.0f}x: {verdict})")
    record([ratio_figure("startup", "mt-eval --help vs python -c pass", cli_median, base_median, "ms",
                         at_most(TARGET_RATIO), scale=1e3)])
    return 1 if args.check and ratio > TARGET_RATIO else 0


if __name__ == "__main__":
    sys.exit(main())
