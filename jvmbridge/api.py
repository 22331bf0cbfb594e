"""The Python API: the same comparison as `jvmbridge compare`, returned as a pandas DataFrame."""
from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from jvmbridge.jvm.providers import PROVIDERS
from jvmbridge.jvm.discovery import JavaInstall, default_java, resolve_java
from jvmbridge.runner import ENGINES, Comparison, Progress, plan, run
from jvmbridge.workload import Workload, parse_count


def run_comparison(workload: Workload, java_paths: Iterable[str] = (), jvm_options: Iterable[str] = (),
                   openssl: str | None = "openssl", engines: Iterable[str] = ENGINES,
                   providers: Iterable[str] = ("SunJCE",), classpath: Iterable[str] = (),
                   progress: Progress | None = None) -> Comparison:
    engines = tuple(engines)
    javas = find_javas(java_paths) if "jvm" in engines else []
    jobs = plan(workload, javas, tuple(jvm_options), openssl, engines, tuple(providers), tuple(classpath))
    return run(jobs, workload, progress)


def find_javas(java_paths: Iterable[str]) -> list[JavaInstall]:
    """The JVMs named by ``java_paths`` (binaries or JAVA_HOMEs), else the default one."""
    return [resolve_java(path) for path in java_paths] or [default_java()]


def compare(iterations: int | float | str = Workload.iterations, *, rounds: int = Workload.rounds,
            key_bits: int = Workload.key_bits, message_size: int = Workload.message_bytes,
            java: str | Iterable[str] = (), jvm_args: Iterable[str] = (),
            openssl: str | None = "openssl", engines: Iterable[str] = ENGINES,
            providers: Iterable[str] = ("SunJCE",), classpath: Iterable[str] = ()) -> pd.DataFrame:
    """One row per engine and setting. ``frame.attrs`` holds "metadata", "ratios" and "failures".

    Raises ValueError for bad arguments (including a path that is not a JVM).
    """
    workload = Workload(parse_count(iterations), rounds, key_bits, message_size)
    for asked, known, what in ((engines, ENGINES, "engine"), (providers, PROVIDERS, "provider")):
        unknown = set(asked) - set(known)
        if unknown:
            raise ValueError(f"unknown {what} {', '.join(sorted(unknown))}; choose from {', '.join(known)}")
    comparison = run_comparison(workload, [java] if isinstance(java, str) else java, jvm_args, openssl, engines,
                                providers, classpath)
    frame = comparison.frame
    frame.attrs.update(metadata=comparison.metadata, ratios=[r.as_dict() for r in comparison.ratios],
                       failures=comparison.failures)
    return frame
