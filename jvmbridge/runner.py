"""Run every configuration of a comparison, each in its own process, keeping whatever succeeds."""
from __future__ import annotations

import datetime
import os
import platform
import shutil
import signal
import socket
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from jvmbridge import __version__, store
from jvmbridge.child import WorkerError
from jvmbridge.cpu import cpu_info, volatile_readings
from jvmbridge.jvm.discovery import JavaInstall
from jvmbridge.jvm.engine import measure_jvm
from jvmbridge.jvm.providers import provider as provider_named
from jvmbridge.native.engine import measure_openssl_cli, measure_pyca
from jvmbridge.native.pyca_worker import encrypt_message
from jvmbridge.results import Measurement, Ratio, ratios, to_frame
from jvmbridge.workload import Workload

# (index of the job starting, number of jobs, its label, seconds since the run started)
Progress = Callable[[int, int, str, float], None]
# Engine choices, as --engine spells them.
ENGINES = ("jvm", "pyca", "openssl-cli")


@dataclass
class Job:
    label: str
    workload: Workload
    measure: Callable[[], Measurement]


@dataclass(frozen=True)
class Matrix:
    """What to run besides the workload: which engines, JVMs, providers and native tools."""
    javas: tuple[JavaInstall, ...] = ()
    jvm_options: tuple[str, ...] = ()
    providers: tuple[str, ...] = ("SunJCE",)
    classpath: tuple[str, ...] = ()
    engines: tuple[str, ...] = ENGINES
    openssl: str | None = "openssl"
    openssl_args: tuple[str, ...] = ()  # passed to `openssl speed`, e.g. -provider NAME, -engine ID


@dataclass
class Comparison:
    frame: pd.DataFrame
    ratios: list[Ratio]
    failures: list[tuple[str, str]]  # (configuration, why it failed)
    metadata: dict = field(default_factory=dict)
    interrupted: bool = False  # Ctrl-C: the finished rows are kept, the rest listed as failures
    output: Path | None = None  # the JSON-lines file every record went to as it finished


def plan(workloads: list[Workload], matrix: Matrix) -> list[Job]:
    """For each workload (cipher, direction, size, shape): each JVM with each provider in its
    settings (SunJCE: intrinsics on and off), then AES-NI on and off for each native engine.

    The `openssl` command is optional: where it is missing its rows are simply not planned.
    """
    cpu_has_aes = "aes" in cpu_info()["features"]
    engines = matrix.engines
    openssl_path = shutil.which(matrix.openssl) if matrix.openssl and "openssl-cli" in engines else None
    varying = {name for name, values in _distinct(workloads).items() if len(values) > 1}
    jobs, c_loop_done = [], set()
    for workload in workloads:
        tag = "".join([f", {workload.cipher_name}" if "ciphers" in varying else "",
                       f", {workload.direction}" if "directions" in varying else "",
                       f", {workload.message_bytes} B" if "sizes" in varying else "",
                       f", {workload.shape}" if "shapes" in varying else ""])
        jobs += [Job(f"JVM {java.label}, {provider.name}, {setting.name}{tag}", workload,
                     lambda java=java, provider=provider, setting=setting, workload=workload:
                         measure_jvm(java, provider, setting, workload, matrix.jvm_options, matrix.classpath))
                 for java in matrix.javas if "jvm" in engines
                 for provider in map(provider_named, matrix.providers) for setting in provider.settings]
        # `openssl speed` has one shape (stream): once per cipher and size, whatever shapes were asked for.
        operation = (workload.cipher_name, workload.direction, workload.message_bytes)
        c_loop = openssl_path and operation not in c_loop_done
        c_loop_done.add(operation)
        for aesni in (True, False):
            state = "on" if aesni else "off"
            if "pyca" in engines:
                jobs.append(Job(f"OpenSSL via pyca, AES-NI {state}{tag}", workload,
                                lambda aesni=aesni, workload=workload: measure_pyca(workload, aesni, cpu_has_aes)))
            if c_loop:
                jobs.append(Job(f"openssl speed, AES-NI {state}{tag}", workload,
                                lambda aesni=aesni, workload=workload: measure_openssl_cli(
                                    openssl_path, workload, aesni, cpu_has_aes, matrix.openssl_args)))
    return jobs


def run(jobs: list[Job], progress: Progress | None = None, output: Path | None = None) -> Comparison:
    """Run ``jobs`` in order; a failed one is recorded and the rest still run.

    Every record is written to ``output`` (default: store.default_path) the moment it exists.
    """
    started = datetime.datetime.now(datetime.timezone.utc)
    metadata = _metadata([job.workload for job in jobs], started)
    writer = store.ResultWriter(output or store.default_path(started, metadata["host"]), uuid.uuid4().hex[:12])
    writer.write("run", metadata=metadata)
    rows, failures, interrupted = [], [], False
    clock = time.monotonic()

    def fail(label: str, error: str) -> None:
        failures.append((label, error))
        writer.write("failure", configuration=label, error=error)

    try:
        with _CtrlC() as ctrl_c:
            for index, job in enumerate(jobs):
                try:
                    if ctrl_c.pressed:  # one whose KeyboardInterrupt Python swallowed
                        raise KeyboardInterrupt
                    if progress:
                        progress(index, len(jobs), job.label, time.monotonic() - clock)
                    workload = job.workload
                    expected = encrypt_message(workload.key, workload.iv, workload.plaintext, workload.mode).hex()
                    rows.append({**job.measure().row(expected, workload.target_error), "cipher": workload.cipher_name,
                                 "direction": workload.direction})
                    writer.write("measurement", configuration=job.label, row=rows[-1])
                except WorkerError as e:
                    fail(job.label, str(e))
                except KeyboardInterrupt:
                    for pending in jobs[index:]:
                        fail(pending.label, "interrupted before it finished")
                    interrupted = True
                    break
            interrupted = interrupted or ctrl_c.pressed
        writer.write("end", completed=len(rows), failed=[label for label, _ in failures], interrupted=interrupted)
    finally:
        writer.close()
    frame = to_frame(rows)
    return Comparison(frame, ratios(frame) if rows else [], failures, metadata, interrupted, writer.path)


class _CtrlC:
    """Notices Ctrl-C even where Python swallows its KeyboardInterrupt: one raised inside a
    finalizer (a __del__ run by the garbage collector) is printed and dropped, and the run would
    carry on. The flag lets the loop stop anyway."""

    def __init__(self):
        self.pressed = False
        self._previous = None

    def __enter__(self) -> "_CtrlC":
        # Handlers can only be set from the main thread; elsewhere KeyboardInterrupt alone serves.
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum, frame) -> None:
        self.pressed = True
        raise KeyboardInterrupt

    def __exit__(self, *exc) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)


def _distinct(workloads: list[Workload]) -> dict[str, list]:
    """The ciphers, directions, sizes and shapes the workloads span, each in first-seen order."""
    attributes = {"ciphers": "cipher_name", "directions": "direction", "sizes": "message_bytes", "shapes": "shape"}
    return {name: list(dict.fromkeys(getattr(w, attribute) for w in workloads))
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
