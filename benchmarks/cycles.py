"""How many cycles a fork needs, read from saved runs of the conductor (compare's default):

- each row's first cycles against the rest of its fork (the median over forks of each slice over
  its fork's median from the middle cycle on): a row still settling when its fork's slices begin
  shows here, and forks of fewer cycles would time it so;
- each paired ratio's spread from fork to fork (the standard deviation of the logs of the forks'
  ratios, as compare takes them) from only the first k cycles of every fork: where it barely moves
  with k, the forks differ far more than a fork's cycles do, and shorter forks, more of them, win.

    python benchmarks/cycles.py RUN.jsonl [RUN.jsonl ...]     (--quick: a tiny run of its own)
"""
from __future__ import annotations

import math
import statistics

import _common
from fork_ratio import Picked, log_sd, paired_rows

from jvmbridge.results import by_fork

SHOWN_CYCLES = 6  # of each row's profile


def profile(row) -> list[float]:
    """Per cycle, the median over forks of its slice over the fork's median from the middle cycle on."""
    forks = [slices for slices in by_fork(row.round_fork, row.round_ns_per_op) if len(slices) >= 2]
    cycles = min(map(len, forks))
    return [statistics.median(slices[cycle] / statistics.median(slices[cycles // 2:]) for slices in forks)
            for cycle in range(min(cycles, SHOWN_CYCLES))]


def one_run(name: str, frame) -> dict:
    from jvmbridge.comparison.ratios import paired_slices

    rows = [row for _, row in frame.iterrows()]
    cycles = min(len(slices) for row in rows for slices in by_fork(row.round_fork, row.round_ns_per_op))
    print(f"\n{name}: {len(rows)} rows, {cycles} cycles a fork\n\neach row's first cycles against its fork's "
          f"later ones (1.00: as fast):")
    profiles = {f"{row['engine']}, {row['setting']}, {row['shape']}": profile(row) for row in rows}  # .shape: pandas'
    for label, found in profiles.items():
        print(f"  {' '.join(f'{p:.3f}' for p in found)}  {label}")
    counts = sorted({k for k in (5, 8, 10, 15, 20) if k < cycles} | {cycles})
    print(f"\neach ratio's spread from fork to fork, from the first k cycles of every fork:\n"
          f"  {'  '.join(f'{k:>5}' for k in counts)}")
    spreads = {}
    for label, slower, faster in paired_rows(frame):
        spreads[label] = {k: log_sd(paired_slices(Picked(slower, slice(k)), Picked(faster, slice(k)))) for k in counts}
        print("  " + "  ".join(f"{s:>5.2%}" if math.isfinite(s) else f"{'-':>5}" for s in spreads[label].values())
              + f"  {label}")
    return {"run": name, "cycles": cycles, "profiles": profiles, "spreads": spreads}


def main() -> None:
    args, runs = _common.saved_runs(__doc__)
    figures = [one_run(name, frame) for name, frame in runs.items()]
    _common.save(args, figures)


if __name__ == "__main__":
    main()
