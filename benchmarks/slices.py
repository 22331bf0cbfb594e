"""How long should the conductor's slices be, and how many cycles a fork? Each arm is a slice
length and a number of cycles; the arms' forks run in turns, in an order drawn per turn, on the
default JVM (intrinsics on and off) and the C loop (AES-NI on and off), 38-byte AES-256-CBC
messages. Per arm and ratio: the spread of the per-fork ratios (what the interval over forks is
made of: the fewer forks a ±2% interval needs), the spread of the cycles' ratios inside a fork (the
host's drift between two slices of a cycle, and the slices' own noise), and the fork's seconds.

    python benchmarks/slices.py [FORKS] [--arms 0.05x20,0.05x5]   (default 8 forks an arm, ARMS;
                                                   --quick: 1 fork of two arms)
"""
from __future__ import annotations

import math
import random
import statistics

import _common

from jvmbridge.comparison.interleaved import InterleavedJob, conducting
from jvmbridge.comparison.runner import plan
from jvmbridge.conductor.conduct import Pace, conduct
from jvmbridge.conductor.pairing import fork_ratio, over_forks, running_ns_per_op
from jvmbridge.engines import Matrix
from jvmbridge.jvm.discovery import find_javas
from jvmbridge.sampling.policy import Sampling
from jvmbridge.sampling.workload import Operation, Workload

# (slice seconds, cycles): today's default, and shorter forks of the same cycles or the same time.
ARMS = ((0.05, 20), (0.025, 20), (0.0125, 40))


def main() -> None:
    parser = _common.parser(__doc__)
    parser.add_argument("forks", nargs="?", type=int, default=8)
    parser.add_argument("--arms", type=_arms, default=ARMS, help="SECONDSxCYCLES,...: the arms to run")
    args = parser.parse_args()
    _common.begin(args)
    arms, forks = (args.arms[:2], 1) if args.quick else (args.arms, args.forks)
    (job,) = [j for j in plan([Workload(Operation(), Sampling())], Matrix(find_javas((), False), engines=("jvm", "c-loop")))
              if isinstance(j, InterleavedJob)]
    given = conducting(job)
    per_fork: dict[tuple, dict[str, list[float]]] = {arm: {} for arm in arms}
    within: dict[tuple, dict[str, list[float]]] = {arm: {} for arm in arms}
    seconds: dict[tuple, list[float]] = {arm: [] for arm in arms}
    for turn in range(forks):
        order = list(arms)
        random.Random(turn).shuffle(order)
        for arm in order:
            length, cycles = arm
            pace = Pace(slice_seconds=length, cycles=cycles, min_forks=1, max_forks=1)
            (fork,) = conduct(given.workers, given.configurations, given.asked, pace).forks
            seconds[arm].append(fork.seconds)
            for ratio in given.asked:
                sides = fork.slices[ratio.slower], fork.slices[ratio.faster]
                per_fork[arm].setdefault(ratio.label, []).append(fork_ratio(*sides) or math.nan)
                slower, faster = ([running_ns_per_op(s["ns"], s["iterations"], s.get("wait_ns", 0)) for s in side]
                                  for side in sides)
                logs = [math.log(a / b) for a, b in zip(slower, faster) if a > 0 and b > 0]  # each cycle's own ratio
                within[arm].setdefault(ratio.label, []).append(statistics.stdev(logs) if len(logs) > 1 else math.nan)
    figures = []
    print(f"{'arm':>12}  {'forks sd':>9} {'cycles sd':>9} {'interval':>9} {'fork s':>7}  ratio")
    for arm in arms:
        length, cycles = arm
        for label, ratios in per_fork[arm].items():
            spread = statistics.stdev(math.log(r) for r in ratios) if len(ratios) > 1 else math.nan
            interval = over_forks(ratios).relative_error if len(ratios) > 1 else math.inf
            noise = statistics.fmean(within[arm][label])
            figures.append({"slice_seconds": length, "cycles": cycles, "ratio": label, "fork_log_sd": spread,
                            "cycle_log_sd": noise, "relative_error": interval,
                            "fork_seconds": statistics.fmean(seconds[arm]), "forks": len(ratios)})
            print(f"{cycles:>3} x {length * 1000:>4.1f}ms  {spread:>9.2%} {noise:>9.2%} {interval:>9.2%} "
                  f"{statistics.fmean(seconds[arm]):>7.1f}  {label}")
        mean = statistics.fmean(f["fork_log_sd"] for f in figures if (f["slice_seconds"], f["cycles"]) == arm)
        print(f"{cycles:>3} x {length * 1000:>4.1f}ms  {mean:>9.2%}  (the ratios' mean)")
    _common.save(args, figures)


def _arms(text: str) -> tuple[tuple[float, int], ...]:
    """"0.05x20,0.05x5" -> ((0.05, 20), (0.05, 5))."""
    return tuple((float(length), int(cycles)) for length, cycles in (arm.split("x") for arm in text.split(",")))


if __name__ == "__main__":
    main()
