"""Time to generate one method plugin with `mt-eval new DIR --no-input`, end to end, in a fresh process.

Target: under 1 s per plugin. Baselines measured in the same run: `python -c pass`, importing cookiecutter
(`python -c "import cookiecutter.main"`) and a plain copy of the template directory. Prints medians over
interleaved runs, then the slowest of every runtime and dependency profile generated once each (the same
target); `--check` exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from report import Figure, below, record

TARGET_SECONDS = 1.0
TEMPLATE = Path(__file__).resolve().parent.parent / "templates" / "method-plugin"
RUNTIMES = ("python", "node", "both")
PROFILES = ("self-contained", "open-artifact", "llm-gateway", "external-api")


def wall_time(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10, help="runs of each measurement (default 10)")
    parser.add_argument("--runtime", default="both", choices=["python", "node", "both"])
    parser.add_argument("--profile", default="llm-gateway",
                        choices=["self-contained", "open-artifact", "llm-gateway", "external-api"])
    parser.add_argument("--check", action="store_true", help="exit 1 if the target is missed")
    args = parser.parse_args()

    script = shutil.which("mt-eval") or shutil.which("mt-eval", path=str(Path(sys.executable).parent))
    mt_eval = [script] if script else [sys.executable, "-m", "mt_eval.cli"]
    with tempfile.TemporaryDirectory(prefix="mt-eval-bench-") as scratch:
        counter = iter(range(10**6))

        def run(argv: list[str]) -> Callable[[], object]:
            return lambda: subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)

        def generate(runtime: str = args.runtime, profile: str = args.profile) -> None:
            target = Path(scratch) / f"plugin-{next(counter)}"
            subprocess.run([*mt_eval, "new", str(target), "--no-input", "--set", f"runtime={runtime}",
                            "--set", f"dependency_profile={profile}"], check=True, stdout=subprocess.DEVNULL)

        def copy() -> None:
            shutil.copytree(TEMPLATE, Path(scratch) / f"copy-{next(counter)}")

        measured: dict[str, Callable[[], object]] = {
            "python -c pass": run([sys.executable, "-c", "pass"]),
            'python -c "import cookiecutter.main"': run([sys.executable, "-c", "import cookiecutter.main"]),
            "copy of the template directory": copy,
            f"mt-eval new DIR --no-input ({args.runtime}, {args.profile})": generate,
        }
        for action in measured.values():  # warm the file cache
            action()
        times: dict[str, list[float]] = {name: [] for name in measured}
        for _ in range(args.runs):
            for name, action in measured.items():
                times[name].append(wall_time(action))
        each = {(runtime, profile): wall_time(functools.partial(generate, runtime, profile))
                for runtime, profile in itertools.product(RUNTIMES, PROFILES)}
    medians = {name: statistics.median(values) for name, values in times.items()}
    width = max(map(len, medians))
    for name, seconds in medians.items():
        print(f"{name:<{width}} : {seconds * 1000:8.1f} ms (median of {args.runs})")
    generation = list(medians.values())[-1]
    baseline = medians['python -c "import cookiecutter.main"']
    verdict = "met" if generation < TARGET_SECONDS else "MISSED"
    print(f"{'one plugin':<{width}} : {generation * 1000:8.1f} ms, {generation / baseline:.2f}x the cookiecutter "
          f"import  (target < {TARGET_SECONDS * 1000:.0f} ms: {verdict})")
    (slow_runtime, slow_profile), slowest = max(each.items(), key=lambda item: item[1])
    verdict = "met" if slowest < TARGET_SECONDS else "MISSED"
    print(f"{'slowest combination':<{width}} : {slowest * 1000:8.1f} ms ({slow_runtime}, {slow_profile}; each of "
          f"{len(each)} generated once)  (target < {TARGET_SECONDS * 1000:.0f} ms: {verdict})")
    record([Figure("new_plugin", "mt-eval new DIR --no-input", ours=f"{generation * 1000:.1f} ms",
                   baseline=f"{baseline * 1000:.1f} ms (cookiecutter import)", value=generation,
                   target=below(TARGET_SECONDS, " s")),
            Figure("new_plugin", f"mt-eval new, slowest of {len(each)} combinations", ours=f"{slowest * 1000:.1f} ms",
                   value=slowest, target=below(TARGET_SECONDS, " s"),
                   note=f"{slow_runtime}, {slow_profile}; every runtime and dependency profile, generated once each")])
    return 1 if args.check and max(generation, slowest) >= TARGET_SECONDS else 0


if __name__ == "__main__":
    sys.exit(main())
