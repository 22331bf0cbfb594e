"""The Python API: the same comparison as `jvmbridge compare`, returned as a pandas DataFrame."""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from jvmbridge.saved import store
from jvmbridge.engines import default_engines
from jvmbridge.comparison.request import CompareRequest
from jvmbridge.comparison.runner import Comparison, Progress, plan, run
from jvmbridge.workload import AESNITESTER_MESSAGE_BYTES, ROUND_SECONDS, TARGET_ERROR, Sampling, parse_count


def run_comparison(request: CompareRequest, progress: Progress | None = None,
                   output: Path | None = None, host_name: str | None = None) -> Comparison:
    return run(plan(list(request.workloads), request.matrix), progress, output, host_name)


def compare(iterations: int | float | str | None = None, *, round_seconds: float = ROUND_SECONDS,
            rounds: int = Sampling.rounds, threads: int = Sampling.threads, forks: int | None = None,
            max_forks: int | None = None, target_error: float = TARGET_ERROR,
            ciphers: Iterable[str] = (), key_bits: int | None = None,
            sizes: int | str | Iterable[int] = AESNITESTER_MESSAGE_BYTES, shapes: Iterable[str] = ("message",),
            directions: Iterable[str] = ("encrypt",), engines: Iterable[str] = default_engines(),
            java: str | Iterable[str] = (), all_jdks: bool = False, trust_jdk_owner: bool = False, jvm_args: Iterable[str] = (),
            providers: Iterable[str] = ("SunJCE",), classpath: Iterable[str] = (),
            openssl: str | None = "openssl", openssl_args: Iterable[str] = (), shared_jvm: bool = False,
            output: str | Path | None = None) -> pd.DataFrame:
    """One row per engine and setting, as `jvmbridge compare` with the same options (see
    :class:`jvmbridge.comparison.request.CompareRequest`): ``iterations`` None times rounds of ``round_seconds``;
    forks are added up to ``max_forks`` while the interval is wider than ``target_error`` (0.02: ±2%);
    ``ciphers`` such as "aes-128-gcm", or the default aes-<key_bits>-cbc; ``sizes`` in bytes, a list
    or "sweep". ``frame.attrs`` holds "metadata", "ratios", "findings", "failures" and "output" (the
    JSON-lines file the run was saved to, readable with :func:`load`).

    Raises ValueError for bad arguments (including a path that is not a JVM).
    """
    request = CompareRequest(
        iterations=None if iterations is None else parse_count(iterations), round_seconds=round_seconds,
        rounds=rounds, threads=threads, forks=forks, max_forks=max_forks, target_error=target_error,
        ciphers=tuple(ciphers), key_bits=key_bits, sizes=sizes if isinstance(sizes, (int, str)) else tuple(sizes),
        shapes=tuple(shapes), directions=tuple(directions), engines=tuple(engines),
        java_paths=(java,) if isinstance(java, str) else tuple(java), all_jdks=all_jdks, trust_jdk_owner=trust_jdk_owner,
        jvm_args=tuple(jvm_args),
        providers=tuple(providers), classpath=tuple(classpath), openssl=openssl, openssl_args=tuple(openssl_args),
        shared_jvm=shared_jvm)
    comparison = run_comparison(request, output=Path(output) if output else None)
    frame = comparison.frame
    frame.attrs.update(metadata=comparison.metadata, ratios=[r.as_dict() for r in comparison.ratios],
                       findings={index: note.as_dict() for index, note in comparison.overhead.items()},
                       failures=comparison.failures, output=str(comparison.output))
    return frame


def load(paths: str | Path | Iterable[str | Path]) -> pd.DataFrame:
    """Saved runs as one tidy DataFrame: a row per measurement, the run's metadata as columns.

    Unreadable lines are skipped and listed in ``frame.attrs["problems"]``; a file with nothing
    readable raises ValueError.
    """
    from jvmbridge.saved.history import tidy_frame

    loaded = store.read([paths] if isinstance(paths, (str, Path)) else list(paths))
    frame = tidy_frame(loaded)
    frame.attrs.update(problems=loaded.problems, failures=loaded.failures)
    return frame
