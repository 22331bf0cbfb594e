"""Do the next fork's warm-ups, run on the other vCPU while a fork times its slices, make that
fork's ratios noisier? Read from saved runs of the conductor (compare's default).

A fork had the next one's warm-ups beside it where that next fork was readied during it: it then
took less than READIED_SECONDS (8-12 s in a default compare here, against 13-17 s for a fork that
warmed its own up in place; a saved run does not say which, its forks' seconds do). For each
paired ratio and fork from the third on (the first has none beside it, the second always has), how
far the fork's ratio lies from the median of its run's forks, by whether the fork had warm-ups
beside it; the last fork of a run is left out (no fork after it to tell by).

    python benchmarks/beside.py RUN.jsonl [RUN.jsonl ...]     (--quick: a tiny run of its own)
"""
from __future__ import annotations

import math
import statistics

import _common
from fork_ratio import paired_rows

from jvmbridge.comparison.ratios import paired_slices

READIED_SECONDS = 12.5


def distances(frame) -> dict[str, list[float]]:
    """Each fork's ratio's distance from its run's median (of logs), by "beside" or "alone"."""
    found: dict[str, list[float]] = {"beside": [], "alone": []}
    pairs = paired_rows(frame)
    if not pairs:
        return found
    seconds = pairs[0][1].fork_seconds
    for _, slower, faster in pairs:
        logs = [math.log(r) for r in paired_slices(slower, faster)]
        centre = statistics.median(logs)
        for fork in range(2, min(len(logs), len(seconds)) - 1):
            found["beside" if seconds[fork + 1] < READIED_SECONDS else "alone"].append(abs(logs[fork] - centre))
    return found


def main() -> None:
    args, runs = _common.saved_runs(__doc__, forks=4)
    found: dict[str, list[float]] = {"beside": [], "alone": []}
    for frame in runs.values():
        for kind, each in distances(frame).items():
            found[kind] += each
    figures = {}
    print(f"{len(runs)} runs; a fork's ratio's distance from its run's median, forks from the third on:")
    for kind, each in found.items():
        if not each:
            print(f"  {kind:6}: no fork")
            continue
        figures[kind] = {"ratios": len(each), "median": statistics.median(each),
                         "beyond_2": sum(x > 0.02 for x in each) / len(each), "beyond_3": sum(x > 0.03 for x in each) / len(each)}
        print(f"  {kind:6}: {len(each):4} fork ratios, median {figures[kind]['median']:.2%}, "
              f"beyond 2% {figures[kind]['beyond_2']:.1%}, beyond 3% {figures[kind]['beyond_3']:.1%}")
    _common.save(args, figures)


if __name__ == "__main__":
    main()
