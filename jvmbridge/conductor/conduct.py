"""The loop that owns a comparison's measurement: forks of every configuration at once, cycles of
slices in a fresh random order (randomized multiple interleaved trials, Abedi & Brecht 2017, at
slice level), forks added until every ratio asked for is within the target error, or the limit;
a ratio far out of the limit's reach does not drive them (sampling.policy.forks_to_run). A fork
inside a host episode, as the yardsticks (the uncounted configurations) alone read it, is set aside
from every ratio and another runs in its place, within the limit (stats.episodes).

Per fork: every worker process starts at once; each configuration is warmed up, one after
another; then ``cycles`` cycles, each running one slice of every configuration in an order drawn
for that cycle. A slice is sized to ``slice_seconds`` at the speed its warm-up reached, or, with
``iterations``, to an equal share of exactly that many operations per fork. From the third fork
on, where the fork two before ran almost undisturbed, a fork's workers are started and warmed up
while the fork before runs its slices: set up before its first slice, warmed up on the other vCPUs
(a worker moves every thread off the measuring one until its own fork), so a fork's warm-ups cost
it nothing but the wait for the last of them.
"""
from __future__ import annotations

import contextlib
import random
import statistics
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Protocol

from jvmbridge.conductor.pairing import Interval, fork_ratio, fork_reading, levels_over, over_forks
from jvmbridge.forks.measure import split_iterations
from jvmbridge.forks.parent import ChildOutcome, PartFailed, WorkerError
from jvmbridge.sampling import policy
from jvmbridge.sampling.policy import forks_to_reach, forks_to_run, out_of_reach
from jvmbridge.sampling.progress import fork_cap
from jvmbridge.stats.episodes import Episodes, episodes
from jvmbridge.stats.levels import RatioLevels
from jvmbridge.stats.summary import disturbed

# The first fork, of at most this many workers, starts the second's while it warms up; more start
# after, as many JVMs starting at once starve the compilers of those warming up and cost the first
# fork more than they save the second (docs/decisions/0005-next-fork-warmed-aside.md).
EARLY_START_WORKERS = 8
# The most of a fork's slices that may be disturbed (stats.summary.disturbed) for the next fork's
# warm-ups to run beside the one after it (docs/decisions/0005-next-fork-warmed-aside.md).
QUIET_SHARE = 0.05


class Worker(Protocol):
    """What the conductor asks of a worker (slices.WorkerProcess, or a fake one in tests)."""

    def ready(self) -> dict: ...
    def aside(self) -> None: ...
    def warm(self, part: int, min_seconds: float, max_seconds: float) -> dict: ...
    def slice(self, part: int, iterations: int, expected_seconds: float) -> dict: ...
    def evidence(self, part: int) -> dict: ...
    def finish(self) -> list[dict]: ...
    def ended(self) -> ChildOutcome: ...
    def stop(self) -> None: ...


@dataclass(frozen=True)
class WorkerSpec:
    """How to start one worker for a fork, and how long its parts may warm up."""
    start: Callable[[], Worker]
    warmup_min_seconds: float
    warmup_max_seconds: float


@dataclass(frozen=True)
class Configuration:
    """One thing measured: a part of a worker (one shape of one JVM with its flags)."""
    label: str
    worker: str  # the key of its WorkerSpec
    part: int
    # With Pace.iterations, whether it runs exactly that many operations a fork (a row's); False: a
    # fork's worth of slices of the default length, whatever the count (the host's yardstick: the
    # same cheap work in every run, not a minute a fork under --iterations 1e8).
    counted: bool = True


@dataclass(frozen=True)
class Asked:
    """A ratio the run is for: how many times faster ``faster`` runs than ``slower``."""
    label: str
    slower: str  # configuration labels
    faster: str


@dataclass(frozen=True)
class Pace:
    slice_seconds: float = policy.SLICE_SECONDS
    cycles: int = policy.CYCLES
    iterations: int | None = None  # exactly this many operations per configuration and fork
    min_forks: int = policy.FORKS
    max_forks: int = policy.FORK_LIMIT
    target_error: float = policy.TARGET_ERROR
    # Whether a vCPU other than the measuring one can take the next fork's warm-ups while this fork
    # is timed (comparison.interleaved.measuring_cpu: not on a machine of one); else each fork warms
    # its own up before its first slice.
    warm_aside: bool = True
    # The turns schedule: each fork runs one worker at a time, in an order drawn for the fork, each of
    # its configurations warmed up and its slices timed back to back (--no-interleave, --threads, and
    # loops that run only whole: AESNITester's, `openssl speed -multi`'s).
    turns: bool = False

    @property
    def slice_ns(self) -> float:
        return self.slice_seconds * 1e9

    @property
    def uncounted_ns(self) -> float:
        """An uncounted configuration's slice in a default cycle."""
        return self.slice_ns * policy.UNCOUNTED_SHARE


