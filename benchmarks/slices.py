"""How long should the conductor's slices be? Each length gets the same second of each
configuration per fork (cycles x slice = 1 s), the lengths' forks in turns in an order drawn per
turn, on the default JVM (intrinsics on and off) and the C loop (AES-NI on and off), 38-byte
AES-256-CBC messages. Per length and ratio: the spread of the per-fork ratios (what the interval
over forks is made of), the spread of the cycles' ratios inside a fork (the host's drift between
two slices of a cycle, and the slices' own noise), and the interval after the forks run.

    python benchmarks/slices.py [FORKS]   (default 4 forks a length; --quick: 1 fork of two lengths)
"""
from __future__ import annotations

import math
import random
import statistics

import _common

from jvmbridge.comparison.interleaved import InterleavedJob, conducting
from jvmbridge.comparison.runner import plan
from jvmbridge.conductor.conduct import Pace, conduct, running
from jvmbridge.conductor.pairing import fork_ratio, over_forks
from jvmbridge.engines import Matrix
from jvmbridge.jvm.discovery import find_javas
from jvmbridge.sampling.policy import Sampling
from jvmbridge.sampling.workload import Operation, Workload

LENGTHS = (0.01, 0.025, 0.05, 0.1, 0.2)
PER_CONFIGURATION_SECONDS = 1.0


def main() -> None:
    parser = _common.parser(__doc__)
    parser.add_argument("forks", nargs="?", type=int, default=4)
    args = parser.parse_args()
    _common.begin(args)
    lengths, forks = ((0.05, 0.2), 1) if args.quick else (LENGTHS, args.forks)
    (job,) = [j for j in plan([Workload(Operation(), Sampling())], Matrix(find_javas((), False), engines=("jvm", "c-loop")))
              if isinstance(j, InterleavedJob)]
    given = conducting(job)
    per_fork: dict[float, dict[str, list[float]]] = {length: {} for length in lengths}
    within: dict[float, dict[str, list[float]]] = {length: {} for length in lengths}
    seconds: dict[float, list[float]] = {length: [] for length in lengths}
    for turn in range(forks):
        order = list(lengths)
        random.Random(turn).shuffle(order)
        for length in order:
            pace = Pace(slice_seconds=length, cycles=max(2, round(PER_CONFIGURATION_SECONDS / length)), min_forks=1,
                        max_forks=1)
            (fork,) = conduct(given.workers, given.configurations, given.asked, pace).forks
            seconds[length].append(fork.seconds)
            for ratio in given.asked:
                slower = [running(s) for s in fork.slices[ratio.slower]]
                faster = [running(s) for s in fork.slices[ratio.faster]]
                per_fork[length].setdefault(ratio.label, []).append(fork_ratio(slower, faster) or math.nan)
                logs = [math.log(a / b) for a, b in zip(slower, faster) if a > 0 and b > 0]  # as fork_ratio leaves out
                within[length].setdefault(ratio.label, []).append(statistics.stdev(logs) if len(logs) > 1 else math.nan)
    figures = []
    print(f"{'slice':>7}  {'ratio':<60} {'forks sd':>9} {'cycles sd':>9} {'interval':>9}  fork s")
    for length in lengths:
        for label, ratios in per_fork[length].items():
            spread = statistics.stdev(math.log(r) for r in ratios) if len(ratios) > 1 else math.nan
            interval = over_forks(ratios).relative_error if len(ratios) > 1 else math.inf
            cycles = statistics.fmean(within[length][label])
            figures.append({"slice_seconds": length, "ratio": label, "fork_log_sd": spread, "cycle_log_sd": cycles,
                            "relative_error": interval, "fork_seconds": statistics.fmean(seconds[length]),
                            "forks": len(ratios)})
            print(f"{length * 1000:>5.0f}ms  {label[:60]:<60} {spread:>9.2%} {cycles:>9.2%} {interval:>9.2%}  "
                  f"{statistics.fmean(seconds[length]):.1f}")
    _common.save(args, figures)


if __name__ == "__main__":
    main()
