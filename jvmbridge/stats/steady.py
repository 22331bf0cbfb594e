"""Whether a fork reached a steady state: change points of its warm-up chunks and timed rounds, by
PELT (Barrett et al., OOPSLA 2017; ruptures) with BIC's penalty 3 log n: theirs, 15 log n, missed a
30% decay at 20-50 points (tests/unit/test_stats.py). A fork is flat, warm-up, slowdown or has no
steady state; rounds before the last change are set aside as warm-up."""
from __future__ import annotations

import functools
import math
import statistics
import warnings
from dataclasses import dataclass
from enum import Enum

# PELT's cost grows with the square of the length (300 points: 0.5 s); JIT phases outlast a bin.
MAX_WARMUP_POINTS = 40
# Segments closer than this (or three standard errors) are one level: PELT also splits on variance
# alone (50 ms chunks are noisier than 0.5 s rounds).
EQUIVALENT = 0.02
PENALTY_PER_LOG_N = 3
# A steady state needs at least this many timed rounds after the last change.
STEADY_ROUNDS = 3


class Steadiness(str, Enum):
    FLAT = "flat"
    WARMUP = "warm-up"
    SLOWDOWN = "slowdown"
    NO_STEADY_STATE = "no steady state"


@dataclass(frozen=True)
class Steady:
    kind: Steadiness
    first_round: int  # the first timed round after the fork's last change (0: all of them)


def classify(chunks: list[float], rounds: list[float]) -> Steady:
    """The steadiness of one fork from its warm-up chunks' and timed rounds' ns/op, in run order."""
    return _classify(tuple(chunks), tuple(rounds))


# PELT takes ~12 ms a fork, and the stopping rule asks again about the same forks after every fork.
@functools.lru_cache(maxsize=256)
def _classify(chunks: tuple[float, ...], rounds: tuple[float, ...]) -> Steady:
    binned = _binned(list(chunks), MAX_WARMUP_POINTS)
    series = [value / statistics.median(rounds) for value in binned + list(rounds)]  # relative: one scale for every row
    changes = _merged(series, _change_points(series))
    if not changes:
        return Steady(kind=Steadiness.FLAT, first_round=0)
    last = changes[-1]
    first_round = max(0, last - len(binned))
    if len(rounds) - first_round < STEADY_ROUNDS:
        return Steady(kind=Steadiness.NO_STEADY_STATE, first_round=first_round)
    before = changes[-2] if len(changes) > 1 else 0
    faster = statistics.fmean(series[last:]) < statistics.fmean(series[before:last])
    return Steady(kind=Steadiness.WARMUP if faster else Steadiness.SLOWDOWN, first_round=first_round)


def _binned(values: list[float], points: int) -> list[float]:
    """``values`` as at most ``points`` means of consecutive runs of them, in order."""
    size = math.ceil(len(values) / points) if values else 1
    return [statistics.fmean(values[i:i + size]) for i in range(0, len(values), size)]


def _change_points(series: list[float]) -> list[int]:
    """Where PELT (normal model, penalty 3 log n) splits the series: indices of each new segment."""
    if len(series) < 4:
        return []
    import numpy
    import ruptures
    from ruptures.costs import CostNormal

    with warnings.catch_warnings():  # its note that constant segments get a small bias, on every construction
        warnings.simplefilter("ignore", UserWarning)
        cost = CostNormal(add_small_diag=True)
    found = ruptures.Pelt(custom_cost=cost, min_size=2, jump=1).fit(numpy.array(series)).predict(
        pen=PENALTY_PER_LOG_N * math.log(len(series)))
    return [int(index) for index in found[:-1]]  # the last is the series' end


def _merged(series: list[float], changes: list[int]) -> list[int]:
    """The change points left after merging, least different first, neighbouring segments within
    noise of each other."""
    # Noise robust to the changes themselves: median of successive differences.
    noise = 1.4826 * statistics.median(abs(b - a) for a, b in zip(series, series[1:])) / math.sqrt(2)
    kept = list(changes)
    while kept:
        bounds = [0, *kept, len(series)]
        closeness = [_apart(series[bounds[i]:bounds[i + 1]], series[bounds[i + 1]:bounds[i + 2]], noise)
                     for i in range(len(kept))]
        nearest = min(range(len(kept)), key=closeness.__getitem__)
        if closeness[nearest] >= 1:
            break
        del kept[nearest]
    return kept


def _apart(left: list[float], right: list[float], noise: float) -> float:
    """Two neighbouring segments' distance in units of what tells them apart: at least EQUIVALENT
    and three standard errors of the difference."""
    needed = max(EQUIVALENT, 3 * noise * math.sqrt(1 / len(left) + 1 / len(right)))
    return abs(statistics.fmean(right) - statistics.fmean(left)) / needed
