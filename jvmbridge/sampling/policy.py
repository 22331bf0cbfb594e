"""How many and how long, in one place: every default, a workload's Sampling (a first stage of forks,
then as many as Stein's procedure says the target takes, up to the limit), and how a run's time
limit shares its seconds among the jobs (TimeLimit)."""
from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from decimal import Decimal

from jvmbridge.sampling.progress import Forecast
from jvmbridge.stats.summary import CONFIDENCE, t_quantile

# Every default of how many and how long, each named once: the conductor, the CLI's help and
# the docs (written from the help) read these.
FORKS = 5  # the first stage, whose spread decides how many run (docs/decisions/0004-first-stage-and-fork-limit.md)
FORK_LIMIT = 12  # more forks while a ratio or row is wider than TARGET_ERROR, up to this (ditto)
TARGET_ERROR = 0.02  # the relative half-width of a 95% interval that stops adding forks
MAX_FORKS = 100  # the most --forks or --max-forks may ask
# A run whose forks are the rule's to choose (none of --forks, --max-forks, --iterations given) aims
# to end within this many seconds: episodes and levels aside, more forks rarely sharpen a ratio enough
# to be worth the wait (docs/decisions/0009-a-default-run-of-90-seconds.md).
TOTAL_TIME = 90.0
# A run's time limit cuts even the first stage, down to this many forks: an interval over two has
# t(0.975, 1) = 12.7 times the forks' standard error, over three 4.3.
FORKS_IN_TIME = 3
# Few rounds and more forks: forks differ more than rounds inside one (docs/decisions/0001-the-fork-is-the-unit.md).
ROUNDS = 4
# A thousand of the default half second is over 8 minutes a fork, and the interval is over forks,
# not rounds: more is a typo, not a plan.
MAX_ROUNDS = 1000
# A timed round this long keeps timer and call costs far below 0.1% and rides out a scheduler hiccup.
ROUND_SECONDS = 0.5
MAX_ROUND_SECONDS = 3600.0
# Long enough that the timer and the command's round trip are below 0.1% of a slice, short enough
# that a cycle sees one host speed; fewer cycles spread forks more (docs/decisions/0002-paired-slices.md).
SLICE_SECONDS = 0.05
CYCLES = 20
# A slice-run configuration's warm-up, before its fork's first cycle: at most this long, as an
# engine's own forks in turns wait up to 15 s; one not steady by then shows in its first slices,
# which its row's figure sets aside (docs/decisions/0006-warm-up.md).
SLICE_WARMUP_MAX_SECONDS = 3.0
# A configuration that is no row's (the host's yardstick) times this share of a slice each cycle: its
# figure needs far less time than a ratio's sides (docs/decisions/0008-a-jvm-per-workload.md).
UNCOUNTED_SHARE = 0.25
MAX_THREADS = 256
# 10^12 messages already take about a day at JVM speed; more is a typo, not a plan.
MAX_ITERATIONS = 10**12

def check_iterations(count: int | Decimal) -> None:
    """ValueError, in one line however large ``count`` is, unless 1 <= count <= MAX_ITERATIONS."""
    if not 1 <= count <= MAX_ITERATIONS:
        # Decimal formats any size (a float overflows past 1e308; abs() a Decimal past 1e999999).
        shown = f"{count:,}" if isinstance(count, int) and -10**15 < count < 10**15 else f"{Decimal(count):.3g}"
        raise ValueError(f"iterations must be between 1 and {MAX_ITERATIONS:.0e}, not {shown}")


