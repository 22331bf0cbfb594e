"""compare's jobs for the conductor: every setting of the sliced engines in one job, interleaved
cycle by cycle with a host yardstick, so each ratio is between slices moments apart. --no-interleave,
--threads and whole-run loops use the turns schedule (conductor.conduct.Pace.turns)."""
from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from jvmbridge.conductor.conduct import Asked, Conducted, Configuration, Forked, Pace, Status, WorkerSpec, conduct
from jvmbridge.conductor.pairing import Interval
from jvmbridge.conductor.slices import WorkerProcess
from jvmbridge.engines import ENGINES, Engine, Job, Matrix, Part, reference_for
from jvmbridge.engines.base import Sliced
from jvmbridge.forks.parent import ChildOutcome, WorkerError
from jvmbridge.results import Measurement
from jvmbridge.sampling.policy import Sampling
from jvmbridge.sampling.progress import PartSoFar, RatioSoFar, report
from jvmbridge.sampling.workload import Operation, Workload

LABEL = "every configuration at once, interleaved in slices"
IN_TURNS = "each setting in turns"  # ends the label of a job in the turns schedule
# The host's yardstick: fixed, cheap work, the same in every run (hostspeed).
YARDSTICK = Workload(operation=Operation(key_bits=128, mode="cbc", message_bytes=1024, shape="stream"),
                     sampling=Sampling())
YARDSTICK_NAME = "yardstick: C loop, AES-128-CBC, 1024-byte stream updates, AES-NI as the CPU offers"
# For host episodes only: the same loop table-based, which slows with the caches as rows without AES
# instructions do (docs/decisions/0010-yardsticks-for-episodes.md).
TABLE_YARDSTICK_NAME = "yardstick: C loop, AES-128-CBC, 1024-byte stream updates, AES-NI masked (table-based AES)"


def measuring_cpu() -> int | None:
    """The vCPU every slice runs on (the last allowed; the rest for JIT, GC and system); None with one."""
    cpus = sorted(os.sched_getaffinity(0))
    return cpus[-1] if len(cpus) > 1 else None


@dataclass
class InterleavedJob(Job):
    """A job whose settings (engine key, setting) the conductor runs together."""
    settings: list[tuple[str, Sliced]] = field(default_factory=list)
    matrix: Matrix = field(default_factory=Matrix)
    turns: bool = False  # in the turns schedule, on its own (Pace.turns); else merged with the others

    @classmethod
    def merged(cls, jobs: list["InterleavedJob"]) -> "InterleavedJob":
        """One job of every setting and part of ``jobs`` (their parts' ranks kept)."""
        settings, parts = [s for job in jobs for s in job.settings], [p for job in jobs for p in job.parts]
        return cls._of(settings, parts, jobs[0].matrix)

    @classmethod
    def _of(cls, settings: list[tuple[str, Sliced]], parts: list[Part], matrix: Matrix) -> "InterleavedJob":
        job = cls(label=LABEL, parts=parts, measure=lambda: _measure(job), arms=len(settings), settings=settings,
                  matrix=matrix,
                  # Only a JVM's parts share compiled code.
                  shares_jit=any(len(setting.workloads) > 1 and ENGINES[key].runs_on_jvms for key, setting in settings))
        return job


def interleaved_job(settings: list[tuple[str, Sliced]], matrix: Matrix) -> InterleavedJob:
    """One job measuring every (engine key, setting) together, its parts each setting's workloads."""
    job = InterleavedJob._of(settings, [Part(label=f"{setting.name}{tag}", workload=workload, name=setting.name)
                                        for _, setting in settings for workload, tag in setting.workloads], matrix)
    job.turns = (not matrix.interleaved or any(s.whole_runs for _, s in settings)
                 or any(part.workload.sampling.threads > 1 for part in job.parts))
    if job.turns:
        job.label = f"{ENGINES[settings[0][0]].label}, {IN_TURNS}"
    return job


@dataclass
class Conducting:
    """What the conductor is given for a job: its workers, configurations and the ratios asked."""
    workers: dict[str, WorkerSpec]
    configurations: list[Configuration]
    asked: list[Asked]
    groups: list[list[Part]]  # per setting (worker "0", "1", ...), its parts


def yardsticks(job: InterleavedJob) -> list[Sliced]:
    """The host's yardsticks (the C loop, AES-NI then masked) where they run here; none in turns."""
    c_loop = ENGINES["c-loop"]
    return [] if job.turns or c_loop.unavailable(job.matrix) else c_loop.sliced([(YARDSTICK, "")], job.matrix)


