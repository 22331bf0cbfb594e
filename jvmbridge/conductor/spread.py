"""Where a wide ratio's first-stage spread came from: the one fork that made most of it, and the row
of the ratio that moved in that fork. It only says so: nothing is set aside by it (a rule reading
the ratios could pick the answer; docs/method.md)."""
from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# Said where one fork made more than this share of the spread (of the squared deviations of the
# forks' log ratios). Of five forks drawn from one normal spread, one makes more than half in 82%
# of first stages, more than 80% in 20%: below that, a fork is no more to blame than its noise.
MOST = 0.8


@dataclass(frozen=True)
class OneFork:
    """A fork that made ``share`` of a ratio's first-stage spread, and each side that moved in it
    (configuration, its reading there against its median over the other first forks, relative)."""
    fork: int
    share: float
    moved: tuple[tuple[str, float], ...]

    def said(self, whose: str) -> str:
        """"fork 3 made 91% of ``whose``, where JVM ..., intrinsics off, message ran 18.0% slower
        than in the other first forks"."""
        moves = ", ".join(f"{label} ran {abs(move):.1%} {'slower' if move > 0 else 'faster'}" for label, move in self.moved)
        return f"fork {self.fork + 1} made {self.share:.0%} of {whose}, where {moves} than in the other first forks"


def one_fork(first: Sequence[tuple[int, float]], readings: Mapping[str, Mapping[int, float | None]]) -> OneFork | None:
    """The fork of ``first`` (fork, ratio) that made more than MOST of its spread, with the sides of
    ``readings`` (configuration -> fork -> its reading) that moved in it by at least half of the most
    any did; None where no one fork did, or fewer than three forks."""
    if len(first) < 3:
        return None
    logs = [math.log(ratio) for _, ratio in first]
    whole = _squares(logs)
    if whole == 0:
        return None
    shares = [1 - _squares(logs[:i] + logs[i + 1:]) / whole for i in range(len(logs))]
    at = max(range(len(logs)), key=shares.__getitem__)
    if shares[at] <= MOST:
        return None
    fork, others = first[at][0], [number for number, _ in first if number != first[at][0]]
    moves = {label: move for label, own in readings.items() if (move := _move(own, fork, others)) is not None}
    most = max(map(abs, moves.values()), default=0.0)
    moved = tuple(sorted(((label, move) for label, move in moves.items() if abs(move) >= most / 2),
                         key=lambda each: -abs(each[1])))
    return OneFork(fork=fork, share=shares[at], moved=moved) if moved else None


def _squares(logs: Sequence[float]) -> float:
    mean = statistics.fmean(logs)
    return sum((value - mean) ** 2 for value in logs)


def _move(own: Mapping[int, float | None], fork: int, others: Sequence[int]) -> float | None:
    """``own``'s reading in ``fork`` against its median over ``others``, relative; None where missing."""
    there, elsewhere = own.get(fork), [value for number in others if (value := own.get(number)) is not None]
    return there / statistics.median(elsewhere) - 1 if there is not None and elsewhere else None
