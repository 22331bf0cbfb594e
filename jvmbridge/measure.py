"""Warm-up and timed rounds, shared by every engine that can run a loop of N operations.

``run(n)`` performs n operations and returns the elapsed nanoseconds measured inside the
engine's own loop, so call overhead between Python and the engine stays out of the figure.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Callable

RunLoop = Callable[[int], int]

# A warm-up chunk this long keeps the per-chunk timer and call cost negligible.
CHUNK_SECONDS = 0.02
# Steady when the last STEADY_WINDOW chunks agree within STEADY_TOLERANCE (relative range).
STEADY_WINDOW = 5
STEADY_TOLERANCE = 0.05


@dataclass
class Warmup:
    iterations: int
    seconds: float
    steady: bool  # False: the time limit ran out before the chunks agreed
    ns_per_op: float  # the last chunk's speed, used to size budgeted rounds

    def as_dict(self) -> dict:
        return asdict(self)


def warm_up(run: RunLoop, min_seconds: float, max_seconds: float) -> Warmup:
    """Run chunks until their speed settles (JIT compiled) or ``max_seconds`` pass."""
    chunk, total, recent = 1000, 0, []
    started = time.perf_counter()
    while True:
        elapsed_ns = max(run(chunk), 1)
        total += chunk
        recent = (recent + [elapsed_ns / chunk])[-STEADY_WINDOW:]
        spent = time.perf_counter() - started
        steady = len(recent) == STEADY_WINDOW and (max(recent) - min(recent)) / min(recent) <= STEADY_TOLERANCE
        if (steady and spent >= min_seconds) or spent >= max_seconds:
            return Warmup(total, spent, steady, recent[-1])
        if elapsed_ns < CHUNK_SECONDS * 1e9:
            chunk = max(chunk, int(chunk * CHUNK_SECONDS * 1e9 / elapsed_ns))


def split_iterations(iterations: int, rounds: int) -> list[int]:
    """``iterations`` shared among ``rounds`` rounds differing by at most one; no empty round."""
    rounds = min(rounds, iterations)
    base, extra = divmod(iterations, rounds)
    return [base + (1 if i < extra else 0) for i in range(rounds)]


def timed_rounds(run: RunLoop, iterations: int, rounds: int) -> list[dict]:
    """Run exactly ``iterations`` operations in ``rounds`` timed rounds."""
    return [{"iterations": n, "ns": run(n)} for n in split_iterations(iterations, rounds)]
