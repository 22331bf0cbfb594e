"""Which percentile of each side's slices makes a fork's ratio most reproducible, read from saved
runs of the conductor (compare's default). For each candidate (conductor.pairing.FAST_END: of a
side's undisturbed slices, where at least half of both sides' are; a busy measuring vCPU's forks
take BUSY_FAST_END of every slice whatever the candidate), over the run's paired ratios (each
engine's speedup, the JVM against the C loop):

- the spread of the forks' ratios (the standard deviation of their logs), on average and the widest;
- the same from half of each fork's cycles (the even ones, then the odd ones): how much more cycles
  narrow it, and what of it is the fork's own (a level both halves share) rather than its slices';
- the forks compare's stopping rule would have run: as many as Stein's rule on the first stage's
  forks' spread asks for every ratio within ±2% that 12 forks can bring there;
- the ratios themselves against the 5th percentile's (a statistic that moves them is biased by
  the noise).

    python benchmarks/fork_ratio.py RUN.jsonl [RUN.jsonl ...]     (--quick: a tiny run of its own)
"""
from __future__ import annotations

import math
import statistics

import _common

from jvmbridge.comparison.ratios import paired_slices, ratio_rows
from jvmbridge.conductor import pairing
from jvmbridge.sampling.policy import FORK_LIMIT, FORKS, forks_to_reach, forks_to_run

CANDIDATES = (5, 10, 25, 50)  # percentiles, the 5th (the ratios' baseline) first; 50: each side's median
TARGET = 0.02


class Picked:
    """A row with only the ``chosen`` of its slices in each fork (``slice(0, None, 2)``: the even ones)."""

    def __init__(self, row, chosen: slice):
        keep = [index for fork in set(row.round_fork)
                for index in [i for i, at in enumerate(row.round_fork) if at == fork][chosen]]
        self.round_fork = [row.round_fork[i] for i in keep]
        self.round_ns_per_op = [row.round_ns_per_op[i] for i in keep]
        self.round_iterations = [row.round_iterations[i] for i in keep]
        self.round_counters = [row.round_counters[i] for i in keep]


def paired_rows(frame) -> list[tuple[str, object, object]]:
    """(label, slower, faster) for each ratio the run prints from interleaved slices (comparison.ratios)."""
    return [(ratio.label, slower, faster) for ratio, faster, slower in ratio_rows(frame) if ratio.interleaved]


def log_sd(ratios: list[float]) -> float:
    return statistics.stdev(math.log(r) for r in ratios) if len(ratios) > 1 else math.nan


def one_run(name: str, frame) -> list[dict]:
    pairs = paired_rows(frame)
    if not pairs:
        print(f"{name}: no paired ratios (a run of the conductor is needed)")
        return []
    figures, centres = [], {}  # the 5th percentile's ratios, by the pair's index
    print(f"\n{name}: {len(pairs)} ratios, {max(len(paired_slices(s, f)) for _, s, f in pairs)} forks\n")
    print(f"{'percentile':>10} {'spread':>7} {'widest':>7} {'half':>7} {'fork own':>8} {'forks':>5} {'within':>6}  ratios against the 5th's")
    for percentile in CANDIDATES:
        pairing.FAST_END = percentile
        spreads, halves, own, wanted, moved, within = [], [], [], [], [], 0
        for index, (_, slower, faster) in enumerate(pairs):
            per_fork = paired_slices(slower, faster)
            even, odd = (paired_slices(Picked(slower, cycles), Picked(faster, cycles))
                         for cycles in (slice(0, None, 2), slice(1, None, 2)))
            spreads.append(log_sd(per_fork))
            half = (log_sd(even) ** 2 + log_sd(odd) ** 2) / 2
            split = statistics.variance(math.log(a / b) for a, b in zip(even, odd)) / 2 if len(even) > 1 else math.nan
            halves.append(math.sqrt(half))
            own.append(math.sqrt(max(0.0, half - split)))  # a level both halves of a fork share
            wanted.append(forks_to_reach(per_fork[:FORKS], TARGET) or FORK_LIMIT)
            within += pairing.over_forks(per_fork, FORKS).within(TARGET)
            centre = math.exp(statistics.fmean(math.log(r) for r in per_fork))
            moved.append(centre / centres.setdefault(index, centre))
        forks_run = forks_to_run(wanted, FORKS, FORK_LIMIT)
        figures.append({"run": name, "percentile": percentile, "mean_spread": statistics.fmean(spreads),
                        "widest_spread": max(spreads), "mean_half_spread": statistics.fmean(halves),
                        "mean_fork_own": statistics.fmean(own), "forks_run": forks_run, "within": within,
                        "against_5th": moved})
        print(f"{percentile:>10} {statistics.fmean(spreads):>7.2%} {max(spreads):>7.2%} "
              f"{statistics.fmean(halves):>7.2%} {statistics.fmean(own):>8.2%} {forks_run:>5} {within:>6}  "
              + " ".join(f"{m:.3f}" for m in moved))
    return figures


def main() -> None:
    args, runs = _common.saved_runs(__doc__)
    chosen = pairing.FAST_END
    figures = []
    try:
        for name, frame in runs.items():
            figures += one_run(name, frame)
    finally:
        pairing.FAST_END = chosen
    print(f"\nspread: of the forks' ratios' logs, on average over the ratios and the widest; half: from half of "
          f"each fork's cycles; fork own: of that, a level both halves share; forks: what Stein's rule asks "
          f"after {FORKS} for every ratio {FORK_LIMIT} forks can bring within ±{TARGET:.0%}; within: the ratios "
          f"whose interval over the run's forks is. Today's: the {chosen}th.")
    _common.save(args, figures)


if __name__ == "__main__":
    main()