@dataclass
class Fork:
    number: int
    identity: dict[str, dict] = field(default_factory=dict)  # worker -> what it said of itself
    warmups: dict[str, dict] = field(default_factory=dict)  # configuration -> its warm-up
    slices: dict[str, list[dict]] = field(default_factory=dict)  # configuration -> its slices, cycle by cycle
    evidence: dict[str, dict] = field(default_factory=dict)  # configuration -> what its loop computed
    ended: dict[str, ChildOutcome] = field(default_factory=dict)  # worker -> how its process ended, what it printed
    seconds: float = 0.0
    # Before its first cycle: its workers set up and, unless warmed up aside during the fork before, warmed up.
    inline_seconds: float = 0.0
    warmed_ahead: bool = False

    def of(self, label: str, worker: str) -> Forked:
        """Configuration ``label``'s part of this fork (worker ``worker``'s), where it finished it."""
        return Forked(number=self.number, answer={**self.identity[worker], **self.evidence.get(label, {})},
                      warmup=self.warmups[label], slices=self.slices[label], seconds=self.seconds,
                      printed=self.ended[worker].stdout)


@dataclass(frozen=True)
class Forked:
    """One configuration's fork as its row reads it (Fork.of): what its worker said of itself and
    what its loop computed, its warm-up, its slices, the fork's number and seconds, and what the
    worker process printed (a JVM's warnings)."""
    number: int
    answer: dict
    warmup: dict
    slices: list[dict]
    seconds: float
    printed: str


def slices_by_fork(forks: Sequence[Forked]) -> list[list[dict]]:
    """Each fork's slices, in run order: the samples of one configuration, by fork."""
    return [fork.slices for fork in forks]


def warmup_chunks(forks: Sequence[Forked]) -> list[list[float]]:
    """Each fork's warm-up chunks (ns/op), in run order, for where it settled (stats.steady)."""
    return [fork.warmup["chunks"] for fork in forks]


@dataclass
class Conducted:
    forks: list[Fork]
    failures: dict[str, WorkerError]  # configuration -> why it stopped
    ratios: dict[str, Interval]  # asked label -> over the forks both sides finished
    stopped: str  # why no more forks ran
    interrupted: bool = False
    cut_from: int = 0  # the forks the stopping rule wanted where the run's time limit allowed fewer; else 0
    # The forks inside a host episode, set aside from every ratio (stats.episodes), by the yardsticks'
    # readings: per yardstick (an uncounted configuration), its figure in each fork, None where it has none.
    episodes: Episodes = field(default_factory=lambda: episodes({}))
    readings: dict[str, list[float | None]] = field(default_factory=dict)
    levels: dict[str, RatioLevels] = field(default_factory=dict)  # asked label -> its levels, where it has them
    limit: str = ""  # where the forks stopped at a limit (forks, time) with ratios still wide: which, why, how wide


@dataclass(frozen=True)
class Status:
    """Where the run stands, for progress: after each cycle."""
    fork: int  # 0-based, the fork running
    forks_planned: int  # as many as will run: what the stopping rule wants, within the run's time limit
    forks_wanted: int  # ... what the stopping rule wants
    cycle: int
    cycles: int
    elapsed: float
    seconds_left: float | None
    ratios: Mapping[str, Interval] = field(default_factory=dict)  # over the forks finished so far


def conduct(workers: Mapping[str, WorkerSpec], configurations: Sequence[Configuration], asked: Sequence[Asked],
            pace: Pace = Pace(), progress: Callable[[Status], None] | None = None) -> Conducted:
    """Forks until every asked ratio within reach of ``pace.target_error`` is there (after
    ``min_forks``: sampling.policy.forks_to_run), or ``max_forks``, or the time limit. A worker that fails
    fails its configurations, for this fork and the rest; the others go on. Ctrl-C keeps the forks
    that finished."""
    run = _Run(workers, configurations, asked, pace, progress or (lambda status: None))
    try:
        while (why := run.enough()) is None:
            run.fork()
    except KeyboardInterrupt:
        return run.conducted("interrupted", interrupted=True)
    finally:
        run.stop_started()
    return run.conducted(why)


