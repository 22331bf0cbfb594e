"""Run every configuration of a comparison, each in its own process, keeping whatever succeeds."""
from __future__ import annotations

import contextlib
import datetime
import os
import platform
import signal
import socket
import sys
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from jvmbridge.comparison.cliffs import Cliff, cliffs
from jvmbridge.comparison.hostspeed import host_speed
from jvmbridge.comparison.interleaved import YARDSTICK_NAME, InterleavedJob, interleaved_job
from jvmbridge.comparison.interleaved import budget as interleaved_budget
from jvmbridge.comparison.ratios import Ratio, overhead_notes, ratios
from jvmbridge.engines import ENGINES, Engine, Job, Matrix, Part, by_label
from jvmbridge.forks.parent import WorkerError
from jvmbridge.host.cpu import cpu_info, volatile_readings
from jvmbridge.host.machine import Load, LoadWatch, shared_text
from jvmbridge.reference import encrypt_message
from jvmbridge.results import Measurement, Note, NoteKind, Result
from jvmbridge.sampling.policy import TimeLimit
from jvmbridge.sampling.progress import Forecast, JobPlan, PartSoFar, Progress, RatioSoFar, Update, listening
from jvmbridge.sampling.workload import Workload
from jvmbridge.saved import store
from jvmbridge.saved.schema import frame_of, result_of, row_record
from jvmbridge.trust.launch import environment_left_out
from jvmbridge.version import __version__


@dataclass
class Comparison:
    results: list[Result]  # as saved, in run order
    frame: pd.DataFrame  # the same rows, flat, for pandas
    ratios: list[Ratio]
    overhead: dict[int, Note]  # row index -> where a wrapping loop measures mostly itself
    failures: list[tuple[str, str]]  # (configuration, why it failed)
    metadata: dict = field(default_factory=dict)
    cliffs: list[Cliff] = field(default_factory=list)  # where a configuration's cost jumps between sizes
    interrupted: bool = False  # Ctrl-C: the finished rows are kept, the rest listed as failures
    output: Path | None = None  # the JSON-lines file every record went to as it finished
    save_error: str | None = None  # why that file could not be written (the rows are all here still)
    jmh_columns: bool = False  # for people: JMH's pooled score and error beside each row's figure
    verbose: bool = False  # for people: every note of every row (JSON, CSV and the saved run always have them)


def plan(workloads: list[Workload], matrix: Matrix) -> list[Job]:
    """Each workload's chosen engines' configurations in registry order; unrunnable engines left out."""
    varying = {name for name, values in _distinct(workloads).items() if len(values) > 1}
    out = left_out(matrix)
    engines = [engine for key, engine in ENGINES.items() if key in matrix.engines and key not in out]
    pairing = _pairing(engines, workloads, matrix)
    jobs: list[Job] = []
    for engine_index, engine in enumerate(engines):
        left = set() if matrix.shapes_named else set(engine.shapes) - set(engine.default_shapes(pairing))
        position = _positions(engine, workloads, left)
        tagged = [(runs, _tag(runs, varying, workloads[index])) for runs, index in position.items()]
        engine_jobs = _engine_jobs(engine, tagged, matrix)
        _rank(engine_jobs, position, engine_index)
        jobs += engine_jobs
    return sorted(_together(jobs), key=lambda job: min(part.rank for part in job.parts))


def _pairing(engines: list[Engine], workloads: list[Workload], matrix: Matrix) -> list[Engine]:
    """The engines whose rows pair with the JVM's slice by slice: the only ones to take its shape."""
    if not matrix.interleaved or any(workload.sampling.threads > 1 for workload in workloads):
        return []
    return [engine for engine in engines if engine.slices(workloads, matrix)]


def _together(jobs: list[Job]) -> list[Job]:
    """``jobs`` with every sliced setting in one interleaved job; turns jobs on their own."""
    together = [job for job in jobs if isinstance(job, InterleavedJob) and not job.turns]
    if len(together) < 2:
        return jobs
    return [job for job in jobs if not any(job is each for each in together)] + [InterleavedJob.merged(together)]


