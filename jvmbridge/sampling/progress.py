"""What a running comparison tells whoever watches it: which configuration runs, its forks and
interval so far, and the time the run has left (Forecast). The conductor reports after each
cycle; the runner listens while a job runs and hands Updates to its caller's Progress.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(frozen=True)
class PartSoFar:
    """One configuration of the running job, after its latest fork."""
    forks: int  # finished
    planned: int  # forks it will run as far as those say (more once the first stage shows its spread)
    figure_ns: float | None  # the figure so far; None before the first fork
    relative_error: float  # half-width of the interval so far over the figure; inf with too few forks for one
    wanted: int | None = None  # the forks its stopping rule wants where the run's time limit allows fewer


@dataclass(frozen=True)
class RatioSoFar:
    """A ratio a job pairs its configurations for, over the forks so far."""
    label: str
    times: float
    relative_error: float  # the interval's wider side over the ratio; inf before two forks
    forks: int


@dataclass(frozen=True)
class Update:
    """Where a run stands: at a job's start, after each fork and at its end."""
    job: int  # the running job's index, from 0
    jobs: int  # how many the run has
    label: str  # the running job's
    engine: str  # ... and its engine's key (jvmbridge.engines.ENGINES)
    parts: tuple[tuple[str, PartSoFar], ...]  # its configurations (label, where it stands); () before a fork
    elapsed: float  # seconds since the run started
    job_elapsed: float  # ... since this job started
    seconds_left: float  # the forecast for the whole run (Forecast)
    finished: bool = False  # the job has ended (its parts as they ended)
    ratios: tuple[RatioSoFar, ...] | None = None  # a job that pairs its parts (the conductor's): its ratios so far


Progress = Callable[[Update], None]
# Parts' state, the job's own time left if known, its ratios so far.
Listener = Callable[[list[PartSoFar], "float | None", "tuple[RatioSoFar, ...] | None"], None]
_listener: ContextVar[Listener | None] = ContextVar("fork_listener", default=None)
# The time limit for the running job: the most forks a part may run, given those finished and the
# next one's forecast seconds (None before the first).
ForkCap = Callable[[int, "float | None"], int]
_fork_cap: ContextVar[ForkCap | None] = ContextVar("fork_cap", default=None)


@contextmanager
def listening(listener: Listener, cap: ForkCap | None = None) -> Iterator[None]:
    """While inside, the conductor reports to ``listener`` and plans no more forks than ``cap``
    allows, without a callback threaded through the layers between."""
    tokens = _listener.set(listener), _fork_cap.set(cap)
    try:
        yield
    finally:
        _listener.reset(tokens[0])
        _fork_cap.reset(tokens[1])


def fork_cap() -> ForkCap | None:
    """The running job's time limit, if any: the most forks, given those finished and the next's cost."""
    return _fork_cap.get()


def report(parts: list[PartSoFar], seconds_left: float | None = None,
           ratios: tuple[RatioSoFar, ...] | None = None) -> None:
    """Tell the listening runner where the job's parts stand, its own time left and ratios if known."""
    listener = _listener.get()
    if listener is not None:
        listener(parts, seconds_left, ratios)


@dataclass(frozen=True)
class JobPlan:
    """What the forecast knows of a job before it runs."""
    engine: str  # its engine's key: forks of one engine cost alike
    timed_seconds: float  # one fork's timed rounds as planned, every part of it
    forks: int  # the forks it runs at least (its first stage)
    overhead_guess: float  # seconds a process spends beyond its rounds, until the engine's own are timed
    processes: int = 1  # processes a fork of the job starts: one per setting run in turns


class Forecast:
    """The time a run has left: jobs to run take as many forks as their engine's did (scaled to the
    first stage), each its timed seconds plus the engine's measured overhead; the running job, its
    planned forks at its own forks' cost."""

    def __init__(self, jobs: Sequence[JobPlan]):
        self.jobs = list(jobs)
        self._overheads: dict[str, list[float]] = {}  # engine -> overhead of a process, per finished job
        self._fork_ratios: dict[str, list[float]] = {}  # engine -> forks run / first stage, per job

    def finished(self, index: int, seconds: float, forks: int) -> None:
        """Job ``index`` took ``seconds`` and ran ``forks`` (0: it did not say)."""
        plan = self.jobs[index]
        forks = forks or plan.forks
        self._overheads.setdefault(plan.engine, []).append(max(0.0, seconds / forks - plan.timed_seconds) / plan.processes)
        self._fork_ratios.setdefault(plan.engine, []).append(forks / plan.forks)

    def seconds_left(self, index: int, job_elapsed: float = 0.0, parts: Sequence[PartSoFar] = ()) -> float:
        """Seconds left with job ``index`` ``job_elapsed`` in, its parts as they stand."""
        if index >= len(self.jobs):
            return 0.0
        plan = self.jobs[index]
        done = min((part.forks for part in parts), default=0)
        planned: float = max((part.planned for part in parts), default=plan.forks)
        if done < plan.forks:  # its first stage is not done: how many follow is not known yet
            planned = max(planned, self._forks(plan))
        per_fork = job_elapsed / done if done else self._fork_seconds(plan)
        current = max(0.0, planned * per_fork - job_elapsed)
        return current + sum(self._forks(plan) * self._fork_seconds(plan) for plan in self.jobs[index + 1:])

    def first_stage_seconds(self, index: int) -> float:
        """What job ``index``'s first stage costs, as far as the forks so far tell."""
        plan = self.jobs[index]
        return plan.forks * self._fork_seconds(plan)

    def _fork_seconds(self, plan: JobPlan) -> float:
        overheads = self._overheads.get(plan.engine)
        return plan.timed_seconds + plan.processes * (sum(overheads) / len(overheads) if overheads else plan.overhead_guess)

    def _forks(self, plan: JobPlan) -> float:
        # Before any of its engine's jobs, every engine's: a noisy machine adds forks to all.
        ratios = self._fork_ratios.get(plan.engine) or [r for each in self._fork_ratios.values() for r in each]
        return plan.forks * (sum(ratios) / len(ratios) if ratios else 1.0)
