"""Summaries of timed rounds: per-operation time per round, then median and spread across rounds."""
from __future__ import annotations

import statistics
from dataclasses import dataclass

# Above this relative standard deviation across rounds a figure is called noisy.
NOISY_RSD = 0.05


@dataclass(frozen=True)
class Summary:
    median_ns: float
    min_ns: float
    max_ns: float
    rsd: float  # relative standard deviation of the per-round ns/op, 0 with a single round
    rounds: int
    iterations: int
    per_round_ns: tuple[float, ...]  # ns/op of each round, in run order

    @property
    def noisy(self) -> bool:
        return self.rsd > NOISY_RSD


def summarize(rounds: list[dict]) -> Summary:
    """``rounds`` as the engines report them: [{"iterations": n, "ns": elapsed}, ...]."""
    per_op = [r["ns"] / r["iterations"] for r in rounds]
    mean = statistics.fmean(per_op)
    rsd = statistics.stdev(per_op) / mean if len(per_op) > 1 else 0.0
    return Summary(statistics.median(per_op), min(per_op), max(per_op), rsd,
                   len(per_op), sum(r["iterations"] for r in rounds), tuple(per_op))
