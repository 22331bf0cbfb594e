"""What a running comparison tells whoever watches it (the CLI's live display, an API caller):
which configuration runs, its forks and interval so far, and how long the whole run has left.

The conductor reports where a job stands after each cycle (report); the runner listens while a job
runs (listening), forecasts the time left from what each engine's own forks have cost so far
(Forecast), holds the run to its time limit (policy.TimeLimit), and hands an Update to its caller's
Progress.
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
    """A ratio a job pairs its configurations for (the conductor's), over the forks finished so far."""
    label: str
    times: float
    relative_error: float  # the interval's wider side over the ratio; inf before two forks
    forks: int


@dataclass(frozen=True)
class Update:
    """Where a run stands: sent when a job starts, after each of its forks, and when it ends."""
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
# Where parts stand; the job's own time left, if known; its ratios so far, for a job that pairs its parts.
Listener = Callable[[list[PartSoFar], "float | None", "tuple[RatioSoFar, ...] | None"], None]
_listener: ContextVar[Listener | None] = ContextVar("fork_listener", default=None)
# The runner's time limit for the running job: the most forks a part may run, given those it has finished.
_fork_cap: ContextVar[Callable[[int], int] | None] = ContextVar("fork_cap", default=None)


@contextmanager
def listening(listener: Listener, cap: Callable[[int], int] | None = None) -> Iterator[None]:
    """While inside, the conductor reports to ``listener`` (the runner, for the job it runs) and
    plans no more forks than ``cap`` allows (policy.TimeLimit), without a callback passed through
    the layers between them."""
    tokens = _listener.set(listener), _fork_cap.set(cap)
    try:
        yield
    finally:
        _listener.reset(tokens[0])
        _fork_cap.reset(tokens[1])


def fork_cap() -> Callable[[int], int] | None:
    """The run's time limit for the running job, where it has one: the most forks it may run, given
    those it finished (for a loop of its own, as the conductor's)."""
    return _fork_cap.get()


def report(parts: list[PartSoFar], seconds_left: float | None = None,
           ratios: tuple[RatioSoFar, ...] | None = None) -> None:
    """Where the running job's parts stand, told to the runner listening (if any); ``seconds_left``:
    the job's own forecast of its time left, where it has one (the conductor's); ``ratios``: those
    it pairs its parts for, so far (the conductor's)."""
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
    """The time a run has left: each job still to run takes as many forks as its engine's jobs
    took (in proportion to its first stage; before any, every engine's), each its timed seconds plus
    its engine's measured overhead per fork (start-up, warm-up; before any, the engine's own guess);
    the running job, its planned forks at the cost its own forks took."""

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
        """Job ``index`` runs, ``job_elapsed`` in, its parts where they stand (() before a fork); an
        index past the last job: none is left."""
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
        # Its engine's jobs so far; before any, every engine's (a noisy machine adds forks to all).
        ratios = self._fork_ratios.get(plan.engine) or [r for each in self._fork_ratios.values() for r in each]
        return plan.forks * (sum(ratios) / len(ratios) if ratios else 1.0)
