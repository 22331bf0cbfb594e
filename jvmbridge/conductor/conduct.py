"""The loop that owns a comparison's measurement: forks of the configurations at once, cycles of
slices in a fresh random order (Abedi & Brecht 2017), forks added until every reachable ratio is
within the target, or the limit; after the first stage a fork runs only the workers of ratios still
short of their forks, and the yardsticks (docs/decisions/0014-forks-run-the-ratios-still-short.md).
Forks the yardsticks see in a host episode are set aside and replaced. From the third fork, the
next fork warms up on the other vCPUs while this one's slices run
(docs/decisions/0005-next-fork-warmed-aside.md)."""
from __future__ import annotations

import contextlib
import random
import statistics
import threading
import time
import traceback
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Protocol, TypeVar

from jvmbridge.conductor.pairing import Interval, fork_ratio, fork_reading, fork_sides, levels_over, over_forks
from jvmbridge.conductor.spread import OneFork, one_fork
from jvmbridge.forks.measure import split_iterations
from jvmbridge.forks.parent import ChildOutcome, PartFailed, WorkerError
from jvmbridge.sampling import policy
from jvmbridge.sampling.policy import forks_to_reach, forks_to_run, out_of_reach
from jvmbridge.sampling.progress import fork_cap
from jvmbridge.stats.episodes import Episodes, episodes
from jvmbridge.stats.levels import RatioLevels
from jvmbridge.stats.summary import disturbed

# More JVMs starting at once starve the warming compilers: docs/decisions/0005-next-fork-warmed-aside.md
EARLY_START_WORKERS = 8
_T = TypeVar("_T")

# Most of a fork's slices that may be disturbed for warming aside: docs/decisions/0005-next-fork-warmed-aside.md
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
    """One thing measured: a part of a worker."""
    label: str
    worker: str  # the key of its WorkerSpec
    part: int
    # Under Pace.iterations: exactly that count a fork (a row), or default slices (the yardstick).
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
    # Whether another vCPU than the measuring one can warm the next fork up meanwhile.
    warm_aside: bool = True
    # One worker at a time per fork (--no-interleave, --threads, whole-run loops).
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
    workers: frozenset[str] = frozenset()  # the workers started for it
    identity: dict[str, dict] = field(default_factory=dict)  # worker -> what it said of itself
    warmups: dict[str, dict] = field(default_factory=dict)  # configuration -> its warm-up
    slices: dict[str, list[dict]] = field(default_factory=dict)  # configuration -> its slices, cycle by cycle
    evidence: dict[str, dict] = field(default_factory=dict)  # configuration -> what its loop computed
    ended: dict[str, ChildOutcome] = field(default_factory=dict)  # worker -> how its process ended, what it printed
    seconds: float = 0.0
    # Before its first cycle: set-up, and warm-up unless done aside.
    inline_seconds: float = 0.0
    warmed_ahead: bool = False

    def of(self, label: str, worker: str) -> Forked:
        """Configuration ``label``'s part of this fork, where it finished it."""
        return Forked(number=self.number, answer={**self.identity[worker], **self.evidence.get(label, {})},
                      warmup=self.warmups[label], slices=self.slices[label], seconds=self.seconds,
                      printed=self.ended[worker].stdout)


@dataclass(frozen=True)
class Forked:
    """One configuration's fork as its row reads it."""
    number: int
    answer: dict
    warmup: dict
    slices: list[dict]
    seconds: float
    printed: str


def slices_by_fork(forks: Sequence[Forked]) -> list[list[dict]]:
    """Each fork's slices, in run order."""
    return [fork.slices for fork in forks]


def warmup_chunks(forks: Sequence[Forked]) -> list[list[float]]:
    """Each fork's warm-up chunks (ns/op), in run order."""
    return [fork.warmup["chunks"] for fork in forks]


