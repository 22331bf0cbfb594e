"""Levels of a ratio: forks whose ratio sits at distinct values because one row settled at distinct
speeds in them (the JIT compiled a loop two ways). More forks do not narrow such a ratio, so each
level is said with its share and interval ("6.69x, or 6.2x ...: 3 forks of 12").

A ratio takes a row's levels (stats.summary.levels) only where the other rows did not move with
them: every row moving is a host episode (stats.episodes), not a level.
"""
from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from jvmbridge.stats.summary import CONFIDENCE, LEVEL_GAP, LEVEL_SPREADS, levels, paired_log_half_width

# Other rows may move between levels by at most this share of the explaining row's move.
OTHERS_SHARE = 0.5


@dataclass(frozen=True)
class RatioLevel:
    """One level of a ratio: geometric mean of its forks' ratios and its CONFIDENCE interval (inf
    with one fork)."""
    value: float
    low: float
    high: float
    forks: int
    share: float  # of the ratio's forks

    def as_dict(self) -> dict:
        return {"times": self.value, "low": self.low, "high": self.high, "confidence": CONFIDENCE,
                "forks": self.forks, "share": self.share}


@dataclass(frozen=True)
class RatioLevels:
    """A ratio's levels, the most forks first, and the row whose own levels explain them."""
    row: str
    levels: tuple[RatioLevel, ...]
    fork_level: tuple[int, ...]  # per fork (as the ratios were given), the index of its level

    def said(self, why: str) -> str:
        """"6.69x, or 6.2x when ...: 3 forks of 12"; ``why`` says when the other levels come."""
        first, *others = self.levels
        total = len(self.fork_level)
        rest = ", ".join(f"{level.value:.3g}x" for level in others)
        counts = ", ".join(str(level.forks) for level in others)
        return f"{first.value:.3g}x, or {rest} {why}: {counts} forks of {total}"

    def as_dict(self) -> dict:
        return {"row": self.row, "levels": [level.as_dict() for level in self.levels], "fork_level": list(self.fork_level)}


def ratio_levels(fork_ratios: Sequence[float], rows: Mapping[str, Sequence[float | None]],
                 within_rsd: Mapping[str, float]) -> RatioLevels | None:
    """The ratio's levels where one row's forks part into levels, the other rows stay within
    OTHERS_SHARE of its move and the ratio parts with them; else None. A row's None: a fork it has
    no figure of; such a row explains no levels but is judged by the forks it has."""
    best: tuple[float, RatioLevels] | None = None
    for label, values in rows.items():
        complete = [value for value in values if value is not None]
        if len(complete) < len(values):
            continue
        grouping = _grouping(complete, within_rsd.get(label, 0.0))
        if grouping is None or not _alone(label, grouping, rows):
            continue
        separation = _separation(fork_ratios, grouping)
        if separation is not None and (best is None or separation > best[0]):
            best = (separation, _levels_of(label, fork_ratios, grouping))
    return best[1] if best else None


def _grouping(values: Sequence[float], within_rsd: float) -> list[int] | None:
    """Each fork's level (0 the fastest) by the rows' own rule, or None where the row has one."""
    found = levels(list(values), within_rsd)
    if not found:
        return None
    order = sorted(range(len(values)), key=lambda index: values[index])
    grouping = [0] * len(values)
    start = 0
    for number, level in enumerate(found):  # levels come in sorted order, each a run of neighbours
        for index in order[start:start + level.forks]:
            grouping[index] = number
        start += level.forks
    return grouping


def _alone(label: str, grouping: list[int], rows: Mapping[str, Sequence[float | None]]) -> bool:
    """Whether every other row moved between the levels by at most OTHERS_SHARE of this row's move
    (one without a figure in every level: over the levels it has)."""
    def move(values: Sequence[float | None]) -> float:
        by_level = [[v for v, g in zip(values, grouping) if g == number and v is not None] for number in set(grouping)]
        means = [statistics.fmean(level) for level in by_level if level]
        return max(means) / min(means) - 1 if len(means) > 1 else 0.0

    own = move(rows[label])
    return all(move(values) <= OTHERS_SHARE * own for other, values in rows.items() if other != label)


def _separation(fork_ratios: Sequence[float], grouping: list[int]) -> float | None:
    """How far apart the levels lie in pooled spreads, where neighbours are more than LEVEL_GAP and
    LEVEL_SPREADS spreads apart; else None."""
    logs = [[math.log(r) for r, g in zip(fork_ratios, grouping) if g == number] for number in sorted(set(grouping))]
    means = sorted(statistics.fmean(group) for group in logs)
    spread = _pooled_spread(logs)
    gaps = [high - low for low, high in zip(means, means[1:])]
    if min(gaps) <= max(math.log1p(LEVEL_GAP), LEVEL_SPREADS * spread):
        return None
    return min(gaps) / spread if spread else math.inf


def _pooled_spread(groups: list[list[float]]) -> float:
    """The standard deviation inside groups, pooled over them; 0 where no group has two values."""
    squares = sum((value - statistics.fmean(group)) ** 2 for group in groups for value in group)
    freedom = sum(len(group) - 1 for group in groups)
    return math.sqrt(squares / freedom) if freedom else 0.0


def _levels_of(label: str, fork_ratios: Sequence[float], grouping: list[int]) -> RatioLevels:
    """The levels, the most forks first, each with its interval and share."""
    numbers = sorted(set(grouping), key=lambda number: -grouping.count(number))
    found = []
    for number in numbers:
        own = [r for r, g in zip(fork_ratios, grouping) if g == number]
        value = math.exp(statistics.fmean(math.log(r) for r in own))
        half = paired_log_half_width(own)
        found.append(RatioLevel(value=value, low=value / math.exp(half), high=value * math.exp(half), forks=len(own),
                                share=len(own) / len(fork_ratios)))
    renumbered = {number: index for index, number in enumerate(numbers)}
    return RatioLevels(row=label, levels=tuple(found), fork_level=tuple(renumbered[g] for g in grouping))
