"""What a running comparison tells whoever watches it (the CLI's live display, an API caller):
which configuration runs, its forks and interval so far, and how long the whole run has left.

The engines' fork loops ask before every fork which parts want another (forks_wanted), which also
tells where each stands; the runner listens while a job runs (listening), forecasts the time left
from what each engine's own forks have cost so far (Forecast), holds the run to its time limit
(TimeLimit), and hands an Update to its caller's Progress.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from jvmbridge.stats.summary import summarize
from jvmbridge.workload import Sampling


@dataclass(frozen=True)
class PartSoFar:
    """One configuration of the running job, after its latest fork."""
    forks: int  # finished
    planned: int  # forks it will run as far as those say (more once the first stage shows its spread)
    figure_ns: float | None  # the figure so far; None before the first fork
    relative_error: float  # half-width of the interval so far over the figure; inf with too few forks for one
    wanted: int | None = None  # the forks its stopping rule wants where the run's time limit allows fewer


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


Progress = Callable[[Update], None]
Listener = Callable[[list[PartSoFar], "float | None"], None]  # where parts stand; the job's own time left, if known
_listener: ContextVar[Listener | None] = ContextVar("fork_listener", default=None)
# The runner's time limit for the running job: the most forks a part may run, given those it has finished.
_fork_cap: ContextVar[Callable[[int], int] | None] = ContextVar("fork_cap", default=None)


@contextmanager
def listening(listener: Listener, cap: Callable[[int], int] | None = None) -> Iterator[None]:
    """While inside, forks_wanted reports to ``listener`` (the runner, for the job it runs) and
    plans no more forks than ``cap`` allows (TimeLimit): the engines report and stop without each
    passing a callback through its own layers."""
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


def report(parts: list[PartSoFar], seconds_left: float | None = None) -> None:
    """Where the running job's parts stand, told to the runner listening (if any); ``seconds_left``:
    the job's own forecast of its time left, where it has one (the conductor's)."""
    listener = _listener.get()
    if listener is not None:
        listener(parts, seconds_left)


def forks_wanted(samplings: Sequence[Sampling], forks: Sequence[list[list[dict]]],
                 warmups: Sequence[list[list[float]] | None] | None = None, stopped: Sequence[bool] = (),
                 together: Sequence[int] = ()) -> list[bool]:
    """An engine's fork loop, before each fork: per part (its sampling, its forks' rounds so far,
    their warm-ups where recorded, whether it will get no more because it failed) whether it wants
    another (Sampling.forks_planned, decided once), and where each stands told to the runner.
    ``together``: per part a group; the parts of a group that have not failed run as many forks as
    the one of them that plans the most (the two sides of a ratio run in turns, pair by pair). A
    runner's time limit (listening's ``cap``) may stop them sooner; PartSoFar.wanted says so."""
    planned = [len(done) if index < len(stopped) and stopped[index]
               else sampling.forks_planned(done, warmups[index] if warmups is not None else None)
               for index, (sampling, done) in enumerate(zip(samplings, forks))]
    if together:
        most: dict[int, int] = {}
        for group, wanted in zip(together, planned):
            most[group] = max(most.get(group, 0), wanted)
        planned = [wanted if index < len(stopped) and stopped[index] else most[group]
                   for index, (group, wanted) in enumerate(zip(together, planned))]
    by_rule = planned
    cap = _fork_cap.get()
    if cap is not None:
        most_allowed = cap(min((len(done) for done in forks), default=0))
        planned = [min(planned_forks, max(most_allowed, len(done))) for planned_forks, done in zip(planned, forks)]
    listener = _listener.get()
    if listener is not None:
        parts = []
        for index, (sampling, done) in enumerate(zip(samplings, forks)):
            summary = summarize(done, sampling.first_stage, warmups[index] if warmups is not None else None) if done else None
            # Before FEW_FORKS an interval means little; the table then shows the forks' range instead.
            error = summary.relative_error if summary and not summary.few_forks else math.inf
            parts.append(PartSoFar(forks=len(done), planned=planned[index],
                                   figure_ns=summary.figure_ns if summary else None, relative_error=error,
                                   wanted=by_rule[index] if by_rule[index] > planned[index] else None))
        listener(parts, None)
    return [len(done) < wanted for done, wanted in zip(forks, planned)]


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


class TimeLimit:
    """A whole run's time limit (compare --total-time) shared among its jobs. Every job runs its
    first stage whatever the limit (a row needs it, and Stein's procedure decides from it); the
    time the limit leaves beyond the first stages still to run (Forecast) is shared among the jobs
    from this one on in proportion to their first stages' cost, so that each may add the same share
    of forks (an interval narrows with forks, not seconds: equal seconds gave a JVM's dear forks
    few and a cheap engine's more than it needed), and what a job leaves unused goes to those after
    it. Inside its share a job adds a fork while one more fits at what its own forks have cost."""

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
        """The most forks a job of ``share`` seconds may run, ``done`` of them finished ``job_elapsed`` in."""
        if done < first_stage:
            return first_stage
        per_fork = max(job_elapsed / done, 1e-9)
        return max(first_stage, done + math.floor((share - job_elapsed) / per_fork))