@dataclass
class _Ahead:
    """The next fork's workers, started, set up and warmed up while a fork runs."""
    handles: dict[str, Worker]
    identity: dict[str, dict] = field(default_factory=dict)  # worker -> what it said of itself
    errors: dict[str, WorkerError] = field(default_factory=dict)  # worker -> why it failed to set up
    warming: Future | None = None  # -> (configuration -> its warm-up, worker -> why it failed)
    cancel: threading.Event = field(default_factory=threading.Event)

    def settled(self) -> tuple[dict[str, dict], dict[str, WorkerError]]:
        """Its warm-ups (configuration -> warm-up) and failures (worker -> why), once the warm-ups
        are done: waited for, where the fork they ran beside ended first."""
        warmups, failed = self.warming.result() if self.warming is not None else ({}, {})
        return warmups, {**self.errors, **failed}


class _Run:
    def __init__(self, workers, configurations, asked, pace: Pace, progress):
        self.workers, self.configurations, self.asked, self.pace = workers, list(configurations), list(asked), pace
        self.progress = progress
        self.counted = {c.label for c in self.configurations if c.counted}  # the rows' (the others: yardsticks)
        self.forks: list[Fork] = []
        self.failures: dict[str, WorkerError] = {}
        self.started = time.monotonic()
        self.ahead: _Ahead | None = None  # the next fork's workers, started while this one runs
        self.warmer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="warm-aside")
        # Judged over the forks so far, by how many there were.
        self._episodes: tuple[int, Episodes] = (-1, episodes({}))
        self._levels: tuple[int, dict[str, RatioLevels]] = (-1, {})
        self.out_of_time = False  # the run's time limit stopped the forks the rule wanted

    def live(self) -> list[Configuration]:
        return [c for c in self.configurations if c.label not in self.failures]

    def readings(self) -> dict[str, list[float | None]]:
        """Each yardstick's figure in each fork (pairing.fork_reading), None where it has none."""
        return {c.label: [fork_reading(f.slices[c.label]) if c.label in f.slices else None for f in self.forks]
                for c in self.configurations if not c.counted}

    def episodes(self) -> Episodes:
        """The forks so far inside a host episode, by the yardsticks alone; every fork judged again as
        their baselines settle (once per fork added: the stopping rule asks many times)."""
        if self._episodes[0] != len(self.forks):
            self._episodes = (len(self.forks), episodes(self.readings()))
        return self._episodes[1]

    def per_fork(self, ratio: Asked) -> list[tuple[int, float]]:
        """(fork, the ratio there) for each fork that both sides finished, but those set aside."""
        aside = set(self.episodes().set_aside)
        found = ((f.number, fork_ratio(f.slices[ratio.slower], f.slices[ratio.faster])) for f in self.forks
                 if ratio.slower in f.slices and ratio.faster in f.slices and f.number not in aside)
        return [(number, r) for number, r in found if r is not None]

    def levels(self) -> dict[str, RatioLevels]:
        """Per ratio with ``min_forks`` kept forks that fall into levels its forks' own rows explain
        (one side's JIT outcome: stats.levels), those levels. More forks would only count them."""
        if self._levels[0] == len(self.forks):
            return self._levels[1]
        rows = {c.label: {f.number: f.slices[c.label] for f in self.forks if c.label in f.slices}
                for c in self.configurations if c.counted}
        found = {}
        for ratio in self.asked:
            kept = self.per_fork(ratio)
            if len(kept) >= self.pace.min_forks and (levels := levels_over(kept, rows)) is not None:
                found[ratio.label] = levels
        self._levels = (len(self.forks), found)
        return found

    def ratios(self) -> dict[str, Interval]:
        return {ratio.label: over_forks([r for _, r in per_fork], self.pace.min_forks)
                for ratio in self.asked if (per_fork := self.per_fork(ratio))}

    def forks_planned(self, wanted: int) -> int:
        """The forks ``wanted`` (forks_wanted), at most as many as the run's time limit
        (--total-time) leaves this job."""
        cap = fork_cap()
        return wanted if cap is None else min(wanted, cap(len(self.forks)))

    def forks_wanted(self) -> int:
        """Forks in all: the first stage, then as many as its spread asks for (sampling.policy.forks_to_run),
        each counting the forks kept; and one more for each set aside, within the limit."""
        aside = len(self.episodes().set_aside)
        kept = len(self.forks) - aside
        wanted = self.pace.min_forks if kept < self.pace.min_forks else self._spread_asks()
        return min(self.pace.max_forks, wanted + aside) if aside else wanted

    def _spread_asks(self) -> int:
        """The forks the first stage's spread, as far as it has run, asks for (sampling.policy.forks_to_run)."""
        return forks_to_run(self.needs().values(), self.pace.min_forks, self.pace.max_forks)

    def needs(self) -> dict[str, int]:
        """Per live ratio not said as levels, the forks its first stage's spread asks for
        (sampling.policy.forks_to_reach), the limit where that stage shows no spread."""
        first, live, levels = self.pace.min_forks, {c.label for c in self.live()}, self.levels()
        return {r.label: forks_to_reach([ratio for _, ratio in self.per_fork(r)[:first]], self.pace.target_error)
                or self.pace.max_forks for r in self.asked if {r.slower, r.faster} <= live and r.label not in levels}

    def enough(self) -> str | None:
        """Why no more forks should run, or None."""
        if not self.live():
            return "every configuration failed"
        done = len(self.forks)
        wanted = self.forks_wanted()
        if done >= wanted:
            return self._why_no_more(wanted)
        if done >= self.forks_planned(wanted):
            self.out_of_time = True
            return f"the run's time limit (--total-time), before the {wanted} the rule asked for"
        return None

    def _why_no_more(self, wanted: int) -> str:
        """Why the forks the first stage's spread asked for (Stein's rule), and those in place of the
        forks set aside, are all there are."""
        if len(self.forks) >= self.pace.max_forks:
            return "the limit" + (f": {why}" if (why := self._still_wide()) else "")
        needs, target, first = self.needs(), f"±{self.pace.target_error:.0%}", self.pace.min_forks
        wanted -= len(self.episodes().set_aside)  # the kept forks the spread asked for
        levels = len(self.levels())
        if not needs:
            return self._none_needed(levels)
        beyond = sorted(n for n in needs.values() if out_of_reach(n, self.pace.max_forks))
        if beyond and len(beyond) == len(needs):
            return (f"the first {first}'s spread: no ratio is within reach of {target} in {self.pace.max_forks} "
                    f"forks (they would need {_span(beyond)})")
        return self._within_target(wanted, beyond, levels)

    def _none_needed(self, levels: int) -> str:
        """Why no ratio asks for forks: ``levels`` of them said as levels, none left to measure, or none asked."""
        first = self.pace.min_forks
        if levels:
            return f"the first {first}: {'every ratio' if levels == len(self.asked) else f'{levels} ratios'} at levels"
        if self.asked:
            return "no ratio left to measure (a side of each failed)"
        return f"no ratio asked: the first {first}"

    def _within_target(self, wanted: int, beyond: list[int], levels: int) -> str:
        """The forks that put every ratio (but those ``beyond`` reach) within the target: the first stage's, or
        the ``wanted`` its spread asked for."""
        first, target = self.pace.min_forks, f"±{self.pace.target_error:.0%}"
        within = f"{'every ratio still measured' if self.failures else 'every ratio'} within {target}"
        if beyond:
            within += f" but {len(beyond)}, which would need {_span(beyond)} forks"
        if levels:
            within += f", {levels} at levels"
        if wanted <= first:
            return f"the first {first} put {within}"
        return f"the first {first}'s spread asked {wanted} for {within}"

    def stopped_wide(self) -> str:
        """Where the forks stopped at the fork limit or the run's time limit with ratios still wider
        than the target, which limit, and how many ratios, how wide and why (_still_wide); else ""."""
        limit = ("the run's time limit" if self.out_of_time
                 else "the fork limit" if len(self.forks) >= self.pace.max_forks else "")
        return f"{limit}: {why}" if limit and (why := self._still_wide()) else ""

    def _still_wide(self) -> str:
        """The ratios still wider than the target and why: "2 ratios still wider than ±2% (±2.6% at
        most): the first 5's spread asked 14-20 forks", the forks set aside named too; "" where none
        is, and where the forks were a count asked (--forks as many as --max-forks): no rule wanted more."""
        target, needs = self.pace.target_error, self.needs()
        wide = [i.relative_error for label, i in self.ratios().items() if label in needs and not i.within(target)]
        if self.pace.min_forks >= self.pace.max_forks or not wide:
            return ""
        return (f"{len(wide)} {'ratio' if len(wide) == 1 else 'ratios'} still wider than ±{target:.0%} "
                f"(±{max(wide):.1%} at most)" + self._wide_because(needs))

    def _wide_because(self, needs: Mapping[str, int]) -> str:
        """Why _still_wide's ratios are: ": the first 5's spread asked 14-20 forks, 2 set aside"; "" where neither."""
        asked = sorted(n for n in needs.values() if n > len(self.forks))
        first = min(self.pace.min_forks, len(self.forks))  # a run's time limit may cut its first stage
        why = [f"the first {first}'s spread asked {_span(asked)} forks" if asked else "",
               f"{aside} set aside" if (aside := len(self.episodes().set_aside)) else ""]
        return f": {', '.join(filter(None, why))}" if any(why) else ""

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def seconds_left(self, fork_started: float, share_done: float, planned: int,
                     warmed_ahead: bool = False) -> float | None:
        """The forks still wanted at the pace of those so far (within the first fork, at its own pace). The
        time before a fork's first cycle is paid in full only by a fork warming up in line: this one unless
        ``warmed_ahead``, the next unless it is warming up aside now, none after where the run warms aside."""
        this_fork = time.monotonic() - fork_started
        if not self.forks:
            return max(0.0, this_fork / share_done * planned - this_fork) if share_done > 0 else None
        cycles = statistics.fmean(f.seconds - f.inline_seconds for f in self.forks)
        warmed_in_line = [f.inline_seconds for f in self.forks if not f.warmed_ahead]  # the first fork's at least
        inline = statistics.fmean(warmed_in_line) if warmed_in_line else 0.0
        forks_left = planned - len(self.forks)
        in_line = [not warmed_ahead, not self._warmed_ahead(), *[not self.pace.warm_aside] * forks_left][:forks_left]
        return max(0.0, cycles * forks_left + inline * sum(in_line) - this_fork)

    def fork(self) -> None:
        if self.pace.turns:
            return self._fork_in_turns()
        fork = Fork(number=len(self.forks))
        started, wanted = time.monotonic(), self.forks_wanted()
        planned, so_far = self.forks_planned(wanted), self.ratios()
        warmed_ahead = self._warmed_ahead()
        handles = self._handles(fork)
        try:
            self._fail_all(_set_up(handles, fork.identity))
            ready = _ready(handles, fork.identity)
            another = self._another_follows(planned)
            if another and not warmed_ahead and len(handles) <= EARLY_START_WORKERS:
                self.ahead = self._started_ahead()  # they start while this fork warms up
            if not warmed_ahead:
                warmups, failed = self._warm_up(fork.number, ready)
                fork.warmups.update(warmups)
                self._fail_all(failed)
            if another and self.pace.warm_aside and self._undisturbed():
                self.ahead = self.ahead or self._started_ahead()
                self._warm_ahead(self.ahead, fork.number + 1)
            fork.inline_seconds, fork.warmed_ahead = time.monotonic() - started, warmed_ahead
            self._cycles(fork, ready, lambda cycle, cycles: Status(
                fork=fork.number, forks_planned=planned, forks_wanted=wanted, cycle=cycle, cycles=cycles,
                elapsed=self.elapsed(), seconds_left=self.seconds_left(started, cycle / cycles, planned, warmed_ahead),
                ratios=so_far))
            self._finish(fork, ready)
        finally:
            _stop(handles, fork)
        self._keep(fork, started)

    def _warmed_ahead(self) -> bool:
        """Whether the next fork's workers, started during the fork before, were warmed up there."""
        return self.ahead is not None and self.ahead.warming is not None

    def _another_follows(self, planned: int) -> bool:
        """Whether another fork is to follow the one now starting: planned, or likely (_likely_more)."""
        return len(self.forks) + 1 < planned or self._likely_more()

    def _keep(self, fork: Fork, started: float) -> None:
        """Add ``fork``, started at ``started``, to the run's forks."""
        fork.seconds = time.monotonic() - started
        # A configuration whose worker failed this fork keeps only the forks it finished.
        fork.slices = {label: slices for label, slices in fork.slices.items() if label not in self.failures}
        self.forks.append(fork)

    def _fork_in_turns(self) -> None:
        """A fork of the turns schedule: worker after worker in an order drawn for it, each started
        alone, each of its configurations warmed up and then timed in all its slices, then stopped."""
        fork = Fork(number=len(self.forks))
        started, wanted = time.monotonic(), self.forks_wanted()
        planned, so_far = self.forks_planned(wanted), self.ratios()
        order = self.live()
        random.Random(f"{fork.number}/turns").shuffle(order)  # seeded: a run's order can be told again
        turns = iter(range(1, len(order) + 1))

        def turned() -> None:
            done = next(turns)
            self.progress(Status(fork=fork.number, forks_planned=planned, forks_wanted=wanted, cycle=done,
                                 cycles=len(order), elapsed=self.elapsed(), ratios=so_far,
                                 seconds_left=self.seconds_left(started, done / len(order), planned)))

        for key in dict.fromkeys(c.worker for c in order):
            waiting = [c for c in order if c.worker == key]
            while waiting:  # a worker that died in one configuration's turn: a fresh one for the rest
                waiting = self._worker_turns(fork, key, waiting, turned)
        self._keep(fork, started)

    def _worker_turns(self, fork: Fork, key: str, waiting: list[Configuration],
                      turned: Callable[[], None]) -> list[Configuration]:
        """The turns of ``waiting`` (configurations of worker ``key``) in one process of it; where it
        dies in a turn, that configuration fails, the turns before keep their slices and evidence,
        and the configurations after are returned, for a process of their own."""
        errors: dict[str, WorkerError] = {}
        said: dict[str, dict] = {}  # what this process says of itself (a fresh one, again)
        handles = self._start(errors, [key])
        try:
            errors.update(_set_up(handles, said))
            fork.identity.update(said)
            for c in waiting if key in errors else ():  # one that cannot start fails what it was to run
                self._fail(c.label, errors[key])
            for at, c in enumerate(waiting):
                try:
                    if key in said and c.label not in self.failures:
                        self._turn(fork, c, handles[key])
                except PartFailed as e:
                    self._fail(c.label, e)
                except WorkerError as e:
                    self._fail(c.label, e)
                    return waiting[at + 1:]
                finally:
                    turned()
        finally:
            _stop(handles, fork)  # each turn took its evidence: nothing is left to finish
        return []

    def _turn(self, fork: Fork, c: Configuration, worker: Worker) -> None:
        """One configuration's turn in a fork: warmed up, then its slices back to back, and as many
        again at most while fewer than asked ran undisturbed (stats.summary.disturbed: a disturbed
        slice stays in the record, out of the figure), where the work is not a count asked
        (--iterations) nor a whole run."""
        spec = self.workers[c.worker]
        fork.warmups[c.label] = worker.warm(c.part, spec.warmup_min_seconds,
                                            min(spec.warmup_max_seconds, policy.SLICE_WARMUP_MAX_SECONDS))
        counts = self._counts(fork, [c])[c.label]
        slices = fork.slices.setdefault(c.label, [])
        spare = 0 if self.pace.iterations or len(counts) == 1 else len(counts)
        for at in range(len(counts) + spare):
            if at >= len(counts) and sum(not disturbed(s) for s in slices) >= len(counts):
                break
            count = counts[min(at, len(counts) - 1)]
            slices.append(worker.slice(c.part, count, count * fork.warmups[c.label]["ns_per_op"] / 1e9))
        fork.evidence[c.label] = worker.evidence(c.part)  # now: a later turn's hang cannot take it

    def _handles(self, fork: Fork) -> dict[str, Worker]:
        """The fork's workers: started during the fork before (their identity and warm-ups go to
        ``fork``, once done), or now. Those whose configurations failed meanwhile are stopped."""
        errors: dict[str, WorkerError] = {}
        if self.ahead is None:
            handles = self._start(errors)
        else:  # stop_started stops them if Ctrl-C comes before they are this fork's
            handles, (warmups, errors) = self.ahead.handles, self.ahead.settled()
            fork.identity.update(self.ahead.identity)
            fork.warmups.update(warmups)
        self._fail_all(errors)
        for key in set(handles) - {c.worker for c in self.live()}:
            handles.pop(key).stop()
            fork.identity.pop(key, None)
        self.ahead = None
        return handles

    def _cycles(self, fork: Fork, ready: Mapping[str, Worker], status: Callable[[int, int], Status]) -> None:
        """The fork's timed slices, cycle by cycle, each in an order drawn for it; progress after each
        cycle (``status`` of the cycles done and of all)."""
        counts = self._counts(fork)
        cycles = len(next(iter(counts.values()), []))
        for cycle in range(cycles):
            order = [c for c in self.live() if c.label in counts]
            random.Random(f"{fork.number}/{cycle}").shuffle(order)  # seeded: a run's order can be told again
            for c in (c for c in order if c.label not in self.failures):  # its worker may have failed this cycle
                with self._failing(c.worker, c.label):
                    expected = counts[c.label][cycle] * fork.warmups[c.label]["ns_per_op"] / 1e9
                    fork.slices.setdefault(c.label, []).append(
                        ready[c.worker].slice(c.part, counts[c.label][cycle], expected))
            self.progress(status(cycle + 1, cycles))

    def _finish(self, fork: Fork, ready: Mapping[str, Worker]) -> None:
        """What each live worker's loops computed (the bytes checked against OpenSSL); it then exits."""
        for key, handle in ready.items():
            if key not in {c.worker for c in self.live()}:
                continue
            with self._failing(key):
                evidence = handle.finish()
                fork.evidence.update({c.label: evidence[c.part] for c in self.configurations if c.worker == key})

    def _start(self, errors: dict[str, WorkerError], keys: Sequence[str] | None = None) -> dict[str, Worker]:
        """A fork's worker processes, every live configuration's (or those of ``keys``), all started
        before any is waited for; ``errors`` gets those that could not start."""
        handles: dict[str, Worker] = {}
        for key in keys if keys is not None else dict.fromkeys(c.worker for c in self.live()):
            try:
                handles[key] = self.workers[key].start()
            except WorkerError as e:
                errors[key] = e
        return handles

    def _likely_more(self) -> bool:
        """At the first stage's last fork, whether the forks before it already ask for more than the
        first stage (Stein's rule on them): the next fork's workers are then readied during it, as
        for any fork but the last, and stopped unused where the whole first stage asks for no more."""
        first = self.pace.min_forks
        if not 2 <= len(self.forks) == first - 1:
            return False
        return self.forks_planned(self._spread_asks()) > first

    def _undisturbed(self) -> bool:
        """Whether the fork before ran so undisturbed that the next fork may warm up beside this
        one's slices. Warm-ups pinned to the other vCPU push whatever else runs onto the measuring
        one, which a busy machine feels (docs/decisions/0005-next-fork-warmed-aside.md)."""
        slices = [s for fork_slices in self.forks[-1].slices.values() for s in fork_slices] if self.forks else []
        return bool(slices) and sum(map(disturbed, slices)) <= QUIET_SHARE * len(slices)

    def _started_ahead(self) -> _Ahead:
        ahead = _Ahead(handles={})
        ahead.handles = self._start(ahead.errors)
        return ahead

    def _warm_ahead(self, ahead: _Ahead, number: int) -> None:
        """The next fork's workers set up (their JVMs' start, before this fork's first slice: it
        keeps both vCPUs busy), each moved aside once it is, then warmed up on the other vCPUs while
        this fork's slices run."""
        ahead.errors.update(_set_up(ahead.handles, ahead.identity, aside=True))
        ready = _ready(ahead.handles, ahead.identity)
        ahead.warming = self.warmer.submit(self._warm_up, number, ready, ahead.cancel)

    def _warm_up(self, number: int, handles: Mapping[str, Worker],
                 cancel: threading.Event | None = None) -> tuple[dict[str, dict], dict[str, WorkerError]]:
        """Each live configuration of ``handles`` warmed up, one after another in an order drawn for
        fork ``number``; aside (on the other vCPUs, beside the fork before) when ``cancel`` is given,
        until it is set. Their warm-ups, and the workers that failed."""
        order = [c for c in self.live() if c.worker in handles]
        random.Random(f"{number}/warm").shuffle(order)
        warmups: dict[str, dict] = {}
        errors: dict[str, WorkerError] = {}
        for c in order:
            if c.worker in errors or (cancel is not None and cancel.is_set()):
                continue
            spec = self.workers[c.worker]
            try:
                warmup = handles[c.worker].warm(c.part, spec.warmup_min_seconds,
                                                min(spec.warmup_max_seconds, policy.SLICE_WARMUP_MAX_SECONDS))
            except PartFailed as e:  # its configuration's alone
                errors[c.label] = e
                continue
            except WorkerError as e:
                errors[c.worker] = e
                continue
            # Chunks timed on another vCPU, beside another fork, are no part of where this fork's slices
            # settled (stats.steady.classify reads a fork's warm-up chunks and rounds as one series);
            # there, sharing a vCPU with whatever else runs, the fastest says the loop's speed, which
            # sizes the slices, where the last may be one a neighbour slowed.
            if cancel is not None:
                warmup = {**warmup, "ns_per_op": min([warmup["ns_per_op"], *warmup["chunks"]]), "chunks": []}
            warmups[c.label] = warmup
        return warmups, errors

    def stop_started(self) -> None:
        """Stops the next fork's workers, started early, where it will not run: their warm-ups
        cancelled (the one under way finishes first), then their processes."""
        try:
            if self.ahead is not None:
                self.ahead.cancel.set()
                with contextlib.suppress(Exception):  # a failed warm-up: its worker is stopped below
                    self.ahead.settled()
        finally:
            for handle in (self.ahead.handles.values() if self.ahead is not None else ()):
                handle.stop()
            self.ahead = None
            self.warmer.shutdown()

    def _fail(self, key: str, error: WorkerError) -> None:
        """Every configuration worker ``key`` holds (or configuration ``key``) fails, for this fork and the rest."""
        for c in self.live():
            if key in (c.worker, c.label):
                self.failures[c.label] = error

    def _fail_all(self, errors: Mapping[str, WorkerError]) -> None:
        for key, error in errors.items():
            self._fail(key, error)

    @contextlib.contextmanager
    def _failing(self, key: str, label: str = "") -> Iterator[None]:
        """A WorkerError inside fails every configuration worker ``key`` holds; one of a part, configuration
        ``label`` alone."""
        try:
            yield
        except PartFailed as e:
            self._fail(label or key, e)
        except WorkerError as e:
            self._fail(key, e)

    def _counts(self, fork: Fork, configurations: Sequence[Configuration] | None = None) -> dict[str, list[int]]:
        """Operations per slice, cycle by cycle, for each configuration (of ``configurations``, else
        every live one) warmed up in this fork."""
        speeds = self._warmed(fork, configurations or self.live())
        if not speeds:
            return {}
        pace, iterations = self.pace, self.pace.iterations
        if pace.turns and iterations:  # a fork's exact count in its slices, as many as asked (--rounds)
            return {label: split_iterations(iterations, pace.cycles) for label in speeds}
        if iterations is None:
            return {label: [_lasting(pace.slice_ns if label in self.counted else pace.uncounted_ns, ns)] * pace.cycles
                    for label, ns in speeds.items()}
        return self._exactly(iterations, speeds)

    @staticmethod
    def _warmed(fork: Fork, configurations: Sequence[Configuration]) -> dict[str, float]:
        """The ns/op each of ``configurations`` warmed up to in ``fork``, of those warmed up there."""
        return {c.label: fork.warmups[c.label]["ns_per_op"] for c in configurations if c.label in fork.warmups}

    def _exactly(self, iterations: int, speeds: dict[str, float]) -> dict[str, list[int]]:
        """_counts with exactly ``iterations`` per fork, in as many cycles as keep a typical slice near its length."""
        typical_ns = statistics.median([ns for label, ns in speeds.items() if label in self.counted] or speeds.values())
        cycles = min(iterations, max(self.pace.cycles, round(iterations * typical_ns / self.pace.slice_ns)))
        # The others: their default cycles' time, shared out over these cycles.
        return {label: split_iterations(iterations, cycles) if label in self.counted
                else [_lasting(self.pace.uncounted_ns * self.pace.cycles / cycles, ns)] * cycles
                for label, ns in speeds.items()}

    def conducted(self, stopped: str, interrupted: bool = False) -> Conducted:
        wanted = self.forks_wanted()
        return Conducted(forks=self.forks, failures=dict(self.failures), ratios=self.ratios(), stopped=stopped,
                         interrupted=interrupted, cut_from=wanted if wanted > self.forks_planned(wanted) else 0,
                         episodes=self.episodes(), readings=self.readings(), levels=self.levels(),
                         limit=self.stopped_wide())