def _engine_jobs(engine: Engine, tagged: list[tuple[Workload, str]], matrix: Matrix) -> list[Job]:
    """``engine``'s job for every (workload, tag)."""
    settings = engine.sliced(tagged, matrix)
    if not settings:
        return []
    job = interleaved_job([(engine.key, setting) for setting in settings], matrix)
    job.engine = engine.key
    return [job]


def _rank(jobs: list[Job], position: dict[Workload, int], engine_index: int) -> None:
    """Each part's place in the table: workload row, engine place, then its own."""
    seen: dict[int, int] = {}
    for part in (part for job in jobs for part in job.parts):
        at = position[part.workload]
        part.rank = (at, engine_index, seen.setdefault(at, 0))
        seen[at] += 1


def _positions(engine: Engine, workloads: list[Workload], left: set[str]) -> dict[Workload, int]:
    """What ``engine`` runs -> the workload row it fills; ``left``: shapes it leaves to others."""
    position: dict[Workload, int] = {}
    for index, workload in enumerate(workloads):
        if workload.operation.shape not in left:
            runs = workload if workload.operation.shape in engine.shapes else replace(
                workload, operation=replace(workload.operation, shape=engine.shapes[0]))
            position.setdefault(runs, workloads.index(runs) if runs in workloads else index)
    return dict(sorted(position.items(), key=lambda each: each[1]))


def left_out(matrix: Matrix) -> dict[str, str]:
    """The chosen engines that cannot run here -> why, in one line."""
    return {key: reason for key in matrix.engines if (reason := ENGINES[key].unavailable(matrix))}


def run(jobs: list[Job], progress: Progress | None = None, output: Path | None = None,
        host_name: str | None = None, name: str | None = None, total_time: float | None = None,
        began: float | None = None) -> Comparison:
    """Run ``jobs`` in order, saving each record at once; a failure does not stop the rest. Under
    ``total_time`` (counted from ``began``, a time.monotonic(), else now) the cheapest run first: what
    one leaves goes to those after it."""
    started, load = datetime.datetime.now(datetime.timezone.utc), LoadWatch()
    metadata = _run_metadata(jobs, started, host_name, name, total_time)
    if total_time:
        jobs = _cheapest_first(jobs)
    writer = store.ResultWriter(output, uuid.uuid4().hex[:12], started, metadata["host"])
    writer.write("run", metadata=metadata)
    record = _Record(writer)
    interrupted = False
    watch = _Watch(jobs, progress or (lambda update: None), total_time, began)
    try:
        with _CtrlC() as ctrl_c:
            for index, job in enumerate(jobs):
                try:
                    if ctrl_c.pressed:  # one whose KeyboardInterrupt Python swallowed
                        raise KeyboardInterrupt
                    _run_job(job, watch.job(index), record, metadata)
                except KeyboardInterrupt:
                    record.interrupted(jobs[index:])
                    interrupted = True
                    break
            interrupted = interrupted or ctrl_c.pressed
        # Every child has ended: what the machine did beyond them was other work.
        metadata["load"] = (reading := load.since()) and reading.as_dict()
        metadata["work_seconds"] = work_seconds([result for _, result in record.ranked], metadata["workload"])
        record.end(interrupted, metadata)
    finally:
        writer.close()
    rows = [result for _, result in sorted(record.ranked, key=lambda ranked_result: ranked_result[0])]
    return comparison_of(rows, record.failures, metadata, interrupted, writer.path, writer.error)


def _cheapest_first(jobs: list[Job]) -> list[Job]:
    """``jobs`` by their first stage's forecast seconds."""
    forecast = Forecast([_job_plan(job) for job in jobs])
    return [job for _, job in sorted(enumerate(jobs), key=lambda each: forecast.first_stage_seconds(each[0]))]


