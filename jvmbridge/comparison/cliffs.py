"""Cliffs in a size sweep: a larger message taking less time, or a rising cost per byte, beyond the
intervals and CLIFF_FACTOR: a different code path, as JDK bugs showed for GCM below 8 KiB."""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from jvmbridge.comparison.ratios import quotient
from jvmbridge.engines import name_of
from jvmbridge.results import missing

# The least jump, beyond the intervals, that is called a cliff.
CLIFF_FACTOR = 1.2
_CONFIGURATION = ["engine", "implementation", "setting", "cipher", "direction", "shape", "threads"]


@dataclass(frozen=True)
class Cliff:
    configuration: str  # "JVM SunJCE, JDK 17.0.15 | intrinsics on | aes-128-gcm encrypt, message"
    smaller: int  # bytes
    larger: int
    what: str  # "cost per byte rises" or "a larger message takes less time"
    times: float
    low: float
    high: float

    def describe(self) -> str:
        return (f"{self.configuration}: from {self.smaller:,} to {self.larger:,} B {self.what} "
                f"{self.times:.2f}x [{self.low:.2f}-{self.high:.2f}]")

    def as_dict(self) -> dict:
        return {"configuration": self.configuration, "smaller_bytes": self.smaller, "larger_bytes": self.larger,
                "what": self.what, "times": self.times, "low": self.low, "high": self.high}


def cliffs(frame: pd.DataFrame) -> list[Cliff]:
    """Every cliff between adjacent sizes of each configuration in ``frame`` (one run's rows)."""
    found = []
    for rows in _by_configuration(frame):
        rows.sort(key=lambda row: row.message_bytes)
        first = rows[0]
        name = f"{name_of(first)} | {first.setting} | {first.cipher} {first.direction}, {first.shape}"
        for a, b in zip(rows, rows[1:]):
            if missing(a.ns_per_op_error) or missing(b.ns_per_op_error):
                continue
            checks = {"a larger message takes less time": quotient(a.ns_per_op, a.ns_per_op_error, b.ns_per_op,
                                                                   b.ns_per_op_error)}
            if a.message_bytes:  # cost per byte at the larger size over that at the smaller (an empty one has none)
                checks = {"cost per byte rises": quotient(b.ns_per_op / b.message_bytes, b.ns_per_op_error / b.message_bytes,
                                                          a.ns_per_op / a.message_bytes,
                                                          a.ns_per_op_error / a.message_bytes), **checks}
            for what, (times, low, high, _) in checks.items():
                if low > CLIFF_FACTOR:
                    found.append(Cliff(configuration=name, smaller=int(a.message_bytes), larger=int(b.message_bytes),
                                       what=what, times=times, low=low, high=high))
    return found


def _by_configuration(frame: pd.DataFrame) -> list[list]:
    """``frame``'s rows (itertuples) of each configuration, in the order each first appears."""
    keys = [key for key in _CONFIGURATION if key in frame]
    configurations: dict[tuple, list] = {}  # grouped as tuples: itertuples() of each pandas group took ms
    for row in frame.itertuples():
        configurations.setdefault(tuple(None if missing(getattr(row, key)) else getattr(row, key) for key in keys),
                                  []).append(row)
    return list(configurations.values())
