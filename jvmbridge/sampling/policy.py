"""How many and how long, in one place: every default, a workload's Sampling (a first stage, then
Stein's procedure up to the limit), and a run's time limit shared among its jobs (TimeLimit)."""
from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from decimal import Decimal

from jvmbridge.sampling.progress import Forecast
from jvmbridge.stats.summary import CONFIDENCE, t_quantile

# Every default of how many and how long, named once (the CLI's help and the docs read these).
# The first stage, whose spread decides how many run: seven put every ratio within ±2% more often
# than five in the same 90 s (docs/decisions/0016-a-first-stage-of-seven.md).
FORKS = 7
# More forks while a ratio is wider than TARGET_ERROR, up to what 90 s hold at a quiet hour once
# the sharp rows stop (docs/decisions/0014-forks-run-the-ratios-still-short.md).
FORK_LIMIT = 16
TARGET_ERROR = 0.02  # the relative half-width of a 95% interval that stops adding forks
MAX_FORKS = 100  # the most --forks or --max-forks may ask
# Where the rule chooses the forks, more rarely sharpen a ratio enough to be worth the wait
# (docs/decisions/0009-a-default-run-of-90-seconds.md).
TOTAL_TIME = 90.0
# A time limit leaves this after the last fork: the figures, the table, the saved run
# (docs/decisions/0009-a-default-run-of-90-seconds.md).
FINISH_SECONDS = 1.5
# A time limit cuts even the first stage, down to this: t(0.975, 1) = 12.7, t(0.975, 2) = 4.3.
FORKS_IN_TIME = 3
# Few rounds, more forks: forks differ more than rounds (docs/decisions/0001-the-fork-is-the-unit.md).
ROUNDS = 4
# Over 8 minutes a fork at the default round: more is a typo, not a plan.
MAX_ROUNDS = 1000
# Keeps timer and call costs far below 0.1%, and rides out a scheduler hiccup.
ROUND_SECONDS = 0.5
MAX_ROUND_SECONDS = 3600.0
# Timer and round trip under 0.1%, one host speed a cycle (docs/decisions/0002-paired-slices.md);
# ten cycles once warm-ups outlast fresh memory (docs/decisions/0012-warm-ups-through-fresh-memory-and-ten-cycles.md).
SLICE_SECONDS = 0.05
CYCLES = 10
# A warm-up not steady by then shows in its first slices, set aside (docs/decisions/0006-warm-up.md).
SLICE_WARMUP_MAX_SECONDS = 3.0
# The yardstick's share of a slice: its figure needs far less than a ratio's sides
# (docs/decisions/0008-a-jvm-per-workload.md).
UNCOUNTED_SHARE = 0.25
MAX_THREADS = 256
# About a day at JVM speed: more is a typo, not a plan.
MAX_ITERATIONS = 10**12

def check_iterations(count: int | Decimal) -> None:
    """ValueError, in one line however large ``count`` is, unless 1 <= count <= MAX_ITERATIONS."""
    if not 1 <= count <= MAX_ITERATIONS:
        # Decimal formats any size (a float overflows past 1e308).
        shown = f"{count:,}" if isinstance(count, int) and -10**15 < count < 10**15 else f"{Decimal(count):.3g}"
        raise ValueError(f"iterations must be between 1 and {MAX_ITERATIONS:.0e}, not {shown}")