@dataclass
class Conducted:
    forks: list[Fork]
    failures: dict[str, WorkerError]  # configuration -> why it stopped
    ratios: dict[str, Interval]  # asked label -> over the forks both sides finished
    stopped: str  # why no more forks ran
    interrupted: bool = False
    cut_short: frozenset[str] = frozenset()  # on Ctrl-C, the workers of the fork it stopped
    fault: str = ""  # a fault of jvmbridge's own that stopped the forks, in one line
    fault_traceback: str = ""  # ... and where it came from, for its report
    failed_in: dict[str, int] = field(default_factory=dict)  # configuration -> the fork it failed in
    cut_from: int = 0  # the forks the stopping rule wanted where the run's time limit allowed fewer; else 0
    # Forks set aside as host episodes, and each yardstick's reading per fork (None: none).
    episodes: Episodes = field(default_factory=lambda: episodes({}))
    readings: dict[str, list[float | None]] = field(default_factory=dict)
    levels: dict[str, RatioLevels] = field(default_factory=dict)  # asked label -> its levels, where it has them
    limit: str = ""  # where the forks stopped at a limit (forks, time) with ratios still wide: which, why, how wide


@dataclass(frozen=True)
class Status:
    """Where the run stands, for progress after each cycle."""
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
    """Forks until every reachable asked ratio is within ``pace.target_error``, or ``max_forks``, or the
    time limit. A failed worker fails its configurations; the others go on."""
    run = _Run(workers, configurations, asked, pace, progress or (lambda status: None))
    try:
        try:
            while (why := run.enough()) is None:
                run.fork()
            conducted = run.conducted(why)
        except KeyboardInterrupt:
            conducted = run.conducted("interrupted", interrupted=True)
        except Exception as e:  # a fault of jvmbridge's own: the forks finished are kept, as on Ctrl-C
            conducted = run.faulted(e)
    finally:
        left, interrupted = run.stop_started()
    if left is not None and not conducted.fault:
        conducted = replace(run.faulted(left), interrupted=conducted.interrupted, cut_short=conducted.cut_short)
    return replace(conducted, interrupted=True) if interrupted else conducted


@dataclass
class _Ahead:
    """The next fork's workers, started, set up and warmed up while a fork runs."""
    handles: dict[str, Worker]
    identity: dict[str, dict] = field(default_factory=dict)  # worker -> what it said of itself
    errors: dict[str, WorkerError] = field(default_factory=dict)  # worker -> why it failed to set up
    warming: Future | None = None  # -> (configuration -> its warm-up, worker -> why it failed)
    cancel: threading.Event = field(default_factory=threading.Event)

    def settled(self) -> tuple[dict[str, dict], dict[str, WorkerError]]:
        """Its warm-ups and failures once the warm-ups are done (waited for if the fork ended first)."""
        warmups, failed = self.warming.result() if self.warming is not None else ({}, {})
        return warmups, {**self.errors, **failed}