def _ready(handles: Mapping[str, Worker], identity: Mapping[str, dict]) -> dict[str, Worker]:
    """The workers of ``handles`` that were set up: those that said what they are (``identity``)."""
    return {key: handle for key, handle in handles.items() if key in identity}


def _stop(handles: Mapping[str, Worker], fork: Fork) -> None:
    """Stop the workers of ``handles``, keeping in ``fork`` how each process ended."""
    for key, handle in handles.items():
        handle.stop()
        fork.ended[key] = handle.ended()


def _lasting(wanted_ns: float, ns_per_op: float) -> int:
    """Operations that take about ``wanted_ns``."""
    return max(1, round(wanted_ns / max(ns_per_op, 1e-3)))


def _set_up(handles: Mapping[str, Worker], identity: dict[str, dict], aside: bool = False) -> dict[str, WorkerError]:
    """Waits for each worker not yet in ``identity`` to be set up (a JVM's start), putting what it
    says of itself there; those that failed. ``aside``: each moved off the measuring vCPU as soon as
    it is set up, until its first slice, not only when its warm-up's turn comes: a JVM's start goes
    on compiling and loading after it reports ready, and the workers waiting for their turn to warm
    up did so beside the fork before's slices (docs/decisions/0005-next-fork-warmed-aside.md)."""
    errors: dict[str, WorkerError] = {}
    for key in [key for key in handles if key not in identity]:
        try:
            identity[key] = handles[key].ready()
            if aside:
                handles[key].aside()
        except WorkerError as e:
            errors[key] = e
    return errors


def _span(ordered: Sequence[int]) -> str:
    """"13", or "13-50" from the first to the last."""
    return f"{ordered[0]}" if ordered[0] == ordered[-1] else f"{ordered[0]}-{ordered[-1]}"


__all__ = ["Asked", "Conducted", "Configuration", "Fork", "Forked", "Pace", "Status", "WorkerSpec", "conduct"]
