"""Host episodes: forks in which the host slowed every row at once, each by its own amount, seen
by the yardsticks alone (loops no ratio is made of, timed in the same cycles).

Which forks go is decided from the yardsticks only, never the ratios, so the rule can drop forks an
episode spoiled but cannot pick an answer (docs/decisions/0010-yardsticks-for-episodes.md).
"""
from __future__ import annotations

import statistics
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

# Relative slowdown over the yardstick's baseline that makes an episode, whatever its calm spread:
# a smaller drift moves both sides of a ratio alike.
EPISODE_FLOOR = 0.03
# ... and this many calm spreads between forks: docs/decisions/0010-yardsticks-for-episodes.md
EPISODE_SPREADS = 4.0
# Fewer readings give no baseline: nothing is set aside.
EPISODE_READINGS = 3
# A normal sample's standard deviation over its median absolute deviation.
MAD_SCALE = 1.4826


@dataclass(frozen=True)
class Yardstick:
    """One yardstick over a run: baseline (ns/op), calm spread between forks and the episode
    threshold (both relative: 0.05 = 5%)."""
    baseline: float
    spread: float
    threshold: float

    def slowdown(self, reading: float) -> float:
        return reading / self.baseline - 1


@dataclass(frozen=True)
class Episodes:
    """The forks (indices into the readings) set aside, and each one's largest yardstick slowdown."""
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
    """Forks some yardstick read slower than its baseline (median of its forks) by more than
    EPISODE_FLOOR and EPISODE_SPREADS calm spreads.

    ``readings``: per yardstick, its ns/op in each fork (hostspeed's fork_ns_per_op) or None."""
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
    """Baseline, calm spread and threshold from a yardstick's forks (None under EPISODE_READINGS);
    median and MAD, which the few forks in an episode do not move."""
    found = [reading for reading in readings if reading is not None]
    if len(found) < EPISODE_READINGS:
        return None
    baseline = statistics.median(found)
    spread = MAD_SCALE * statistics.median(abs(reading - baseline) for reading in found) / baseline
    return Yardstick(baseline=baseline, spread=spread, threshold=max(EPISODE_FLOOR, EPISODE_SPREADS * spread))