def _run_job(job: Job, watched: contextlib.AbstractContextManager[list[PartSoFar]], record: _Record,
             metadata: dict) -> None:
    """Run one job, record each part's outcome and keep its findings in ``metadata``."""
    beside = LoadWatch()
    try:
        with watched as last:
            outcomes: Sequence[Measurement | Exception] = job.measure()
    except Exception as e:  # a WorkerError, or a fault of jvmbridge's own: this job fails, saying so; the others run
        outcomes = [e] * len(job.parts)
    metadata.update(_job_findings(job))
    record.job(job, outcomes, max((part.wanted - part.forks for part in last if part.wanted), default=0),
               beside.since())


def _job_findings(job: Job) -> dict:
    """What a job found for the run's metadata: host speed, forks stopped, episodes, fork limit."""
    found = {"host_speed": job.yardstick and host_speed(job.yardstick, YARDSTICK_NAME),
             "forks_stopped": job.forks_stopped, "episodes": job.episodes, "forks_limit": job.forks_limit,
             "fault": job.fault, "fault_traceback": job.fault_traceback}
    return {key: value for key, value in found.items() if value}


class _Record:
    """A run's measurements and failures, each written to its file the moment it exists."""

    def __init__(self, writer: store.ResultWriter):
        self.writer = writer
        self.ranked: list[tuple[tuple, Result]] = []  # (its place in the table, the row), in finish order
        self.failures: list[tuple[str, str]] = []

    def job(self, job: Job, outcomes: Sequence[Measurement | Exception], forks_cut: int, load: Load | None) -> None:
        """A job's outcome per part (measurement or exception); ``load``: other work meanwhile."""
        for part, outcome in zip(job.parts, outcomes):
            if isinstance(outcome, Exception):  # an engine's WorkerError says it all; others name their kind
                self.fail(part.label, str(outcome) if isinstance(outcome, WorkerError)
                          else f"{type(outcome).__name__}: {outcome}")
            else:
                self.keep(part, outcome, forks_cut, load)

    def fail(self, label: str, error: str) -> None:
        self.failures.append((label, error))
        self.writer.write("failure", configuration=label, error=error)

    def end(self, interrupted: bool, metadata: dict) -> None:
        """The run's last record: how many rows finished, which failed, and what the run found."""
        self.writer.write("end", completed=len(self.ranked), failed=[label for label, _ in self.failures],
                          interrupted=interrupted, **{key: metadata.get(key) for key in store.END_FINDINGS})

    def interrupted(self, jobs: list[Job]) -> None:
        """Fail every part of ``jobs``: Ctrl-C stopped the run."""
        for part in (part for job in jobs for part in job.parts):
            self.fail(part.label, "interrupted before it finished")

    def keep(self, part: Part, measurement: Measurement, forks_cut: int, load: Load | None) -> None:
        op = part.workload.operation
        expected = encrypt_message(op.key, op.iv, op.plaintext, op.mode).hex()
        result = measurement.result(expected, part.rounds_basis, forks_cut)
        if load:
            shared = shared_text(load)
            result = replace(result, other_cpus=load.other_cpus,
                             notes=[*result.notes, *([Note(kind=NoteKind.SHARED, text=shared)] if shared else [])])
        self.ranked.append((part.rank, result))
        # Its table place (it finished out of order) and its job's name, for dimensioning to find.
        self.writer.write("measurement", configuration=part.label, job=part.name, position=list(part.rank),
                          row=row_record(result))


def comparison_of(rows: list[Result], failures: list[tuple[str, str]], metadata: dict, interrupted: bool = False,
                  output: Path | None = None, save_error: str | None = None) -> Comparison:
    """A comparison of ``rows`` (table order) without episode forks, as a run ends or `report` shows it."""
    frame = frame_of([row_record(result) for result in rows])
    aside = (metadata.get("episodes") or {}).get("set_aside") or ()
    return Comparison(results=rows, frame=frame, ratios=ratios(frame, set(aside)) if rows else [],
                      overhead=overhead_notes(frame) if rows else {}, failures=failures, metadata=metadata,
                      cliffs=cliffs(frame) if rows else [], interrupted=interrupted, output=output,
                      save_error=save_error)