def conducting(job: InterleavedJob) -> Conducting:
    # In turns one worker runs at a time on every vCPU: pinning a JVM would size its collector for one.
    cpu = None if job.turns else measuring_cpu()
    groups = _parts_by_setting(job)
    workers = {str(i): worker_spec(setting, cpu) for i, (_, setting) in enumerate(job.settings)}
    configurations = [Configuration(label=part.label, worker=str(i), part=index) for i, parts in enumerate(groups)
                      for index, part in enumerate(parts)]
    for name, stick in zip((YARDSTICK_NAME, TABLE_YARDSTICK_NAME), yardsticks(job)):
        workers[name] = worker_spec(stick, cpu)
        configurations.append(Configuration(label=name, worker=name, part=0, counted=False))
    return Conducting(workers=workers, configurations=configurations, asked=asked(job.settings, groups), groups=groups)


def pace_of(job: InterleavedJob) -> Pace:
    """The job's pace: slices, or turns of --rounds slices of --round-time (whole-run loops: one run)."""
    sampling = job.parts[0].workload.sampling
    pace = Pace(iterations=sampling.fork_iterations, min_forks=sampling.first_stage, max_forks=sampling.fork_limit,
                target_error=sampling.target_error, warm_aside=measuring_cpu() is not None)
    if not job.turns:
        return pace
    whole = any(setting.whole_runs for _, setting in job.settings)
    return replace(pace, turns=True, warm_aside=False, slice_seconds=sampling.round_seconds,
                   cycles=1 if whole else sampling.rounds, iterations=None if whole else pace.iterations)


def budget(job: InterleavedJob) -> str:
    """How the job measures each fork, for the run's header."""
    pace, asked = pace_of(job), job.parts[0].workload.sampling.iterations
    if pace.iterations:
        return (f"{asked:,} messages of each row, {pace.iterations:,} a fork, in slices in a fresh random order")
    slice_ms = pace.slice_seconds * 1000
    return f"{pace.cycles} cycles a fork of a {slice_ms:g} ms slice of each row, in a fresh random order"


def forks_run(pace: Pace, forks: int, stopped: str, aside: str = "", rows: str = "") -> str:
    """"9 (7 to 16): 2 set aside, ...; the first 7's spread asked 9 for every ratio within ±2%; rows ...";
    ``rows``: rows_ran's."""
    allowed = f"{pace.min_forks} to {pace.max_forks}" if pace.min_forks < pace.max_forks else f"at most {pace.max_forks}"
    return f"{forks} ({allowed}): " + (f"{aside}; " if aside else "") + stopped + (f"; {rows}" if rows else "")


def rows_ran(conducted: Conducted, configurations: list[Configuration]) -> str:
    """"rows ran 5-12 of them, each until no ratio of it asked for more" where counts differ; else ""."""
    counts = [sum(c.label in fork.slices for fork in conducted.forks) for c in configurations
              if c.counted and c.label not in conducted.failures]
    if not counts or min(counts) == max(counts):
        return ""
    return f"rows ran {min(counts)}-{max(counts)} of them, each until no ratio of it asked for more"


def episodes_saved(conducted: Conducted) -> dict | None:
    """The forks set aside and the yardstick readings they were judged by; None without a yardstick."""
    if not conducted.readings:
        return None
    return {**conducted.episodes.as_dict(), "fork_readings": conducted.readings}


def _measure(job: InterleavedJob) -> list[Measurement | Exception]:
    given, pace = conducting(job), pace_of(job)
    conducted = conduct(given.workers, given.configurations, given.asked, pace, _progress(job))
    _tell_done(job, conducted)
    job.yardstick = _outcomes(conducted, YARDSTICK_NAME, YARDSTICK_NAME)
    job.forks_stopped = forks_run(pace, len(conducted.forks), conducted.stopped, conducted.episodes.said(),
                                  rows_ran(conducted, given.configurations))
    job.episodes = episodes_saved(conducted)
    job.forks_limit = conducted.limit
    job.fault, job.fault_traceback = conducted.fault, conducted.fault_traceback
    # Ctrl-C or a fault: rows keep their finished forks (after Ctrl-C the runner starts no further job).
    interrupted = ChildOutcome.interrupted() if conducted.interrupted else None
    found: list[Measurement | Exception] = []
    for i, ((_, setting), parts) in enumerate(zip(job.settings, given.groups)):
        for part, (workload, _) in zip(parts, setting.workloads):
            outcomes = _outcomes(conducted, part.label, str(i))
            # Ctrl-C cut short only the rows of the fork it stopped: one that had sat it out is whole.
            cut = interrupted if str(i) in conducted.cut_short else None
            failed = _ended(conducted.failures[part.label]) if part.label in conducted.failures else cut
            if not outcomes:
                found.append(WorkerError(setting.why_failed(failed) if failed else "no fork finished"))
                continue
            numbers = [f.number for f in outcomes]
            failed_in = conducted.failed_in.get(part.label, len(conducted.forks)) if failed else None
            found.append(_numbered(setting.measurement(workload, outcomes, failed), numbers, job.label, failed_in))
    return found


