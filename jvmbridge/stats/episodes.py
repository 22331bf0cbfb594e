"""Host episodes: forks in which the host slowed everything at once, each row by its own amount,
seen by the yardsticks alone (loops that no ratio is made of, timed in the same cycles).

A fork inside an episode carries into every ratio the difference between how much the episode
slowed its two sides (+60% against +37% moves a ratio by 17%), and one such fork in a first stage
asks for more forks than the limit allows. Set aside by a rule that reads only the yardsticks, such
a fork leaves the ratios' forks as they would have been without it: which forks go cannot depend on
what their ratios are, so the rule cannot pick an answer, only drop forks a host episode spoiled.
The same rule reads any unit whose yardstick readings it is given: forks, or cycles of one fork.
"""
from __future__ import annotations

import statistics
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

# A reading this far above its yardstick's baseline (relative) is an episode, whatever its calm
# spread: a host drifting by less moves both sides of a ratio alike, and costs no fork.
EPISODE_FLOOR = 0.03
# ... and this many times the yardstick's calm spread between forks: in the simulations of
# tests/unit/test_episodes.py 3 set aside up to 1.2% of calm forks, 5 and 6 missed up to 15-21% of
# episodes that slowed a yardstick of 1.5% spread by 6-36%.
EPISODE_SPREADS = 4.0
# Fewer readings than this give no baseline to stand out from: nothing is set aside.
EPISODE_READINGS = 3
# The standard deviation of a normal sample is 1.4826 times its median absolute deviation.
MAD_SCALE = 1.4826


@dataclass(frozen=True)
class Yardstick:
    """One yardstick over a run: its baseline (ns/op), its calm spread between forks (relative) and
    the slowdown beyond which a fork is in an episode (relative: 0.05 = 5% above the baseline)."""
    baseline: float
    spread: float
    threshold: float

    def slowdown(self, reading: float) -> float:
        return reading / self.baseline - 1


@dataclass(frozen=True)
class Episodes:
    """Which forks (by index into the readings) fell inside a host episode, and how much the host
    slowed in each: the largest slowdown any yardstick read there."""
    set_aside: tuple[int, ...]
    slowdowns: tuple[float, ...]  # per fork set aside, relative (0.15: 15% slower)
    seen_by: tuple[str, ...]  # per fork set aside, the yardstick that read that slowdown
    yardsticks: Mapping[str, Yardstick]

    def kept(self, values: Sequence) -> list:
        """``values`` (one per fork, as the readings were) without the forks set aside."""
        return [value for index, value in enumerate(values) if index not in self.set_aside]

    def said(self) -> str:
        """"2 set aside, the host slowed 15-40% during them", for the header's Forks line; "" with none."""
        if not self.set_aside:
            return ""
        low, high = min(self.slowdowns), max(self.slowdowns)
        span = f"{high:.0%}" if round(low, 2) == round(high, 2) else f"{low * 100:.0f}-{high:.0%}"
        during = "during it" if len(self.set_aside) == 1 else "during them"
        return f"{len(self.set_aside)} set aside, the host slowed {span} {during}"

    def as_dict(self) -> dict:
        """As the saved run keeps it."""
        return {"set_aside": list(self.set_aside), "slowdowns": list(self.slowdowns), "seen_by": list(self.seen_by),
                "yardsticks": {name: {"baseline_ns_per_op": y.baseline, "spread": y.spread, "threshold": y.threshold}
                               for name, y in self.yardsticks.items()}}


def episodes(readings: Mapping[str, Sequence[float | None]]) -> Episodes:
    """A fork is in an episode when a yardstick read it slower than its run's baseline (the median
    of its forks' readings) by more than EPISODE_FLOOR and EPISODE_SPREADS times its calm spread.

    ``readings``: per yardstick, its figure in each fork (ns/op: the lower quartile of its slices
    there, as hostspeed's fork_ns_per_op), None where it has none; the ratios are never read."""
    yardsticks = {name: yardstick for name, own in readings.items() if (yardstick := judge(own)) is not None}
    found: dict[int, tuple[float, str]] = {}
    for name, yardstick in yardsticks.items():
        for index, slowdown in _slowed(yardstick, readings[name]):
            if index not in found or slowdown > found[index][0]:
                found[index] = (slowdown, name)
    aside = sorted(found)
    return Episodes(set_aside=tuple(aside), slowdowns=tuple(found[i][0] for i in aside),
                    seen_by=tuple(found[i][1] for i in aside), yardsticks=yardsticks)


def _slowed(yardstick: Yardstick, readings: Sequence[float | None]) -> Iterator[tuple[int, float]]:
    """Each fork the yardstick read slower than its threshold, with its slowdown there."""
    for index, reading in enumerate(readings):
        if reading is not None and (slowdown := yardstick.slowdown(reading)) > yardstick.threshold:
            yield index, slowdown


def judge(readings: Sequence[float | None]) -> Yardstick | None:
    """One yardstick's baseline, calm spread and threshold from its forks' readings; None with
    fewer than EPISODE_READINGS. Median and median absolute deviation: the forks inside an episode
    (a few of many) move neither."""
    found = [reading for reading in readings if reading is not None]
    if len(found) < EPISODE_READINGS:
        return None
    baseline = statistics.median(found)
    spread = MAD_SCALE * statistics.median(abs(reading - baseline) for reading in found) / baseline
    return Yardstick(baseline=baseline, spread=spread, threshold=max(EPISODE_FLOOR, EPISODE_SPREADS * spread))