class _Run:
    def __init__(self, workers, configurations, asked, pace: Pace, progress):
        self.workers, self.configurations, self.asked, self.pace = workers, list(configurations), list(asked), pace
        self.progress = progress
        self.counted = {c.label for c in self.configurations if c.counted}  # the rows' (the others: yardsticks)
        self.worker_of = {c.label: c.worker for c in self.configurations}
        self.forks: list[Fork] = []
        self.failures: dict[str, WorkerError] = {}
        self.started = time.monotonic()
        self.ahead: _Ahead | None = None  # the next fork's workers, started while this one runs
        self.warmer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="warm-aside")
        self._episodes: tuple[int, Episodes] = (-1, episodes({}))
        self._levels: tuple[int, dict[str, RatioLevels]] = (-1, {})
        self._needs: tuple[tuple[int, int], dict[str, int]] = ((-1, -1), {})
        self.out_of_time = False  # the run's time limit stopped the forks the rule wanted
        self.running: Fork | None = None  # the fork under way, for what a Ctrl-C cut short
        self.failed_in: dict[str, int] = {}  # configuration -> the fork it failed in

    def live(self) -> list[Configuration]:
        return [c for c in self.configurations if c.label not in self.failures]

    def readings(self) -> dict[str, list[float | None]]:
        """Each yardstick's figure in each fork (pairing.fork_reading), None where it has none."""
        return {c.label: [fork_reading(f.slices[c.label]) if c.label in f.slices else None for f in self.forks]
                for c in self.configurations if not c.counted}

    def episodes(self) -> Episodes:
        """The forks so far in a host episode, judged again once per added fork as baselines settle."""
        if self._episodes[0] != len(self.forks):
            self._episodes = (len(self.forks), episodes(self.readings()))
        return self._episodes[1]

    def per_fork(self, ratio: Asked) -> list[tuple[int, float]]:
        """(fork, ratio) for each fork both sides finished, but those set aside."""
        aside = set(self.episodes().set_aside)
        found = ((f.number, fork_ratio(f.slices[ratio.slower], f.slices[ratio.faster])) for f in self.forks
                 if ratio.slower in f.slices and ratio.faster in f.slices and f.number not in aside)
        return [(number, r) for number, r in found if r is not None]

    def levels(self) -> dict[str, RatioLevels]:
        """Per ratio with ``min_forks`` kept forks in levels its own rows explain (stats.levels)."""
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

    def forks_planned(self, wanted: int, warmed_ahead: bool | None = None) -> int:
        """``wanted`` forks, at most what --total-time leaves this job; ``warmed_ahead``: whether the
        fork about to run was warmed up aside (default: as the run stands between forks)."""
        cap = fork_cap()
        if cap is None:
            return wanted
        ahead = self._warmed_ahead() if warmed_ahead is None else warmed_ahead
        return min(wanted, cap(len(self.forks), next_fork_seconds(self.forks, ahead, self.next_workers())))

    def forks_wanted(self) -> int:
        """The first stage plus set-aside replacements; then the forks so far and the most kept forks a
        ratio still lacks (shortfalls), within the limit."""
        aside = len(self.episodes().set_aside)
        if self._in_first_stage():
            return min(self.pace.max_forks, self.pace.min_forks + aside)
        return min(self.pace.max_forks, len(self.forks) + max(self.shortfalls().values(), default=0))

    def _in_first_stage(self, running: Fork | None = None) -> bool:
        """Whether fewer than the first stage's forks are kept (``running``: a fork under way, counted)."""
        return len(self.forks) - len(self.episodes().set_aside) + (running is not None) < self.pace.min_forks

    def shortfalls(self, running: Fork | None = None) -> dict[str, int]:
        """Per ratio that drives the forks (reachable, not at levels), the kept forks it lacks of those
        its first stage asked for, within the limit; ``running``: a fork under way, counted as kept
        for the ratios whose workers it runs."""
        limit, needs, found = self.pace.max_forks, self.needs(), {}
        for ratio in self.asked:
            need = needs.get(ratio.label)
            if need is None or out_of_reach(need, limit):
                continue
            runs = running is not None and {self.worker_of[ratio.slower], self.worker_of[ratio.faster]} <= running.workers
            found[ratio.label] = max(0, max(self.pace.min_forks, min(need, limit)) - len(self.per_fork(ratio)) - runs)
        return found

    def next_workers(self, running: Fork | None = None) -> list[str]:
        """The live workers the next fork starts: every one through the first stage (or with a fixed
        count); after it the yardsticks' and those with a side of a ratio still short of its forks
        (``running``: a fork under way, counted as kept) or out of reach: the forks end sooner."""
        live = self.live()
        everyone = list(dict.fromkeys(c.worker for c in live))
        if self.pace.min_forks >= self.pace.max_forks or self._in_first_stage(running):
            return everyone
        needs, shortfalls = self.needs(), self.shortfalls(running)
        # Ratios out of reach or at levels drive no fork but ride along: levels may yet show, or
        # dissolve over more forks (stats.levels), whatever the ratio's later forks read.
        levels = self.levels()
        going = [ratio for ratio in self.asked if shortfalls.get(ratio.label) or ratio.label in levels
                 or out_of_reach(needs.get(ratio.label, 0), self.pace.max_forks)]
        wanted = {c.worker for c in live if any(c.label in (ratio.slower, ratio.faster) for ratio in going)}
        if not wanted:  # every ratio has its forks: no fork follows but one started ahead of that news
            return everyone
        yardsticks = {c.worker for c in live if not c.counted}
        return [key for key in everyone if key in wanted or key in yardsticks]

    def _spread_asks(self) -> int:
        """The forks the first stage's spread so far asks for."""
        return forks_to_run(self.needs().values(), self.pace.min_forks, self.pace.max_forks)

    def needs(self) -> dict[str, int]:
        """Per live ratio not said as levels, the forks its first stage asks for; computed again once
        per added fork or failure (the stopping rule, the time limit and progress ask often)."""
        if self._needs[0] == (len(self.forks), len(self.failures)):
            return self._needs[1]
        first, live, levels = self.pace.min_forks, {c.label for c in self.live()}, self.levels()
        found = {r.label: forks_to_reach([ratio for _, ratio in self.per_fork(r)[:first]], self.pace.target_error)
                 or self.pace.max_forks for r in self.asked if {r.slower, r.faster} <= live and r.label not in levels}
        self._needs = ((len(self.forks), len(self.failures)), found)
        return found

    def enough(self) -> str | None:
        """Why no more forks should run, or None."""
        if not self.live():
            return "every configuration failed"
        done = len(self.forks)
        wanted = self.forks_wanted()
        if done >= wanted:
            return self._why_no_more()
        if done >= self.forks_planned(wanted):
            self.out_of_time = True
            return f"the run's time limit (--total-time), before the {wanted} the rule asked for"
        return None

    def _why_no_more(self) -> str:
        """Why the forks Stein's rule asked for, plus replacements, are all there are."""
        if len(self.forks) >= self.pace.max_forks:
            return "the limit" + (f": {why}" if (why := self._still_wide()) else "")
        needs, target, first = self.needs(), f"±{self.pace.target_error:.0%}", self.pace.min_forks
        wanted = self._spread_asks()  # the kept forks the spread asked for (the most of any ratio)
        levels = len(self.levels())
        if not needs:
            return self._none_needed(levels)
        beyond = sorted(n for n in needs.values() if out_of_reach(n, self.pace.max_forks))
        if beyond and len(beyond) == len(needs):
            return (f"the first {first}'s spread: no ratio is within reach of {target} in {self.pace.max_forks} "
                    f"forks (they would need {_span(beyond)})")
        return self._within_target(wanted, beyond, levels)

    def _none_needed(self, levels: int) -> str:
        """Why no ratio asks for forks: levels, none left to measure, or none asked."""
        first = self.pace.min_forks
        if levels:
            return f"the first {first}: {'every ratio' if levels == len(self.asked) else f'{levels} ratios'} at levels"
        if self.asked:
            return "no ratio left to measure (a side of each failed)"
        return f"no ratio asked: the first {first}"

    def _within_target(self, wanted: int, beyond: list[int], levels: int) -> str:
        """The forks putting every reachable ratio within the target."""
        first, target = self.pace.min_forks, f"±{self.pace.target_error:.0%}"
        within = f"{'every ratio still measured' if self.failures else 'every ratio'} within {target}"
        if beyond:
            within += f" but {len(beyond)}, which would need {_span(beyond)} forks"
        if levels:
            within += f", {levels} at levels"
        if wanted <= first:
            return f"the first {first} put {within}"
        return f"the first {first}'s spread asked {wanted} for {within}" + self._ended_wider()

    def _ended_wider(self) -> str:
        """"; 1 ended wider (±3.4%): its later forks spread more than its first 7" where a ratio
        that drove the forks got them and is still wider than the target; else ""."""
        needs, target = self.needs(), self.pace.target_error
        wide = [interval.relative_error for label, interval in self.ratios().items()
                if label in needs and not out_of_reach(needs[label], self.pace.max_forks) and not interval.within(target)]
        if not wide:
            return ""
        whose = "its later forks spread more than its" if len(wide) == 1 else "their later forks spread more than their"
        return f"; {len(wide)} ended wider (±{max(wide):.1%} at most): {whose} first {self.pace.min_forks}"

    def stopped_wide(self) -> str:
        """Which limit stopped the forks with ratios still wide, and those ratios (_still_wide); else ""."""
        limit = ("the run's time limit" if self.out_of_time
                 else "the fork limit" if len(self.forks) >= self.pace.max_forks else "")
        return f"{limit}: {why}" if limit and (why := self._still_wide()) else ""

    def _still_wide(self) -> str:
        """"2 ratios still wider than ±2% (±2.6% at most): the first 7's spread asked 14-20 forks";
        "" where none, or where a fixed count was asked."""
        target, needs = self.pace.target_error, self.needs()
        wide = {label: i.relative_error for label, i in self.ratios().items() if label in needs and not i.within(target)}
        if self.pace.min_forks >= self.pace.max_forks or not wide:
            return ""
        return (f"{len(wide)} {'ratio' if len(wide) == 1 else 'ratios'} still wider than ±{target:.0%} "
                f"(±{max(wide.values()):.1%} at most)" + self._wide_because(needs, wide))

    def _wide_because(self, needs: Mapping[str, int], wide: Mapping[str, float]) -> str:
        """": the first 7's spread asked 14-20 forks, 2 set aside; in the widest ratio (AES-NI ...),
        fork 3 made that spread ..."; "" where none of these. ``wide``: ratio -> its relative error."""
        asked = sorted(n for n in needs.values() if n > len(self.forks))
        first = min(self.pace.min_forks, len(self.forks))  # a run's time limit may cut its first stage
        why = [f"the first {first}'s spread asked {_span(asked)} forks" if asked else "",
               f"{aside} set aside" if (aside := len(self.episodes().set_aside)) else ""]
        because = f": {', '.join(filter(None, why))}" if any(why) else ""
        driving = {label: error for label, error in wide.items() if needs[label] > len(self.forks)}
        if driving and (widest := max(driving, key=driving.__getitem__)) and (found := self._one_fork(widest)):
            because += f"; {found.said()}" if len(wide) == 1 else f"; in the widest ratio ({widest}), {found.said()}"
        return because

    def _one_fork(self, label: str) -> OneFork | None:
        """The fork that made most of ratio ``label``'s first-stage spread, and the side that moved in it."""
        ratio = next(r for r in self.asked if r.label == label)
        forks = {fork.number: fork for fork in self.forks}
        first = [(number, *sides) for number, _ in self.per_fork(ratio)[:self.pace.min_forks]
                 if (sides := fork_sides(forks[number].slices[ratio.slower], forks[number].slices[ratio.faster]))]
        return one_fork(first, (ratio.slower, ratio.faster))

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def seconds_left(self, fork_started: float, share_done: float, planned: int,
                     warmed_ahead: bool = False) -> float | None:
        """Time for the forks still wanted at the pace so far; only a fork warming up in line pays its
        pre-cycle time."""
        this_fork = time.monotonic() - fork_started
        if not self.forks:
            return max(0.0, this_fork / share_done * planned - this_fork) if share_done > 0 else None
        cycles = statistics.fmean(f.seconds - f.inline_seconds for f in forks_like(self.next_workers(), self.forks))
        warmed_in_line = [f.inline_seconds for f in self.forks if not f.warmed_ahead]  # the first fork's at least
        inline = statistics.fmean(warmed_in_line) if warmed_in_line else 0.0
        forks_left = planned - len(self.forks)
        in_line = [not warmed_ahead, not self._warmed_ahead(), *[not self.pace.warm_aside] * forks_left][:forks_left]
        return max(0.0, cycles * forks_left + inline * sum(in_line) - this_fork)

    def fork(self) -> None:
        if self.pace.turns:
            return self._fork_in_turns()
        fork = self.running = Fork(number=len(self.forks))
        started, wanted = time.monotonic(), self.forks_wanted()
        planned, so_far = self.forks_planned(wanted), self.ratios()
        warmed_ahead = self._warmed_ahead()
        handles = self._handles(fork)
        try:
            self._fail_all(_set_up(handles, fork.identity))
            ready = _ready(handles, fork.identity)
            another = self._another_follows(planned, warmed_ahead)
            if another and not warmed_ahead and len(handles) <= EARLY_START_WORKERS:
                self.ahead = self._started_ahead(fork)  # they start while this fork warms up
            if cold := {key: handle for key, handle in ready.items()
                        if any(c.worker == key and c.label not in fork.warmups for c in self.live())}:
                warmups, failed = self._warm_up(fork.number, cold)  # all but those warmed aside
                fork.warmups.update(warmups)
                self._fail_all(failed)
            if another and self.pace.warm_aside and self._undisturbed():
                self.ahead = self.ahead or self._started_ahead(fork)
                self._warm_ahead(self.ahead, fork.number + 1)
            # A fork that warmed some workers in line is forecast as one warmed in line.
            fork.inline_seconds, fork.warmed_ahead = time.monotonic() - started, warmed_ahead and not cold
            self._cycles(fork, ready, lambda cycle, cycles: Status(
                fork=fork.number, forks_planned=planned, forks_wanted=wanted, cycle=cycle, cycles=cycles,
                elapsed=self.elapsed(), seconds_left=self.seconds_left(started, cycle / cycles, planned, warmed_ahead),
                ratios=so_far))
            self._finish(fork, ready)
        finally:
            _stop(handles, fork)
        self._keep(fork, started)

    def _warmed_ahead(self) -> bool:
        """Whether the next fork's workers were warmed up during the fork before."""
        return self.ahead is not None and self.ahead.warming is not None

    def _another_follows(self, planned: int, warmed_ahead: bool) -> bool:
        """Whether another fork follows the one now starting (``warmed_ahead`` or not): planned, or likely."""
        return len(self.forks) + 1 < planned or self._likely_more(warmed_ahead)

    def _keep(self, fork: Fork, started: float) -> None:
        """Add ``fork`` to the run's forks."""
        fork.seconds = time.monotonic() - started
        # A configuration whose worker failed keeps only the forks it finished.
        fork.slices = {label: slices for label, slices in fork.slices.items() if label not in self.failures}
        self.forks.append(fork)
        self.running = None

    def _fork_in_turns(self) -> None:
        """A turns fork: worker after worker in a drawn order, each alone."""
        fork = self.running = Fork(number=len(self.forks))
        started, wanted = time.monotonic(), self.forks_wanted()
        planned, so_far = self.forks_planned(wanted), self.ratios()
        fork.workers = frozenset(self.next_workers())
        order = [c for c in self.live() if c.worker in fork.workers]
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
        """The turns of ``waiting`` in one process of worker ``key``; if it dies, those after are returned."""
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
        """One configuration's turn: warmed up, its slices back to back, and spares while too few ran
        undisturbed."""
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
        """The fork's workers, started ahead or now; those whose configurations failed, or that the
        forks since their early start no longer ask for, are stopped, and any they now ask for started."""
        errors: dict[str, WorkerError] = {}
        handles: dict[str, Worker] = {}
        if self.ahead is not None:  # stop_started stops them if Ctrl-C comes before they are this fork's
            handles, (warmups, errors) = self.ahead.handles, self.ahead.settled()
            fork.identity.update(self.ahead.identity)
            fork.warmups.update(warmups)
            self._fail_all(errors)  # before choosing: a ratio that lost a side needs no fork
        wanted = self.next_workers()
        handles.update(self._start(errors, [key for key in wanted if key not in handles]))
        self._fail_all(errors)
        for key in set(handles) - ({c.worker for c in self.live()} & set(wanted)):
            handles.pop(key).stop()
            fork.identity.pop(key, None)
            for c in self.configurations:
                if c.worker == key:
                    fork.warmups.pop(c.label, None)
        self.ahead = None
        fork.workers = frozenset(handles)
        return handles

    def _cycles(self, fork: Fork, ready: Mapping[str, Worker], status: Callable[[int, int], Status]) -> None:
        """The fork's timed slices, cycle by cycle in drawn orders; progress after each cycle."""
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
        """What each live worker's loops computed (checked against OpenSSL); it then exits."""
        for key, handle in ready.items():
            if key not in {c.worker for c in self.live()}:
                continue
            with self._failing(key):
                evidence = handle.finish()
                fork.evidence.update({c.label: evidence[c.part] for c in self.configurations if c.worker == key})

    def _start(self, errors: dict[str, WorkerError], keys: Sequence[str]) -> dict[str, Worker]:
        """Start workers ``keys`` before waiting for any; failures to ``errors``."""
        handles: dict[str, Worker] = {}
        try:
            for key in keys:
                try:
                    handles[key] = self.workers[key].start()
                except WorkerError as e:
                    errors[key] = e
        except BaseException:  # Ctrl-C, or a fault: no caller holds those started yet
            _stop_all(handles.values())
            raise
        return handles

    def _likely_more(self, warmed_ahead: bool) -> bool:
        """At the first stage's last fork (``warmed_ahead`` or not), whether the forks so far already ask for more."""
        first = self.pace.min_forks
        if not 2 <= len(self.forks) == first - 1:
            return False
        return self.forks_planned(self._spread_asks(), warmed_ahead) > first

    def _undisturbed(self) -> bool:
        """Whether the fork before ran undisturbed enough to warm the next aside: warm-ups on the other
        vCPU push other work onto the measuring one (docs/decisions/0005-next-fork-warmed-aside.md)."""
        slices = [s for fork_slices in self.forks[-1].slices.values() for s in fork_slices] if self.forks else []
        return bool(slices) and sum(map(disturbed, slices)) <= QUIET_SHARE * len(slices)

    def _started_ahead(self, running: Fork) -> _Ahead:
        """The next fork's workers, chosen as if ``running`` were kept."""
        ahead = _Ahead(handles={})
        ahead.handles = self._start(ahead.errors, self.next_workers(running))
        return ahead

    def _warm_ahead(self, ahead: _Ahead, number: int) -> None:
        """Set up the next fork's workers before this fork's first slice, then warm them aside."""
        ahead.errors.update(_set_up(ahead.handles, ahead.identity, aside=True))
        ready = _ready(ahead.handles, ahead.identity)
        ahead.warming = self.warmer.submit(self._warm_up, number, ready, ahead.cancel)

    def _warm_up(self, number: int, handles: Mapping[str, Worker],
                 cancel: threading.Event | None = None) -> tuple[dict[str, dict], dict[str, WorkerError]]:
        """Warm each live configuration in a drawn order, aside when ``cancel`` is given."""
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
            # Chunks timed aside are no part of where this fork settled (stats.steady); beside other
            # work the fastest, not the last, says the loop's speed that sizes the slices.
            if cancel is not None:
                warmup = {**warmup, "ns_per_op": min([warmup["ns_per_op"], *warmup["chunks"]]), "chunks": []}
            warmups[c.label] = warmup
        return warmups, errors

    def stop_started(self) -> tuple[Exception | None, bool]:
        """Stop the early-started workers of a fork that will not run, warm-ups cancelled first: the
        first fault met on the way (a warm-up's failure is no fault: _warm_up returns those), and
        whether Ctrl-C came meanwhile. Each step runs whatever the one before met."""
        met: list[BaseException] = []

        def step(act: Callable[[], object]) -> None:
            try:
                act()
            except (Exception, KeyboardInterrupt) as e:
                met.append(e)

        ahead, self.ahead = self.ahead, None
        if ahead is not None:
            ahead.cancel.set()
            step(ahead.settled)
            step(lambda: _stop_all(ahead.handles.values()))
        step(self.warmer.shutdown)
        faults = [e for e in met if isinstance(e, Exception)]
        return (faults[0] if faults else None), any(isinstance(e, KeyboardInterrupt) for e in met)

    def _fail(self, key: str, error: WorkerError) -> None:
        """Fail every configuration of worker ``key`` (or configuration ``key``) for the rest."""
        for c in self.live():
            if key in (c.worker, c.label):
                self.failures[c.label] = error
                self.failed_in[c.label] = len(self.forks)  # the fork running, not yet kept

    def _fail_all(self, errors: Mapping[str, WorkerError]) -> None:
        for key, error in errors.items():
            self._fail(key, error)

    @contextlib.contextmanager
    def _failing(self, key: str, label: str = "") -> Iterator[None]:
        """A WorkerError inside fails worker ``key``'s configurations; a part's, ``label`` alone."""
        try:
            yield
        except PartFailed as e:
            self._fail(label or key, e)
        except WorkerError as e:
            self._fail(key, e)

    def _counts(self, fork: Fork, configurations: Sequence[Configuration] | None = None) -> dict[str, list[int]]:
        """Operations per slice, cycle by cycle, per configuration warmed up in this fork."""
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
        """The ns/op each of ``configurations`` warmed up to in ``fork``."""
        return {c.label: fork.warmups[c.label]["ns_per_op"] for c in configurations if c.label in fork.warmups}

    def _exactly(self, iterations: int, speeds: dict[str, float]) -> dict[str, list[int]]:
        """_counts with exactly ``iterations`` per fork, in cycles keeping a slice near its length."""
        typical_ns = statistics.median([ns for label, ns in speeds.items() if label in self.counted] or speeds.values())
        cycles = min(iterations, max(self.pace.cycles, round(iterations * typical_ns / self.pace.slice_ns)))
        # The others: their default cycles' time over these cycles.
        return {label: split_iterations(iterations, cycles) if label in self.counted
                else [_lasting(self.pace.uncounted_ns * self.pace.cycles / cycles, ns)] * cycles
                for label, ns in speeds.items()}

    def _cut_short(self) -> frozenset[str]:
        """The workers of the fork a Ctrl-C stopped; every worker where that is not yet known."""
        return self.running.workers if self.running and self.running.workers else frozenset(self.workers)

    def conducted(self, stopped: str, interrupted: bool = False) -> Conducted:
        return Conducted(forks=self.forks, failures=dict(self.failures), ratios=self.ratios(), stopped=stopped,
                         interrupted=interrupted, failed_in=dict(self.failed_in),
                         cut_short=self._cut_short() if interrupted else frozenset(),
                         cut_from=self.forks_wanted() if self.out_of_time else 0,
                         episodes=self.episodes(), readings=self.readings(), levels=self.levels(),
                         limit=self.stopped_wide())

    def faulted(self, error: Exception) -> Conducted:
        """The forks finished before ``error``, with what of them still computes (the fault may lie
        in the statistics: each part apart, so episodes set aside stay aside where they compute)."""
        fault = (f"a fault of jvmbridge's own stopped the forks after {len(self.forks)}: "
                 f"{type(error).__name__}: {error} (please report it)")
        return Conducted(forks=self.forks, failures=dict(self.failures), ratios=_or_else(self.ratios, {}),
                         stopped=fault, fault=fault, fault_traceback="".join(traceback.format_exception(error)),
                         failed_in=dict(self.failed_in), episodes=_or_else(self.episodes, episodes({})),
                         readings=_or_else(self.readings, {}), levels=_or_else(self.levels, {}))