def _numbered(measurement: Measurement, numbers: list[int], label: str, failed_in: int | None = None) -> Measurement:
    """``measurement`` with its rounds and forks under the conductor's fork ``numbers``: a row that
    skipped forks (decision 0014) is paired with another by the forks both ran; ``failed_in``: the
    fork its worker failed in, where one did."""
    rounds = tuple(numbers[fork] for fork in measurement.summary.round_fork)
    return replace(measurement, summary=replace(measurement.summary, round_fork=rounds), in_turns=label,
                   interleaved=True, fork_turns=numbers, failed_fork_number=failed_in)


def _ended(error: WorkerError) -> ChildOutcome:
    """How a failed configuration's worker ended (exit, prints, why), else the error alone."""
    return error.ended or ChildOutcome(result={"error": str(error)}, returncode=1, stdout="", stderr="")


def _parts_by_setting(job: InterleavedJob) -> list[list[Part]]:
    """Each setting's parts, in the job's order."""
    parts = iter(job.parts)
    return [list(itertools.islice(parts, len(setting.workloads))) for _, setting in job.settings]


def worker_spec(setting: Sliced, cpu: int | None) -> WorkerSpec:
    """How the conductor starts ``setting``'s worker, its measuring thread on ``cpu``."""
    def start() -> WorkerProcess:
        return WorkerProcess(setting.module, {**setting.request, "measuring_cpu": cpu}, setting.env, setting.on_hang)

    return WorkerSpec(start=setting.start or start, warmup_min_seconds=setting.warmup_min_seconds,
                      warmup_max_seconds=setting.warmup_max_seconds)


def asked(settings: list[tuple[str, Sliced]], groups: list[list[Part]]) -> list[Asked]:
    """The ratios the forks go on until sharp: speedups, and the JVM against its native reference."""
    rows = _rows(settings, groups)
    found = []
    for row in rows:
        key, setting, part = row
        reference = reference_for(part.workload.operation.shape, [ENGINES[k] for k, _, _ in rows])
        for other in rows:
            _, other_setting, other_part = other
            if other_part.workload != part.workload or other_setting is setting:
                continue
            tag = part.label.removeprefix(setting.name)  # the workload's: ", message", ...
            if _speeds_up(row, other):
                found.append(Asked(label=f"{ENGINES[key].accelerator} speedup, {setting.subject}{tag}",
                                   slower=other_part.label, faster=part.label))
            if _held_against(row, other, reference):
                state = "acceleration on" if setting.accelerated else "acceleration off"
                found.append(Asked(label=f"{setting.subject} vs {other_setting.subject}, {state}{tag}",
                                   slower=other_part.label, faster=part.label))
    return found


def _rows(settings: list[tuple[str, Sliced]], groups: list[list[Part]]) -> list[tuple[str, Sliced, Part]]:
    """(engine key, setting, part) for each part of each setting (``groups``: the parts of each)."""
    return [(key, setting, part) for (key, setting), parts in zip(settings, groups) for part in parts]


def _speeds_up(row: tuple[str, Sliced, Part], other: tuple[str, Sliced, Part]) -> bool:
    """Whether ``row`` is ``other``'s subject with its engine's acceleration on where ``other``'s is off."""
    (key, setting, _), (other_key, other_setting, _) = row, other
    return (other_key == key and setting.accelerated and not other_setting.accelerated
            and setting.subject == other_setting.subject)


def _held_against(row: tuple[str, Sliced, Part], other: tuple[str, Sliced, Part], reference: Engine | None) -> bool:
    """Whether ``row`` is the JVM's and ``other`` its native ``reference``'s, in one state."""
    (key, setting, _), (other_key, other_setting, _) = row, other
    return (ENGINES[key].reference_rank is None and reference is not None and ENGINES[other_key] is reference
            and other_setting.accelerated == setting.accelerated)


def _outcomes(conducted: Conducted, label: str, worker: str) -> list[Forked]:
    """A configuration's finished forks, as its row reads them."""
    return [fork.of(label, worker) for fork in conducted.forks if label in fork.slices]


def _progress(job: Job) -> Callable[[Status], None]:
    def tell(status: Status) -> None:
        _tell(job, status.fork, status.forks_planned, status.forks_wanted, status.seconds_left, status.ratios)

    return tell


def _tell_done(job: Job, conducted: Conducted) -> None:
    """Tell the forks run and their ratios for the job's finished line, and those the time limit cut."""
    forks = len(conducted.forks)
    _tell(job, forks, forks, conducted.cut_from, 0.0, conducted.ratios)


def _tell(job: Job, forks: int, planned: int, wanted: int, left: float | None, ratios: Mapping[str, Interval]) -> None:
    so_far = PartSoFar(forks=forks, planned=planned, figure_ns=None, relative_error=float("inf"),
                       wanted=wanted if wanted > planned else None)
    report([so_far] * len(job.parts), left, tuple(RatioSoFar(label=label, times=interval.value, forks=interval.forks,
                                                             relative_error=interval.relative_error)
                                                  for label, interval in ratios.items()))
