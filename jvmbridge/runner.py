"""Run every configuration of a comparison, each in its own process, keeping whatever succeeds."""
from __future__ import annotations

import datetime
import platform
import shutil
import socket
import sys
from dataclasses import dataclass, field
from typing import Callable

import pandas as pd

from jvmbridge import __version__
from jvmbridge.child import WorkerError
from jvmbridge.cpu import cpu_info
from jvmbridge.jvm.discovery import JavaInstall
from jvmbridge.jvm.engine import measure_jvm
from jvmbridge.jvm.providers import PROVIDERS
from jvmbridge.native.engine import measure_openssl_cli, measure_pyca
from jvmbridge.native.pyca_worker import encrypt_message
from jvmbridge.results import Measurement, Ratio, ratios, to_frame
from jvmbridge.workload import Workload

Progress = Callable[[int, int, str], None]
# Engine choices, as --engine spells them.
ENGINES = ("jvm", "pyca", "openssl-cli")


@dataclass
class Job:
    label: str
    measure: Callable[[], Measurement]


@dataclass
class Comparison:
    frame: pd.DataFrame
    ratios: list[Ratio]
    failures: list[tuple[str, str]]  # (configuration, why it failed)
    metadata: dict = field(default_factory=dict)
    interrupted: bool = False  # Ctrl-C: the finished rows are kept, the rest listed as failures


def plan(workload: Workload, javas: list[JavaInstall], jvm_options: tuple[str, ...] = (),
         openssl: str | None = "openssl", engines: tuple[str, ...] = ENGINES,
         providers: tuple[str, ...] = ("SunJCE",), classpath: tuple[str, ...] = ()) -> list[Job]:
    """Each JVM with each provider in its settings (SunJCE: intrinsics on and off), then AES-NI on
    and off for each native engine.

    The `openssl` command is optional: where it is missing its rows are simply not planned.
    """
    cpu_has_aes = "aes" in cpu_info()["features"]
    openssl_path = shutil.which(openssl) if openssl and "openssl-cli" in engines else None
    jobs = [Job(f"JVM {java.label}, {provider.name}, {setting.name}",
                lambda java=java, provider=provider, setting=setting:
                    measure_jvm(java, provider, setting, workload, jvm_options, classpath))
            for java in javas if "jvm" in engines
            for provider in (PROVIDERS[name] for name in providers) for setting in provider.settings]
    for aesni in (True, False):
        state = "on" if aesni else "off"
        if "pyca" in engines:
            jobs.append(Job(f"OpenSSL via pyca, AES-NI {state}",
                            lambda aesni=aesni: measure_pyca(workload, aesni, cpu_has_aes)))
        if openssl_path:
            jobs.append(Job(f"openssl speed, AES-NI {state}",
                            lambda aesni=aesni: measure_openssl_cli(openssl_path, workload, aesni, cpu_has_aes)))
    return jobs


def run(jobs: list[Job], workload: Workload, progress: Progress | None = None) -> Comparison:
    """Run ``jobs`` in order; a failed one is recorded and the rest still run."""
    started = datetime.datetime.now(datetime.timezone.utc)
    measurements, failures, interrupted = [], [], False
    for index, job in enumerate(jobs):
        if progress:
            progress(index, len(jobs), job.label)
        try:
            measurements.append(job.measure())
        except WorkerError as e:
            failures.append((job.label, str(e)))
        except KeyboardInterrupt:
            failures += [(pending.label, "interrupted before it finished") for pending in jobs[index:]]
            interrupted = True
            break
    expected = encrypt_message(workload.key, workload.iv, workload.plaintext).hex()
    frame = to_frame(measurements, expected) if measurements else pd.DataFrame()
    return Comparison(frame, ratios(frame) if measurements else [], failures,
                      _metadata(workload, started, frame), interrupted)


def _metadata(workload: Workload, started: datetime.datetime, frame: pd.DataFrame) -> dict:
    def distinct(column: str) -> list[str]:
        return list(dict.fromkeys(frame[column].dropna())) if column in frame else []

    return {
        "jvmbridge_version": __version__,
        "started_utc": started.isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "cpu": cpu_info(),
        "kernel": platform.release(),
        "python": sys.version.split()[0],
        "workload": workload.as_dict(),
        "implementations": distinct("implementation"),
        "java_homes": distinct("java_home"),
    }
