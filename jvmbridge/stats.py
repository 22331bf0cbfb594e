"""Summaries of timed rounds: ns/op per round, then median, spread and a confidence interval.

As JMH: every round of every fork is one sample, and the error is t(1 - (1 - level) / 2, N - 1)
times s / sqrt(N), the half-width of the level-confidence interval of the mean.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

CONFIDENCE = 0.999  # JMH's level
# Above this relative standard deviation across rounds a figure is called noisy.
NOISY_RSD = 0.05
# Fewer samples than this make any interval too wide to mean much.
FEW_SAMPLES = 5


@dataclass(frozen=True)
class Summary:
    median_ns: float
    min_ns: float
    max_ns: float
    mean_ns: float
    error_ns: float  # half-width of the CONFIDENCE interval of the mean; inf with one sample
    rsd: float  # relative standard deviation of the per-round ns/op, 0 with a single round
    rounds: int  # samples: rounds of all forks
    forks: int
    iterations: int
    per_round_ns: tuple[float, ...]  # ns/op of each round, in run order

    @property
    def noisy(self) -> bool:
        return self.rsd > NOISY_RSD

    @property
    def relative_error(self) -> float:
        return self.error_ns / self.mean_ns


def summarize(rounds: list[dict], forks: int = 1) -> Summary:
    """``rounds`` as the engines report them: [{"iterations": n, "ns": elapsed}, ...]."""
    per_op = [r["ns"] / r["iterations"] for r in rounds]
    mean = statistics.fmean(per_op)
    if len(per_op) > 1:
        stdev = statistics.stdev(per_op)
        error = half_width(stdev, len(per_op))
    else:
        stdev, error = 0.0, math.inf
    return Summary(statistics.median(per_op), min(per_op), max(per_op), mean, error, stdev / mean,
                   len(per_op), forks, sum(r["iterations"] for r in rounds), tuple(per_op))


def half_width(stdev: float, samples: int) -> float:
    """The CONFIDENCE interval's half-width for the mean of ``samples`` samples with this standard
    deviation (relative in, relative out): t(1 - (1 - CONFIDENCE) / 2, samples - 1) x stdev / sqrt(samples)."""
    return t_quantile(1 - (1 - CONFIDENCE) / 2, samples - 1) * stdev / math.sqrt(samples)


def precise_enough(rounds: list[dict], target: float) -> bool:
    """Whether the CONFIDENCE interval of the mean of ``rounds`` lies within ±target (relative) of it."""
    return summarize(rounds).relative_error <= target


def forks_for(summary: Summary, target: float, limit: int) -> int | None:
    """How many forks of this summary's rounds per fork would bring its interval within ±target
    (relative) if the rounds kept varying as they did; None beyond ``limit``. A forecast for a row
    that missed its target, not a promise: a machine's noise comes and goes."""
    per_fork = max(1, summary.rounds // summary.forks)

    def reaches(forks: int) -> bool:
        samples = forks * per_fork
        return samples > 1 and half_width(summary.rsd, samples) <= target

    if not reaches(limit):
        return None
    low, high = 1, limit  # the error only shrinks with more samples: bisect for the fewest that reach
    while low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if reaches(middle) else (middle + 1, high)
    return low


def t_quantile(p: float, df: int) -> float:
    """The p-quantile of Student's t with df degrees of freedom (bisection on the CDF)."""
    low, high = 0.0, 1e4
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (middle, high) if _t_cdf(middle, df) < p else (low, middle)
    return (low + high) / 2


def _t_cdf(t: float, df: int) -> float:
    """P(T <= t) for t >= 0, through the regularized incomplete beta function."""
    return 1 - 0.5 * _incomplete_beta(df / 2, 0.5, df / (df + t * t))


def _incomplete_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b) by its continued fraction (Numerical Recipes, betacf)."""
    if x <= 0 or x >= 1:
        return 0.0 if x <= 0 else 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x > (a + 1) / (a + b + 2):
        return 1 - _incomplete_beta(b, a, 1 - x)
    c, d = 1.0, 1 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > 1e-300 else 1e-300)
    fraction = d
    for m in range(1, 300):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1 + numerator * d
            d = 1 / (d if abs(d) > 1e-300 else 1e-300)
            c = 1 + numerator / c
            c = c if abs(c) > 1e-300 else 1e-300
            fraction *= d * c
        if abs(d * c - 1) < 1e-15:
            break
    return front * fraction / a
