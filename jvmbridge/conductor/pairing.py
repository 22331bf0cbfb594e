"""Ratios of slices moments apart: per fork the ratio of the two sides' fast ends, over forks a
Student's t interval of their logs: host drift cancels, fork-to-fork differences stay
(docs/decisions/0003-fork-ratio-statistic.md)."""
from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from jvmbridge.stats.levels import RatioLevels, ratio_levels
from jvmbridge.stats.summary import (
    CONFIDENCE,
    disturbed,
    low_quantile,
    paired_log_half_width,
    robust_within_rsd,
    stein_half_width,
)


def running_ns_per_op(ns: float, iterations: int, wait_ns: float = 0.0) -> float:
    """A slice's ns/op less its run-queue wait (schedstat): it keeps its own loop's cost, GC pauses
    included (the thread is then blocked, not waiting)."""
    return (ns - wait_ns) / iterations


# The percentile of a side's undisturbed slices in a fork a ratio takes: docs/decisions/0003-fork-ratio-statistic.md
FAST_END = 25
# ... of every slice less its wait, where fewer than half are undisturbed: a busy measuring vCPU
# touches every slice, and a low end keeps the least touched (docs/decisions/0003-fork-ratio-statistic.md).
BUSY_FAST_END = 5


def fork_ratio(top: Sequence[dict], bottom: Sequence[dict]) -> float | None:
    """``top``'s ns/op over ``bottom``'s in one fork (fork_sides); None where a side has none."""
    sides = fork_sides(top, bottom)
    return sides[0] / sides[1] if sides else None


def fork_sides(top: Sequence[dict], bottom: Sequence[dict]) -> tuple[float, float] | None:
    """``top``'s and ``bottom``'s ns/op in one fork as a ratio of them takes them: their undisturbed
    slices' fast ends (too few undisturbed: every slice at BUSY_FAST_END); None where a side has none."""
    over, under = _running(top), _running(bottom)
    if not over or not under:
        return None
    if _calm(over) and _calm(under):
        return fast_end(_undisturbed(over)), fast_end(_undisturbed(under))
    busy = 100 // BUSY_FAST_END
    return low_quantile([ns for ns, _ in over], busy), low_quantile([ns for ns, _ in under], busy)


def fork_reading(slices: Sequence[dict]) -> float | None:
    """One configuration's figure in a calm fork (a yardstick's reading, for stats.episodes)."""
    calm = _undisturbed(_running(slices))
    return fast_end(calm) if calm else None


def levels_over(fork_ratios: Sequence[tuple[int, float]],
                slices: Mapping[str, Mapping[int, Sequence[dict]]]) -> RatioLevels | None:
    """A ratio's levels over ``fork_ratios`` as its rows' ``slices`` explain them (stats.levels)."""
    forks = [fork for fork, _ in fork_ratios]
    rows: dict[str, list[float | None]] = {}
    within_rsd = {}
    for label, own in slices.items():
        calm = [_undisturbed(_running(own.get(fork, ()))) for fork in forks]
        if any(calm):  # one without some forks (decision 0014) still tells whether it moved with them
            rows[label] = [fast_end(values) if values else None for values in calm]
            within_rsd[label] = robust_within_rsd([values for values in calm if values])
    return ratio_levels([ratio for _, ratio in fork_ratios], rows, within_rsd)


def _running(slices: Sequence[dict]) -> list[tuple[float, bool]]:
    """Each slice's ns/op less its wait, and whether it was disturbed."""
    found = ((running_ns_per_op(s["ns"], s["iterations"], s.get("wait_ns", 0)), disturbed(s)) for s in slices)
    return [(ns, lost) for ns, lost in found if ns > 0]


def _undisturbed(slices: list[tuple[float, bool]]) -> list[float]:
    """The running ns/op of the undisturbed slices."""
    return [ns for ns, lost in slices if not lost]


def _calm(slices: list[tuple[float, bool]]) -> bool:
    return 2 * sum(not lost for _, lost in slices) >= len(slices)


def fast_end(values: Sequence[float]) -> float:
    """The FAST_END percentile of ``values``."""
    return low_quantile(values, 100 // FAST_END)


@dataclass(frozen=True)
class Interval:
    """A ratio over forks: the geometric mean of the forks' ratios and its CONFIDENCE interval."""
    value: float
    low: float
    high: float
    forks: int

    @property
    def relative_error(self) -> float:
        """The interval's wider side, relative (inf under two forks)."""
        return max(self.high / self.value - 1, 1 - self.low / self.value)

    def within(self, target: float) -> bool:
        return self.relative_error <= target

    def as_dict(self) -> dict:
        return {"times": self.value, "low": self.low, "high": self.high, "confidence": CONFIDENCE,
                "forks": self.forks}


def over_forks(fork_ratios: Sequence[float], first_stage: int = 0) -> Interval:
    """The ratio over ``fork_ratios`` (Student's t of logs), never narrower than Stein's from the
    ``first_stage`` (a rule stopping on luck would cover the ratio less often than it says)."""
    logs = [math.log(r) for r in fork_ratios]
    value = math.exp(statistics.fmean(logs))
    half = paired_log_half_width(list(fork_ratios))
    if 1 < first_stage < len(logs):
        half = max(half, stein_half_width(logs[:first_stage], len(logs)))
    return Interval(value=value, low=value / math.exp(half), high=value * math.exp(half), forks=len(logs))
