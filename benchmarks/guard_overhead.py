"""What the guard costs the application: the harness's AesWorkload (CBC and CTR, 38 bytes to 4 KiB)
in JVMs with and without -javaagent:jvmbridge-guard.jar, alternated (with, without, with, ...),
each printing its rounds per second. Per JVM: the median rate of the seconds after the self-test
window (the guard's answers are in by then), and of the seconds inside it; the ratio with/without
per pair, and their mean with a 95% interval over pairs. Issue 28's target: within 1% after the window.

    python benchmarks/guard_overhead.py [--java PATH] [--pairs 4] [--seconds 40] [--window 20]
"""
from __future__ import annotations

import argparse
import statistics
import subprocess

from jvmbridge.harness import guard_jar, harness_jar
from jvmbridge.stats import half_width


def rates(java: str, seconds: float, agent: bool) -> list[int]:
    command = [java, *([f"-javaagent:{guard_jar()}=delay=1"] if agent else []), "-cp", str(harness_jar()),
               "jvmbridge.harness.AesWorkload", str(seconds), "rate"]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return [int(line.split()[1]) for line in done.stdout.splitlines() if line.startswith("rate ")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--java", default="java")
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=40)
    parser.add_argument("--window", type=int, default=20, help="seconds from the start counted as the self-test window")
    args = parser.parse_args()
    after, during = [], []
    print(f"{'pair':>4} {'with: in window':>16} {'after':>10} {'without: in window':>19} {'after':>10} "
          f"{'ratio in window':>16} {'after':>7}")
    for pair in range(args.pairs):
        guarded, plain = rates(args.java, args.seconds, True), rates(args.java, args.seconds, False)
        g_in, g_after = statistics.median(guarded[2:args.window]), statistics.median(guarded[args.window:])
        p_in, p_after = statistics.median(plain[2:args.window]), statistics.median(plain[args.window:])
        during.append(g_in / p_in)
        after.append(g_after / p_after)
        print(f"{pair + 1:>4} {g_in:>16,.0f} {g_after:>10,.0f} {p_in:>19,.0f} {p_after:>10,.0f} "
              f"{during[-1]:>16.3f} {after[-1]:>7.3f}")
    for name, ratios in (("in the window", during), ("after it", after)):
        mean = statistics.fmean(ratios)
        error = half_width(statistics.stdev(ratios), len(ratios)) if len(ratios) > 1 else float("inf")
        print(f"with/without {name}: {mean:.3f} ±{error:.3f} (95%, {len(ratios)} pairs; rounds per second, "
              "first 2 s left out)")


if __name__ == "__main__":
    main()