@dataclass(frozen=True)
class Sampling:
    """How an operation is timed: rounds per fork, forks until the interval is narrow, loops at once."""
    # None: rounds of about round_seconds (pyperf's calibration); a count: the run's work, shared
    # among the first forks and split into their rounds.
    iterations: int | None = None
    rounds: int = ROUNDS
    # Rounds per fork from this host's earlier runs where enough (comparison.dimensioning).
    rounds_from_history: bool = False
    forks: int = FORKS  # at least this many fresh processes per configuration (JMH's forks)
    # None: FORK_LIMIT (at least ``forks``); with a fixed count the user fixed the work: ``forks``.
    max_forks: int | None = None
    target_error: float = TARGET_ERROR
    round_seconds: float = ROUND_SECONDS
    # Loops at once, each with its own cipher (JVM threads, pyca and openssl processes); aggregate figures.
    threads: int = 1

    def __post_init__(self):
        if self.iterations is not None:
            check_iterations(self.iterations)
        if not 1 <= self.rounds <= (self.fork_iterations or self.rounds):
            raise ValueError(f"rounds must be between 1 and the iteration count a fork runs "
                             f"({self.fork_iterations:,}), not {self.rounds}")
        if not 1 <= self.threads <= MAX_THREADS:
            raise ValueError(f"threads must be between 1 and {MAX_THREADS}, not {self.threads}")
        if not 0.01 <= self.round_seconds <= MAX_ROUND_SECONDS:
            raise ValueError(f"round time must be between 0.01 and {MAX_ROUND_SECONDS:.0f} s, not {self.round_seconds}")
        if not 1 <= self.forks <= MAX_FORKS:
            raise ValueError(f"forks must be between 1 and {MAX_FORKS}, not {self.forks}")
        if not self.forks <= self.fork_limit <= MAX_FORKS:
            raise ValueError(f"max forks must be between --forks ({self.forks}) and {MAX_FORKS}, not {self.max_forks}")
        if not 0 < self.target_error < 1:
            raise ValueError(f"target error must be between 0 and 100%, not {self.target_error:.0%}")

    @property
    def fork_limit(self) -> int:
        if self.max_forks is not None:
            return self.max_forks
        return self.forks if self.iterations is not None else max(FORK_LIMIT, self.forks)

    @property
    def fork_iterations(self) -> int | None:
        """Each fork's share of ``iterations`` over the first stage, rounded up; None for timed rounds."""
        return None if self.iterations is None else -(-self.iterations // self.first_stage)

    @property
    def first_stage(self) -> int:
        """Forks deciding how many run, whose Stein interval bounds the row's: at least two."""
        return max(self.forks, min(2, self.fork_limit))

    def budget(self) -> str:
        """How long each fork measures, for a report header."""
        parallel = f", {self.threads} loops at once" if self.threads > 1 else ""
        forks = self.forks_budget()
        if self.iterations is None:
            chosen = " (or as this host's earlier runs chose: notes)" if self.rounds_from_history else ""
            return f"{self.rounds_asked} rounds of {self.round_seconds:g} s per fork{chosen}{parallel}, {forks}"
        each = " in each loop" if self.threads > 1 else ""
        return (f"{self.iterations:,} messages of each row{each}, {self.fork_iterations:,} a fork in {self.rounds} "
                f"rounds{parallel}, {forks}")

    def forks_budget(self) -> str:
        """"2 fork(s)", "7 to 16 forks until ±2% ...", for a report header."""
        return (f"{self.forks} fork(s)" if self.fork_limit == self.forks else
                f"{self.forks} to {self.fork_limit} forks until ±{self.target_error * 100:g}% ({CONFIDENCE:.0%}) "
                "for each ratio (or its levels)")

    @property
    def rounds_asked(self) -> int:
        """The rounds per fork as the run was asked (not as dimensioning chose a row's)."""
        return Sampling.rounds if self.rounds_from_history else self.rounds

    def as_dict(self) -> dict:
        """As the run's metadata records it."""
        return {**asdict(self), "rounds": self.rounds_asked, "budget": self.budget()}


def forks_to_reach(first_stage: Sequence[float], target: float) -> int | None:
    """Forks in all for a ratio within ±``target``, by Stein's rule on the first stage; None under two."""
    logs = [math.log(r) for r in first_stage]
    if len(logs) < 2:
        return None
    t = t_quantile(1 - (1 - CONFIDENCE) / 2, len(logs) - 1)
    return max(len(logs), math.ceil((t * statistics.stdev(logs) / math.log1p(target)) ** 2))


# A ratio needing more than this times the limit's forks stays over twice the target wide at the
# limit: it does not drive the forks (docs/decisions/0004-first-stage-and-fork-limit.md).
OUT_OF_REACH = 4


def forks_to_run(needs: Iterable[int], first_stage: int, limit: int) -> int:
    """The first stage, then what the reachable ratios' ``needs`` ask, at most ``limit``."""
    return max([first_stage, *(min(n, limit) for n in needs if not out_of_reach(n, limit))])


def out_of_reach(need: int, limit: int) -> bool:
    return need > OUT_OF_REACH * limit


class TimeLimit:
    """A run's --total-time shared among its jobs: each runs its first stage; the rest is shared in
    proportion to cost, so each may add the same share of forks; what one leaves goes on."""

    def __init__(self, seconds: float, forecast: Forecast):
        self.seconds, self.forecast = seconds, forecast

    def share(self, index: int, run_elapsed: float) -> float:
        """The seconds job ``index`` may take, starting ``run_elapsed`` into the run."""
        first_stages = [self.forecast.first_stage_seconds(i) for i in range(index, len(self.forecast.jobs))]
        total = sum(first_stages)
        spare = max(0.0, self.seconds - FINISH_SECONDS - run_elapsed - total)
        return first_stages[0] * (1 + spare / total) if total else spare

    @staticmethod
    def forks(share: float, first_stage: int, done: int, job_elapsed: float, next_fork: float | None) -> int:
        """The most forks a job of ``share`` seconds may run, each at ``next_fork`` seconds (the next
        fork's forecast; None before the first fork: the first stage), at least FORKS_IN_TIME."""
        if done == 0 or next_fork is None:
            return first_stage
        return max(min(first_stage, FORKS_IN_TIME), done + math.floor((share - job_elapsed) / max(next_fork, 1e-9)))