def saved_comparison(loaded: store.Loaded, run_id: str) -> Comparison:
    """One saved run as `compare` showed it at its end (files before 0.3.0: rows in finish order)."""
    records = [row for row in loaded.rows if row["run_id"] == run_id]
    records.sort(key=lambda row: row.get("position") or [])
    saved = loaded.runs.get(run_id, {})
    end = saved.get("end") or {}
    failures = [(f["configuration"], f["error"]) for f in loaded.failures if f["run_id"] == run_id]
    path = saved.get("file")
    return comparison_of([result_of(row) for row in records], failures, _saved_metadata(saved, end),
                         bool(end.get("interrupted")), Path(path) if path else None)


def _saved_metadata(saved: dict, end: dict) -> dict:
    """A saved run's metadata as run() had it at its end."""
    return {**{k: v for k, v in saved.items() if k not in ("file", "end")},
            **{key: end.get(key) for key in store.END_FINDINGS}}


def work_seconds(rows: Sequence[Result], workload: dict) -> float | None:
    """With --iterations, the run's work: each row's messages at its ns/op, the count asked or, where the
    engine runs for a time instead (openssl speed), the messages it timed."""
    asked = workload.get("iterations")
    if not asked:
        return None
    return sum((asked if (engine := by_label(row.engine)) is None or engine.runs_a_count else row.iterations)
               * row.estimate.ns_per_op for row in rows) / 1e9


def _run_metadata(jobs: list[Job], started: datetime.datetime, host_name: str | None, name: str | None,
                  total_time: float | None) -> dict:
    """What the run's file and header say about the whole run."""
    metadata = _metadata([part.workload for job in jobs for part in job.parts], started)
    metadata["workload"]["budget"] = _budget(jobs)
    return {**metadata,
            # Workloads one process measured per fork, for the header.
            "workloads_per_fork": max((job.parts_per_fork for job in jobs), default=0),
            # ... of which in one JIT, for the header's caveat.
            "jit_shared_by": max((job.parts_per_fork for job in jobs if job.shares_jit), default=0),
            # JVM options of the user's shell the children did not inherit.
            "environment_left_out": environment_left_out(),
            **({"host": host_name} if host_name else {}), **({"name": name} if name else {}),
            **({"total_time_seconds": total_time} if total_time else {})}


def _budget(jobs: list[Job]) -> str:
    """How each fork measures, for the header: the interleaved job's way first."""
    together = next((job for job in jobs if isinstance(job, InterleavedJob) and not job.turns), None)
    first = interleaved_budget(together) if together else _engine_budget(jobs[0]) if jobs else ""
    others: dict[str, list[str]] = {}
    for job in jobs:
        if job is not together and (text := _engine_budget(job)) != first:
            others.setdefault(text, []).append(_engine_label(job))
    return "; ".join([first, *(f"{', '.join(dict.fromkeys(labels))}: {text}" for text, labels in others.items())])


def _engine_label(job: Job) -> str:
    return ENGINES[job.engine].label if job.engine in ENGINES else job.label


def _engine_budget(job: Job) -> str:
    sampling = job.parts[0].workload.sampling
    return ENGINES[job.engine].budget(sampling) if job.engine in ENGINES else sampling.budget()


