"""Ratios of slices that ran moments apart: per fork the ratio of the two sides' fast ends, each
the lower quartile of its undisturbed slices there (as the rows' fork figures take their rounds';
where the measuring vCPU was kept busy, the 5th percentile of every slice), over forks a Student's
t interval of their logs. Both sides' slices ran interleaved in the same cycles, so a
host that slows for a while slows both alike and the drift stays out of the ratio; what differs
from fork to fork (JIT decisions, memory layout) stays in it.

Why a low percentile and not each cycle's own ratio: what slows a slice is mostly unseen (a
hypervisor's other guests) and only ever slows it; each side's fast end leaves it out, and the lower
quartile's forks spread least (docs/decisions/0003-fork-ratio-statistic.md).
"""
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
    """A slice's ns/op without the time its thread waited for the CPU while others ran there
    (schedstat's run-queue wait): a slice that another process interrupted keeps what its own loop
    cost, including the JVM's pauses for its collector (the thread is then blocked, not waiting)."""
    return (ns - wait_ns) / iterations


# The percentile of a side's slices in a fork that its ratio takes (fast_end): of its undisturbed
# slices, and where fewer than half of a side's are, of every slice, each less its wait (BUSY_FAST_END).
FAST_END = 25
# Another process busy on the measuring vCPU (or the host's steal, which stats.summary.disturbed
# counts too) interrupts every slice, and what a slice then pays beyond its wait (caches the other
# filled) varies: a low end keeps the least touched. A CPU hog pinned there put the C loop's AES-NI
# speedup 11% above a calm run's with the quartile, 4.7% above this on the same slices.
BUSY_FAST_END = 5


def fork_ratio(top: Sequence[dict], bottom: Sequence[dict]) -> float | None:
    """How many times ``top``'s ns/op is ``bottom``'s in one fork, from each side's slices there as
    timed ({"ns", "iterations", "wait_ns", ...}): the ratio of their fast ends (fast_end) of the
    slices that lost no more than stats.summary.DISTURBED_SHARE of their time to waits or steal (as
    the rows set rounds aside), or, where either side has fewer than half its slices so, of every
    slice, each less its wait, at BUSY_FAST_END. None where a side has none. A slice of no time left (one that
    waited as long as it ran) says nothing of its loop and is left out."""
    over, under = _running(top), _running(bottom)
    if not over or not under:
        return None
    if _calm(over) and _calm(under):
        return fast_end(_undisturbed(over)) / fast_end(_undisturbed(under))
    busy = 100 // BUSY_FAST_END
    return low_quantile([ns for ns, _ in over], busy) / low_quantile([ns for ns, _ in under], busy)


def fork_reading(slices: Sequence[dict]) -> float | None:
    """One configuration's figure in a fork (ns/op) as a ratio's side takes it where the fork ran
    calm: the fast end of its undisturbed slices' running ns/op; None where it has none. A
    yardstick's reading, for stats.episodes."""
    calm = _undisturbed(_running(slices))
    return fast_end(calm) if calm else None


def levels_over(fork_ratios: Sequence[tuple[int, float]],
                slices: Mapping[str, Mapping[int, Sequence[dict]]]) -> RatioLevels | None:
    """A ratio's levels (stats.levels) over its forks (``fork_ratios``: (fork, its ratio there)), as
    the forks' own rows explain them: ``slices``, per row measured in those forks (every counted
    configuration, its sides among them), its slices by fork. A row's figure in a fork is its
    fork_reading, its spread inside forks the robust one of its undisturbed slices; a row without
    a figure in one of the forks is left out."""
    forks = [fork for fork, _ in fork_ratios]
    rows, within_rsd = {}, {}
    for label, own in slices.items():
        calm = [_undisturbed(_running(own.get(fork, ()))) for fork in forks]
        if all(calm):
            rows[label] = [fast_end(values) for values in calm]
            within_rsd[label] = robust_within_rsd(calm)
    return ratio_levels([ratio for _, ratio in fork_ratios], rows, within_rsd)


def _running(slices: Sequence[dict]) -> list[tuple[float, bool]]:
    """Each slice's ns/op less its wait (running_ns_per_op), and whether it was disturbed."""
    found = ((running_ns_per_op(s["ns"], s["iterations"], s.get("wait_ns", 0)), disturbed(s)) for s in slices)
    return [(ns, lost) for ns, lost in found if ns > 0]


def _undisturbed(slices: list[tuple[float, bool]]) -> list[float]:
    """The running ns/op of the slices (as _running gives them) that were not disturbed."""
    return [ns for ns, lost in slices if not lost]


def _calm(slices: list[tuple[float, bool]]) -> bool:
    return 2 * sum(not lost for _, lost in slices) >= len(slices)


def fast_end(values: Sequence[float]) -> float:
    """The FAST_END percentile of ``values`` (stats.summary.low_quantile: linear between the two nearest)."""
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
        """The interval's wider side, relative to the value (inf with fewer than two forks)."""
        return max(self.high / self.value - 1, 1 - self.low / self.value)

    def within(self, target: float) -> bool:
        return self.relative_error <= target

    def as_dict(self) -> dict:
        return {"times": self.value, "low": self.low, "high": self.high, "confidence": CONFIDENCE,
                "forks": self.forks}


def over_forks(fork_ratios: Sequence[float], first_stage: int = 0) -> Interval:
    """The ratio over ``fork_ratios`` (each one fork's fork_ratio, in run order), with its interval:
    Student's t of their logs, and where the first ``first_stage`` of them decided how many to run
    (forks_to_reach), never narrower than Stein's interval from those: a stopping rule that stops when
    the spread happens to look small would otherwise cover the true ratio less often than it says."""
    logs = [math.log(r) for r in fork_ratios]
    value = math.exp(statistics.fmean(logs))
    half = paired_log_half_width(list(fork_ratios))
    if 1 < first_stage < len(logs):
        half = max(half, stein_half_width(logs[:first_stage], len(logs)))
    return Interval(value=value, low=value / math.exp(half), high=value * math.exp(half), forks=len(logs))