def next_fork_seconds(forks: Sequence[Fork], warmed_ahead: bool, workers: Collection[str] = ()) -> float | None:
    """A fork's seconds as the slowest finished fork warmed up as it is (aside, or in line), else the
    slowest of all; of those, the ones that ran the fewest workers but all of ``workers``, where any
    did. None before the first. The time limit admits a fork by this."""
    if not forks:
        return None
    return max(f.seconds for f in forks_like(workers, [f for f in forks if f.warmed_ahead == warmed_ahead] or forks))


def forks_like(workers: Collection[str], forks: Sequence[Fork]) -> Sequence[Fork]:
    """Those of ``forks`` that ran all of ``workers`` and the fewest others; all where none ran them."""
    covering = [f for f in forks if set(workers) <= f.workers]
    fewest = min((len(f.workers) for f in covering), default=0)
    return [f for f in covering if len(f.workers) == fewest] or forks


def _ready(handles: Mapping[str, Worker], identity: Mapping[str, dict]) -> dict[str, Worker]:
    """The workers that were set up (said what they are)."""
    return {key: handle for key, handle in handles.items() if key in identity}


def _stop(handles: Mapping[str, Worker], fork: Fork) -> None:
    """Stop the workers of ``handles``, keeping in ``fork`` how each process ended; every one is
    stopped before the first error is raised."""
    def stop(key: str) -> None:
        handles[key].stop()
        fork.ended[key] = handles[key].ended()

    _each(stop, handles)


def _stop_all(handles: Iterable[Worker]) -> None:
    """Stop each of ``handles``, every one before the first error is raised."""
    _each(lambda handle: handle.stop(), handles)


def _each(act: Callable[[_T], None], items: Iterable[_T]) -> None:
    """``act`` on each of ``items``, on all of them before the first error is raised."""
    first: BaseException | None = None
    for item in items:
        try:
            act(item)
        except BaseException as e:
            first = first or e
    if first is not None:
        raise first


def _or_else(compute: Callable[[], _T], otherwise: _T) -> _T:
    """``compute()``, or ``otherwise`` where it fails (a conductor already at fault)."""
    try:
        return compute()
    except Exception:
        return otherwise


def _lasting(wanted_ns: float, ns_per_op: float) -> int:
    """Operations that take about ``wanted_ns``."""
    return max(1, round(wanted_ns / max(ns_per_op, 1e-3)))


def _set_up(handles: Mapping[str, Worker], identity: dict[str, dict], aside: bool = False) -> dict[str, WorkerError]:
    """Wait for each worker not in ``identity`` to be set up; return failures. ``aside``: moved off the
    measuring vCPU once set up (docs/decisions/0005-next-fork-warmed-aside.md)."""
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
