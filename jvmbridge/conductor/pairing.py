"""Ratios of slices that ran moments apart: per fork the geometric mean of each cycle's ratio,
over forks a Student's t interval of their logs. A host that slows for a while slows both slices
of a cycle alike, so the drift cancels in each cycle's ratio and stays out of the interval; what
differs from fork to fork (JIT decisions, memory layout) stays in it."""
from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from jvmbridge.stats import CONFIDENCE, paired_log_half_width, stein_half_width, t_quantile


def running_ns_per_op(ns: float, iterations: int, wait_ns: float = 0.0) -> float:
    """A slice's ns/op without the time its thread waited for the CPU while others ran there
    (schedstat's run-queue wait): a slice that another process interrupted keeps what its own loop
    cost, including the JVM's pauses for its collector (the thread is then blocked, not waiting)."""
    return (ns - wait_ns) / iterations


# The share of cycle ratios left out at each end of a fork's (trimmed_mean).
TRIMMED = 0.2


def fork_ratio(top: Sequence[float], bottom: Sequence[float]) -> float | None:
    """How many times ``top``'s ns/op is ``bottom``'s in one fork: the geometric mean over cycles of
    each cycle's ratio (ns/op of each side's slices in cycle order, one per cycle); None where no
    cycle counts. A cycle with a slice of no time left (one that waited as long as it ran:
    running_ns_per_op) says nothing of its loop and is left out."""
    if len(top) != len(bottom):
        raise ValueError("paired slices come one per cycle on each side")
    logs = [math.log(a / b) for a, b in zip(top, bottom) if a > 0 and b > 0]
    return math.exp(trimmed_mean(logs)) if logs else None


def trimmed_mean(values: Sequence[float]) -> float:
    """The mean of the middle of ``values``, TRIMMED of each end left out: a cycle in which the host
    stepped between the two slices, or another process slowed one unseen, moves a plain mean of
    twenty cycles by a twentieth of its jump; this not at all, and costs little where none did."""
    ordered = sorted(values)
    cut = int(len(ordered) * TRIMMED)
    return statistics.fmean(ordered[cut:len(ordered) - cut])


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
    (forks_for), never narrower than Stein's interval from those: a stopping rule that stops when
    the spread happens to look small would otherwise cover the true ratio less often than it says."""
    logs = [math.log(r) for r in fork_ratios]
    value = math.exp(statistics.fmean(logs))
    half = paired_log_half_width(list(fork_ratios))
    if 1 < first_stage < len(logs):
        half = max(half, stein_half_width(logs[:first_stage], len(logs)))
    return Interval(value, value / math.exp(half), value * math.exp(half), len(logs))


def forks_for(first_stage: Sequence[float], target: float, limit: int) -> int:
    """How many forks in all bring a ratio's interval within ±``target``, from the spread of the
    fork ratios of its first stage (Stein's two-stage rule: at least as many, at most ``limit``)."""
    logs = [math.log(r) for r in first_stage]
    if len(logs) < 2:
        return limit
    t = t_quantile(1 - (1 - CONFIDENCE) / 2, len(logs) - 1)
    needed = math.ceil((t * statistics.stdev(logs) / math.log1p(target)) ** 2)
    return min(limit, max(len(logs), needed))
