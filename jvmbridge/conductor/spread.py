"""Where a wide ratio's first-stage spread came from: the one fork that made it at least twice as
wide as the other forks' own, and the row of the ratio that moved in that fork. It only says so:
nothing is set aside by it (a rule reading the ratios could pick the answer; docs/method.md)."""
from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

# Said where one fork made the spread (standard deviation of the forks' log ratios) this many times
# as wide as the others' own. Of five forks drawn from one normal spread, one does so in 18% of first
# stages, of seven 5%; the line tells where the spread came from, not that the fork was wrong.
WIDER = 2.0
# The fewest first forks the line is said of: the threshold's chance is taken at five (18%) and
# falls with more (seven, compare's first stage: 5%); a first stage cut under five says nothing.
FIRST_FORKS = 5


@dataclass(frozen=True)
class OneFork:
    """A fork that made a ratio's first-stage spread ``wider`` times the others' own, and each side
    that moved the ratio its way in that fork (configuration, its figure there against its median
    over the other first forks, relative)."""
    fork: int
    wider: float
    moved: tuple[tuple[str, float], ...]

    def said(self) -> str:
        """"fork 5 made that spread 9.8 times as wide, where JVM ..., intrinsics off, message ran
        40.7% slower than in the other first forks"."""
        moves = " and ".join(f"{label} ran {abs(move):.1%} {'slower' if move > 0 else 'faster'}"
                             for label, move in self.moved)
        return (f"fork {self.fork + 1} made that spread {self.wider:.1f} times as wide, where {moves} than in the "
                f"other first forks")


def one_fork(first: Sequence[tuple[int, float, float]], sides: tuple[str, str]) -> OneFork | None:
    """The fork of ``first`` (fork, the slower side's ns/op, the faster's, as the ratio took them)
    that made its spread WIDER times the others', and the ``sides`` (their labels) that moved the
    ratio its way; None where no one fork did, or the first stage is under FIRST_FORKS."""
    if len(first) < FIRST_FORKS:
        return None
    logs = [math.log(slower / faster) for _, slower, faster in first]
    whole = statistics.stdev(logs)
    others = [statistics.stdev(logs[:i] + logs[i + 1:]) for i in range(len(logs))]
    at = min(range(len(logs)), key=others.__getitem__)
    if not 0 < others[at] * WIDER <= whole:
        return None
    away = logs[at] - statistics.fmean(logs[:at] + logs[at + 1:])
    rest = [each for index, each in enumerate(first) if index != at]
    moves = [_move(first[at][side + 1], [each[side + 1] for each in rest]) for side in (0, 1)]
    # A slower slower side raises the ratio, a slower faster side lowers it: each side's share of the move.
    pushes = [math.log1p(moves[0]) * math.copysign(1, away), -math.log1p(moves[1]) * math.copysign(1, away)]
    most = max(pushes)
    moved = tuple((sides[side], moves[side]) for side in sorted((0, 1), key=lambda side: -pushes[side])
                  if pushes[side] > 0 and pushes[side] >= most / 2)
    return OneFork(fork=first[at][0], wider=whole / others[at], moved=moved) if moved else None


def _move(there: float, elsewhere: Sequence[float]) -> float:
    """``there`` against the median of ``elsewhere``, relative."""
    return there / statistics.median(elsewhere) - 1
