"""The Python API: the same comparison as `jvmbridge compare`, returned as a pandas DataFrame."""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from jvmbridge import store
from jvmbridge.jvm.providers import provider
from jvmbridge.jvm.discovery import JavaInstall, default_java, drivable_javas, resolve_java
from jvmbridge.runner import ENGINES, Comparison, Matrix, Progress, plan, run
from jvmbridge.workload import Workload, combinations, parse_count


def run_comparison(workloads: list[Workload], matrix: Matrix, progress: Progress | None = None,
                   output: Path | None = None) -> Comparison:
    return run(plan(workloads, matrix), progress, output)


def find_javas(java_paths: Iterable[str], all_jdks: bool = False) -> list[JavaInstall]:
    """The JVMs named by ``java_paths`` (binaries or JAVA_HOMEs), plus with ``all_jdks`` every one
    JPype can drive on this machine; the default one when neither names any."""
    javas = [resolve_java(path) for path in java_paths] + (drivable_javas() if all_jdks else [])
    return list({java.home: java for java in javas}.values()) or [default_java()]


def compare(iterations: int | float | str | None = None, *, round_seconds: float = Workload.round_seconds,
            rounds: int = Workload.rounds, threads: int = Workload.threads, forks: int = Workload.forks,
            max_forks: int | None = None, target_error: float = Workload.target_error,
            key_bits: int = Workload.key_bits,
            message_size: int | Iterable[int] = Workload.message_bytes, shapes: Iterable[str] = ("message",),
            modes: Iterable[str] = ("cbc",), directions: Iterable[str] = ("encrypt",),
            java: str | Iterable[str] = (), all_jdks: bool = False, jvm_args: Iterable[str] = (),
            openssl: str | None = "openssl", engines: Iterable[str] = ENGINES,
            providers: Iterable[str] = ("SunJCE",), classpath: Iterable[str] = (),
            openssl_args: Iterable[str] = (), output: str | Path | None = None) -> pd.DataFrame:
    """One row per engine and setting; ``iterations`` None times rounds of ``round_seconds``;
    forks are added up to ``max_forks`` while the interval is wider than ``target_error`` (0.02: ±2%).
    ``frame.attrs`` holds "metadata", "ratios", "failures" and
    "output" (the JSON-lines file the run was saved to, readable with :func:`load`).

    Raises ValueError for bad arguments (including a path that is not a JVM).
    """
    sizes = [message_size] if isinstance(message_size, int) else list(message_size)
    workloads = combinations([(key_bits, mode) for mode in modes], directions, sizes, shapes,
                             iterations=None if iterations is None else parse_count(iterations),
                             rounds=rounds, forks=forks, max_forks=max_forks, target_error=target_error,
                             round_seconds=round_seconds, threads=threads)
    unknown = set(engines) - set(ENGINES)
    if unknown:
        raise ValueError(f"unknown engine {', '.join(sorted(unknown))}; choose from {', '.join(ENGINES)}")
    for name in providers:
        provider(name)  # a ValueError names the choices
    javas = find_javas([java] if isinstance(java, str) else java, all_jdks) if "jvm" in engines else []
    matrix = Matrix(tuple(javas), tuple(jvm_args), tuple(providers), tuple(classpath), tuple(engines), openssl,
                    tuple(openssl_args))
    comparison = run_comparison(workloads, matrix, output=Path(output) if output else None)
    frame = comparison.frame
    frame.attrs.update(metadata=comparison.metadata, ratios=[r.as_dict() for r in comparison.ratios],
                       failures=comparison.failures, output=str(comparison.output))
    return frame


def load(paths: str | Path | Iterable[str | Path]) -> pd.DataFrame:
    """Saved runs as one tidy DataFrame: a row per measurement, the run's metadata as columns.

    Unreadable lines are skipped and listed in ``frame.attrs["problems"]``; a file with nothing
    readable raises ValueError.
    """
    from jvmbridge.history import tidy_frame

    loaded = store.read([paths] if isinstance(paths, (str, Path)) else list(paths))
    frame = tidy_frame(loaded)
    frame.attrs.update(problems=loaded.problems, failures=loaded.failures)
    return frame