@dataclass(frozen=True)
class Sampling:
    """How an operation is timed: rounds per fork, forks until the interval is narrow, loops at once."""
    # None: each round runs for about round_seconds (pyperf's calibration); a count: the run's work,
    # that many messages of each configuration, shared among its first forks (fork_iterations) and
    # split into their rounds (AESNITester's fixed loop, in one fork with forks=1).
    iterations: int | None = None
    rounds: int = ROUNDS
    # Each configuration's rounds per fork chosen from this host's earlier runs of it where there are
    # enough (jvmbridge.comparison.dimensioning); ``rounds`` where not. False: ``rounds`` as given.
    rounds_from_history: bool = False
    forks: int = FORKS  # at least this many fresh processes per configuration (JMH's forks)
    # More forks, up to max_forks, while the interval is wider than target_error. None: FORK_LIMIT (at
    # least ``forks``); with a fixed iteration count the user fixed the work, so exactly ``forks``.
    max_forks: int | None = None
    target_error: float = TARGET_ERROR
    round_seconds: float = ROUND_SECONDS
    # Loops running at once, each with its own cipher (`openssl speed -multi`): JVM threads,
    # pyca processes (the GIL), openssl processes. Figures are then the aggregate of all.
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
        """Each fork's share of ``iterations`` over the first stage's forks, rounded up; None for timed rounds."""
        return None if self.iterations is None else -(-self.iterations // self.first_stage)

    @property
    def first_stage(self) -> int:
        """How many forks decide how many run (forks_planned), whose Stein interval bounds the
        row's (stats.summary.summarize): ``forks``, and at least two, since one fork shows no spread."""
        return max(self.forks, min(2, self.fork_limit))

    def budget(self) -> str:
        """How long each fork measures, in words for a report header."""
        parallel = f", {self.threads} loops at once" if self.threads > 1 else ""
        forks = self.forks_budget()
        if self.iterations is None:
            chosen = " (or as this host's earlier runs chose: notes)" if self.rounds_from_history else ""
            return f"{self.rounds_asked} rounds of {self.round_seconds:g} s per fork{chosen}{parallel}, {forks}"
        each = " in each loop" if self.threads > 1 else ""
        return (f"{self.iterations:,} messages of each row{each}, {self.fork_iterations:,} a fork in {self.rounds} "
                f"rounds{parallel}, {forks}")

    def forks_budget(self) -> str:
        """How many forks, in words for a report header: "2 fork(s)", "5 to 12 forks until ±2% ..."."""
        return (f"{self.forks} fork(s)" if self.fork_limit == self.forks else
                f"{self.forks} to {self.fork_limit} forks until ±{self.target_error * 100:g}% ({CONFIDENCE:.0%}) "
                "for each ratio (or its levels)")

    @property
    def rounds_asked(self) -> int:
        """The rounds per fork as the run was asked (not as dimensioning chose a row's)."""
        return Sampling.rounds if self.rounds_from_history else self.rounds

    def as_dict(self) -> dict:
        """As the run's metadata records it: the rounds as asked (rounds_asked)."""
        return {**asdict(self), "rounds": self.rounds_asked, "budget": self.budget()}


def forks_to_reach(first_stage: Sequence[float], target: float) -> int | None:
    """How many forks in all bring a ratio's interval within ±``target``, from the spread of the
    fork ratios of its first stage (Stein's two-stage rule: at least as many); None with fewer than
    two, which show no spread."""
    logs = [math.log(r) for r in first_stage]
    if len(logs) < 2:
        return None
    t = t_quantile(1 - (1 - CONFIDENCE) / 2, len(logs) - 1)
    return max(len(logs), math.ceil((t * statistics.stdev(logs) / math.log1p(target)) ** 2))


# A ratio that needs more than this many times the limit's forks would still be more than twice
# the target wide at the limit (the half-width goes as 1/sqrt(forks), never narrower than Stein's:
# conductor.pairing.over_forks): out of reach, it does not drive the forks; nearer, the limit's forks
# are worth their time (docs/decisions/0004-first-stage-and-fork-limit.md).
OUT_OF_REACH = 4


def forks_to_run(needs: Iterable[int], first_stage: int, limit: int) -> int:
    """The forks a run makes for its ratios' ``needs`` (forks_to_reach each): the first stage, then
    as many as the ratios within reach ask for (out_of_reach), at most ``limit``."""
    return max([first_stage, *(min(n, limit) for n in needs if not out_of_reach(n, limit))])


def out_of_reach(need: int, limit: int) -> bool:
    return need > OUT_OF_REACH * limit


class TimeLimit:
    """A whole run's time limit (compare --total-time) shared among its jobs. Every job runs its first
    stage; the time left beyond the first stages still to run is shared in proportion to their cost,
    so each may add the same share of forks (an interval narrows with forks, not seconds), and what a
    job leaves goes to those after it."""

    def __init__(self, seconds: float, forecast: Forecast):
        self.seconds, self.forecast = seconds, forecast

    def share(self, index: int, run_elapsed: float) -> float:
        """The seconds job ``index`` may take, starting ``run_elapsed`` into the run."""
        first_stages = [self.forecast.first_stage_seconds(i) for i in range(index, len(self.forecast.jobs))]
        total = sum(first_stages)
        spare = max(0.0, self.seconds - run_elapsed - total)
        return first_stages[0] * (1 + spare / total) if total else spare

    @staticmethod
    def forks(share: float, first_stage: int, done: int, job_elapsed: float) -> int:
        """The most forks a job of ``share`` seconds may run, ``done`` of them finished ``job_elapsed``
        in: as many as fit at its pace so far, but at least FORKS_IN_TIME of its first stage (all of
        it before a fork has finished to time)."""
        if done == 0:
            return first_stage
        per_fork = max(job_elapsed / done, 1e-9)
        return max(min(first_stage, FORKS_IN_TIME), done + math.floor((share - job_elapsed) / per_fork))