class _Watch:
    """Tells ``progress`` where the run stands and holds each job to its share of the time limit."""

    def __init__(self, jobs: list[Job], progress: Progress, total_time: float | None = None,
                 began: float | None = None):
        self.jobs, self.progress, self.started = jobs, progress, time.monotonic() if began is None else began
        self.forecast = Forecast([_job_plan(job) for job in jobs])
        self.total_time = TimeLimit(total_time, self.forecast) if total_time else None

    @contextlib.contextmanager
    def job(self, index: int):
        """While job ``index`` runs; yields where its parts stood at its last fork."""
        job, job_started = self.jobs[index], time.monotonic()
        latest: list[PartSoFar] = []
        cap = None
        if self.total_time is not None:
            share, first_stage = self.total_time.share(index, job_started - self.started), self.forecast.jobs[index].forks

            def cap(done: int, next_fork: float | None) -> int:
                return TimeLimit.forks(share, first_stage, done, time.monotonic() - job_started, next_fork)

        def tell(parts: list[PartSoFar], own_left: float | None = None, ratios: tuple[RatioSoFar, ...] | None = None,
                 finished: bool = False) -> None:
            latest[:] = parts
            now = time.monotonic()
            # An engine reporting its parts otherwise (openssl speed) shows under the job's label.
            labels = [part.label for part in job.parts] if len(parts) == len(job.parts) else [job.label] * len(parts)
            left = (self.forecast.seconds_left(index + 1) if finished
                    else self.forecast.seconds_left(index, now - job_started, parts) if own_left is None
                    else own_left + self.forecast.seconds_left(index + 1))
            self.progress(Update(job=index, jobs=len(self.jobs), label=job.label, engine=job.engine,
                                 parts=tuple(zip(labels, parts)), elapsed=now - self.started,
                                 job_elapsed=now - job_started, seconds_left=left, finished=finished, ratios=ratios))

        tell([])
        try:
            with listening(tell, cap):
                yield latest
        finally:
            self.forecast.finished(index, time.monotonic() - job_started, max((p.forks for p in latest), default=0))
            tell(latest, None, finished=True)


def _job_plan(job: Job) -> JobPlan:
    engine = ENGINES.get(job.engine)
    samplings = [part.workload.sampling for part in job.parts]
    return JobPlan(engine=job.engine, timed_seconds=sum(engine.timed_seconds(s) for s in samplings) if engine else 0.0,
                   forks=max(s.first_stage for s in samplings),
                   overhead_guess=engine.fork_overhead_seconds if engine else 0.0, processes=job.arms)


class _CtrlC:
    """Notices Ctrl-C where Python swallows KeyboardInterrupt (raised in a __del__ it is printed and
    dropped): the flag stops the loop anyway."""

    def __init__(self):
        self.pressed = False
        self._previous = None

    def __enter__(self) -> "_CtrlC":
        # Handlers can only be set from the main thread.
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum, frame) -> None:
        self.pressed = True
        raise KeyboardInterrupt

    def __exit__(self, *exc) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)


def _tag(workload: Workload, varying: set[str], row: Workload) -> str:
    """What sets a job apart, for its label (", aes-128-gcm, 16 B"); its shape only if ``row``'s."""
    op = workload.operation
    varying = varying if op.shape == row.operation.shape else varying - {"shapes"}
    return "".join([f", {op.cipher_name}" if "ciphers" in varying else "",
                    f", {op.direction}" if "directions" in varying else "",
                    f", {op.message_bytes} B" if "sizes" in varying else "",
                    f", {op.shape}" if "shapes" in varying else ""])


def _distinct(workloads: list[Workload]) -> dict[str, list]:
    """The ciphers, directions, sizes and shapes the workloads span, each in first-seen order."""
    attributes = {"ciphers": "cipher_name", "directions": "direction", "sizes": "message_bytes", "shapes": "shape"}
    return {name: list(dict.fromkeys(getattr(w.operation, attribute) for w in workloads))
            for name, attribute in attributes.items()}


def _metadata(workloads: list[Workload], started: datetime.datetime) -> dict:
    return {
        "jvmbridge_version": __version__,
        "started_utc": started.isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "cpu": cpu_info(),
        "cores": os.cpu_count(),
        "kernel": platform.release(),
        "python": sys.version.split()[0],
        "workload": {**(workloads[0].as_dict() if workloads else {}), **_distinct(workloads)},
        # Recorded for the record, never used to decide whether two runs are comparable.
        "volatile": volatile_readings(),
    }
